// A lost Redis connection is retried at most every 250 ms (src/util/redis-retry.ts), not after
// ioredis's default back-off that grows to 2 s: after an outage of seconds a fail-open limiter served
// without limits until the gateway noticed Redis back (855 ms under load in test/reliability/deps.rel.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { RECONNECT_CAP_MS, reconnectDelay, redisClient } from '../src/util/redis-retry.ts';
import { RedisLimiter } from '../src/limits/redis.ts';
import { limitedKey } from './helpers/limit-records.ts';
import { startOwnRedis, type OwnRedis } from './helpers/redis-server.ts';

let redis: OwnRedis;
before(async () => { redis = await startOwnRedis(); });
after(async () => { await redis.stop(); });

test('reconnect delays grow by 50 ms to 250 ms and stay there; the gateway\'s connections use them', async () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 100].map(reconnectDelay), [50, 100, 150, 200, 250, 250, 250]);
  const c = redisClient(redis.url, { maxRetriesPerRequest: 1, lazyConnect: true });
  c.on('error', () => {});
  const delays: number[] = [];
  c.on('reconnecting', (ms: number) => delays.push(ms));
  try {
    await c.connect();
    await redis.kill();
    // ioredis's own back-off would be at 500 ms and growing after 3 s down (50 ms more per attempt).
    await new Promise((r) => setTimeout(r, 3000));
    assert.ok(delays.length >= 8, `${delays.length} attempts in 3 s`);
    assert.equal(Math.max(...delays), RECONNECT_CAP_MS, delays.join(','));
    await redis.restart();
    const t0 = Date.now();
    while (c.status !== 'ready' && Date.now() - t0 < 2000) await new Promise((r) => setTimeout(r, 10));
    assert.equal(c.status, 'ready');
    assert.ok(Date.now() - t0 <= RECONNECT_CAP_MS + 200, `ready ${Date.now() - t0} ms after the restart`);
  } finally { c.disconnect(); }
});

test('a fail-open limiter notices Redis back within a few hundred ms of a restart after seconds down', async () => {
  const k = limitedKey('reconnect', { rpmLimit: 3 });
  const l = new RedisLimiter({ redis: redis.url, prefix: `rc${process.pid}:`, probeMs: 100, onError: () => {} });
  try {
    await redis.kill();
    try { await l.acquire(k, { tokens: 1, costUsd: '0' }); } catch { /* fail open admits; the breaker opens */ }
    assert.equal(l.unavailable, true);
    await new Promise((r) => setTimeout(r, 3000));
    await redis.restart();
    const t0 = Date.now();
    while (l.unavailable && Date.now() - t0 < 3000) await new Promise((r) => setTimeout(r, 10));
    assert.equal(l.unavailable, false);
    assert.ok(Date.now() - t0 < 600, `noticed ${Date.now() - t0} ms after the restart`);
  } finally { await l.close(); }
});
