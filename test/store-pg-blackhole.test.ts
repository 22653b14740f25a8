// PostgreSQL connections a firewall, NAT or failover dropped without a FIN or RST, through a TCP proxy on
// 127.0.0.1 that forgets the flows open at one moment (test/helpers/tcp-proxy.ts, forget()) while new
// connections pass. Every pooled connection has TCP keepalive (the kernel's timer, read with `ss`), so
// on a real network a dead one is failed by the kernel and dropped by the pool instead of waited on.
// A connection found lost discards the pool's other idle connections older than it: a read's one
// retry and the record writer's next batch take a fresh connection, not the next dead one (before, a
// read after a failover failed on the second dead connection it met, and so did each writer retry).
// A batch of records not done by its deadline, and a read unanswered past the abandon bound, give
// their connections up: the batch is written on a fresh one, the read's pool slot is free again.
// The proxy's own kernel answers keepalive probes, so a silent black hole here is seen first by the
// read deadline (a 503 after 5 s): that case is shown, and docs/reliability.md says what happens.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../src/store/open.ts';
import { classifyStoreError } from '../src/store/errors.ts';
import { withinReadDeadline } from '../src/store/read-deadline.ts';
import { PostgresStore } from '../src/store/postgres.ts';
import { RecordWriter } from '../src/records/writer.ts';
import type { InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { pgTestDb } from './helpers/pg.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

const db = await pgTestDb('gw_blackhole'); // null: PostgreSQL unreachable (CI=true throws instead)
const APP = `gw_blackhole_${process.pid}`;

const inference = (): InferenceRecord => ({
  id: uuidv7(), createdAt: '2026-02-01T10:00:00.000Z', keyId: 'k1', route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'oa/m', servedModel: 'oa/m', provider: 'oa', attempts: [], status: 200, errorCode: null, latencyMs: 40, ttftMs: 9,
  stream: false, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.25',
  finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

/** Opens `n` pooled connections at once (each query holds its own), then leaves them idle in the pool. */
async function warm(store: Store, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, () => store.sql.all('SELECT pg_sleep(0.05)')));
}

describe('PostgreSQL connections dropped without a FIN or RST', { skip: !db && 'PostgreSQL unreachable' }, () => {
  let proxy: TcpProxy;
  const stores: Store[] = [];
  const open = async (): Promise<PostgresStore> => {
    const s = await openStore({ sqlitePath: '', databaseUrl: `${proxy.url()}?application_name=${APP}`, pgSchema: db!.schema });
    stores.push(s);
    return s as PostgresStore;
  };

  before(async () => { proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 }); });
  after(async () => {
    for (const s of stores) await Promise.race([s.close(), new Promise((r) => setTimeout(r, 2000))]);
    await proxy.close();
  });

  const hasSs = ((): boolean => { try { execFileSync('ss', ['-V'], { stdio: 'ignore' }); return true; } catch { return false; } })();
  test('every pooled connection has a keepalive timer (the kernel probes it after 10 s quiet)', { skip: !hasSs && process.env.CI !== 'true' && 'no ss (iproute2) to read the sockets\' timers' }, async () => {
    const store = await open();
    await warm(store, 3);
    // The gateway's side of its connections to the proxy, with their timers: `timer:(keepalive,9.9sec,0)`.
    const lines = execFileSync('ss', ['-tnoH', 'state', 'established', `( dport = :${proxy.port} )`], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
    assert.ok(lines.length >= 3, `connections to the proxy: ${lines.length}`);
    for (const l of lines) {
      const timer = /timer:\(keepalive,([\d.]+)(ms|sec|min)/.exec(l);
      assert.ok(timer, `no keepalive timer: ${l}`);
      assert.ok(timer[2] !== 'min' && Number(timer[1]) <= (timer[2] === 'ms' ? 10_000 : 10), l);
    }
    await store.close();
    stores.splice(stores.indexOf(store), 1);
  });

  test('a read on a silently dropped connection is refused at the read deadline as unavailable (the kernel cannot see a proxy\'s black hole)', async () => {
    const store = await open();
    await warm(store, 1);
    assert.equal(proxy.forget('silent') >= 1, true);
    const t0 = Date.now();
    const e = await withinReadDeadline(store.sql.all('SELECT 1'), 1000).then(() => null, (x: unknown) => x);
    assert.ok(e, 'no answer through a black hole');
    assert.equal(classifyStoreError(e), 'unavailable');
    assert.ok(Date.now() - t0 < 1500, `${Date.now() - t0} ms`);
  });

  test('after a failover, a read\'s retry takes a fresh connection, not the next dead one', async () => {
    const store = await open();
    await warm(store, 4);
    const resets0 = proxy.resets();
    proxy.forget('reset'); // the next bytes into any of the 4 idle connections are answered with an RST
    const retries0 = store.readRetries;
    const rows = await withinReadDeadline(store.sql.all('SELECT 1 AS one'), 5000);
    assert.deepEqual(rows.map((r) => Number(r.one)), [1]);
    assert.equal(store.readRetries - retries0, 1, 'retried once');
    assert.equal(proxy.resets() - resets0, 1, 'only one dead connection was met');
    assert.ok(store.discardedConnections >= 3, `idle connections discarded: ${store.discardedConnections}`);
    // The pool is fresh now: the next reads answer at once, without a retry.
    for (let i = 0; i < 3; i++) assert.equal((await store.sql.all('SELECT 2 AS two'))[0]!.two, 2);
    assert.equal(store.readRetries - retries0, 1);
  });

  test('the record writer\'s batch lost with its connection is written on a fresh one at its first retry, once', async () => {
    const store = await open();
    await warm(store, 4);
    const errors: unknown[] = [];
    const writer = new RecordWriter({ store, batchSize: 1000, flushMs: 50, maxBackoffMs: 200, onError: (e) => errors.push(e) });
    const recs = Array.from({ length: 20 }, inference);
    proxy.forget('reset');
    for (const r of recs) writer.enqueue(r);
    const t0 = Date.now();
    while (writer.stats().flushed < recs.length && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 25));
    await writer.close();
    assert.equal(writer.stats().flushed, recs.length, `written in ${Date.now() - t0} ms`);
    assert.ok(errors.length <= 1, `failed batches: ${errors.length} (${errors.map((e) => (e as Error).message).join('; ')})`);
    const ids = recs.map((r) => r.id);
    const stored = await store.sql.all(`SELECT COUNT(*) AS n FROM inferences WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
    assert.equal(Number(stored[0]!.n), recs.length, 'none lost, none twice');
  });

  test('a record batch sent into a silent black hole is given up at the batch deadline and written on a fresh connection', async () => {
    const store = new PostgresStore({ url: `${proxy.url()}?application_name=${APP}`, schema: db!.schema, batchDeadlineMs: 1000 });
    stores.push(store);
    await warm(store, 3);
    const errors: unknown[] = [];
    const writer = new RecordWriter({ store, batchSize: 1000, flushMs: 50, maxBackoffMs: 200, onError: (e) => errors.push(e) });
    const recs = Array.from({ length: 20 }, inference);
    proxy.forget('silent'); // the batch's bytes vanish and no answer ever comes: before, it waited for ever
    for (const r of recs) writer.enqueue(r);
    const t0 = Date.now();
    while (writer.stats().flushed < recs.length && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 25));
    const ms = Date.now() - t0;
    assert.equal(writer.stats().flushed, recs.length, `written after ${ms} ms`);
    assert.ok(ms >= 900 && ms < 4000, `${ms} ms: the deadline, a back-off, one fresh write`);
    assert.equal(errors.length, 1, errors.map((e) => (e as Error).message).join('; '));
    assert.match((errors[0] as Error).message, /did not finish a write within 1 s/);
    await writer.close();
    const ids = recs.map((r) => r.id);
    const stored = await store.sql.all(`SELECT COUNT(*) AS n FROM inferences WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
    assert.equal(Number(stored[0]!.n), recs.length, 'none lost, none twice');
  });

  test('a read nobody answers gives its connection up at the abandon bound: the pool slot is free again', async () => {
    // Before, each such read held its pooled connection until the kernel stopped retransmitting (about
    // 15 minutes): with max 2, two reads into a black hole left a third waiting 5 s for a connection, refused.
    const store = new PostgresStore({ url: `${proxy.url()}?application_name=${APP}`, schema: db!.schema, max: 2, readAbandonMs: 1500 });
    stores.push(store);
    await warm(store, 2);
    proxy.forget('silent');
    for (let i = 0; i < 2; i++) {
      const e = await withinReadDeadline(store.sql.all('SELECT 1'), 1000).then(() => null, (x: unknown) => x);
      assert.equal(classifyStoreError(e), 'unavailable', 'the caller\'s deadline answers first');
    }
    await new Promise((r) => setTimeout(r, 800)); // past the abandon bound of both reads
    const t0 = Date.now();
    const rows = await store.sql.all('SELECT 3 AS three');
    assert.equal(Number(rows[0]!.three), 3);
    assert.ok(Date.now() - t0 < 1000, `answered on a fresh connection in ${Date.now() - t0} ms`);
  });
});
