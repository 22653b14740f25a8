// Open budget reservations of a replica that dies (SIGKILL), loses Redis for good or freezes, against a
// redis-server of the test's own: each replica holds a lease on the counters where it has reservations
// open and renews it every presence interval; once the lease lapses, a live replica's next acquire,
// renewal or sweep of the lease index returns the estimates to the budget, once, and never a live
// replica's. A replica that was only frozen or cut off and settles afterwards adds its whole cost (its
// estimate was already returned), however long the pause. Lists left by an older replica or lost by
// Redis release nothing they should not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { RedisLimiter, RELEASED_KEEP_MS } from '../src/limits/redis.ts';
import { SCRIPTS } from '../src/limits/redis-scripts.ts';
import { LimitError, periodStart, toNanos, type Reservation } from '../src/limits/limiter.ts';
import type { KeyRecord } from '../src/store/types.ts';
import { startOwnRedis, type OwnRedis } from './helpers/redis-server.ts';
import { limitedKey } from './helpers/limit-records.ts';
import { spawnReplica, type ReplicaProcess } from './helpers/replica-process.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

let redis: OwnRedis;
let n = 0;

before(async () => { redis = await startOwnRedis(); });
after(async () => { await redis.stop(); });

const key = (budgetUsd = '0.05'): KeyRecord => limitedKey(`lease${n++}`, { budgetUsd, budgetPeriod: 'day' });
const newPrefix = (): string => `ls${process.pid}:${n++}:`;
/** The key's spend counter for today (the limiter's naming). */
const counterOf = (prefix: string, k: KeyRecord): string => `${prefix}{${k.id}}:s:day:${periodStart('day', Date.now())}`;

/** An in-process replica: renews its leases every 100 ms, each lasting `leaseMs`. */
const replica = (prefix: string, o: { redis?: string; leaseMs?: number } = {}): RedisLimiter => new RedisLimiter({
  redis: o.redis ?? redis.url, prefix, probeMs: 100, presenceMs: 100, leaseMs: o.leaseMs ?? 1500, onError: () => {},
});

async function attempt(l: RedisLimiter, k: KeyRecord, costUsd: string): Promise<Reservation | LimitError> {
  try { return await l.acquire(k, { tokens: 1, costUsd }); } catch (e) { if (e instanceof LimitError) return e; throw e; }
}
const admitted = (r: Reservation | LimitError): r is Reservation => !(r instanceof LimitError);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Redis's own clock in ms (leases are written and read on it). */
async function redisNow(): Promise<number> {
  const [s, us] = await redis.client().time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Tries `costUsd` from `l` every 50 ms until it is admitted (at most `ms`). */
async function admittedOnceFree(l: RedisLimiter, k: KeyRecord, costUsd: string, ms = 30_000): Promise<{ r: Reservation; refused: number }> {
  let refused = 0;
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(50)) {
    const r = await attempt(l, k, costUsd);
    if (admitted(r)) return { r, refused };
    refused++;
  }
  throw new Error(`not admitted within ${ms} ms`);
}

/** The one instance holding a lease on the counter (read before any other replica takes one). */
async function onlyLeaseHolder(sk: string): Promise<{ instance: string; leaseEnd: number }> {
  const [instance, score] = await redis.client().zrange(`${sk}:l`, '0', '-1', 'WITHSCORES');
  assert.ok(instance !== undefined && score !== undefined, 'the replica holds a lease on the counter');
  return { instance, leaseEnd: Number(score) };
}

/** The tokens listed open on a counter (its list's generation stamp aside). */
async function openTokens(sk: string): Promise<string[]> {
  return (await redis.client().hkeys(`${sk}:o`)).filter((f) => f !== 'g');
}

async function acquireIn(p: ReplicaProcess, k: KeyRecord, costUsd: string): Promise<number> {
  const a = await p.acquire(k, costUsd);
  assert.ok('id' in a, `the replica's acquire was admitted (${'error' in a ? a.error : ''})`);
  return a.id;
}

