// A budget counter Redis lost is rebuilt without a request waiting on the database, against a
// redis-server of the test's own: requests are admitted at once on the last view of the counter while
// a background re-seed reads the store; spend still queued in the record writer and reservations open
// across the loss are counted; another replica's reservation settles onto the rebuilt counter exactly;
// with no view at all only one request at a time goes through (overspend at most one reservation);
// a new period starts at zero without reading the store; re-seeds run a few at a time and retry. A
// minute's request and token counts (rpm, tpm) lost with Redis's data are rebuilt the same way.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { RedisLimiter } from '../src/limits/redis.ts';
import { RESEED_LEASE_MS } from '../src/limits/redis-reseed.ts';
import { LimitError, toNanos, type Reservation } from '../src/limits/limiter.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { InferenceRecord, KeyRecord, Store } from '../src/store/types.ts';
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
  unwritten: (keyId) => (o.queued?.get(keyId) ?? []).map((c) => spendRecord(limitedKey(keyId), c)), ...(o.now ? { now: o.now } : {}),
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
    await reseeded(l); // a counter this Redis never held (no mark) is checked against the store once
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

test('the record writer reports a key\'s records it has not written, by creation time', async () => {
  const { RecordWriter } = await import('../src/records/writer.ts');
  // Nothing is flushed before close(): a long flush period and a large batch.
  const w = new RecordWriter({ store, flushMs: 60_000, batchSize: 1000, onError: () => {} });
  const k = key(); const other = key();
  try {
    w.enqueue(spendRecord(k, '0.25', new Date('2031-02-01T10:00:00Z')));
    w.enqueue(spendRecord(k, '0.5', new Date('2031-02-01T12:00:00Z')));
    w.enqueue(spendRecord(other, '9', new Date('2031-02-01T10:00:00Z')));
    assert.deepEqual(w.unwrittenRecords(k.id, '2031-02-01T00:00:00.000Z', '2031-02-01T11:00:00.000Z').map((r) => r.costUsd), ['0.25']);
    assert.deepEqual(w.unwrittenRecords(k.id, '2031-02-01T00:00:00.000Z', '2031-02-02T00:00:00.000Z').map((r) => r.costUsd).sort(), ['0.25', '0.5']);
  } finally { await w.close(); }
});

// A minute's request and token counts (rpm, tpm) lost with Redis's data are rebuilt the same way.

/** A record of a request the limiter admitted in the window, or one it refused (error, no model, no attempt). */
const windowRecord = (k: KeyRecord, at: number, input: number, output: number, refused = false): InferenceRecord => ({
  ...spendRecord(k, '0', new Date(at)), inputTokens: input, outputTokens: output,
  ...(refused ? { status: 429, errorCode: 'rate_limited', servedModel: null, provider: null } : {}),
});
const windowOf = async (k: KeyRecord, prefix: string, at: number): Promise<{ r: number; t: number }> => {
  const [r, t] = await redis.client().hmget(`${prefix}{${k.id}}:w:${Math.floor(at / 60_000)}`, 'r', 't');
  return { r: Number(r), t: Number(t) };
};

test('rpm after FLUSHALL: the minute\'s requests are not counted again from zero (the replica\'s view, then the store)', async () => {
  const at = Date.UTC(2031, 2, 3, 10, 20, 5);
  let now = at;
  const k = key({ budgetUsd: null, budgetPeriod: null, rpmLimit: 3 });
  const l = limiter({ now: () => now });
  try {
    await l.seed(store, [k]);
    for (let i = 0; i < 3; i++) {
      const r = await attempt(l, k, '0');
      assert.ok(admitted(r), `${i} ${String(r)} ${JSON.stringify(await redis.client().keys("*"))}`);
      await r.settle({ tokens: 1, costUsd: '0' });
    }
    await store.insertInferences([0, 1, 2].map((i) => windowRecord(k, at + i, 1, 0)));
    await redis.client().flushall();
    now += 1000;
    const after = await attempt(l, k, '0');
    assert.ok(after instanceof LimitError && after.reason === 'rpm', 'the 4th request of the minute is refused (before: the count started again at 0 and 3 more passed)');
    await reseeded(l);
    assert.ok(!admitted(await attempt(l, k, '0')), 'still refused once the store confirmed 3');
    now = at + 60_000;
    assert.ok(admitted(await attempt(l, k, '0')), 'the next minute admits again');
    assert.equal(l.reseeding, 0, 'a new minute is not a loss: no re-seed');
  } finally { await l.close(); }
});

