// src/responses/store.ts on both backends (SQLite file; PostgreSQL in a fresh schema dropped at the
// end, failing under CI=true when PostgreSQL is down): rows round-trip, the recursive chain query
// rebuilds a conversation oldest first across key scopes and expiry, a broken chain is refused,
// delete is scoped, and a conversation read before the rows are committed comes from memory.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { Store } from '../src/store/types.ts';
import { ResponseStore, type StoredResponse } from '../src/responses/store.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-responses-'));
const stores: Store[] = [];
after(async () => {
  for (const s of stores) await s.close();
  rmSync(tmp, { recursive: true, force: true });
});
const pgDb = await pgTestDb('gw_resp'); // its schema is dropped after the stores above are closed

const backends: Array<{ name: string; open: () => Promise<Store> }> = [{ name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, 'gw.db') }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

const row = (over: Partial<StoredResponse>): StoredResponse => {
  const id = over.id ?? uuidv7();
  return {
    id, keyId: 'k1', createdAt: Date.now(), expiresAt: Date.now() + 60_000, previousId: null,
    inputItems: [{ id: `msg_${id}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: `in ${id}` }] }],
    response: { id, object: 'response', output: [{ id: `out_${id}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `out ${id}`, annotations: [] }] }] },
    ...over,
  };
};
const texts = (items: Record<string, any>[]): string[] => items.map((i) => i.content[0].text);

for (const b of backends) {
  describe(`stored responses: ${b.name}`, () => {
    test('round trip, chain oldest first, key scope, expiry, broken chains, delete', async () => {
      const db = await b.open();
      stores.push(db);
      await db.migrate();
      const rs = new ResponseStore(db.sql, (e) => { throw e; });
      const a = row({});
      const b1 = row({ previousId: a.id });
      const c = row({ previousId: b1.id });
      rs.save(a); rs.save(b1);
      await rs.settle();
      rs.save(c);
      // c is still in memory (maybe), a and b1 in the database: one conversation either way.
      assert.deepEqual(texts(await rs.conversation(c.id, 'k1')), [`in ${a.id}`, `out ${a.id}`, `in ${b1.id}`, `out ${b1.id}`, `in ${c.id}`, `out ${c.id}`]);
      await rs.settle();
      assert.deepEqual(texts(await rs.conversation(c.id, 'k1')).length, 6);
      const got = await rs.get(b1.id, 'k1');
      assert.deepEqual(got, b1);
      assert.equal(await rs.get(b1.id, 'k2'), null, 'another key sees nothing');
      await assert.rejects(rs.conversation(c.id, 'k2'), { code: 'previous_response_not_found' });

      const expired = row({ expiresAt: Date.now() - 1 });
      const after = row({ previousId: expired.id });
      rs.save(expired); rs.save(after);
      await rs.settle();
      assert.equal(await rs.get(expired.id, 'k1'), null, 'expired rows are not served');
      await assert.rejects(rs.conversation(after.id, 'k1'), (e: Error & { code?: string }) => e.code === 'previous_response_not_found' && /expired/.test(e.message));

      assert.equal(await rs.delete(b1.id, 'k2'), false);
      assert.equal(await rs.delete(b1.id, 'k1'), true);
      await assert.rejects(rs.conversation(c.id, 'k1'), { code: 'previous_response_not_found' }, 'a deleted link breaks the chain');
      assert.equal(await rs.delete(b1.id, 'k1'), false);
    });
  });
}
