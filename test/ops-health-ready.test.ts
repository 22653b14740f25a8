// Liveness and readiness: /health stays cheap and reports each dependency from the last background
// probe; /health/ready (and /health?ready=1) probes now and answers 503 when a dependency the gateway
// needs is down (the database behind a TCP proxy the test cuts, Redis with fail-closed limits, a
// writer dropping rows). /metrics counts every route (feedback, model listing, admin, ops) by route
// pattern and status, and the dependency states.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';
import { Readiness } from '../src/health/readiness.ts';
import type { WriterStats } from '../src/records/writer.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';
import { startOwnRedis } from './helpers/redis-server.ts';

type Rec = Record<string, any>;
const pgUp = await pgAvailable();

const stats = (over: Partial<WriterStats> = {}): WriterStats => ({
  queued: 0, queuedBytes: 0, dropped: 0, flushed: 0, failures: 0, rejected: 0, repaired: 0, salvaged: 0, consecutiveFailures: 0, lastDropAt: 0, ...over,
});

test('Readiness: required checks decide; Redis is required only when limits fail closed; a writer that dropped recently or keeps failing is not ready', async () => {
  let now = 1_000_000;
  let w = stats();
  let dbUp = true;
  let failOpen = true;
  const r = new Readiness({
    ping: async () => { if (!dbUp) throw new Error('connect ECONNREFUSED'); }, redisUrl: 'redis://127.0.0.1:9', redisFailOpen: () => failOpen,
    writer: () => w, draining: () => false, authReady: () => true, timeoutMs: 300, now: () => now,
  });
  try {
    let rep = await r.check(true);
    assert.equal(rep.checks.redis?.ok, false);
    assert.equal(rep.ready, true, 'Redis down with fail-open limits: still ready (degraded)');
    failOpen = false;
    rep = await r.check(true);
    assert.equal(rep.ready, false, 'fail-closed: Redis down refuses limited requests');
    failOpen = true;
    dbUp = false;
    rep = await r.check(true);
    assert.deepEqual([rep.ready, rep.checks.database?.ok], [false, false]);
    assert.match(rep.checks.database!.error!, /ECONNREFUSED/);
    dbUp = true;
    w = stats({ dropped: 3, lastDropAt: now - 5000 });
    rep = await r.check(true);
    assert.deepEqual([rep.ready, rep.checks.writer?.error], [false, 'rows dropped in the last 60 s']);
    now += 61_000;
    rep = await r.check(true);
    assert.equal(rep.ready, true, 'a drop a minute old no longer counts');
    w = stats({ consecutiveFailures: 3 });
    assert.equal((await r.check(true)).ready, false);
    // Cached for a second: a burst of probes costs one check.
    let pings = 0;
    const r2 = new Readiness({ ping: async () => { pings++; }, redisUrl: '', redisFailOpen: () => true, writer: () => stats(), draining: () => false, authReady: () => true });
    await Promise.all([r2.check(), r2.check(), r2.check()]);
    await r2.check();
    assert.equal(pings, 1);
    r2.close();
  } finally {
    r.close();
  }
});

test('/health/ready: 200 with every check named; /health reports the dependencies; /metrics counts every route by pattern and status', async (t) => {
  const admin = 'admin-key-for-health-tests-0123456789';
  const gw = await startTestGateway({ providers: [], gateway: { auth: { enabled: true, admin_key: admin } } });
  t.after(() => gw.stop());
  const ready = await fetch(`${gw.url}/health/ready`);
  assert.equal(ready.status, 200);
  const body = (await ready.json()) as Rec;
  assert.equal(body.ready, true);
  assert.deepEqual(Object.keys(body.checks).sort(), ['auth', 'database', 'draining', 'writer']);
  assert.equal(((await (await fetch(`${gw.url}/health?ready=1`)).json()) as Rec).ready, true);
  const h = (await (await fetch(`${gw.url}/health`)).json()) as Rec;
  assert.equal(h.status, 'ok');
  assert.equal(h.ready, true);
  assert.equal(h.dependencies.database.ok, true);
  assert.equal(h.writer.dropped, 0);

  await fetch(`${gw.url}/v1/models`);
  await fetch(`${gw.url}/v1/models`);
  await fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' }); // no key: 401
  await fetch(`${gw.url}/admin/keys`, { headers: { authorization: `Bearer ${admin}` } });
  await fetch(`${gw.url}/admin/keys`, { headers: { authorization: 'Bearer wrong-key' } });
  await fetch(`${gw.url}/no/such/route/${Date.now()}`);
  const m = await (await fetch(`${gw.url}/metrics`)).text();
  for (const line of [
    'gateway_http_requests_total{route="/v1/models",status="200"} 2',
    'gateway_http_requests_total{route="/v1/feedback",status="401"} 1',
    'gateway_http_requests_total{route="/admin/keys",status="200"} 1',
    'gateway_http_requests_total{route="/admin/keys",status="401"} 1',
    'gateway_http_requests_total{route="/health/ready",status="200"} 1',
    'gateway_http_requests_total{route="_unmatched",status="404"} 1',
    'gateway_dependency_up{dependency="database"} 1',
    'gateway_ready 1',
  ]) assert.ok(m.includes(line), `missing ${line}`);
  assert.doesNotMatch(m, /no\/such\/route/, 'raw paths never become labels');
});

