// Config reload applies settings to the running gateway: server timeouts and limits on the live server
// object, writer bounds, key refresh period and watcher settings; auth.enabled false -> true never
// leaves a request served open; restart-only settings (listen address, storage) are named in the
// reload result, the log and /health ("restart required") and keep their running values. The watcher
// follows only the config files. `check` names the settings that need a restart. storage.redis_fail_open
// applies on reload (against a redis-server of the test's own), with the limiter's breaker in /health.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { request, type Agent } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import { startMockOpenAI } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { runCli } from './helpers/process.ts';
import { startOwnRedis } from './helpers/redis-server.ts';
import { copyRepoConfig } from '../bench/lib/repo-config.ts';

type Rec = Record<string, any>;
const ADMIN = 'admin-key-for-reload-tests-0123456789';

function edit(gw: TestGateway, change: (doc: Rec) => void): void {
  const doc = parse(readFileSync(gw.configFile, 'utf8')) as Rec;
  change(doc);
  writeFileSync(gw.configFile, stringify(doc));
}

/** Captures console.error lines while `fn` runs. */
async function errorsDuring<T>(fn: () => Promise<T>): Promise<{ value: T; lines: string[] }> {
  const lines: string[] = [];
  const orig = console.error;
  console.error = (...a: unknown[]) => { lines.push(a.map(String).join(' ')); };
  try { return { value: await fn(), lines }; } finally { console.error = orig; }
}

function get(url: string, headers: Record<string, string> = {}, agent?: Agent): Promise<{ status: number; body: string }> {
  return new Promise((ok, fail) => {
    const req = request(url, { headers, ...(agent ? { agent } : { agent: false }) }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => ok({ status: res.statusCode!, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

test('server limits and timeouts, writer bounds and key refresh apply on reload', async (t) => {
  const gw = await startTestGateway({ providers: [], gateway: { auth: { enabled: true, admin_key: ADMIN, key_refresh_ms: 5000 } } });
  t.after(() => gw.stop());
  const big = { 'x-big': 'v'.repeat(3000) };
  assert.equal((await get(`${gw.url}/health`, big)).status, 200);
  edit(gw, (d) => {
    d.server = { ...d.server, keep_alive_timeout_ms: 300, headers_timeout_ms: 4000, request_timeout_ms: 7000, max_header_bytes: 2048, body_limit_bytes: 2048 };
    d.storage.writer = { batch_size: 7, flush_ms: 33, max_queue: 99, max_queue_bytes: 1_000_000 };
    d.auth.key_refresh_ms = 1234;
    d.reload = { watch: true, debounce_ms: 50 };
  });
  const r = await gw.services.holder.reload();
  assert.ok(r.ok && r.changed, JSON.stringify(r));
  assert.deepEqual(r.settings, [
    'auth.key_refresh_ms', 'reload.debounce_ms', 'server.body_limit_bytes', 'server.headers_timeout_ms', 'server.keep_alive_timeout_ms',
    'server.max_header_bytes', 'server.request_timeout_ms', 'storage.writer.batch_size', 'storage.writer.flush_ms',
    'storage.writer.max_queue', 'storage.writer.max_queue_bytes',
  ]);
  assert.deepEqual(r.restartRequired, []);
  const s = gw.server as typeof gw.server & { maxHeaderSize: number };
  assert.deepEqual([s.keepAliveTimeout, s.headersTimeout, s.requestTimeout, s.maxHeaderSize], [300, 4000, 7000, 2048]);
  assert.equal(gw.services.keys!.refreshMs, 1234);
  // A new connection gets the new header limit: the 3 KB header is refused now.
  assert.equal((await get(`${gw.url}/health`, big)).status, 431);
  // The body limit applies per request.
  const fb = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(3000) }) });
  assert.equal(fb.status, 413);
  // Keep-alive: an idle connection is closed by the server after the new 300 ms (it was 65 s).
  const { port } = new URL(gw.url);
  const closedAfter = await new Promise<number>((ok, fail) => {
    const sock = connect(Number(port), '127.0.0.1', () => sock.write('GET /health HTTP/1.1\r\nhost: x\r\n\r\n'));
    let answeredAt = 0;
    sock.on('data', () => { answeredAt ||= Date.now(); });
    sock.on('close', () => ok(Date.now() - answeredAt));
    sock.on('error', fail);
  });
  assert.ok(closedAfter >= 200 && closedAfter < 2000, `idle connection closed after ${closedAfter} ms`);
  // Watcher settings: the debounce follows, and watch: false stops watching.
  edit(gw, (d) => { d.reload = { watch: false }; });
  await gw.services.holder.reload();
  assert.equal(gw.services.holder.watching, false);
});

test('auth.enabled false -> true on reload: no request is served open, keys work once loaded', async (t) => {
  const oa = await startMockOpenAI();
  const gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }], gateway: { auth: { enabled: false, admin_key: ADMIN } } });
  t.after(async () => { await gw.stop(); await oa.close(); });
  const chat = (headers: Record<string, string> = {}) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal((await chat()).status, 200, 'open while auth is off');
  edit(gw, (d) => { d.auth.enabled = true; });
  const reloaded = gw.services.holder.reload();
  // From the moment the reload swaps the config, an unkeyed request is refused (503 while the ring loads, then 401).
  const r = await reloaded;
  assert.ok(r.ok && r.settings.includes('auth.enabled'));
  const statuses: number[] = [];
  for (let i = 0; i < 20 && statuses.at(-1) !== 401; i++) { statuses.push((await chat()).status); await new Promise((x) => setTimeout(x, 20)); }
  assert.ok(statuses.every((s) => s === 503 || s === 401), `statuses ${statuses}`);
  assert.equal(statuses.at(-1), 401);
  const created = (await (await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'k' }) })).json()) as { key: string };
  assert.equal((await chat({ authorization: `Bearer ${created.key}` })).status, 200);
});