test('a replica killed with SIGKILL: its open reservations go back to the budget once its lease lapses, a live replica\'s stay', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k);
  const dead = await spawnReplica({ redisUrl: redis.url, prefix, presenceMs: 100, leaseMs: 2000 });
  const live = replica(prefix);
  try {
    // The probe's reproduction: five requests in flight hold $0.040 of a $0.05 daily budget.
    for (let i = 0; i < 5; i++) await acquireIn(dead, k, '0.008');
    const { instance } = await onlyLeaseHolder(sk);
    const mine = await attempt(live, k, '0.005');
    assert.ok(admitted(mine));
    assert.ok(!admitted(await attempt(live, k, '0.008')), '$0.045 held: $0.008 more does not fit');
    await dead.kill();
    const killedAt = Date.now();
    // Its lease as it stood when it died: nothing is returned before it ends.
    const leaseEnd = Number(await redis.client().zscore(`${sk}:l`, instance));
    const { r: next, refused } = await admittedOnceFree(live, k, '0.008');
    const freedAt = await redisNow();
    assert.ok(freedAt >= leaseEnd, `released at ${freedAt}, not before the lease's end ${leaseEnd}`);
    console.log(`# killed replica's $0.040 back after ${Date.now() - killedAt} ms (lease 2000 ms; ${refused} requests refused meanwhile)`);
    // Before: $0.045 stayed held until the day ended and this request was refused all day.
    assert.equal(await live.spentNanos(k), toNanos('0.013'), 'the live replica\'s open $0.005 + the new $0.008: the dead one\'s $0.040 went back once');
    assert.equal(await redis.client().hlen(`${sk}:r`), 5, 'the five tokens are kept as released');
    assert.equal(await redis.client().zscore(`${sk}:l`, instance), null, 'its lease is gone');
    assert.ok(await redis.client().pttl(`${sk}:r`) > RELEASED_KEEP_MS - 60_000);
    await mine.settle({ tokens: 1, costUsd: '0.004' });
    await next.settle({ tokens: 1, costUsd: '0.006' });
    assert.equal(await live.spentNanos(k), toNanos('0.01'), 'the live replica\'s reservations settled as deltas: they were never released');
    assert.deepEqual(await openTokens(sk), [], 'nothing left open');
  } finally { await dead.kill(); await live.close(); }
});

test('a live replica\'s reservation is never released while it renews its lease, however long the request runs', async () => {
  const prefix = newPrefix(); const k = key();
  const a = replica(prefix, { leaseMs: 1000 }); const b = replica(prefix);
  try {
    const long = await attempt(a, k, '0.02');
    assert.ok(admitted(long));
    // Three lease periods of other traffic on the counter: every acquire looks for lapsed leases.
    const t0 = Date.now();
    let tries = 0;
    while (Date.now() - t0 < 3500) {
      assert.ok(!admitted(await attempt(b, k, '0.031')), 'only $0.03 is left while the $0.02 reservation is held');
      const small = await attempt(b, k, '0.01');
      assert.ok(admitted(small));
      await small.settle({ tokens: 1, costUsd: '0.0' });
      tries++;
      await sleep(100);
    }
    assert.equal(await b.spentNanos(k), toNanos('0.02'), `still held after ${tries} acquires over 3.5 s`);
    await long.settle({ tokens: 1, costUsd: '0.01' });
    assert.equal(await b.spentNanos(k), toNanos('0.01'));
    assert.ok(admitted(await attempt(b, k, '0.04')));
  } finally { await a.close(); await b.close(); }
});

