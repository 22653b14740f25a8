// Redis failing under the limiter, against a redis-server of the test's own: budgets survive FLUSHALL
// and a restart without persistence (re-seeded from the store), spend admitted while Redis was down is
// added back when it returns, and while it is down a circuit breaker keeps each request's wait short.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { RedisLimiter } from '../src/limits/redis.ts';
import { LimitError, periodStart, toNanos, type Reservation } from '../src/limits/limiter.ts';
import { SHAS } from '../src/limits/redis-scripts.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { KeyRecord } from '../src/store/types.ts';
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

const key = (over: Partial<KeyRecord> = {}): KeyRecord => limitedKey(`k${n++}`, over);

async function attempt(l: RedisLimiter, k: KeyRecord, costUsd: string): Promise<Reservation | LimitError> {
  try { return await l.acquire(k, { tokens: 1, costUsd }); } catch (e) { if (e instanceof LimitError) return e; throw e; }
}
const limiter = (): RedisLimiter => new RedisLimiter({ redis: redis.url, prefix: `t${process.pid}:${n++}:`, probeMs: 100, onError: () => {} });

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  for (const t0 = Date.now(); !cond(); await new Promise((r) => setTimeout(r, 20))) if (Date.now() - t0 > ms) throw new Error('condition not met in time');
}

test('FLUSHALL: the budget is seeded again from the store on the next request, not reset to zero', async () => {
  const k = key({ budgetUsd: '2', budgetPeriod: 'month' });
  await store.insertInferences([spendRecord(k, '1.75')]);
  const l = limiter();
  try {
    await l.seed(store, [k]);
    assert.ok(await attempt(l, k, '0.3') instanceof LimitError);
    await redis.client().flushall();
    assert.ok(await attempt(l, k, '0.3') instanceof LimitError, 'still refused after FLUSHALL');
    const ok = await attempt(l, k, '0.2');
    assert.ok(!(ok instanceof LimitError));
    assert.equal(await l.spentNanos(k), toNanos('1.95'));
  } finally { await l.close(); }
});

test('a restart without persistence: the same, once Redis is back', async () => {
  const k = key({ budgetUsd: '1', budgetPeriod: 'day' });
  await store.insertInferences([spendRecord(k, '0.9')]);
  const l = limiter();
  try {
    await l.seed(store, [k]);
    await redis.kill();
    await redis.restart();
    await until(() => !l.unavailable);
    // The restarted server is empty: the counter comes back from the store's 0.9 spent.
    assert.ok(await attempt(l, k, '0.2') instanceof LimitError, 'the budget held across the restart');
    assert.ok(!(await attempt(l, k, '0.1') instanceof LimitError));
    assert.equal(await l.spentNanos(k), toNanos('1'));
  } finally { await l.close(); }
});

test('spend admitted while Redis was down (fail-open) is added to the counter when it returns', async () => {
  const k = key({ budgetUsd: '1', budgetPeriod: 'month' });
  const l = limiter();
  try {
    await l.seed(store, [k]);
    assert.ok(!(await attempt(l, k, '0.1') instanceof LimitError));
    const before = await l.spentNanos(k);
    redis.pause();
    const a = await attempt(l, k, '0.5');
    const b = await attempt(l, k, '0.4');
    assert.ok(!(a instanceof LimitError) && !(b instanceof LimitError), 'admitted while Redis hangs (fail open)');
    // Fail open still holds what this replica can see: $0.1 spent and $0.9 running leave no room for $0.2.
    const c = await attempt(l, k, '0.2');
    assert.ok(c instanceof LimitError && c.reason === 'budget', 'no room left by what this replica admitted (before: admitted)');
    await a.settle({ tokens: 1, costUsd: '0.4' });
    await b.settle({ tokens: 1, costUsd: '0.4' });
    redis.resume();
    await until(() => !l.unavailable);
    let spent = await l.spentNanos(k);
    for (let i = 0; i < 50 && spent !== before + toNanos('0.8'); i++) { await new Promise((r) => setTimeout(r, 50)); spent = await l.spentNanos(k); }
    assert.equal(spent, before + toNanos('0.8'));
    assert.ok(await attempt(l, k, '0.2') instanceof LimitError, 'the reconciled spend counts against the budget');
  } finally { redis.resume(); await l.close(); }
});