test('rpm and tpm re-seeded from the store, this replica\'s unwritten records and its open reservations; refused requests not counted', async () => {
  const at = Date.UTC(2031, 2, 3, 11, 30, 10);
  const now = (): number => at + 2000;
  const k = key({ budgetUsd: null, budgetPeriod: null, rpmLimit: 7, tpmLimit: 100_000 });
  const prefix = `rs${process.pid}:${n++}:`;
  const queued = new Map<string, string[]>();
  const unwritten: InferenceRecord[] = [];
  const s = watchedStore();
  const l2 = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, onError: () => {}, reseedDelayMs: () => 50, now, unwritten: () => unwritten });
  const l1 = limiter({ prefix, queued, now });
  try {
    await l2.seed(s, [k]); await l1.seed(store, [k]);
    // This replica: one answer settled at 80 tokens whose record waits in its writer, one still running (200).
    const a = await attempt(l2, k, '0');
    assert.ok(admitted(a));
    await a.settle({ tokens: 80, costUsd: '0' });
    unwritten.push(windowRecord(k, at, 50, 30));
    const open = await l2.acquire(k, { tokens: 200, costUsd: '0' });
    // Another replica, after this one's last look: three answers of 10 tokens, written; one refusal recorded.
    for (let i = 0; i < 3; i++) await (await l1.acquire(k, { tokens: 10, costUsd: '0' })).settle({ tokens: 10, costUsd: '0' });
    await store.insertInferences([1, 2, 3].map((i) => windowRecord(k, at + i, 5, 5)).concat(windowRecord(k, at + 4, 0, 0, true)));
    assert.deepEqual(await windowOf(k, prefix, at), { r: 5, t: 310 });
    await reseeded(l1); await reseeded(l2); // a key's first window is checked against the store once (no mark yet)
    await redis.client().flushall();
    s.reads = 0;
    assert.ok(admitted(await l2.acquire(k, { tokens: 1, costUsd: '0' })), 'admitted at once on this replica\'s view (2 requests)');
    await reseeded(l2);
    assert.equal(s.reads, 1, 'one store read');
    // Store 3 requests / 30 tokens + unwritten 1 / 80 + open 1 / 200, and the request admitted meanwhile.
    assert.deepEqual(await windowOf(k, prefix, at), { r: 6, t: 311 }, 'before: 1 request, 1 token');
    assert.ok(admitted(await attempt(l2, k, '0')));
    assert.ok((await attempt(l2, k, '0')) instanceof LimitError, 'rpm 7 holds across the loss');
    await open.settle({ tokens: 150, costUsd: '0' });
    assert.equal((await windowOf(k, prefix, at)).t, 262, 'the open reservation settles onto the rebuilt window as a delta (312 - 50)');
  } finally { await l1.close(); await l2.close(); }
});