test('a replica frozen (SIGSTOP) past its lease: its reservations are released, and its settlements after it thaws add their whole cost', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k);
  const frozen = await spawnReplica({ redisUrl: redis.url, prefix, presenceMs: 100, leaseMs: 1000 });
  const live = replica(prefix);
  try {
    const one = await acquireIn(frozen, k, '0.02');
    const two = await acquireIn(frozen, k, '0.02');
    frozen.signal('SIGSTOP');
    const { r: mine } = await admittedOnceFree(live, k, '0.02');
    assert.equal(await live.spentNanos(k), toNanos('0.02'), 'the frozen replica\'s $0.04 went back');
    frozen.signal('SIGCONT');
    // A long GC, a frozen VM: the requests finish after all. One spent $0.015, the other nothing.
    await frozen.settle(one, '0.015');
    await frozen.release(two);
    // Before: each settled as a delta against an estimate already returned (-$0.005 and -$0.02):
    // the counter read $0 and $0.015 of real spend was forgotten.
    assert.equal(await live.spentNanos(k), toNanos('0.035'), 'the live $0.02 + the thawed replica\'s $0.015');
    assert.equal(await redis.client().hlen(`${sk}:r`), 0, 'each released token is used up by its settlement');
    // The thawed replica works on: its own new reservation, its lease renewed.
    assert.ok('id' in await frozen.acquire(k, '0.015'));
    assert.ok(!admitted(await attempt(live, k, '0.001')), '$0.05 spent or reserved');
    await mine.settle({ tokens: 1, costUsd: '0.02' });
    assert.equal(await live.spentNanos(k), toNanos('0.05'));
  } finally { await frozen.kill(); await live.close(); }
});

test('two replicas noticing a lapsed lease at once release it once', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k);
  const dead = await spawnReplica({ redisUrl: redis.url, prefix, presenceMs: 100, leaseMs: 500 });
  const b = replica(prefix); const c = replica(prefix);
  try {
    const first = await acquireIn(dead, k, '0.01');
    for (let i = 0; i < 4; i++) await acquireIn(dead, k, '0.01');
    await dead.settle(first, '0.003');
    const { instance } = await onlyLeaseHolder(sk);
    await dead.kill();
    // Wait on Redis's clock (no acquire: the first ones to notice are the concurrent ones below).
    for (const t0 = Date.now(); ; await sleep(50)) {
      const end = await redis.client().zscore(`${sk}:l`, instance);
      if (end !== null && await redisNow() > Number(end)) break;
      assert.ok(Date.now() - t0 < 20_000, 'the lease lapses');
    }
    const rs = await Promise.all(Array.from({ length: 12 }, (_, i) => attempt(i % 2 ? b : c, k, '0.001')));
    assert.equal(rs.filter(admitted).length, 12);
    // $0.003 spent + 12 x $0.001. Released twice, the counter would have gone below zero (clamped) and read $0.012.
    assert.equal(await b.spentNanos(k), toNanos('0.015'));
    assert.equal(await redis.client().hlen(`${sk}:r`), 4);
  } finally { await dead.kill(); await b.close(); await c.close(); }
});

test('a replica cut off from Redis past its lease (a partition that heals) settles what it held once, as its whole cost', async () => {
  const prefix = newPrefix(); const k = key();
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: redis.port });
  const cut = replica(prefix, { redis: `redis://127.0.0.1:${proxy.port}`, leaseMs: 800 });
  const other = replica(prefix);
  try {
    const held = await attempt(cut, k, '0.03');
    assert.ok(admitted(held));
    proxy.down();
    const { r: mine } = await admittedOnceFree(other, k, '0.03');
    assert.equal(await other.spentNanos(k), toNanos('0.03'));
    // The request finishes while the replica still cannot reach Redis: the settlement waits.
    await held.settle({ tokens: 1, costUsd: '0.01' });
    proxy.up();
    for (const t0 = Date.now(); cut.unavailable || await other.spentNanos(k) !== toNanos('0.04'); await sleep(50)) {
      if (Date.now() - t0 > 20_000) break;
    }
    // Before: its delta (-$0.02) was added on recovery to a counter that no longer held the $0.03: $0.01.
    assert.equal(await other.spentNanos(k), toNanos('0.04'), 'the other replica\'s $0.03 + the $0.01 really spent');
    await mine.release();
    assert.equal(await other.spentNanos(k), toNanos('0.01'));
  } finally { await cut.close(); await other.close(); await proxy.close(); }
});

