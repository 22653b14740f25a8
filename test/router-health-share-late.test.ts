// Ejection sharing when Redis is unreachable as the gateway starts and reachable later (a redis-server of
// the test's own behind a TCP proxy the test opens): the replica subscribes once it connects, so
// ejections published after that reach it, and those stored meanwhile are read back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamHealth } from '../src/engine/health.ts';
import { HealthShare } from '../src/router/health-share.ts';
import { startOwnRedis } from './helpers/redis-server.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('Redis unreachable at start, reachable later: ejections are shared both ways and stored ones read back', async (t) => {
  const redis = await startOwnRedis();
  t.after(() => redis.stop());
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: redis.port }, 'redis', '');
  t.after(() => proxy.close());
  proxy.down();
  const url = `redis://127.0.0.1:${proxy.port}`;
  const prefix = `gw-test-late-${process.pid}:`;
  const a = new UpstreamHealth(); const b = new UpstreamHealth();
  const sa = new HealthShare(url, a, { prefix }); const sb = new HealthShare(url, b, { prefix });
  t.after(async () => { await sa.close(); await sb.close(); });
  await Promise.all([sa.start(() => ['p', 'q', 'r']), sb.start(() => ['p', 'q', 'r'])]);
  const admin = redis.client();
  const later = Date.now() + 60_000;
  await admin.set(`${prefix}eject:r`, String(later), 'PX', 60_000); // stored by a replica that could reach Redis
  proxy.up();
  await until('the stored ejection read back once connected (before: never)', () => a.isEjected('r') && b.isEjected('r'));
  // Both connected and subscribed: what one decides reaches the other.
  for (let i = 0; i < 40 && (await admin.call('PUBSUB', 'NUMSUB', `${prefix}eject`) as [string, number])[1] < 2; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(a.failure('p', { consecutiveFailures: 1, baseMs: 60_000, maxMs: 60_000 }), true, 'replica a ejects p');
  await until('the ejection published by one replica applied by the other (before: never, until a restart)', () => b.isEjected('p'));
});