test('a key\'s window: a new minute reads nothing; a replica with no view of a lost window admits on 0 until the store answers', async () => {
  const at = Date.UTC(2031, 2, 3, 12, 40, 1);
  let now = at;
  const k = key({ budgetUsd: null, budgetPeriod: null, rpmLimit: 4 });
  const prefix = `rs${process.pid}:${n++}:`;
  const s = watchedStore();
  const l1 = limiter({ prefix, now: () => now });
  const l2 = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, onError: () => {}, reseedDelayMs: () => 50, now: () => now });
  try {
    await l1.seed(store, [k]); await l2.seed(s, []);
    for (let m = 0; m < 3; m++) {
      now = at + m * 60_000;
      for (let i = 0; i < 3; i++) await (await l1.acquire(k, { tokens: 1, costUsd: '0' })).settle({ tokens: 1, costUsd: '0' });
    }
    await reseeded(l1); // the key's first window ever (no mark): checked once against the store
    const reads = s.reads;
    for (let m = 3; m < 6; m++) {
      now = at + m * 60_000;
      for (let i = 0; i < 3; i++) await (await l2.acquire(k, { tokens: 1, costUsd: '0' })).settle({ tokens: 1, costUsd: '0' });
    }
    assert.equal(l2.reseeding, 0, 'minute after minute: no re-seed');
    assert.equal(s.reads, reads, 'and no store read');
    await store.insertInferences([0, 1, 2].map((i) => windowRecord(k, now + i, 1, 0)));
    await redis.client().flushall();
    s.reads = 0;
    now += 1000;
    assert.ok(admitted(await attempt(l2, k, '0')), 'no view: admitted on 0 while the store is read');
    await reseeded(l2);
    assert.equal(s.reads, 1);
    assert.ok((await attempt(l2, k, '0')) instanceof LimitError, '3 stored + 1: the 5th of the minute is refused (before: 3 more passed)');
  } finally { await l1.close(); await l2.close(); }
});

test('requests admitted one after another on a provisional counter count once each (a view of the counter itself raises nothing)', async () => {
  const k = key();
  await store.insertInferences([spendRecord(k, '1')]);
  const s = watchedStore();
  const l = limiter();
  try {
    await l.seed(s, [k]);
    await redis.client().flushall();
    s.delayMs = 1500; // the re-seed lands after the requests
    const rs: Array<Reservation | LimitError> = [];
    for (let i = 0; i < 11; i++) rs.push(await attempt(l, k, '0.1'));
    assert.equal(rs.filter(admitted).length, 10, '$1 left of $2: ten $0.10 requests (before: each view raised the base again, and only 4 passed)');
    assert.equal(await l.spentNanos(k), toNanos('2'));
    await reseeded(l);
    assert.equal(await l.spentNanos(k), toNanos('2'));
  } finally { await l.close(); }
});

test('the minute\'s admitted requests and their tokens, read the same from SQLite and PostgreSQL', async (t) => {
  const { PostgresStore } = await import('../src/store/postgres.ts');
  const { dropSchema, freshSchema, pgAvailable, PG_URL } = await import('./helpers/pg.ts');
  const { storedWindow } = await import('../src/limits/redis-reseed.ts');
  const at = Date.UTC(2031, 4, 6, 7, 8, 0);
  const k = key(); const other = key();
  const rows = [
    windowRecord(k, at, 10, 5), windowRecord(k, at + 30_000, 100, 1), windowRecord(k, at + 59_999, 1, 1),
    { ...windowRecord(k, at + 1000, 7, 7), status: 502, errorCode: 'upstream_error', servedModel: null, attempts: [{ provider: 'a', model: 'a/b', status: 502, error: 'x', latencyMs: 1 }] }, // admitted, failed upstream
    windowRecord(k, at + 2000, 0, 0, true), // refused by a limit
    windowRecord(k, at - 1, 1000, 0), windowRecord(k, at + 60_000, 1000, 0), windowRecord(other, at + 5, 1000, 0),
  ];
  const stores: Array<[string, Store]> = [['sqlite', store]];
  const pgUp = await pgAvailable();
  const schema = freshSchema('gw_limits_window');
  if (pgUp) { const pgs = new PostgresStore({ url: PG_URL, schema }); await pgs.migrate(); stores.push(['postgres', pgs]); } else t.diagnostic('PostgreSQL not reachable: SQLite only');
  try {
    for (const [name, s] of stores) {
      await s.insertInferences(rows);
      const since = new Date(at).toISOString();
      assert.deepEqual(await storedWindow(s.sql, k.id, since, new Date(at + 60_000).toISOString()), { requests: 4, tokens: 132 }, name);
      assert.deepEqual(await storedWindow(s.sql, k.id, since, new Date(at + 30_000).toISOString()), { requests: 2, tokens: 29 }, `${name}: up to the loss`);
    }
  } finally { if (pgUp) { await stores[1]![1].close(); await dropSchema(schema); } }
});