test('a settlement sent again after its answer was lost applies once, and a lost acquire settles right, whether its reservation was held or released', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k);
  const r = redis.client();
  const a = replica(prefix);
  try {
    assert.ok(admitted(await attempt(a, k, '0.001'))); // the counter exists, with its epoch
    const epoch = (await r.hget(`${sk}:m`, 'e')) ?? '';
    const wk = `${prefix}{${k.id}}:w:none`;
    const before = BigInt((await r.get(sk)) ?? '0');
    const adjust = (token: string, delta: string, actual: string, resend: '0' | '1') => r.eval(SCRIPTS.adjust, 5, wk, sk, `${sk}:m`, `${sk}:o`, `${sk}:r`,
      '0', delta, token, epoch, actual, '0', '', '0', '1', resend);
    // Held: the estimate 10 is in the counter; the settlement for 4 is sent twice (the first answer lost).
    await r.incrby(sk, 10); await r.hset(`${sk}:o`, 'x:gone:1', '10');
    await adjust('x:gone:1', '-6', '4', '1');
    await adjust('x:gone:1', '-6', '4', '1');
    assert.equal(BigInt((await r.get(sk))!) - before, 4n);
    // Released: the estimate already went back; the settlement for 7 adds 7, once.
    await r.hset(`${sk}:r`, 'x:gone:2', '10');
    await adjust('x:gone:2', '-3', '7', '1');
    await adjust('x:gone:2', '-3', '7', '1');
    assert.equal(BigInt((await r.get(sk))!) - before, 11n);
    // An acquire whose answer was lost, settled on recovery: taken and held (delta), taken and released
    // since (whole), never taken (whole).
    const uncertain = (token: string, delta: string, actual: string) => r.eval(SCRIPTS.uncertain, 5, wk, sk, `${sk}:m`, `${sk}:o`, `${sk}:r`, token, delta, actual);
    await r.incrby(sk, 10); await r.hset(`${sk}:o`, 'x:gone:3', '10');
    await uncertain('x:gone:3', '-8', '2');
    assert.equal(BigInt((await r.get(sk))!) - before, 13n);
    await r.hset(`${sk}:r`, 'x:gone:4', '10');
    await uncertain('x:gone:4', '-5', '5');
    assert.equal(BigInt((await r.get(sk))!) - before, 18n);
    await uncertain('x:gone:5', '-9', '1');
    assert.equal(BigInt((await r.get(sk))!) - before, 19n);
    assert.equal(await r.hlen(`${sk}:r`), 0);
  } finally { await a.close(); }
});

test('a lease that cannot be renewed (a key of the wrong type in its place) is reported, never an unhandled rejection', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k);
  const errors: unknown[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown): void => { unhandled.push(e); };
  process.on('unhandledRejection', onUnhandled);
  const l = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 100, leaseMs: 1500, onError: (e) => errors.push(e) });
  try {
    const open = await attempt(l, k, '0.01');
    assert.ok(admitted(open));
    // Something else sharing this Redis writes a string where the counter's leases are.
    await redis.client().set(`${sk}:l`, 'not a lease');
    const t0 = Date.now();
    while (Date.now() - t0 < 3000 && !errors.some((e) => String(e).includes('WRONGTYPE'))) await sleep(50);
    await sleep(300);
    // Before: each presence interval's failed renewal rejected while the replica count was awaited, unhandled.
    assert.deepEqual(unhandled, []);
    assert.ok(errors.some((e) => String(e).includes('WRONGTYPE')), 'reported');
    assert.equal(l.unavailable, false, 'not taken for Redis failing');
    // The next acquire replaces the key; the reservation settles as usual.
    assert.ok(admitted(await attempt(l, k, '0.01')));
    await open.settle({ tokens: 1, costUsd: '0.004' });
    assert.equal(await l.spentNanos(k), toNanos('0.014'));
  } finally { process.off('unhandledRejection', onUnhandled); await l.close(); }
});

/** Polls `check` every 25 ms until it holds (at most `ms`); returns the ms it took. */
async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<number> {
  const t0 = Date.now();
  while (!(await check())) {
    assert.ok(Date.now() - t0 < ms, `${what} within ${ms} ms`);
    await sleep(25);
  }
  return Date.now() - t0;
}
const counter = async (sk: string): Promise<bigint> => BigInt((await redis.client().get(sk)) ?? '0');

