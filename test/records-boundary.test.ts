// The record boundary and poisoned batches, on SQLite and PostgreSQL through the store write thread
// (the gateway's real path): values no column can hold are repaired before they reach a batch, and a
// row the store refuses anyway is isolated so the rest of its batch, and the feedback lane, are written.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';
import { MAX_INT_COLUMN, storableRecord } from '../src/records/boundary.ts';
import { RecordWriter } from '../src/records/writer.ts';
import { openStore, type OpenStoreOptions } from '../src/store/open.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../src/store/types.ts';
import { WriteThread, withWriteThread } from '../src/store/write-thread.ts';
import { uuidv7 } from '../src/util/uuid.ts';

const pgUp = await pgAvailable();

const tmp = mkdtempSync(join(tmpdir(), 'gw-boundary-'));
const schema = freshSchema('gw_bnd');
after(async () => {
  rmSync(tmp, { recursive: true, force: true });
  if (pgUp) await dropSchema(schema);
});

const rec = (over: Partial<InferenceRecord> = {}): InferenceRecord => ({
  id: uuidv7(), createdAt: new Date().toISOString(), keyId: 'k', route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'openai/m', servedModel: 'openai/m', provider: 'openai', attempts: [], status: 200, errorCode: null,
  latencyMs: 5, ttftMs: 3, stream: false, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0,
  reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null,
  responseBody: null, ...over,
});
const fbRow = (inferenceId: string): FeedbackRow => ({
  id: uuidv7(), inferenceId, keyId: 'k', metric: 'thumbs', type: 'boolean', value: 'true', reason: null, tags: {}, optimize: 'max',
  createdAt: new Date().toISOString(),
});

