// A statement the gateway gives up at a deadline (a batch of records past batchDeadlineMs, a read past
// readAbandonMs) is cancelled on the server too, not only cut on the gateway's side (src/store/pg-cancel.ts).
// Destroying the socket alone left the backend running: one waiting on a lock (a migration's ALTER TABLE
// on a large table, a VACUUM FULL run in psql) notices its client gone only when the lock is granted, so
// every try of a batch held behind the lock left one more backend queued on it, each a server
// connection (3 writes and 4 reads given up left 7 backends waiting; max_connections is 100 by default).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres.ts';
import { withinReadDeadline } from '../src/store/read-deadline.ts';
import { RecordWriter } from '../src/records/writer.ts';
import type { InferenceRecord } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { PG_URL, pgTestDb } from './helpers/pg.ts';

const db = await pgTestDb('gw_pgcancel'); // null: PostgreSQL unreachable (CI=true throws instead)
const APP = `gw_pgcancel_${process.pid}`;

const inference = (): InferenceRecord => ({
  id: uuidv7(), createdAt: '2026-02-01T10:00:00.000Z', keyId: 'k1', route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'oa/m', servedModel: 'oa/m', provider: 'oa', attempts: [], status: 200, errorCode: null, latencyMs: 40, ttftMs: 9,
  stream: false, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.25',
  finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

describe('statements given up at a deadline are cancelled on the server', { skip: !db && 'PostgreSQL unreachable' }, () => {
  const clients: pg.Client[] = [];
  const stores: PostgresStore[] = [];
  const client = async (): Promise<pg.Client> => { const c = new pg.Client({ connectionString: PG_URL }); await c.connect(); clients.push(c); return c; };
  after(async () => {
    for (const s of stores) await s.close().catch(() => {});
    for (const c of clients) await c.end().catch(() => {});
  });

  /** The store's backends (by its application_name) still there after up to `ms`. */
  async function backendsLeft(mon: pg.Client, ms: number): Promise<Array<{ state: string; wait: string | null; q: string }>> {
    const t0 = Date.now();
    for (;;) {
      const rows = (await mon.query('SELECT state, wait_event_type AS wait, left(query, 30) AS q FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()', [APP])).rows;
      const busy = rows.filter((r) => r.state !== 'idle');
      if (busy.length === 0 || Date.now() - t0 > ms) return busy;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  test('writes and reads given up behind a lock leave no backend waiting on it; the writer then stores every row once', async () => {
    const store = new PostgresStore({ url: `${PG_URL}?application_name=${APP}`, schema: db!.schema, batchDeadlineMs: 800, readAbandonMs: 800 });
    stores.push(store);
    await store.migrate();
    const mon = await client();
    const locker = await client();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${db!.schema}".inferences IN ACCESS EXCLUSIVE MODE`);

    const lost = [inference()];
    await assert.rejects(store.insertInferences(lost), /did not finish a write within 0.8 s/);
    await assert.rejects(store.insertInferences(lost), /did not finish a write within 0.8 s/);
    await assert.rejects(store.sql.all('SELECT COUNT(*) AS n FROM inferences'), /did not answer within 0.8 s/);
    // Before: 2 COPYs and 2 SELECTs (the read's one retry) still queued on the lock, the lock still held.
    assert.deepEqual(await backendsLeft(mon, 3000), [], 'backends still running what was given up');

    // A writer whose batch waits on the lock past its deadline, tries again, and lands once it is free.
    const errors: unknown[] = [];
    const writer = new RecordWriter({ store, batchSize: 1000, flushMs: 20, maxBackoffMs: 200, onError: (e) => errors.push(e) });
    const recs = Array.from({ length: 50 }, inference);
    for (const r of recs) writer.enqueue(r);
    const t0 = Date.now();
    while (errors.length < 2 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 25));
    assert.ok(errors.length >= 2, `tries given up behind the lock: ${errors.length}`);
    const waiting = await backendsLeft(mon, 0);
    assert.ok(waiting.length <= 1, `at most the try in flight waits on the lock: ${JSON.stringify(waiting)}`);
    await locker.query('ROLLBACK');
    while (writer.stats().flushed < recs.length && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 25));
    await writer.close();
    assert.equal(writer.stats().flushed, recs.length);
    const ids = [...recs, ...lost].map((r) => r.id);
    const stored = (await mon.query(`SELECT id FROM "${db!.schema}".inferences WHERE id = ANY($1::text[])`, [ids])).rows.map((r) => String(r.id)).sort();
    assert.deepEqual(stored, recs.map((r) => r.id).sort(), 'every row of the writer once, none of the batches given up');
    assert.deepEqual(await backendsLeft(mon, 1000), []);
  });

  test('reads refused at their reader\'s deadline behind a lock free their pooled connections: other tables are still read', async () => {
    // Before: each kept its connection until answered or the 120 s abandon bound; with a pool of 3, three
    // reads of the locked table left a read of api_keys refused after 5 s ('timeout exceeded when trying to connect').
    const store = new PostgresStore({ url: `${PG_URL}?application_name=${APP}`, schema: db!.schema, max: 3 });
    stores.push(store);
    await store.migrate();
    await Promise.all([0, 1, 2].map(() => store.sql.all('SELECT pg_sleep(0.05)'))); // three idle connections
    const mon = await client();
    const locker = await client();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${db!.schema}".inferences IN ACCESS EXCLUSIVE MODE`);
    try {
      const t0 = Date.now();
      const reads = await Promise.allSettled([0, 1, 2].map(() => withinReadDeadline(() => store.sql.all('SELECT COUNT(*) AS n FROM inferences'), 800)));
      assert.deepEqual(reads.map((r) => r.status === 'rejected' && (r.reason as Error).message), Array(3).fill('the database did not answer within 0.8 s'));
      assert.ok(Date.now() - t0 < 2000, `refused after ${Date.now() - t0} ms`);
      const t1 = Date.now();
      assert.equal(await withinReadDeadline(() => store.getKey('none'), 3000), null);
      assert.ok(Date.now() - t1 < 1500, `another table read in ${Date.now() - t1} ms`);
      assert.deepEqual(await backendsLeft(mon, 3000), [], 'the given-up reads cancelled on the server');
      assert.equal(store.discardedConnections, 0, 'a slow read is no lost connection: the idle ones stay');
      assert.equal(store.readRetries, 0, 'a read its reader left is not run again');
      // A read passed as a promise is only waited for less: it runs on (the caller did not hand it over).
      await assert.rejects(withinReadDeadline(store.sql.all('SELECT COUNT(*) AS n FROM inferences'), 300), /within 0.3 s/);
    } finally { await locker.query('ROLLBACK'); }
    // With the lock gone, the same read answers under a deadline.
    assert.equal(Number((await withinReadDeadline(() => store.sql.all('SELECT COUNT(*) AS n FROM inferences'), 3000))[0]!.n) >= 0, true);
  });
});