test('keys changed after a FLUSHALL: the seed does not reset a lost counter to the store alone (open reservations and queued records)', async () => {
  const k = key();
  await store.insertInferences([spendRecord(k, '1')]);
  const queued = new Map<string, string[]>();
  const l = limiter({ queued });
  try {
    await l.seed(store, [k]);
    await reseeded(l);
    const done = await attempt(l, k, '0.2');
    assert.ok(admitted(done));
    await done.settle({ tokens: 1, costUsd: '0.2' });
    queued.set(k.id, ['0.2']); // its record waits in the writer
    const open = await attempt(l, k, '0.5'); // still running
    assert.ok(admitted(open));
    await redis.client().flushall();
    await l.seed(store, [k]); // an admin edits a key: every budget is seeded again
    const rs: Array<Reservation | LimitError> = [];
    for (let i = 0; i < 10; i++) rs.push(await attempt(l, k, '0.1'));
    await open.settle({ tokens: 1, costUsd: '0.5' });
    queued.get(k.id)!.push('0.5'); // its record is queued as it settles (bookkeeping)
    await reseeded(l);
    // $1 stored + $0.2 queued + $0.5 running = $1.7: three more $0.10 fit under $2.
    assert.equal(rs.filter(admitted).length, 3, 'before: 10 admitted on the store\'s $1 alone, then the running $0.5 landed on top: $2.5 of $2');
    assert.equal(await l.spentNanos(k), toNanos('2'));
  } finally { await l.close(); }
});

test('spend admitted fail-open while Redis was away is in the counter rebuilt after a restart without persistence, before the store answers', async () => {
  const k = key({ budgetUsd: '1' });
  const queued = new Map<string, string[]>();
  const s = watchedStore();
  const l = new RedisLimiter({
    redis: redis.url, prefix: `rs${process.pid}:${n++}:`, probeMs: 100, onError: () => {}, reseedDelayMs: () => 50,
    unwritten: (keyId) => (queued.get(keyId) ?? []).map((c) => spendRecord(limitedKey(keyId), c)),
  });
  try {
    await l.seed(s, [k]);
    await reseeded(l);
    assert.ok(admitted(await attempt(l, k, '0.1')));
    await redis.kill();
    const trip = await attempt(l, k, '0'); // trips the breaker
    if (admitted(trip)) await trip.release();
    const a = await attempt(l, k, '0.5'); const b = await attempt(l, k, '0.4');
    assert.ok(admitted(a) && admitted(b), 'fail open');
    assert.ok(!admitted(await attempt(l, k, '0.2')), 'fail open, $0.1 spent and $0.9 running: no room for $0.2 (before: admitted)');
    await a.settle({ tokens: 1, costUsd: '0.4' }); await b.settle({ tokens: 1, costUsd: '0.4' });
    queued.set(k.id, ['0.4', '0.4']);
    s.delayMs = 1500; // the store re-seed lands late
    await redis.restart();
    for (const t0 = Date.now(); l.unavailable; await new Promise((r) => setTimeout(r, 20))) if (Date.now() - t0 > 5000) throw new Error('Redis not back');
    assert.ok(!admitted(await attempt(l, k, '0.2')), '$0.1 + $0.8 spent: $0.2 more is refused at once (before: admitted on the $0.1 view until the store answered)');
    assert.ok(admitted(await attempt(l, k, '0.1')));
  } finally { await l.close(); }
});