test('spend admitted fail open in a budget period that began while Redis was away starts the new period\'s counter', async () => {
  // Redis as it stands just after a day turned: the key's period mark names yesterday, today has no
  // counter yet (the real clock; only the mark is set back, as yesterday's last acquire left it).
  const k = key({ budgetUsd: '1', budgetPeriod: 'day' });
  const other = key({ rpmLimit: 1_000_000 });
  const prefix = `t${process.pid}:${n++}:`;
  const l = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, onError: () => {} });
  const admin = redis.client();
  try {
    await l.seed(store, []);
    const today = periodStart('day', Date.now());
    await admin.set(`${prefix}{${k.id}}:p`, String(today - 86_400_000));
    redis.pause();
    await attempt(l, other, '0'); // waits for the command timeout: the breaker opens
    assert.equal(l.unavailable, true);
    const rs = await Promise.all([attempt(l, k, '0.3'), attempt(l, k, '0.3'), attempt(l, k, '0.3')]);
    for (const r of rs) { assert.ok(!(r instanceof LimitError), 'admitted fail open'); await r.settle({ tokens: 1, costUsd: '0.3' }); }
    redis.resume();
    await until(() => !l.unavailable);
    await new Promise((r) => setTimeout(r, 300));
    // Before: the reconciliation dropped the $0.90 (no counter to add it to) and the next acquire
    // started today at $0 (an earlier period's mark: a new period), so $1 more was admitted: $1.90 of $1.
    const next = await attempt(l, k, '0.3');
    assert.ok(next instanceof LimitError && next.reason === 'budget', '$0.90 + $0.30 is over the $1 budget');
    assert.equal(await l.spentNanos(k), toNanos('0.9'), 'the new day\'s counter holds what was admitted in it while Redis was away');
    assert.ok(!(await attempt(l, k, '0.1') instanceof LimitError));
  } finally { redis.resume(); await l.close(); }
});

for (const how of ['hung (SIGSTOP)', 'killed'] as const) {
  test(`Redis ${how}: after the breaker trips each limited request waits at most a few ms`, async () => {
    const k = key({ rpmLimit: 1_000_000 });
    const l = limiter();
    try {
      assert.ok(!(await attempt(l, k, '0') instanceof LimitError));
      if (how === 'killed') await redis.kill(); else redis.pause();
      const t0 = performance.now();
      await attempt(l, k, '0'); // may wait for the command timeout (1 s): this is what trips the breaker
      const first = performance.now() - t0;
      assert.ok(first < 2500, `first ${first.toFixed(0)} ms`);
      const waits: number[] = [];
      for (let i = 0; i < 50; i++) {
        const s = performance.now();
        const r = await attempt(l, k, '0');
        waits.push(performance.now() - s);
        assert.ok(!(r instanceof LimitError), 'fail open');
      }
      const worst = Math.max(...waits);
      assert.ok(worst < 50, `worst wait ${worst.toFixed(1)} ms with the breaker open (was the 1 s command timeout)`);
      assert.equal(l.unavailable, true);
    } finally {
      if (how === 'killed') await redis.restart(); else redis.resume();
      await l.close();
    }
  });
}

test('fail closed with the breaker open: refused at once with 429, retry-after 1', async () => {
  const k = key({ rpmLimit: 10 });
  const l = new RedisLimiter({ redis: redis.url, prefix: `t${process.pid}:${n++}:`, probeMs: 100, failOpen: false, onError: () => {} });
  try {
    assert.ok(!(await attempt(l, k, '0') instanceof LimitError));
    redis.pause();
    await attempt(l, k, '0');
    const s = performance.now();
    const r = await attempt(l, k, '0');
    assert.ok(performance.now() - s < 50);
    assert.ok(r instanceof LimitError && r.status === 429 && r.headers['retry-after'] === '1');
  } finally { redis.resume(); await l.close(); }
});

test('when Redis returns, limits are enforced through it again', async () => {
  const k = key({ rpmLimit: 3 });
  const l = limiter();
  try {
    await redis.kill();
    await attempt(l, k, '0');
    assert.equal(l.unavailable, true);
    await redis.restart();
    await until(() => !l.unavailable);
    const rs = await Promise.all(Array.from({ length: 6 }, () => attempt(l, k, '0')));
    assert.equal(rs.filter((r) => r instanceof LimitError).length, 3);
  } finally { redis.resume(); await l.close(); }
});