test('restart-only settings: named in the result, the log and /health ("restart required"); the running values stay', async (t) => {
  const gw = await startTestGateway({ providers: [] });
  t.after(() => gw.stop());
  const port = gw.services.holder.current.server.port;
  edit(gw, (d) => { d.server.port = 1; d.storage.database_url = 'postgres://user:secret-password@db.example:5432/x'; d.server.json_max_depth = 40; });
  const { value: r, lines } = await errorsDuring(() => gw.services.holder.reload());
  assert.ok(r.ok);
  assert.deepEqual(r.restartRequired, ['server.port', 'storage.database_url']);
  assert.ok(r.settings.includes('server.json_max_depth'));
  assert.ok(lines.some((l) => /restart required for server\.port, storage\.database_url/.test(l)), lines.join('\n'));
  assert.equal(gw.services.holder.current.server.port, port, 'the running port stays in the snapshot');
  assert.equal(gw.services.holder.current.storage.databaseUrl, '');
  assert.equal(gw.services.holder.current.server.jsonMaxDepth, 40, 'live settings of the same reload apply');
  const h = (await (await fetch(`${gw.url}/health`)).json()) as Rec;
  assert.equal(h.status, 'restart required');
  assert.deepEqual(h.restart_required, ['server.port', 'storage.database_url']);
  assert.doesNotMatch(JSON.stringify(h), /secret-password/);
  // Changed back: nothing to restart for.
  edit(gw, (d) => { d.server.port = 0; d.storage.database_url = ''; });
  await gw.services.holder.reload();
  const back = (await (await fetch(`${gw.url}/health`)).json()) as Rec;
  assert.equal(back.status, 'ok', JSON.stringify(back.restart_required));
});

test('the dashboard settings read at start (enabled, tail_poll_ms) are restart-only; those read per call or pass apply', async (t) => {
  const gw = await startTestGateway({ providers: [] });
  t.after(() => gw.stop());
  // tail_poll_ms was reported applied while the running poll (set up with the dashboard) kept its period.
  edit(gw, (d) => { d.dashboard = { tail_poll_ms: 500, enabled: false, session_idle_minutes: 5, answer_timeout_ms: 2000 }; });
  const { value: r } = await errorsDuring(() => gw.services.holder.reload());
  assert.ok(r.ok);
  assert.deepEqual(r.restartRequired, ['dashboard.enabled', 'dashboard.tail_poll_ms']);
  const d = gw.services.holder.current.dashboard;
  assert.deepEqual([d.enabled, d.tailPollMs, d.sessionIdleMs, d.answerTimeoutMs], [true, 2000, 5 * 60_000, 2000]);
  assert.equal(gw.services.dashboard!.sessions.limits.idleMs, 5 * 60_000, 'open sessions idle out by the new limit');
});