test('a re-seed lease that ran out is taken over by the next replica (budget counter and minute window), never while it runs', async () => {
  const at = Date.UTC(2031, 2, 3, 12, 40, 5);
  const k = key({ rpmLimit: 100 });
  const prefix = `lease${process.pid}:${n++}:`;
  const slow = watchedStore();
  let laterNow = at;
  const a = limiter({ prefix, now: () => at });
  const b = limiter({ prefix, now: () => laterNow });
  try {
    await a.seed(slow, [k]);
    await b.seed(store, [k]);
    const first = await attempt(a, k, '0.1');
    assert.ok(admitted(first));
    await first.settle({ tokens: 1, costUsd: '0.1' });
    await redis.client().flushall();
    slow.delayMs = 60_000; // replica A's re-seed hangs on its database
    assert.ok(admitted(await attempt(a, k, '0.1')), 'A rebuilds the counter and the window and takes both leases');
    assert.equal(a.reseeding, 2, 'the counter and the window');
    assert.ok(admitted(await attempt(b, k, '0.1')));
    assert.equal(b.reseeding, 0, 'within the lease, B leaves the re-seed to A');
    laterNow = at + RESEED_LEASE_MS + 1000;
    assert.ok(admitted(await attempt(b, k, '0.1')));
    assert.equal(b.reseeding, 2, 'the leases ran out: B takes both re-seeds over');
    await reseeded(b);
  } finally { await a.close(); await b.close(); }
});

test('requests admitted fail open are in the minute\'s window when Redis returns without it (restarted empty, or a minute that began while it hung)', async () => {
  const at = Date.UTC(2031, 2, 3, 13, 20, 5);
  let now = at;
  const k = key({ budgetUsd: null, budgetPeriod: null, rpmLimit: 5 });
  const s = watchedStore();
  const l = limiter({ now: () => now });
  const back = async (): Promise<void> => {
    for (const t0 = Date.now(); l.unavailable; await new Promise((r) => setTimeout(r, 20))) if (Date.now() - t0 > 5000) throw new Error('Redis not back');
  };
  try {
    await l.seed(s, [k]);
    for (let i = 0; i < 2; i++) assert.ok(admitted(await attempt(l, k, '0')));
    await reseeded(l);
    s.delayMs = 3000; // the store's re-seed lands late: what counts is the window rebuilt at once
    await redis.kill();
    const trip = await attempt(l, k, '0'); // trips the breaker (fail open: the third)
    assert.ok(admitted(trip) && l.unavailable);
    for (let i = 0; i < 2; i++) assert.ok(admitted(await attempt(l, k, '0')), 'fail open: the minute\'s 4th and 5th');
    assert.ok(!admitted(await attempt(l, k, '0')), 'the 6th is refused without Redis');
    await redis.restart();
    await back();
    assert.ok(!admitted(await attempt(l, k, '0')), '5 of 5 in the minute after the restart (before: the window was rebuilt from the 2 seen with Redis, and 3 more passed)');
    // The next minute begins while Redis hangs: what fail open admits in it is that minute's window.
    redis.pause();
    try {
      await attempt(l, key({ budgetUsd: null, budgetPeriod: null, rpmLimit: 9 }), '0'); // another key trips the breaker
      assert.ok(l.unavailable);
      now = at + 60_000;
      for (let i = 0; i < 5; i++) assert.ok(admitted(await attempt(l, k, '0')), `minute two, request ${i + 1}`);
      assert.ok(!admitted(await attempt(l, k, '0')));
    } finally { redis.resume(); }
    await back();
    assert.ok(!admitted(await attempt(l, k, '0')), 'minute two holds once Redis answers (before: a new window at 0, 5 more passed)');
    s.delayMs = 0;
  } finally { redis.resume(); await l.close(); }
});
