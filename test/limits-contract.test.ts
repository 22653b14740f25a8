// The same limit cases against the in-process and the Redis limiter: concurrent acquires never pass
// rpm, tpm or budget; settle/release adjust; spend is seeded from the store; two Redis replicas share limits.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { GatewayError } from '../src/gateway-error.ts';
import { LimitError, fromNanos, periodEnd, periodStart, toNanos, type Limiter, type Reservation } from '../src/limits/limiter.ts';
import { MemoryLimiter } from '../src/limits/memory.ts';
import { openLimiter } from '../src/limits/open.ts';
import { RedisLimiter } from '../src/limits/redis.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { InferenceRecord, KeyRecord } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisReachable(): Promise<boolean> {
  const r = new Redis(REDIS_URL, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 2000 });
  r.on('error', () => {});
  try { await r.connect(); await r.ping(); return true; } catch { return false; } finally { r.disconnect(); }
}
const redisUp = await redisReachable();
if (!redisUp && process.env.CI === 'true') throw new Error(`Redis unreachable at ${REDIS_URL} and CI=true`);

const prefix = `gwtest:${process.pid}:${Date.now().toString(36)}:`;
const clients: Redis[] = [];
after(async () => {
  if (!redisUp) return;
  const r = new Redis(REDIS_URL);
  const keys = await r.keys(`${prefix}*`);
  if (keys.length) await r.del(...keys);
  await r.quit();
  for (const c of clients) await c.quit();
});

let clock = Date.parse('2030-05-15T12:00:30.000Z');
const now = (): number => clock;

const key = (id: string, over: Partial<KeyRecord> = {}): KeyRecord => ({
  id, name: id, hash: 'h', createdAt: '2030-01-01T00:00:00.000Z', lastUsedAt: null, expiresAt: null, revokedAt: null,
  allowedModels: [], budgetUsd: null, budgetPeriod: null, rpmLimit: null, tpmLimit: null, ...over,
});

async function attempt(l: Limiter, k: KeyRecord, tokens: number, costUsd: string): Promise<Reservation | LimitError> {
  try { return await l.acquire(k, { tokens, costUsd }); } catch (err) { if (err instanceof LimitError) return err; throw err; }
}
const granted = (xs: Array<Reservation | LimitError>): Reservation[] => xs.filter((x): x is Reservation => !(x instanceof LimitError));
const refused = (xs: Array<Reservation | LimitError>): LimitError[] => xs.filter((x): x is LimitError => x instanceof LimitError);

test('money in nanos is exact and rounds up; periods are UTC', () => {
  assert.equal(toNanos('1.5'), 1_500_000_000n);
  assert.equal(toNanos('0.0000000001'), 1n);
  assert.equal(toNanos('0.0000000021'), 3n);
  assert.equal(toNanos('0'), 0n);
  assert.equal(fromNanos(1_500_000_001n), '1.500000001');
  const t = Date.parse('2030-05-15T12:00:30Z'); // a Wednesday
  assert.equal(new Date(periodStart('day', t)).toISOString(), '2030-05-15T00:00:00.000Z');
  assert.equal(new Date(periodStart('week', t)).toISOString(), '2030-05-13T00:00:00.000Z');
  assert.equal(new Date(periodStart('month', t)).toISOString(), '2030-05-01T00:00:00.000Z');
  assert.equal(periodStart('total', t), 0);
  assert.equal(new Date(periodEnd('week', t)!).toISOString(), '2030-05-20T00:00:00.000Z');
  assert.equal(new Date(periodEnd('month', Date.parse('2030-12-31T23:00:00Z'))!).toISOString(), '2031-01-01T00:00:00.000Z');
  assert.equal(periodEnd('total', t), null);
});

test('openLimiter picks Redis only when a URL is given; keys without limits always pass', async () => {
  const mem = openLimiter();
  assert.ok(mem instanceof MemoryLimiter);
  const free = key('free');
  const all = await Promise.all(Array.from({ length: 500 }, () => attempt(mem, free, 1e6, '1000')));
  assert.equal(granted(all).length, 500);
  const red = openLimiter({ redisUrl: 'redis://127.0.0.1:1', onError: () => {} });
  assert.ok(red instanceof RedisLimiter);
  await red.close();
});

type Impl = { name: string; make: () => Limiter };
const impls: Impl[] = [{ name: 'memory', make: () => new MemoryLimiter({ now }) }];
if (redisUp) {
  impls.push({ name: 'redis', make: () => { const c = new Redis(REDIS_URL); clients.push(c); return new RedisLimiter({ redis: c, prefix, now }); } });
}