test('fail open holds rpm and tpm as this replica sees them: its view of the minute plus what it admitted without Redis', async () => {
  const at = Date.UTC(2031, 4, 6, 10, 20, 5);
  let now = at;
  const rpm = key({ rpmLimit: 3 });
  const tpm = key({ tpmLimit: 100 });
  const l = new RedisLimiter({ redis: redis.url, prefix: `t${process.pid}:${n++}:`, probeMs: 60_000, onError: () => {}, now: () => now });
  const take = async (k: KeyRecord, tokens: number) => { try { return await l.acquire(k, { tokens, costUsd: '0' }); } catch (e) { if (e instanceof LimitError) return e; throw e; } };
  try {
    await l.seed(store, [rpm, tpm]);
    assert.ok(!(await take(rpm, 1) instanceof LimitError));
    assert.ok(!(await take(tpm, 40) instanceof LimitError));
    await redis.kill();
    try {
      await take(rpm, 1); // trips the breaker (the connection's loss may have tripped it already): admitted, the minute's second
      assert.ok(l.unavailable);
      assert.ok(!(await take(rpm, 1) instanceof LimitError), 'the third of 3');
      const fourth = await take(rpm, 1);
      assert.ok(fourth instanceof LimitError && fourth.reason === 'rpm', 'the fourth in the minute is refused without Redis (before: admitted)');
      assert.equal(fourth.headers['retry-after'], '55');
      assert.ok(!(await take(tpm, 50) instanceof LimitError), '40 + 50 of 100 tokens');
      const over = await take(tpm, 20);
      assert.ok(over instanceof LimitError && over.reason === 'tpm', '40 + 50 + 20 tokens pass 100');
      // The next minute starts empty.
      now = at + 60_000;
      for (let i = 0; i < 3; i++) assert.ok(!(await take(rpm, 1) instanceof LimitError), `minute two, request ${i + 1}`);
      assert.ok(await take(rpm, 1) instanceof LimitError);
    } finally { await redis.restart(); }
  } finally { await l.close(); }
});

test('requests admitted fail open while Redis hung are added to its minute window when it returns', async () => {
  const at = Date.UTC(2031, 4, 6, 11, 30, 5);
  const k = key({ rpmLimit: 4 });
  const l = new RedisLimiter({ redis: redis.url, prefix: `t${process.pid}:${n++}:`, probeMs: 100, onError: () => {}, now: () => at });
  const take = async () => { try { return await l.acquire(k, { tokens: 1, costUsd: '0' }); } catch (e) { if (e instanceof LimitError) return e; throw e; } };
  try {
    await l.seed(store, [k]);
    assert.ok(!(await take() instanceof LimitError));
    redis.pause();
    try {
      assert.ok(!(await take() instanceof LimitError)); // waits the command timeout, trips the breaker
      assert.ok(!(await take() instanceof LimitError));
    } finally { redis.resume(); }
    await until(() => !l.unavailable);
    // Redis kept its window (1 request, or 2 if the timed-out acquire ran) and got the one it never saw: 3 or 4 of 4.
    const fourth = await take();
    const fifth = await take();
    assert.ok(fifth instanceof LimitError && fifth.reason === 'rpm', `the minute's fifth is refused (before: admitted; fourth ${fourth instanceof LimitError ? 'refused' : 'admitted'})`);
  } finally { redis.resume(); await l.close(); }
});

test('fail open reads the view with what this replica settled since: a reservation settled for less leaves its room', async () => {
  const k = key({ budgetUsd: '1', budgetPeriod: 'month' });
  const l = limiter();
  try {
    await l.seed(store, [k]);
    const big = await attempt(l, k, '0.5'); // the view: $0.5 reserved
    assert.ok(!(big instanceof LimitError));
    await big.settle({ tokens: 1, costUsd: '0.05' }); // Redis moves the counter to $0.05; the view keeps $0.5 until the next acquire
    await redis.kill();
    try {
      await attempt(l, k, '0'); // trips the breaker
      assert.ok(l.unavailable);
      const next = await attempt(l, k, '0.6');
      assert.ok(!(next instanceof LimitError), '$0.05 spent leaves room for $0.6 (the view alone, $0.5, did not)');
      const over = await attempt(l, k, '0.4');
      assert.ok(over instanceof LimitError && over.reason === 'budget', '$0.05 + $0.6 running: no room for $0.4');
      await next.release();
    } finally { await redis.restart(); }
  } finally { await l.close(); }
});