async function until(cond: () => Promise<boolean> | boolean, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('storableRecord: counts above 2^31-1, fractions, NaN, negatives and a bad status are repaired, originals kept in extra.repaired', () => {
  const ok = rec();
  assert.equal(storableRecord(ok).rec, ok, 'a record that fits is passed through, not copied');
  const { rec: r, repaired } = storableRecord(rec({
    outputTokens: 3_000_000_000, inputTokens: 12.6, cacheReadTokens: Number.NaN, reasoningTokens: -4, latencyMs: 1e12,
    ttftMs: Number.POSITIVE_INFINITY, status: 0, extra: { keep: 1 },
  }));
  assert.equal(repaired, true);
  assert.deepEqual([r.outputTokens, r.inputTokens, r.cacheReadTokens, r.reasoningTokens, r.latencyMs, r.ttftMs, r.status],
    [MAX_INT_COLUMN, 13, 0, 0, MAX_INT_COLUMN, MAX_INT_COLUMN, 500]);
  assert.deepEqual(r.extra, { keep: 1, repaired: {
    inputTokens: '12.6', outputTokens: '3000000000', cacheReadTokens: 'NaN', reasoningTokens: '-4', latencyMs: '1000000000000',
    ttftMs: 'Infinity', status: '0',
  } });
});

type Backend = { name: string; opts: () => OpenStoreOptions; poison: (s: Store) => Promise<void> };
const backends: Backend[] = [{
  name: 'sqlite',
  opts: () => ({ sqlitePath: join(tmp, 'b.db') }),
  // A trigger that refuses one row: something no boundary check foresees (a constraint an operator added).
  poison: async () => {
    const db = new DatabaseSync(join(tmp, 'b.db'));
    db.exec("CREATE TRIGGER poison BEFORE INSERT ON inferences WHEN NEW.requested_model LIKE 'poison%' OR NEW.response_body LIKE 'poison%' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END");
    db.close();
  },
}];
if (pgUp) {
  backends.push({
    name: 'postgres',
    opts: () => ({ sqlitePath: '', databaseUrl: PG_URL, pgSchema: schema }),
    poison: async (s) => { await s.sql.run("ALTER TABLE inferences ADD CONSTRAINT poison CHECK (requested_model NOT LIKE 'poison%' AND (response_body IS NULL OR response_body NOT LIKE 'poison%'))"); },
  });
}

for (const b of backends) {
  describe(`poisoned batches (${b.name}, through the write thread)`, () => {
    test('a token count above 2^31-1 is stored clamped and does not block the batch or the feedback behind it', async (t) => {
      const store = await openStore(b.opts());
      const thread = new WriteThread(b.opts());
      await thread.ready();
      const errors: string[] = [];
      const w = new RecordWriter({ store: withWriteThread(store, thread), batchSize: 100, flushMs: 60_000, onError: (e) => errors.push((e as Error).message) });
      t.after(async () => { await w.close(1000); await thread.close(); await store.close(); });
      const big = rec({ outputTokens: 3_000_000_000, inputTokens: 2.5 });
      const others = [rec(), rec()];
      w.enqueue(others[0]!); w.enqueue(big); w.enqueue(others[1]!);
      w.enqueueFeedback([fbRow(big.id)]);
      await w.flush();
      const s = w.stats();
      assert.deepEqual([s.queued, s.flushed, s.dropped, s.failures, s.repaired], [0, 4, 0, 0, 1], errors.join('\n'));
      const stored = (await store.listInferences({ limit: 10 })).find((x) => x.id === big.id);
      assert.equal(stored?.outputTokens, MAX_INT_COLUMN);
      assert.equal(stored?.inputTokens, 3);
      assert.deepEqual(stored?.extra, { repaired: { inputTokens: '2.5', outputTokens: '3000000000' } });
      assert.equal((await store.feedbackStats({ since: '2000-01-01T00:00:00Z', until: '2100-01-01T00:00:00Z' }))[0]?.count, 1);
    });

    test('a row the store refuses is isolated: the rest of its batch and the feedback lane are written, the row is counted', async (t) => {
      const store = await openStore(b.opts());
      await b.poison(store);
      const thread = new WriteThread(b.opts());
      await thread.ready();
      const errors: string[] = [];
      const w = new RecordWriter({ store: withWriteThread(store, thread), batchSize: 1000, flushMs: 60_000, onError: (e) => errors.push((e as Error).message) });
      t.after(async () => { await w.close(1000); await thread.close(); await store.close(); });
      const before = (await store.listInferences({ limit: 10_000 })).length;
      const good = Array.from({ length: 9 }, () => rec());
      const poisoned = rec({ requestedModel: 'poison/x' });
      // Refused for its body: stored in reduced form (no body, metadata or attempts) so its usage and cost are kept.
      const salvageable = rec({ responseBody: 'poison body', metadata: { a: 1 }, outputTokens: 77, costUsd: '0.5' });
      const batch = [...good.slice(0, 4), poisoned, ...good.slice(4, 7), salvageable, ...good.slice(7)];
      for (const r of batch) w.enqueue(r);
      w.enqueueFeedback([fbRow(good[0]!.id), fbRow(good[8]!.id)]);
      await w.flush();
      await until(() => w.stats().queued === 0);
      const s = w.stats();
      assert.deepEqual([s.flushed, s.rejected, s.dropped, s.salvaged], [12, 1, 1, 1], errors.join('\n'));
      const all = await store.listInferences({ limit: 10_000 });
      const ids = new Set(all.map((x) => x.id));
      assert.equal(ids.size, before + 10);
      const kept = all.find((x) => x.id === salvageable.id)!;
      assert.deepEqual([kept.responseBody, kept.metadata, kept.outputTokens, kept.costUsd], [null, null, 77, '0.5']);
      assert.match(String(kept.extra?.salvaged), /poison/);
      for (const g of good) assert.ok(ids.has(g.id));
      assert.ok(!ids.has(poisoned.id));
      assert.ok(errors.some((m) => /refused a row, dropped/.test(m)), errors.join('\n'));
      // The writer keeps going: later batches are written at once, without back-off.
      const later = rec();
      w.enqueue(later);
      await w.flush();
      assert.ok((await store.getInference(later.id)) !== null);
    });
  });
}