test('the watcher follows the config files only: other files in the same directories never reload', async (t) => {
  const gw = await startTestGateway({ providers: [], gateway: { reload: { watch: true, debounce_ms: 30 } } });
  t.after(() => gw.stop());
  const watched = [...gw.services.holder.watchedFiles];
  assert.ok(watched.includes(gw.configFile));
  const reloads = (): number => {
    const m = /gateway_config_reloads_total\{result="(?:ok|unchanged)"\} (\d+)/g;
    let n = 0; for (const x of gw.services.metrics.registry.render().matchAll(m)) n += Number(x[1]); return n;
  };
  const before = reloads();
  mkdirSync(join(gw.dir, 'node_modules', 'pkg'), { recursive: true });
  writeFileSync(join(gw.dir, 'node_modules', 'pkg', 'x.yaml'), 'a: 1');
  writeFileSync(join(gw.dir, 'notes.yaml'), 'a: 1');
  writeFileSync(join(gw.dir, 'gateway.db-extra'), 'x');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(reloads(), before, 'no reload for files the config does not read');
  edit(gw, (d) => { d.server.json_max_depth = 33; });
  const end = Date.now() + 3000;
  while (gw.services.holder.current.server.jsonMaxDepth !== 33 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  assert.equal(gw.services.holder.current.server.jsonMaxDepth, 33);
  // A new provider file is picked up too.
  writeFileSync(join(gw.providersDir, 'later.yaml'), stringify({ id: 'later', name: 'L', format: 'openai-chat', base_url: 'http://127.0.0.1:9', auth: { type: 'bearer' }, models: [{ name: 'm' }] }));
  const end2 = Date.now() + 3000;
  while (!gw.services.holder.current.models.has('later/m') && Date.now() < end2) await new Promise((r) => setTimeout(r, 20));
  assert.ok(gw.services.holder.current.models.has('later/m'));
});

test('check names the settings that need a restart', async () => {
  const r = await runCli(['check', '--config', join(import.meta.dirname, '..', 'gateway.yaml')]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /restart required to change: server\.host, server\.port, storage\.sqlite_path, storage\.database_url, storage\.redis_url[^;]*; every other setting applies on reload/);
  assert.doesNotMatch(r.stdout, /restart required to change:[^;]*redis_fail_open/, 'storage.redis_fail_open applies on reload');
});

test('storage.redis_fail_open applies on reload; /health and /metrics show the limiter\'s circuit breaker', async (t) => {
  const redis = await startOwnRedis();
  const oa = await startMockOpenAI();
  const gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: ADMIN }, storage: { redis_url: redis.url, redis_fail_open: false } },
  });
  t.after(async () => { redis.resume(); await gw.stop(); await oa.close(); await redis.stop(); });
  const created = await (await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'limited', rpm_limit: 1000 }) })).json() as { key: string };
  const chat = () => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'x' }] }),
  });
  type Health = { status: string; restart_required: string[]; limiter: { backend: string; fail_open: boolean; replicas: number; breaker: { state: string; since: string; last_error: string | null; opened: number } } };
  const health = async (): Promise<Health> => await (await fetch(`${gw.url}/health`)).json() as Health;
  const breakerLine = async (): Promise<string> => (await (await fetch(`${gw.url}/metrics`)).text()).split('\n').filter((l) => l.startsWith('gateway_limiter_breaker')).join('\n');

  assert.equal((await chat()).status, 200);
  const h0 = await health();
  assert.deepEqual([h0.limiter.backend, h0.limiter.fail_open, h0.limiter.breaker.state, h0.limiter.breaker.last_error], ['redis', false, 'closed', null]);
  assert.equal(h0.limiter.replicas, 1, 'one gateway counted on its Redis (fail open\'s share)');
  assert.match(await breakerLine(), /gateway_limiter_breaker_state\{state="closed"\} 1/);

  redis.pause(); // hung: the first limited request waits the command timeout, which opens the breaker
  assert.equal((await chat()).status, 429, 'fail closed');
  const h1 = await health();
  assert.notEqual(h1.limiter.breaker.state, 'closed');
  assert.ok(Date.parse(h1.limiter.breaker.since) > Date.parse(h0.limiter.breaker.since));
  assert.match(h1.limiter.breaker.last_error ?? '', /timed out|closed/i);
  assert.ok(h1.limiter.breaker.opened >= 1);
  assert.match(await breakerLine(), /gateway_limiter_breaker_state\{state="closed"\} 0/);
  assert.match(await breakerLine(), /gateway_limiter_breaker_opened_total [1-9]/);
  const notReady = await fetch(`${gw.url}/health/ready`);
  assert.equal(notReady.status, 503, 'fail closed: Redis down makes the gateway not ready');

  // Changed on reload: applied at once, not "restart required".
  edit(gw, (d) => { d.storage.redis_fail_open = true; });
  const r = await gw.services.holder.reload();
  assert.ok(r.ok && r.settings.includes('storage.redis_fail_open'), JSON.stringify(r));
  assert.deepEqual(r.restartRequired, []);
  const h2 = await health();
  assert.equal(h2.limiter.fail_open, true);
  assert.notEqual(h2.status, 'restart required');
  assert.equal((await chat()).status, 200, 'fail open now: admitted while Redis hangs');
  // (Readiness results are shared for a second: the next fresh probe reads the new setting.)
  let ready = 0;
  for (let i = 0; i < 40 && ready !== 200; i++) { ready = (await fetch(`${gw.url}/health/ready`)).status; if (ready !== 200) await new Promise((x) => setTimeout(x, 100)); }
  assert.equal(ready, 200, 'fail open: Redis down is reported, the gateway stays ready');

  redis.resume();
  for (let i = 0; i < 100 && (await health()).limiter.breaker.state !== 'closed'; i++) await new Promise((x) => setTimeout(x, 50));
  assert.equal((await health()).limiter.breaker.state, 'closed');
  assert.match(await breakerLine(), /gateway_limiter_breaker_state\{state="closed"\} 1/);
});

