// A budget counter Redis lost is rebuilt without a request waiting on the database, against a
// redis-server of the test's own: requests are admitted at once on the last view of the counter while
// a background re-seed reads the store; spend still queued in the record writer and reservations open
// across the loss are counted; another replica's reservation settles onto the rebuilt counter exactly;
// with no view at all only one request at a time goes through (overspend at most one reservation);
// a new period starts at zero without reading the store; re-seeds run a few at a time and retry.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { RedisLimiter } from '../src/limits/redis.ts';
import { LimitError, toNanos, type Reservation } from '../src/limits/limiter.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { KeyRecord, Store } from '../src/store/types.ts';
import type { SqlRunner } from '../src/store/sql-runner.ts';
import { startOwnRedis, type OwnRedis } from './helpers/redis-server.ts';
import { limitedKey, spendRecord } from './helpers/limit-records.ts';

let redis: OwnRedis; let store: SqliteStore;
let n = 0;

before(async () => {
  redis = await startOwnRedis();
  store = new SqliteStore({ path: ':memory:' });
  await store.migrate();
});
after(async () => { await redis.stop(); await store.close(); });

const key = (over: Partial<KeyRecord> = {}): KeyRecord => limitedKey(`rk${n++}`, { budgetUsd: '2', budgetPeriod: 'month', ...over });

/**
 * The store as the limiter sees it, with its reads slowed (`delayMs`) or failing (`failures` left) and
 * counted, including how many ran at once. Writes go to the real store.
 */
function watchedStore(): Store & { delayMs: number; failures: number; reads: number; maxConcurrent: number } {
  let running = 0;
  const w = { delayMs: 0, failures: 0, reads: 0, maxConcurrent: 0 };
  const read = async <T>(f: () => Promise<T>): Promise<T> => {
    w.reads++;
    running++;
    w.maxConcurrent = Math.max(w.maxConcurrent, running);
    try {
      if (w.delayMs > 0) await new Promise((r) => setTimeout(r, w.delayMs));
      if (w.failures > 0) { w.failures--; throw new Error('database unavailable'); }
      return await f();
    } finally { running--; }
  };
  const sql: SqlRunner = { dialect: store.sql.dialect, all: (q, p) => read(() => store.sql.all(q, p)), run: (q, p) => store.sql.run(q, p), tx: (fn) => store.sql.tx(fn) };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'sql') return sql;
      if (prop === 'keySpend') return (id: string, since: string) => read(() => target.keySpend(id, since));
      if (prop in w) return w[prop as keyof typeof w];
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
    set(_t, prop, v) { (w as Record<string, unknown>)[prop as string] = v; return true; },
  }) as unknown as Store & typeof w;
}

type Opts = { queued?: Map<string, string[]>; now?: () => number; prefix?: string };
const limiter = (o: Opts = {}): RedisLimiter => new RedisLimiter({
  redis: redis.url, prefix: o.prefix ?? `rs${process.pid}:${n++}:`, probeMs: 100, onError: () => {}, reseedDelayMs: () => 50,
  unwritten: (keyId) => o.queued?.get(keyId) ?? [], ...(o.now ? { now: o.now } : {}),
});

async function attempt(l: RedisLimiter, k: KeyRecord, costUsd: string): Promise<Reservation | LimitError> {
  try { return await l.acquire(k, { tokens: 1, costUsd }); } catch (e) { if (e instanceof LimitError) return e; throw e; }
}
const admitted = (r: Reservation | LimitError): r is Reservation => !(r instanceof LimitError);

async function reseeded(l: RedisLimiter, ms = 10_000): Promise<void> {
  for (const t0 = Date.now(); l.reseeding > 0; await new Promise((r) => setTimeout(r, 20))) if (Date.now() - t0 > ms) throw new Error('re-seed did not finish');
}

