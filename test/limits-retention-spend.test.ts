// A budget's spend read from the store (the limiters' seed at start and after a budget change, and the
// re-seed of a counter Redis lost) counts what dashboard.retention.records_days deleted: the per-key
// rollups hold it. Before, the raw records alone were read, so a total (or month) budget forgot every
// cost retention had deleted. SQLite and PostgreSQL (a fresh schema; skipped when it is not running).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import { foldAll } from '../src/store/rollup-fold.ts';
import { pruneOnce, sqlSteps } from '../src/dashboard/retention.ts';
import { MemoryLimiter } from '../src/limits/memory.ts';
import { LimitError } from '../src/limits/limiter.ts';
import { storedSpend } from '../src/store/key-spend.ts';
import type { InferenceRecord, KeyRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-retention-spend-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_retspend');
const backends: Array<{ name: string; open: () => Promise<Store> }> = [{ name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, 's.db') }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

const DAY = 86_400_000;
const record = (keyId: string, at: number, costUsd: string): InferenceRecord => ({
  id: uuidv7(at), createdAt: new Date(at).toISOString(), keyId, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'm',
  servedModel: 'p/m', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 1, ttftMs: 1, stream: false,
  inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd, finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});
const key = (id: string): KeyRecord => ({
  id, name: id, hash: '0'.repeat(64), createdAt: new Date(0).toISOString(), lastUsedAt: null, expiresAt: null, revokedAt: null,
  allowedModels: [], budgetUsd: '1', budgetPeriod: 'total', rpmLimit: null, tpmLimit: null,
});

for (const b of backends) {
  test(`${b.name}: a total budget's spend still counts the records retention deleted`, async () => {
    const s = await b.open();
    try {
      const now = Date.now();
      // $0.60 forty and ten days ago (deleted by records_days 7), $0.10 today; another key's records beside them.
      await s.insertInferences([
        record('k1', now - 40 * DAY, '0.2'), record('k1', now - 10 * DAY, '0.2'), record('k1', now - 10 * DAY + 1000, '0.2'),
        record('k1', now - 60_000, '0.1'), record('k2', now - 20 * DAY, '5'), record('k2', now - 60_000, '5'),
      ]);
      await foldAll(s.sql);
      const pass = await pruneOnce(sqlSteps(s.sql), { recordsDays: 7, bodiesDays: null }, now);
      assert.equal(pass.records, 4);
      assert.equal(await storedSpend(s.sql, 'k1', new Date(0).toISOString()), '0.7'); // before: 0.1
      assert.equal(await storedSpend(s.sql, 'k1', new Date(0).toISOString(), new Date(now - 5 * DAY).toISOString()), '0.6', 'a re-seed\'s range up to the loss');
      const lim = new MemoryLimiter({ now: () => now });
      await lim.seed(s, [key('k1')]);
      // $0.70 spent of $1: a request that may cost $0.35 is refused (before: admitted, the seed read $0.10).
      await assert.rejects(lim.acquire(key('k1'), { tokens: 1, costUsd: '0.35' }), (e: unknown) => e instanceof LimitError);
      await (await lim.acquire(key('k1'), { tokens: 1, costUsd: '0.25' })).release();
      // Nothing deleted: the records alone, as before.
      assert.equal(await storedSpend(s.sql, 'k2', new Date(now - 2 * DAY).toISOString()), '5');
    } finally { await s.close(); }
  });
}
