// Two edits of one key at once (two admins, or a script and the dashboard): each writes only the
// columns it changes. The edit wrote every column as it had read them, so the later of two edits put
// back what the earlier had changed (a rename undid a budget raised a moment before).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyAdmin } from '../src/auth/admin.ts';
import { KeysData } from '../src/dashboard/keys-data.ts';
import type { Access } from '../src/dashboard/access.ts';
import { SqliteStore } from '../src/store/sqlite.ts';

const ADMIN: Access = { role: 'admin', userId: null };

test('two edits of one key at once both land: a rename and a new budget and rate limit', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-keys-edit-'));
  const store = new SqliteStore({ path: join(dir, 'g.db') });
  t.after(async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); });
  await store.migrate();
  const { record } = await new KeyAdmin(store).createKey({ name: 'shared', budget_usd: '10', budget_period: 'month' });
  const keys = new KeysData(store, async () => {});
  // Both read the key before either writes (started together on one event loop).
  await Promise.all([keys.update(record.id, { name: 'renamed' }, ADMIN), keys.update(record.id, { budget_usd: '500', rpm_limit: 60 }, ADMIN)]);
  const now = await keys.record(record.id, ADMIN);
  assert.deepEqual([now.name, now.budgetUsd, now.budgetPeriod, now.rpmLimit], ['renamed', '500', 'month', 60]);
});