test('a dead replica\'s reservations go back without any acquire on their counters, once, however many replicas sweep at the same time', async () => {
  const prefix = newPrefix();
  const keys = Array.from({ length: 12 }, () => key());
  const dead = await spawnReplica({ redisUrl: redis.url, prefix, presenceMs: 100, leaseMs: 1000 });
  // Three live replicas that never see these keys: they sweep every 50 ms, in step.
  const live = [0, 1, 2].map(() => new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 50, leaseMs: 1000, onError: () => {} }));
  try {
    for (const k of keys) {
      const first = await acquireIn(dead, k, '0.01');
      await acquireIn(dead, k, '0.02');
      await acquireIn(dead, k, '0.01');
      await dead.settle(first, '0.003');
    }
    const sks = keys.map((k) => counterOf(prefix, k));
    for (const sk of sks) assert.equal(await counter(sk), toNanos('0.033'));
    await dead.kill();
    const killedAt = Date.now();
    // Before: the $0.03 of each stayed held until an acquire came on its key (none does here).
    const took = await until(async () => (await Promise.all(sks.map(counter))).every((v) => v === toNanos('0.003')), 10_000, 'every counter released');
    console.log(`# 12 counters released ${took} ms after the kill with no acquire (lease 1000 ms, presence 100 ms; sweeps every 50 ms from 3 replicas)`);
    assert.ok(Date.now() - killedAt >= 900, 'not before the lease could lapse');
    // Released once: twice would have clamped each counter at $0 (the $0.003 spent gone).
    await sleep(300);
    for (const sk of sks) {
      assert.equal(await counter(sk), toNanos('0.003'));
      assert.equal(await redis.client().hlen(`${sk}:r`), 2, 'its two open tokens kept as released');
      assert.deepEqual(await openTokens(sk), []);
    }
    // The index is cleaned once nothing is open on its counters.
    await until(async () => (await redis.client().zcard(`${prefix}leases`)) === 0, 5000, 'the lease index emptied');
  } finally { await dead.kill(); for (const l of live) await l.close(); }
});

test('the sweep is bounded per tick: thousands of lapsed counters are released a batch a presence interval (Redis time measured)', async () => {
  const prefix = newPrefix(); const r = redis.client();
  const N = 2000, idx = `${prefix}leases`;
  const past = (await redisNow()) - 10_000;
  for (let from = 0; from < N; from += 500) {
    const m = r.multi();
    for (let i = from; i < Math.min(N, from + 500); i++) {
      const sk = `${prefix}{bulk${i}}:s:day:0`;
      // What a replica that died left: an estimate of 10 held, listed open under its lapsed lease.
      m.set(sk, '15').hset(`${sk}:m`, 'g', 'G').hset(`${sk}:o`, 'g', 'G', `x:gone${i}:1`, '10').zadd(`${sk}:l`, past, `gone${i}`).zadd(idx, past, sk);
    }
    await m.exec();
  }
  // Loaded first: a script Redis does not know yet is sent again in full (NOSCRIPT), which would count twice.
  for (const text of Object.values(SCRIPTS)) await r.script('LOAD', text);
  await r.config('RESETSTAT');
  const presenceMs = 200;
  const l = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs, leaseMs: 600, onError: () => {} });
  try {
    const t0 = Date.now();
    let ticksSeen = 0, lastLeft = N;
    const steps: number[] = [];
    await until(async () => {
      const left = await r.zcard(idx);
      if (left !== lastLeft) { steps.push(lastLeft - left); lastLeft = left; ticksSeen++; }
      return left === 0;
    }, 60_000, 'every counter swept');
    const took = Date.now() - t0;
    for (let i = 0; i < N; i += 97) assert.equal(await r.get(`${prefix}{bulk${i}}:s:day:0`), '5');
    const stats = await r.info('commandstats');
    const stat = (cmd: string): { calls: number; usec: number } => {
      const m = new RegExp(`cmdstat_${cmd}:calls=(\\d+),usec=(\\d+)`).exec(stats);
      return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) };
    };
    const ev = stat('evalsha'), evl = stat('eval');
    const ticks = Math.ceil(N / 100);
    console.log(`# ${N} lapsed counters swept in ${took} ms (${ticksSeen} index changes seen, largest ${Math.max(...steps)}); ` +
      `scripts: ${ev.calls + evl.calls} calls, ${((ev.usec + evl.usec) / ticks).toFixed(0)} us of Redis time per tick of ${100} counters, ` +
      `${((ev.usec + evl.usec) / (ev.calls + evl.calls)).toFixed(1)} us a call`);
    // One replica claims at most 100 a tick: 2,000 take 20 ticks, the first at once (timers never fire early).
    assert.ok(took >= (ticks - 2) * presenceMs, `spread over the ticks (${took} ms)`);
    assert.ok(ev.calls + evl.calls <= N + 3 * ticks, 'a script per counter and a few per tick');
  } finally { await l.close(); }
});