test('after FLUSHALL no request waits on the store; the budget holds exactly on the last view, then the store confirms it', async () => {
  const k = key();
  await store.insertInferences([spendRecord(k, '1')]);
  const s = watchedStore();
  const l = limiter();
  try {
    await l.seed(s, [k]);
    await redis.client().flushall();
    s.delayMs = 1500; s.reads = 0; // a slow database from here on
    const t0 = performance.now();
    const rs = await Promise.all(Array.from({ length: 20 }, () => attempt(l, k, '0.1')));
    const took = performance.now() - t0;
    assert.ok(took < 500, `20 requests after the loss took ${took.toFixed(0)} ms with a 1500 ms store (before: each waited on the store read)`);
    assert.equal(rs.filter(admitted).length, 10, 'exactly the budget left ($1 of $2) is admitted');
    assert.equal(await l.spentNanos(k), toNanos('2'));
    assert.equal(l.reseeding, 1);
    await reseeded(l);
    assert.equal(s.reads, 1, 'one background read');
    assert.equal(await l.spentNanos(k), toNanos('2'), 'the store agreed with the view: nothing corrected');
    for (const r of rs) if (admitted(r)) await r.settle({ tokens: 1, costUsd: '0.05' });
    assert.equal(await l.spentNanos(k), toNanos('1.5'));
  } finally { await l.close(); }
});

test('spend queued in the record writer but not yet written is part of the re-seeded budget', async () => {
  const k = key();
  await store.insertInferences([spendRecord(k, '1')]);
  const queued = new Map<string, string[]>();
  const l = limiter({ queued });
  try {
    await l.seed(store, [k]);
    const r = await attempt(l, k, '0.7');
    assert.ok(admitted(r));
    await r.settle({ tokens: 1, costUsd: '0.7' });
    queued.set(k.id, ['0.7']); // its record waits in the writer: the store still says $1
    await redis.client().flushall();
    assert.ok(admitted(await attempt(l, k, '0.2')));
    await reseeded(l);
    // Store $1 + queued $0.7 + the new $0.2 (the store alone would have said $1.2 and let $0.7 more through).
    assert.equal(await l.spentNanos(k), toNanos('1.9'));
    assert.ok(!admitted(await attempt(l, k, '0.15')));
    assert.ok(admitted(await attempt(l, k, '0.1')));
  } finally { await l.close(); }
});

test('a reservation open across the loss settles onto the rebuilt counter exactly', async () => {
  const k = key();
  await store.insertInferences([spendRecord(k, '1')]);
  const l = limiter();
  try {
    await l.seed(store, [k]);
    const open = await attempt(l, k, '0.5');
    assert.ok(admitted(open));
    await redis.client().flushall();
    const next = await attempt(l, k, '0.1');
    assert.ok(admitted(next));
    await reseeded(l);
    assert.equal(await l.spentNanos(k), toNanos('1.6'), 'store $1 + the open $0.5 reservation + $0.1');
    await open.settle({ tokens: 1, costUsd: '0.3' });
    await next.settle({ tokens: 1, costUsd: '0.1' });
    assert.equal(await l.spentNanos(k), toNanos('1.4'), 'what was really spent: 1 + 0.3 + 0.1 (before: the open reservation was lost and its settlement subtracted)');
  } finally { await l.close(); }
});

test('a reservation of another replica that never saw the loss adds its whole cost to the rebuilt counter', async () => {
  const k = key();
  await store.insertInferences([spendRecord(k, '1')]);
  const prefix = `rs${process.pid}:${n++}:`;
  const a = limiter({ prefix }); const b = limiter({ prefix });
  try {
    await a.seed(store, [k]); await b.seed(store, [k]);
    const open = await attempt(b, k, '0.5');
    assert.ok(admitted(open));
    await redis.client().flushall();
    const mine = await attempt(a, k, '0.1');
    assert.ok(admitted(mine));
    await reseeded(a);
    await mine.settle({ tokens: 1, costUsd: '0.1' });
    await open.settle({ tokens: 1, costUsd: '0.3' });
    assert.equal(await a.spentNanos(k), toNanos('1.4'), '1 stored + 0.1 + 0.3 (before: 0.9, the settlement subtracted an estimate the counter never held)');
  } finally { await a.close(); await b.close(); }
});

test('no view of the counter at all: one request at a time until the store answers, overspend at most that one', async () => {
  const k = key();
  await store.insertInferences([spendRecord(k, '1.75')]);
  const s = watchedStore();
  const l = limiter();
  try {
    await l.seed(s, []); // this replica knows nothing of the key
    await redis.client().flushall();
    s.delayMs = 300;
    const [first, second] = await Promise.all([attempt(l, k, '0.3'), attempt(l, k, '0.3')]);
    assert.ok(admitted(first), 'one goes through');
    assert.ok(second instanceof LimitError && second.status === 429 && second.headers['retry-after'] === '1', 'the other is asked to retry');
    await reseeded(l);
    assert.equal(await l.spentNanos(k), toNanos('2.05'), '$1.75 stored + the one $0.3 reservation: over by less than one reservation');
    assert.ok(!admitted(await attempt(l, k, '0.01')), 'nothing more once the store answered');
    await first.settle({ tokens: 1, costUsd: '0.2' });
    assert.equal(await l.spentNanos(k), toNanos('1.95'));
  } finally { await l.close(); }
});