test('fail open with two replicas: each takes half of what it saw was left, so together they stay within the budget and the minute', async () => {
  const at = Date.UTC(2031, 4, 6, 12, 40, 5);
  const prefix = `t${process.pid}:${n++}:`;
  const k = key({ budgetUsd: '1', budgetPeriod: 'month', rpmLimit: 10 });
  await store.insertInferences([spendRecord(k, '0.2', new Date(at - 60_000))]);
  const replica = () => new RedisLimiter({ redis: redis.url, prefix, probeMs: 60_000, presenceMs: 100, onError: () => {}, now: () => at });
  const a = replica(), b = replica();
  try {
    await until(() => a.replicas === 2 && b.replicas === 2);
    await a.seed(store, [k]); await b.seed(store, [k]);
    // One request each through Redis: both views hold $0.2 spent (settled at $0) and the minute's 1 or 2 requests.
    for (const l of [a, b]) { const r = await attempt(l, k, '0'); assert.ok(!(r instanceof LimitError)); await r.settle({ tokens: 1, costUsd: '0' }); }
    await redis.kill();
    try {
      const admitted = { a: 0, b: 0 }, spend = { a: 0, b: 0 };
      for (const l of [a, b]) {
        await attempt(l, k, '0'); // trips the breaker ($0 estimated, never settled): not counted below
        assert.ok(l.unavailable);
      }
      // $0.8 left, $0.4 each: two requests of $0.15 each, not a third; both replicas alike.
      for (const [name, l] of [['a', a], ['b', b]] as const) {
        for (let i = 0; i < 5; i++) {
          const r = await attempt(l, k, '0.15');
          if (r instanceof LimitError) { assert.ok(r.reason === 'budget' || r.reason === 'rpm', r.reason); continue; }
          admitted[name]++; spend[name] += 0.15;
          await r.settle({ tokens: 1, costUsd: '0.15' });
        }
      }
      assert.ok(spend.a + spend.b <= 0.8 + 1e-9, `together $${(spend.a + spend.b).toFixed(2)} of the $0.80 left (before: $1.50, five each)`);
      assert.equal(admitted.a, 2, 'replica a: its $0.40 share');
      assert.equal(admitted.b, 2, 'replica b: its $0.40 share');
    } finally { await redis.restart(); }
  } finally { await a.close(); await b.close(); }
});

test('fail open with two replicas: the minute\'s requests are shared the same way', async () => {
  const at = Date.UTC(2031, 4, 6, 12, 50, 5);
  const prefix = `t${process.pid}:${n++}:`;
  const k = key({ rpmLimit: 10 });
  const replica = () => new RedisLimiter({ redis: redis.url, prefix, probeMs: 60_000, presenceMs: 100, onError: () => {}, now: () => at });
  const a = replica(), b = replica();
  try {
    await until(() => a.replicas === 2 && b.replicas === 2);
    await a.seed(store, [k]); await b.seed(store, [k]);
    assert.ok(!(await attempt(a, k, '0') instanceof LimitError)); // a's view: 1 of 10
    assert.ok(!(await attempt(b, k, '0') instanceof LimitError)); // b's view: 2 of 10
    await redis.kill();
    try {
      let admitted = 0;
      for (const l of [a, b]) {
        for (let i = 0; i < 10; i++) {
          const r = await attempt(l, k, '0');
          if (r instanceof LimitError) assert.equal(r.reason, 'rpm'); else admitted++;
        }
        assert.ok(l.unavailable);
      }
      // a: floor((10 - 1) / 2) = 4, b: floor((10 - 2) / 2) = 4 (the first of each may be the one that tripped the breaker).
      assert.ok(2 + admitted <= 10, `${2 + admitted} requests in the minute of rpm 10 (before: 2 + 9 + 8 = 19)`);
      assert.equal(admitted, 8);
    } finally { await redis.restart(); }
    // A replica leaving is no longer counted: the one left takes all of what it sees again.
    await b.close();
    await until(() => a.replicas === 1, 10_000);
  } finally { await a.close(); await b.close(); }
});