test('a replica paused longer than released tokens are kept settles right: its whole cost, not a second refund', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k);
  const frozen = await spawnReplica({ redisUrl: redis.url, prefix, presenceMs: 100, leaseMs: 800, releasedKeepMs: 200 });
  const live = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 100, leaseMs: 1500, releasedKeepMs: 200, onError: () => {} });
  try {
    const one = await acquireIn(frozen, k, '0.02');
    const two = await acquireIn(frozen, k, '0.02');
    const mine = await attempt(live, k, '0.005');
    assert.ok(admitted(mine));
    frozen.signal('SIGSTOP');
    await until(async () => await counter(sk) === toNanos('0.005'), 10_000, 'the frozen replica\'s $0.04 released');
    // Past the released tokens' retention (200 ms here, a day by default): their records are gone.
    await until(async () => await redis.client().exists(`${sk}:r`) === 0, 5000, 'the released tokens expired');
    frozen.signal('SIGCONT');
    await frozen.settle(one, '0.015');
    await frozen.release(two);
    // Before: each settled as a delta against the estimate already returned (-$0.005, -$0.02): $0.
    assert.equal(await counter(sk), toNanos('0.02'), 'the live $0.005 + the thawed replica\'s $0.015');
    await mine.settle({ tokens: 1, costUsd: '0.001' });
    assert.equal(await counter(sk), toNanos('0.016'));
  } finally { await frozen.kill(); await live.close(); }
});

test('a counter recreated by an older replica that leaves the open list: the stale entries are dropped, never released against it', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k); const r = redis.client();
  const dead = await spawnReplica({ redisUrl: redis.url, prefix, presenceMs: 100, leaseMs: 600 });
  const live = replica(prefix);
  try {
    await acquireIn(dead, k, '0.02');
    await acquireIn(dead, k, '0.02');
    await dead.kill();
    // Redis loses the counter and its meta (an eviction, a partial restore); a replica of stop 35,
    // which knows no open list, recreates the counter with its first spend (INCRBY here, without a
    // store; with one, a fresh meta holding its own epoch: neither has the list's generation) and
    // leaves the list of the lost counter, the dead replica's $0.04 in it, under its lapsed lease.
    await r.del(sk, `${sk}:m`);
    await r.incrby(sk, toNanos('0.007').toString());
    await sleep(800);
    // Before: the live replica's next acquire released the stale $0.04 from the new counter: -$0.033,
    // clamped at $0, so the older replica's $0.007 was forgotten.
    const mine = await attempt(live, k, '0.01');
    assert.ok(admitted(mine));
    assert.equal(await counter(sk), toNanos('0.017'), 'the older replica\'s $0.007 + this $0.01');
    assert.equal(await r.hlen(`${sk}:r`), 0, 'nothing released');
    assert.deepEqual((await openTokens(sk)).length, 1, 'only the live reservation is listed');
    await mine.settle({ tokens: 1, costUsd: '0.002' });
    assert.equal(await counter(sk), toNanos('0.009'));
  } finally { await dead.kill(); await live.close(); }
});