test('a new period starts at zero without reading the store', async () => {
  const day = 86_400_000;
  let now = Date.UTC(2031, 0, 10, 23, 59, 0);
  const k = key({ budgetPeriod: 'day', budgetUsd: '1' });
  await store.insertInferences([spendRecord(k, '0.9', new Date(now - 1000))]);
  const s = watchedStore();
  const l = limiter({ now: () => now });
  try {
    await l.seed(s, [k]);
    assert.ok(!admitted(await attempt(l, k, '0.2')), 'yesterday: $0.9 of $1 spent');
    now += day;
    s.reads = 0;
    assert.ok(admitted(await attempt(l, k, '0.2')), 'a new day');
    assert.equal(l.reseeding, 0);
    assert.equal(s.reads, 0);
    assert.equal(await l.spentNanos(k), toNanos('0.2'));
  } finally { await l.close(); }
});

test('many counters lost at once: re-seeded a few at a time, retried while the store fails', async () => {
  const keys = Array.from({ length: 10 }, () => key());
  await store.insertInferences(keys.map((k) => spendRecord(k, '1')));
  const s = watchedStore();
  const l = limiter();
  try {
    await l.seed(s, keys);
    await redis.client().flushall();
    s.delayMs = 100; s.failures = 2; s.reads = 0; s.maxConcurrent = 0;
    const rs = await Promise.all(keys.map((k) => attempt(l, k, '0.5')));
    assert.equal(rs.filter(admitted).length, 10);
    await reseeded(l, 20_000);
    assert.ok(s.maxConcurrent <= 4, `${s.maxConcurrent} store reads at once`);
    assert.equal(s.reads, 12, 'ten re-seeds, two retried after a failure');
    for (const k of keys) assert.equal(await l.spentNanos(k), toNanos('1.5'));
  } finally { await l.close(); }
});

test('a reservation settling before the re-seed counts the writer queue is counted once, from the queue', async () => {
  const k = key();
  await store.insertInferences([spendRecord(k, '1')]);
  const queued = new Map<string, string[]>();
  const l = limiter({ queued });
  try {
    await l.seed(store, [k]);
    const open = await attempt(l, k, '0.5');
    assert.ok(admitted(open));
    await redis.client().flushall();
    assert.ok(admitted(await attempt(l, k, '0.1')));
    assert.equal(l.reseeding, 1);
    // Settled while the re-seed waits; its record goes to the writer's queue right after (as bookkeeping does).
    await open.settle({ tokens: 1, costUsd: '0.3' });
    queued.set(k.id, ['0.3']);
    await reseeded(l);
    assert.equal(await l.spentNanos(k), toNanos('1.4'), '1 stored + 0.3 queued + 0.1 open, the 0.3 not added twice');
  } finally { await l.close(); }
});

test('the record writer reports the cost of a key\'s records it has not written, by creation time', async () => {
  const { RecordWriter } = await import('../src/records/writer.ts');
  // Nothing is flushed before close(): a long flush period and a large batch.
  const w = new RecordWriter({ store, flushMs: 60_000, batchSize: 1000, onError: () => {} });
  const k = key(); const other = key();
  try {
    w.enqueue(spendRecord(k, '0.25', new Date('2031-02-01T10:00:00Z')));
    w.enqueue(spendRecord(k, '0.5', new Date('2031-02-01T12:00:00Z')));
    w.enqueue(spendRecord(other, '9', new Date('2031-02-01T10:00:00Z')));
    assert.deepEqual(w.unwrittenCosts(k.id, '2031-02-01T00:00:00.000Z', '2031-02-01T11:00:00.000Z'), ['0.25']);
    assert.deepEqual(w.unwrittenCosts(k.id, '2031-02-01T00:00:00.000Z', '2031-02-02T00:00:00.000Z').sort(), ['0.25', '0.5']);
  } finally { await w.close(); }
});