test('fail open reads tpm with the tokens requests settled for, not their estimates (before Redis went away and after)', async () => {
  const at = Date.UTC(2031, 4, 6, 13, 10, 5);
  const k = key({ tpmLimit: 100 });
  const l = new RedisLimiter({ redis: redis.url, prefix: `t${process.pid}:${n++}:`, probeMs: 60_000, onError: () => {}, now: () => at });
  const take = async (tokens: number) => { try { return await l.acquire(k, { tokens, costUsd: '0' }); } catch (e) { if (e instanceof LimitError) return e; throw e; } };
  try {
    await l.seed(store, [k]);
    const first = await take(60); // the view: 60 estimated
    assert.ok(!(first instanceof LimitError));
    await first.settle({ tokens: 10, costUsd: '0' }); // Redis's window: 10; the view follows
    await redis.kill();
    try {
      await take(0); // trips the breaker
      assert.ok(l.unavailable);
      const big = await take(80);
      assert.ok(!(big instanceof LimitError), '10 used + 80 of 100 (the view alone, 60, left no room)');
      await big.settle({ tokens: 20, costUsd: '0' });
      const next = await take(60);
      assert.ok(!(next instanceof LimitError), '10 + 20 used + 60 of 100 (the estimate, 80, left no room)');
      const over = await take(20);
      assert.ok(over instanceof LimitError && over.reason === 'tpm', '10 + 20 + 60 running + 20 pass 100');
      await next.release(); // released: its 60 tokens are given back
      assert.ok(!(await take(60) instanceof LimitError), 'a released request leaves its tokens');
    } finally { await redis.restart(); }
  } finally { await l.close(); }
});

test('fail open with no view of a key: its spend is read from the store, so a budget the records show spent holds (seeded while Redis was away, a key seeded later, a new period)', async () => {
  let at = Date.UTC(2031, 6, 31, 23, 59, 0);
  const seededDown = key({ budgetUsd: '1', budgetPeriod: 'month' });
  const later = key({ budgetUsd: '1', budgetPeriod: 'month' });
  const turning = key({ budgetUsd: '1', budgetPeriod: 'month' });
  await store.insertInferences([
    spendRecord(seededDown, '0.9', new Date(at - 60_000)), spendRecord(later, '0.9', new Date(at - 60_000)),
    spendRecord(turning, '0.2', new Date(at - 60_000)),
  ]);
  const errors: unknown[] = [];
  const l = new RedisLimiter({ redis: redis.url, prefix: `t${process.pid}:${n++}:`, probeMs: 60_000, onError: (e) => errors.push(e), now: () => at });
  try {
    await l.seed(store, [turning]); // a view of July's counter, through Redis
    await redis.kill();
    try {
      await l.seed(store, [seededDown]); // Redis away: the store's $0.9 is the view
      assert.ok(errors.length > 0, 'the failed seed is reported');
      await attempt(l, turning, '0'); // trips the breaker if the seed did not
      assert.ok(l.unavailable);
      const over = await attempt(l, seededDown, '0.2');
      assert.ok(over instanceof LimitError && over.reason === 'budget', 'seeded while Redis was away: $0.9 of $1 spent, no room for $0.2 (before: admitted)');
      const fits = await attempt(l, seededDown, '0.05');
      assert.ok(!(fits instanceof LimitError), '$0.05 fits');
      await fits.settle({ tokens: 1, costUsd: '0.05' });
      assert.ok(await attempt(l, seededDown, '0.06') instanceof LimitError, 'what it settled counts: $0.95 spent');
      // Never seeded: two requests at once share one read of the store.
      const [a, b] = await Promise.all([attempt(l, later, '0.2'), attempt(l, later, '0.2')]);
      assert.ok(a instanceof LimitError && b instanceof LimitError, 'a key with no view: the store\'s $0.9 holds');
      assert.ok(!(await attempt(l, later, '0.1') instanceof LimitError));
      // The month turns while Redis is away: August's counter is read from August's records ($0.85).
      const july = await attempt(l, turning, '0.5');
      assert.ok(!(july instanceof LimitError), `July: $0.2 spent, room for $0.5 ${String(july instanceof LimitError ? july.message : '')}`);
      at = Date.UTC(2031, 7, 1, 0, 1, 0);
      await store.insertInferences([spendRecord(turning, '0.85', new Date(at - 30_000))]); // another replica's August spend, in the store
      const aug = await attempt(l, turning, '0.2');
      assert.ok(aug instanceof LimitError && aug.reason === 'budget', 'August: $0.85 spent, no room for $0.2');
    } finally { await redis.restart(); }
  } finally { await l.close(); }
});