test('an open list Redis lost while keeping the counter: nothing in it is released, every reservation settles as its delta', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k); const r = redis.client();
  const paused = await spawnReplica({ redisUrl: redis.url, prefix, presenceMs: 100, leaseMs: 800, releasedKeepMs: 200 });
  const live = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 100, leaseMs: 1500, releasedKeepMs: 200, onError: () => {} });
  try {
    const one = await acquireIn(paused, k, '0.01');
    await r.del(`${sk}:o`); // the list is lost, the counter and its meta kept
    const two = await acquireIn(paused, k, '0.02');
    const mine = await attempt(live, k, '0.005');
    assert.ok(admitted(mine));
    paused.signal('SIGSTOP');
    await sleep(1500); // its lease lapses; the live replica sweeps every 100 ms
    assert.ok(admitted(await attempt(live, k, '0')));
    // Before (a list lost was read like any other): the $0.02 listed after the loss was released, and
    // once its record expired its settlement subtracted its estimate again: the counter ended at $0.
    assert.equal(await counter(sk), toNanos('0.035'), 'nothing released from a lost list');
    paused.signal('SIGCONT');
    await paused.settle(one, '0.004');
    await paused.settle(two, '0.01');
    assert.equal(await counter(sk), toNanos('0.019'), '$0.004 + $0.01 + the live $0.005');
    await mine.release();
    assert.equal(await counter(sk), toNanos('0.014'));
  } finally { await paused.kill(); await live.close(); }
});

test('the lease index keeps only counters that can still release something', async () => {
  const prefix = newPrefix(); const r = redis.client(); const idx = `${prefix}leases`;
  const past = (await redisNow()) - 10_000;
  // Open entries under no lease at all (Redis lost the leases): nothing can ever lapse there.
  const orphan = `${prefix}{orphan}:s:day:0`;
  await r.multi().set(orphan, '10').hset(`${orphan}:m`, 'g', 'G').hset(`${orphan}:o`, 'g', 'G', 'x:gone:1', '10').zadd(idx, past, orphan).exec();
  // A counter gone (expired with its period): nothing to sweep.
  await r.zadd(idx, past, `${prefix}{expired}:s:day:0`);
  const l = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 100, leaseMs: 300, onError: () => {} });
  try {
    // Before: the orphan stayed due and was claimed and swept every presence interval for as long as its counter lived.
    await until(async () => (await r.zcard(idx)) === 0, 5000, 'both left the index');
    assert.equal(await r.get(orphan), '10', 'nothing released');
  } finally { await l.close(); }
});

test('a replica killed right after its first reservation on a counter, before any renewal: released by the sweep all the same', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k);
  // Its presence timer ticks at start, then in 3 s: killed before, only the acquire itself put the
  // counter in the index (due a lease and a presence interval on: 3.5 s).
  const dead = await spawnReplica({ redisUrl: redis.url, prefix, presenceMs: 3000, leaseMs: 500 });
  const live = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 50, leaseMs: 1000, onError: () => {} });
  try {
    await acquireIn(dead, k, '0.03');
    await dead.kill();
    assert.equal(await counter(sk), toNanos('0.03'));
    // Before the index write on the acquire's path: held until an acquire came on the key.
    const took = await until(async () => await counter(sk) === 0n, 8000, 'released');
    console.log(`# released ${took} ms after the kill (lease 500 ms, presence 3000 ms; killed before the holder's first renewal)`);
    assert.equal(await redis.client().hlen(`${sk}:r`), 1);
  } finally { await dead.kill(); await live.close(); }
});

test('a lease index key of the wrong type is replaced by the next sweep: a dead replica\'s reservations still go back', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k); const idx = `${prefix}leases`;
  // Left by anything but the gateway (a hand-run SET, another program sharing the prefix).
  await redis.client().set(idx, 'not a sorted set');
  const errors: unknown[] = [];
  const live = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 50, leaseMs: 1000, onError: (e) => errors.push(e) });
  const dead = await spawnReplica({ redisUrl: redis.url, prefix, presenceMs: 100, leaseMs: 500 });
  try {
    await acquireIn(dead, k, '0.03');
    await sleep(300); // a renewal or two: its holder's push to the index
    await dead.kill();
    assert.equal(await counter(sk), toNanos('0.03'));
    // Before: every sweep failed (WRONGTYPE, reported each presence interval) and the $0.03 stayed held.
    const took = await until(async () => await counter(sk) === 0n, 8000, 'released');
    console.log(`# released ${took} ms after the kill with the index key first of the wrong type`);
    assert.ok(['zset', 'none'].includes(await redis.client().type(idx)), 'the index replaced (emptied once nothing is open)');
    assert.equal(await redis.client().hlen(`${sk}:r`), 1, 'released once');
  } finally { await dead.kill(); await live.close(); }
});

