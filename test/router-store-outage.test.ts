// Router mode with its PostgreSQL unreachable (a TCP proxy the test controls in front of the shared
// server) and back: routed requests are answered from the state in memory; feedback says 503 per event
// instead of losing it; the decisions made meanwhile reach the store once it returns, so feedback on
// them trains the next state (the choice moves); the admin API's learned-state routes answer 503 with
// retry-after and store nothing; the background writers and pollers log the outage a
// line per subject, not one per retry.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';
import { captureOutput, type OutputCapture } from './helpers/secret-scan.ts';

const pgUp = await pgAvailable();
if (!pgUp && process.env.CI === 'true') throw new Error('PostgreSQL unreachable (CI=true: failing, not skipping)');
let oa: MockUpstream; let proxy: TcpProxy; let gw: TestGateway; let capture: OutputCapture;
const schema = freshSchema('gw_router_out');
const ADMIN_KEY = 'admin-key-for-the-router-outage-test-0123456';

before(async () => {
  if (!pgUp) return;
  oa = await startMockOpenAI();
  proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
  gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url, models: [
      { name: 'cheap', pricing: { prompt: '0.000001', completion: '0.000002' } }, { name: 'dear', pricing: { prompt: '0.000002', completion: '0.000002' } }] }],
    gateway: {
      auth: { enabled: false, admin_key: ADMIN_KEY },
      storage: { database_url: proxy.url(), writer: { batch_size: 1000, flush_ms: 20, max_queue: 10000 } },
      workers: { threads: 1 },
      router: { exploration: { share: 0 }, quality_signals: [{ metric: 'good', optimize: 'max' }], learning: { train_interval_ms: 300, state_poll_ms: 300, feedback_settle_ms: 0 } },
    },
    env: { GATEWAY_PG_SCHEMA: schema },
  });
});
after(async () => {
  if (!pgUp) return;
  proxy.up(); await gw.stop(); await proxy.close(); await oa.close(); await dropSchema(schema);
});

const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
const routed = async (text: string) => {
  const t0 = Date.now();
  const r = await post('/v1/chat/completions', { model: 'router', messages: [{ role: 'user', content: text }] });
  const b = (await r.json()) as { id: string; model: string };
  return { status: r.status, ms: Date.now() - t0, id: b.id, model: b.model };
};
const feedback = async (ids: string[]) => (await (await post('/v1/feedback', ids.map((id) => ({ id, feedback: { good: false } })))).json()) as Array<{ error: { status_code: number } | null }>;

test('PostgreSQL down under router traffic: served from memory, feedback refused per event, decisions and learning resume after', { skip: !pgUp }, async () => {
  // No outcomes: the default prior by price tier puts the dearer model first (0.55 against 0.48).
  const first = await routed('which is right');
  assert.deepEqual([first.status, first.model], [200, 'mockai/dear']);
  capture = captureOutput();
  proxy.down();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await routed(`which is right ${i}`);
    assert.deepEqual([r.status, r.model], [200, 'mockai/dear']);
    assert.ok(r.ms < 1000, `answered without waiting on the database: ${r.ms} ms`);
    ids.push(r.id);
  }
  assert.equal((await post('/v1/router/rank', { messages: [{ role: 'user', content: 'x' }] })).status, 200);
  assert.deepEqual((await feedback([ids[0]!])).map((e) => e.error?.status_code), [503], 'not stored: the client is told to retry');
  // The learned-state versions cannot be read or restored: an error in the admin API's shape, nothing stored.
  const states = (method: string, body?: unknown) => fetch(`${gw.url}/admin/api/v1/router/states`, {
    method, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}), signal: AbortSignal.timeout(10_000),
  });
  for (const r of [await states('GET'), await states('POST', { action: 'reset' })]) {
    const b = (await r.json()) as { error?: { code: string; message: string } };
    assert.deepEqual([r.status, b.error?.code, r.headers.get('retry-after')], [503, 'storage_unavailable', '1'], JSON.stringify(b));
    assert.match(b.error!.message, /database is unavailable/);
  }
  await new Promise((r) => setTimeout(r, 2000)); // the writers retry every 20-250 ms, the pollers every 300 ms
  assert.equal((await fetch(`${gw.url}/health`)).status, 200);
  proxy.up();
  capture.stop();
  const log = capture.text();
  for (const subject of ['router decision writer', 'record writer']) {
    const lines = log.split('\n').filter((l) => l.startsWith(`${subject}:`)).length;
    assert.ok(lines >= 1 && lines <= 2, `${subject}: ${lines} lines in 2 s of outage:\n${log}`);
  }
  const back = await states('GET');
  assert.equal(back.status, 200, 'the versions read again once it is back');
  assert.ok(((await back.json()) as { data: Array<{ origin: unknown }> }).data.every((v) => v.origin === null), 'the refused reset stored nothing');
  // Back: the decisions made while it was down are stored, so feedback on them is accepted and trains.
  let stored = 0;
  for (let i = 0; i < 100 && stored < ids.length; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    const rows = await gw.services.store!.sql.all('SELECT inference_id FROM router_decisions');
    stored = ids.filter((id) => rows.some((r) => r.inference_id === id)).length;
  }
  assert.equal(stored, ids.length, 'every decision made during the outage reached the store');
  let fb = await feedback(ids);
  for (let i = 0; i < 50 && fb.some((e) => e.error); i++) { await new Promise((r) => setTimeout(r, 50)); fb = await feedback(ids); }
  assert.ok(fb.every((e) => e.error === null), JSON.stringify(fb));
  let moved = '';
  for (let i = 0; i < 100 && moved !== 'mockai/cheap'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    moved = (await routed('which is right again')).model;
  }
  assert.equal(moved, 'mockai/cheap', 'negative feedback on the outage\'s answers moved the choice');
});