/** A limiter whose store is `st` (no key seeded), run with Redis killed, then Redis restarted and the limiter closed. */
async function withRedisDown(st: SqliteStore, opts: { failOpen?: boolean; onError?: (e: unknown) => void }, run: (l: RedisLimiter) => Promise<void>): Promise<void> {
  const l = new RedisLimiter({ redis: redis.url, prefix: `t${process.pid}:${n++}:`, probeMs: 60_000, onError: () => {}, ...opts });
  try {
    await l.seed(st, []); // the store to read from, no key
    await redis.kill();
    try { await run(l); } finally { await redis.restart(); }
  } finally { await l.close(); }
}

test('fail open with no view and a store that fails too: admitted (nothing known), the store asked again only after a pause', async () => {
  const k = key({ budgetUsd: '1', budgetPeriod: 'month' });
  let reads = 0;
  const failing = { keySpend: async () => { reads++; throw new Error('database is down'); } } as unknown as SqliteStore;
  const errors: unknown[] = [];
  await withRedisDown(failing, { onError: (e) => errors.push(e) }, async (l) => {
    for (let i = 0; i < 3; i++) {
      const r = await attempt(l, k, '5');
      assert.ok(!(r instanceof LimitError), 'fail open: nothing known of the key, admitted');
      await r.release();
    }
    assert.equal(reads, 1, 'one failed read, not one per request');
    assert.ok(errors.some((e) => String(e).includes('database is down')), 'reported');
  });
});

test('fail open with no view and a store that hangs: requests wait at most a second from the read\'s start, and the answer, when it comes, holds the later ones', async () => {
  const k = key({ budgetUsd: '1', budgetPeriod: 'month' });
  let answer: (usd: string) => void = () => {};
  const hanging = { keySpend: () => new Promise<string>((resolve) => { answer = resolve; }) } as unknown as SqliteStore;
  await withRedisDown(hanging, {}, async (l) => {
    await attempt(l, key({ rpmLimit: 100 }), '0'); // trips the breaker (a key without a budget: no store read)
    assert.ok(l.unavailable);
    const t0 = Date.now();
    const first = await attempt(l, k, '0.5');
    const waited = Date.now() - t0;
    assert.ok(!(first instanceof LimitError), 'admitted: nothing known yet');
    assert.ok(waited >= 900 && waited < 3000, `waited ${waited} ms on the store`);
    await first.release();
    const t1 = Date.now();
    const second = await attempt(l, k, '0.5');
    assert.ok(!(second instanceof LimitError) && Date.now() - t1 < 300, `the read still hangs: the next request does not wait on it again (${Date.now() - t1} ms)`);
    await second.release();
    answer('0.9'); // the store answers late: $0.9 spent
    await new Promise((r) => setImmediate(r));
    const next = await attempt(l, k, '0.5');
    assert.ok(next instanceof LimitError && next.reason === 'budget', 'the late answer is the view');
  });
});

test('fail closed with no view of a key: refused at once, without reading the store', async () => {
  const k = key({ budgetUsd: '1', budgetPeriod: 'month' });
  let reads = 0;
  const counted = { keySpend: async () => { reads++; return '0'; } } as unknown as SqliteStore;
  await withRedisDown(counted, { failOpen: false }, async (l) => {
    for (let i = 0; i < 3; i++) {
      const r = await attempt(l, k, '0.1');
      assert.ok(r instanceof LimitError, 'fail closed: refused');
    }
    assert.equal(reads, 0, 'a refusal does not wait on the store');
  });
});