test('an acquire before the replica has learnt Redis\'s time, on a clock an hour ahead: its counter still comes due for the sweep', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k); const idx = `${prefix}leases`;
  const live = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 50, leaseMs: 1000, onError: () => {} });
  // The replica's clock an hour ahead of Redis's while it starts and takes its first reservation, in the
  // same tick (before its first sweep answers: its offset to Redis's clock is not known yet).
  const realNow = Date.now;
  let skewed!: RedisLimiter;
  let first!: Promise<Reservation>;
  Date.now = () => realNow() + 3_600_000;
  try {
    skewed = new RedisLimiter({ redis: redis.url, prefix, now: realNow, probeMs: 100, presenceMs: 100, leaseMs: 500, onError: () => {} });
    first = skewed.acquire(k, { tokens: 1, costUsd: '0.03' });
  } finally { Date.now = realNow; }
  try {
    await first;
    const due = Number(await redis.client().zscore(idx, sk)) - await redisNow();
    // Before: due in an hour (a ZADD GT on this process's clock plus an offset of 0), which no push lowers.
    assert.ok(due < 60_000, `the counter comes due in ${Math.round(due / 1000)} s`);
    await skewed.close(); // it stops renewing, as a dead replica does; its reservation stays open
    const took = await until(async () => await counter(sk) === 0n, 8000, 'released');
    console.log(`# released ${took} ms after the replica stopped (lease 500 ms)`);
  } finally { await skewed.close(); await live.close(); }
});

test('replicas are counted alike whatever their presence interval or clock: each mark lasts its own three intervals, on Redis\'s time', async () => {
  // Before: each replica dropped the marks older than three of ITS intervals by ITS clock, so a replica
  // ticking every 100 ms dropped one ticking every 1 s most of the time (counted 1 of 2: in fail open it
  // took all that was left instead of half), and a replica whose clock ran 10 s behind was dropped at once.
  const prefix = newPrefix();
  const fast = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 100, onError: () => {} });
  const slow = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 1000, onError: () => {} });
  const behind = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 100, now: () => Date.now() - 10_000, onError: () => {} });
  try {
    const seen: number[] = [];
    for (let i = 0; i < 25; i++) { await sleep(100); seen.push(fast.replicas); }
    const late = seen.slice(5);
    assert.ok(late.every((n) => n === 3), `the fast replica counted ${late.join(',')} (3 running)`);
    assert.equal(slow.replicas, 3);
    assert.equal(behind.replicas, 3);
    await behind.close();
  } finally { await fast.close(); await slow.close(); await behind.close(); }
});

test('the lease index deleted alone: a live holder puts its counter back at its next tick', async () => {
  const prefix = newPrefix(); const k = key(); const sk = counterOf(prefix, k); const idx = `${prefix}leases`;
  const l = new RedisLimiter({ redis: redis.url, prefix, probeMs: 100, presenceMs: 100, leaseMs: 1000, onError: () => {} });
  try {
    const r = await l.acquire(k, { tokens: 1, costUsd: '0.02' });
    await until(async () => (await redis.client().zscore(idx, sk)) !== null, 2000, 'indexed');
    await redis.client().del(idx); // a hand-run DEL, or an eviction under an allkeys-* maxmemory policy
    const took = await until(async () => (await redis.client().zscore(idx, sk)) !== null, 2000, 'indexed again');
    console.log(`# back in the index ${took} ms after its deletion (presence 100 ms)`);
    await r.settle({ tokens: 1, costUsd: '0.01' });
  } finally { await l.close(); }
});