test('the database unreachable: /health/ready answers 503 naming it, /health stays 200 and shows it', { skip: !pgUp }, async (t) => {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
  const schema = freshSchema('gw_ready');
  const gw = await startTestGateway({ providers: [], gateway: { storage: { database_url: proxy.url() } }, env: { GATEWAY_PG_SCHEMA: schema } });
  t.after(async () => {
    proxy.up(); await gw.stop(); await proxy.close();
    await dropSchema(schema);
  });
  assert.equal((await fetch(`${gw.url}/health/ready`)).status, 200);
  proxy.down();
  await new Promise((r) => setTimeout(r, 1100)); // past the one-second cache
  const r = await fetch(`${gw.url}/health/ready`);
  assert.equal(r.status, 503);
  const body = (await r.json()) as Rec;
  assert.equal(body.checks.database.ok, false);
  assert.doesNotMatch(JSON.stringify(body), /postgres:\/\//, 'never the URL');
  const h = await fetch(`${gw.url}/health`);
  assert.equal(h.status, 200);
  const hb = (await h.json()) as Rec;
  assert.equal(hb.dependencies.database.ok, false);
  assert.equal(hb.status, 'degraded', 'never "ok" with the database down');
  assert.match(await (await fetch(`${gw.url}/metrics`)).text(), /gateway_dependency_up\{dependency="database"\} 0/);
  proxy.up();
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal((await fetch(`${gw.url}/health/ready`)).status, 200);
});

test('Readiness: a Redis that answers PING but refuses writes (out of memory, a read-only replica) is down for fail-closed limits', async (t) => {
  const redis = await startOwnRedis();
  t.after(() => redis.stop());
  const admin = redis.client();
  const r = new Readiness({ ping: async () => {}, redisUrl: redis.url, redisFailOpen: () => false, writer: () => stats(), draining: () => false, authReady: () => true });
  t.after(() => r.close());
  // The probe's own connection opens at the first check (a check while it connects fails at once).
  for (let i = 0; i < 50 && !(await r.check(true)).ready; i++) await new Promise((res) => setTimeout(res, 50));
  assert.equal((await r.check(true)).ready, true);
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
  await admin.config('SET', 'maxmemory', '1');
  let rep = await r.check(true);
  assert.deepEqual([rep.ready, rep.checks.redis?.ok], [false, false], 'out of memory: every limiter script fails (before: ok, ready, while each limited request got 429)');
  assert.match(rep.checks.redis!.error!, /OOM/);
  await admin.config('SET', 'maxmemory', '0');
  assert.equal((await r.check(true)).ready, true);
  await admin.replicaof('127.0.0.1', '9');
  rep = await r.check(true);
  assert.deepEqual([rep.ready, rep.checks.redis?.ok], [false, false], 'a read-only replica');
  assert.match(rep.checks.redis!.error!, /READONLY/);
  await admin.replicaof('NO', 'ONE');
  assert.equal((await r.check(true)).ready, true);
});

test('Readiness: Redis back after a restart is reported up within a few hundred ms (its connection retried as often as the limiter\'s)', async (t) => {
  const redis = await startOwnRedis();
  t.after(() => redis.stop());
  const r = new Readiness({ ping: async () => {}, redisUrl: redis.url, redisFailOpen: () => false, writer: () => stats(), draining: () => false, authReady: () => true });
  t.after(() => r.close());
  for (let i = 0; i < 50 && !(await r.check(true)).ready; i++) await new Promise((res) => setTimeout(res, 50));
  assert.equal((await r.check(true)).ready, true);
  await redis.kill();
  await new Promise((res) => setTimeout(res, 1200));
  assert.equal((await r.check(true)).ready, false);
  await redis.restart();
  const t0 = Date.now();
  while (!(await r.check(true)).ready) {
    assert.ok(Date.now() - t0 < 500, 'ready again within 500 ms of Redis answering (before: its connection was retried every 2 s, 0.8 s here, and a fail-closed gateway answered 503 while its limiter served)');
    await new Promise((res) => setTimeout(res, 20));
  }
});