test('a settlement whose answer Redis never gave (hung past the command timeout) is applied once, not once by Redis and again on recovery', async () => {
  const k = key({ budgetUsd: '1', budgetPeriod: 'month' });
  const l = limiter();
  try {
    await l.seed(store, [k]);
    const first = await attempt(l, k, '0.1');
    assert.ok(!(first instanceof LimitError));
    await first.settle({ tokens: 1, costUsd: '0.1' });
    const open = await attempt(l, k, '0.5');
    assert.ok(!(open instanceof LimitError));
    redis.pause();
    try {
      // Sent while the breaker is closed: the adjust script waits in the socket and times out after 1 s;
      // Redis runs it when it resumes.
      await open.settle({ tokens: 1, costUsd: '0.05' });
      assert.equal(l.unavailable, true);
    } finally { redis.resume(); }
    await until(() => !l.unavailable);
    await new Promise((r) => setTimeout(r, 200));
    // $0.10 + $0.05 spent. Before: the -$0.45 correction was applied by Redis and again by the
    // reconciliation, and the counter read $0 (clamped from -$0.30): $0.15 of spend forgotten.
    assert.equal(await l.spentNanos(k), toNanos('0.15'));
  } finally { redis.resume(); await l.close(); }
});

test('a Redis that answers PING but refuses writes keeps the breaker open until it takes them again (out of memory, read-only)', async () => {
  const k = key({ rpmLimit: 100 });
  const l = new RedisLimiter({ redis: redis.url, prefix: `t${process.pid}:${n++}:`, probeMs: 50, failOpen: false, onError: () => {} });
  const admin = redis.client();
  try {
    assert.ok(!(await attempt(l, k, '0') instanceof LimitError));
    for (const [refuse, allow] of [
      [() => admin.config('SET', 'maxmemory', '1'), () => admin.config('SET', 'maxmemory', '0')],
      [() => admin.replicaof('127.0.0.1', '9'), () => admin.replicaof('NO', 'ONE')],
    ] as const) {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await refuse();
      try {
        const r = await attempt(l, k, '0');
        assert.ok(r instanceof LimitError && r.status === 429, 'fail closed');
        assert.equal(l.unavailable, true);
        // Several probe periods: the probe's write fails, so the breaker stays open and /health says so
        // (before: a PING closed it within 50 ms, and the next request's script failed and opened it again).
        await new Promise((res) => setTimeout(res, 600));
        assert.equal(l.unavailable, true);
        const st = l.status();
        assert.ok(st.backend === 'redis' && st.breaker.state !== 'closed');
      } finally { await allow(); }
      await until(() => !l.unavailable);
      assert.ok(!(await attempt(l, k, '0') instanceof LimitError), 'served through Redis again');
    }
  } finally { await l.close(); }
});

/** A spend counter's own key (`...:s:<period>:<start>`), not its meta, open reservations, leases or released tokens. */
const isCounter = (k: string): boolean => /:s:[a-z]+:\d+$/.test(k);

test('a key of the wrong type where a counter belongs (WRONGTYPE) is replaced for that API key alone, not taken for Redis failing for every key', async () => {
  const at = Date.UTC(2031, 4, 6, 12, 10, 5);
  const bad = key({ rpmLimit: 100, budgetUsd: '1', budgetPeriod: 'month' });
  const other = key({ rpmLimit: 100 });
  const prefix = `t${process.pid}:${n++}:`;
  const l = new RedisLimiter({ redis: redis.url, prefix, probeMs: 60_000, failOpen: false, onError: () => {}, now: () => at });
  const admin = redis.client();
  try {
    await l.seed(store, [bad, other]);
    const r = await attempt(l, bad, '0.1');
    assert.ok(!(r instanceof LimitError));
    await r.settle({ tokens: 1, costUsd: '0.1' });
    // Something else sharing this Redis writes lists where the key's minute window and spend counter are.
    const wk = `${prefix}{${bad.id}}:w:${Math.floor(at / 60_000)}`;
    const sks = (await admin.keys(`${prefix}{${bad.id}}:s:*`)).filter(isCounter);
    assert.equal(sks.length, 1);
    for (const k of [wk, sks[0]!]) { await admin.del(k); await admin.rpush(k, 'not a counter'); }
    const again = await attempt(l, bad, '0.1');
    assert.ok(!(again instanceof LimitError), 'served: the window and counter are rebuilt (before: 429, Rate limiter unavailable)');
    assert.equal(l.unavailable, false, 'the breaker stays closed');
    assert.ok(!(await attempt(l, other, '0') instanceof LimitError), 'another key is served (before: 429 while the breaker was open)');
    assert.equal(await admin.type(wk), 'hash');
    assert.equal(await l.spentNanos(bad), toNanos('0.2'), 'the counter rebuilt from this replica\'s view ($0.1) with the new request');
  } finally { await l.close(); }
});