let n = 0;
for (const impl of impls) {
  describe(`limiter: ${impl.name}`, () => {
    test('concurrent acquires never exceed rpm; 429 carries retry-after; the next minute admits again', async () => {
      const l = impl.make();
      const k = key(`rpm-${impl.name}-${n++}`, { rpmLimit: 10 });
      const results = await Promise.all(Array.from({ length: 50 }, () => attempt(l, k, 0, '0')));
      assert.equal(granted(results).length, 10);
      const errs = refused(results);
      assert.equal(errs.length, 40);
      const e = errs[0]!;
      assert.ok(e instanceof GatewayError);
      assert.deepEqual([e.code, e.status, e.reason], ['rate_limited', 429, 'rpm']);
      assert.equal(e.headers['retry-after'], '30');
      assert.match(e.message, /10 requests per minute/);
      clock += 60_000;
      assert.equal(granted([await attempt(l, k, 0, '0')]).length, 1);
    });

    test('tpm counts estimates and settle replaces them with actual tokens', async () => {
      const l = impl.make();
      const k = key(`tpm-${impl.name}-${n++}`, { tpmLimit: 1000 });
      const rs = granted(await Promise.all(Array.from({ length: 6 }, () => attempt(l, k, 300, '0'))));
      assert.equal(rs.length, 3);
      await rs[0]!.settle({ tokens: 100, costUsd: '0' });
      await rs[0]!.settle({ tokens: 0, costUsd: '0' }); // ignored: settles once
      assert.equal(granted([await attempt(l, k, 300, '0')]).length, 1); // 100 + 300 + 300 + 300
      const e = await attempt(l, k, 1, '0');
      assert.ok(e instanceof LimitError && e.reason === 'tpm' && e.status === 429);
      await rs[1]!.release();
      assert.equal(granted([await attempt(l, k, 300, '0')]).length, 1);
      const big = await attempt(l, key(`tpm-big-${impl.name}-${n++}`, { tpmLimit: 1000 }), 5000, '0');
      assert.ok(big instanceof LimitError && /lower max_tokens/.test(big.message));
    });

    test('concurrent acquires never exceed the budget; settle and release adjust spend exactly', async () => {
      const l = impl.make();
      const k = key(`budget-${impl.name}-${n++}`, { budgetUsd: '1', budgetPeriod: 'day' });
      const results = await Promise.all(Array.from({ length: 20 }, () => attempt(l, k, 10, '0.3')));
      const ok = granted(results);
      assert.equal(ok.length, 3);
      const e = refused(results)[0]!;
      assert.deepEqual([e.code, e.status, e.reason], ['budget_exceeded', 402, 'budget']);
      assert.match(e.message, /budget is \$1 per day; \$0\.9 is spent or reserved and this request may cost up to \$0\.3\. The budget resets at 2030-05-16T00:00:00\.000Z/);
      await ok[0]!.settle({ tokens: 10, costUsd: '0.050000001' }); // spend 0.650000001
      assert.equal(granted([await attempt(l, k, 10, '0.3')]).length, 1); // 0.950000001
      assert.ok(await attempt(l, k, 10, '0.05') instanceof LimitError);
      assert.equal(granted([await attempt(l, k, 10, '0.049999999')]).length, 1); // exactly 1
      assert.ok(await attempt(l, k, 0, '0') instanceof LimitError); // fully spent: even a free request is refused
      await ok[1]!.release(); // back to 0.7
      assert.equal(granted([await attempt(l, k, 10, '0.3')]).length, 1);
      const other = key(`budget-next-${impl.name}-${n++}`, { budgetUsd: '1', budgetPeriod: 'day' });
      assert.equal(granted([await attempt(l, other, 0, '1')]).length, 1);
    });

    test('budget spend is seeded from the store so a restart does not reset it', async (t) => {
      const store = new SqliteStore({ path: ':memory:' });
      await store.migrate();
      t.after(() => store.close());
      const k = key(`seed-${impl.name}-${n++}`, { budgetUsd: '2', budgetPeriod: 'month' });
      const rec = (createdAt: string, costUsd: string): InferenceRecord => ({
        id: uuidv7(), createdAt, keyId: k.id, route: '/v1/messages', clientFormat: 'anthropic-messages', requestedModel: 'a/b',
        servedModel: 'a/b', provider: 'a', attempts: [], status: 200, errorCode: null, latencyMs: 1, ttftMs: null, stream: false,
        inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd, finishReason: 'stop',
        metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
      });
      // Last month's spend does not count against this month's budget.
      await store.insertInferences([rec(new Date(clock).toISOString(), '1.75'), rec('2030-04-30T23:59:59.000Z', '5')]);
      const l = impl.make();
      await l.seed(store, [k, key('no-budget')]);
      assert.ok(await attempt(l, k, 0, '0.3') instanceof LimitError);
      assert.equal(granted([await attempt(l, k, 0, '0.25')]).length, 1);
    });
  });
}

if (redisUp) {
  test('two Redis limiter instances (two replicas) share rpm and budget', async () => {
    const a = new RedisLimiter({ redis: REDIS_URL, prefix, now });
    const b = new RedisLimiter({ redis: REDIS_URL, prefix, now });
    try {
      const k = key(`shared-${n++}`, { rpmLimit: 12, budgetUsd: '10', budgetPeriod: 'total' });
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => attempt(i % 2 ? a : b, k, 0, '0')));
      assert.equal(granted(results).length, 12);
      const k2 = key(`shared-budget-${n++}`, { budgetUsd: '0.000001', budgetPeriod: 'total' });
      const spent = await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(i % 2 ? a : b, k2, 0, '0.0000001')));
      assert.equal(granted(spent).length, 10);
      assert.equal(await b.spentNanos(k2), 1000n);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('Redis down: fails open by default, closed when asked', async () => {
    const errors: unknown[] = [];
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, enableOfflineQueue: false });
    dead.on('error', () => {});
    const open = new RedisLimiter({ redis: dead, prefix, now, onError: (e) => errors.push(e) });
    const r = await open.acquire(key('x', { rpmLimit: 1 }), { tokens: 1, costUsd: '0' });
    await r.settle({ tokens: 1, costUsd: '0' });
    assert.equal(errors.length, 1);
    const closed = new RedisLimiter({ redis: dead, prefix, now, failOpen: false });
    await assert.rejects(closed.acquire(key('x', { rpmLimit: 1 }), { tokens: 1, costUsd: '0' }),
      (e: unknown) => e instanceof LimitError && e.status === 429 && e.headers['retry-after'] === '1');
    dead.disconnect();
  });
}