test('a reload of the repository config stalls the event loop far less than reading and compiling it inline did', async (t) => {
  // The repository's providers and catalogs (the real size), in a temp dir, with a 1 ms ticker as the witness.
  const { loadConfig } = await import('../src/config/load.ts');
  const { startGateway } = await import('../src/serve.ts');
  const copy = copyRepoConfig();
  const { file, env } = copy;
  const gw = await startGateway(file, env);
  t.after(async () => { await gw.stop(); copy.remove(); });
  let gap = 0; let last = performance.now();
  const ticker = setInterval(() => { const now = performance.now(); gap = Math.max(gap, now - last); last = now; }, 1);
  t.after(() => clearInterval(ticker));
  const stall = async (way: 'inline' | 'threaded'): Promise<number> => {
    copy.touch();
    await new Promise((r) => setTimeout(r, 30));
    gap = 0; last = performance.now();
    const r = way === 'inline' ? gw.services.holder.apply(loadConfig(file, env)) : await gw.services.holder.reload();
    assert.ok(r.ok && r.changed);
    await new Promise((x) => setTimeout(x, 10));
    return gap;
  };
  await stall('threaded'); // warm the loader thread
  const inline = [await stall('inline'), await stall('inline')];
  const threaded = [await stall('threaded'), await stall('threaded')];
  t.diagnostic(`longest event-loop gap per reload: inline ${inline.map((x) => x.toFixed(0))} ms, threaded ${threaded.map((x) => x.toFixed(0))} ms`);
  assert.ok(Math.min(...threaded) < Math.min(...inline) / 2, `threaded ${threaded} vs inline ${inline}`);
});

test('per-origin connection settings and added or removed origins are named by the reload', async (t) => {
  const gw = await startTestGateway({ providers: [{ id: 'one', format: 'openai-chat', base_url: 'http://127.0.0.1:9/v1' }], gateway: { reload: { watch: false } } });
  t.after(() => gw.stop());
  edit(gw, (d) => { d.upstream = { ...d.upstream, connections_per_origin: 7, connect_timeout_ms: 1500 }; });
  gw.writeProvider({ id: 'two', format: 'openai-chat', base_url: 'http://127.0.0.2:9/v1' });
  const r = await gw.services.holder.reload();
  assert.ok(r.ok);
  for (const k of ['upstream.connections_per_origin', 'upstream.connect_timeout_ms', 'providers.origins']) assert.ok(r.settings.includes(k), `${k} in ${r.settings}`);
  assert.deepEqual([gw.services.holder.current.upstream.connectionsPerOrigin, gw.services.holder.current.upstream.connectTimeoutMs], [7, 1500]);
});

test('GATEWAY_REDIS_PREFIX separates the limiter\'s keys too, as it does ejections and affinity (two deployments on one Redis shared counters and the replica count)', async (t) => {
  const redis = await startOwnRedis();
  const oa = await startMockOpenAI();
  const gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: ADMIN }, storage: { redis_url: redis.url } },
    env: { GATEWAY_REDIS_PREFIX: 'team-b:' },
  });
  const client = redis.client();
  t.after(async () => { client.disconnect(); await gw.stop(); await oa.close(); await redis.stop(); });
  const created = await (await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'limited', rpm_limit: 1000 }) })).json() as { key: string };
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'x' }] }),
  });
  assert.equal(r.status, 200);
  await fetch(`${gw.url}/health/ready`);
  const keys = await client.keys('*');
  assert.ok(keys.some((k) => k.startsWith('team-b:lim:')), keys.join());
  assert.deepEqual(keys.filter((k) => k.startsWith('gw:')), [], 'nothing under the default prefix');
});