test('a settlement meeting a key of the wrong type does not hold the breaker open: what it corrects is gone', async () => {
  const at = Date.UTC(2031, 4, 6, 12, 50, 5);
  const bad = key({ rpmLimit: 100, budgetUsd: '1', budgetPeriod: 'month' });
  const other = key({ rpmLimit: 100 });
  const prefix = `t${process.pid}:${n++}:`;
  const l = new RedisLimiter({ redis: redis.url, prefix, probeMs: 50, failOpen: false, onError: () => {}, now: () => at });
  const admin = redis.client();
  try {
    await l.seed(store, [bad, other]);
    const open = await attempt(l, bad, '0.5');
    assert.ok(!(open instanceof LimitError));
    const wk = `${prefix}{${bad.id}}:w:${Math.floor(at / 60_000)}`;
    const sk = (await admin.keys(`${prefix}{${bad.id}}:s:*`)).find(isCounter)!;
    for (const k of [wk, sk]) { await admin.del(k); await admin.rpush(k, 'not a counter'); }
    await open.settle({ tokens: 1, costUsd: '0.1' });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(l.unavailable, false, 'the breaker is closed (before: open for as long as the bad keys stayed, its probe failing on them)');
    assert.ok(!(await attempt(l, other, '0') instanceof LimitError), 'another key is served');
    assert.ok(!(await attempt(l, bad, '0.1') instanceof LimitError), 'and this one, its keys replaced');
  } finally { await l.close(); }
});

test('requests admitted fail open while the breaker\'s probe reconciles are added to their window once it closes', async () => {
  const at = Date.UTC(2031, 4, 6, 12, 40, 5);
  const k = key({ rpmLimit: 4 });
  // The limiter's client, with its scripts watched: one acquire fails (the breaker opens), and the probe's
  // reconciliation of the window is held while more requests come.
  const client = redis.client();
  const evalsha = client.evalsha.bind(client) as (...a: unknown[]) => Promise<unknown>;
  let failNext = false; let hold: Promise<void> | null = null; let held = false;
  (client as unknown as { evalsha: (...a: unknown[]) => Promise<unknown> }).evalsha = async (...a: unknown[]) => {
    if (failNext && a[0] === SHAS.acquire) { failNext = false; throw new Error('Connection is closed.'); }
    if (hold && a[0] === SHAS.reconcileWindow) { held = true; await hold; }
    return evalsha(...a);
  };
  const l = new RedisLimiter({ redis: client, prefix: `t${process.pid}:${n++}:`, probeMs: 100, onError: () => {}, now: () => at });
  try {
    await l.seed(store, [k]);
    assert.ok(!(await attempt(l, k, '0') instanceof LimitError), 'the first, through Redis');
    let release!: () => void;
    hold = new Promise<void>((r) => { release = r; });
    failNext = true;
    assert.ok(!(await attempt(l, k, '0') instanceof LimitError), 'the second: its acquire fails, admitted fail open');
    assert.ok(l.unavailable);
    await until(() => held);
    for (let i = 0; i < 2; i++) assert.ok(!(await attempt(l, k, '0') instanceof LimitError), `the ${i + 3}rd/th, fail open while the probe reconciles`);
    hold = null; release();
    await until(() => !l.unavailable);
    await new Promise((r) => setTimeout(r, 50));
    const fifth = await attempt(l, k, '0');
    assert.ok(fifth instanceof LimitError && fifth.reason === 'rpm', 'the fifth is refused (before: admitted, the two admitted during the probe were never added to the window)');
  } finally { await l.close(); }
});
