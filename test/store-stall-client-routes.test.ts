// The client routes that wait on a store read while PostgreSQL stops answering (a TCP proxy the test
// controls passes no more bytes, the connections stay open: a partition, a table locked by another
// session): GET, DELETE and input_items of a stored response, previous_response_id and feedback on a
// flushed inference. A query on a pooled connection waited with no end (the pool's 5 s connection
// timeout covers only new ones): 40 s and counting in the probe. Each read is now bounded (5 s,
// src/store/read-deadline.ts): a 503 storage_unavailable with retry-after, a per-event 503 for feedback.
// A shutdown then ends within its bounds (the key ring's last-used times 5 s, records and stored responses
// 10 s each, the rest 10 s together), where it waited with no end on the router, the write thread and
// the pool's end.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pgTestDb } from './helpers/pg.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';
import { responseStoreOf } from '../src/http/responses-route.ts';

const db = await pgTestDb('gw_client_stall'); // null: PostgreSQL unreachable (CI=true throws instead)
let oa: MockUpstream; let proxy: TcpProxy; let gw: TestGateway; let H: Record<string, string> = {};

before(async () => {
  if (!db) return;
  oa = await startMockOpenAI();
  proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
  gw = await startTestGateway({
    providers: [{ id: 'oa', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true }, storage: { database_url: proxy.url(), writer: { flush_ms: 50 } }, reload: { watch: false } },
    env: { GATEWAY_PG_SCHEMA: db.schema },
  });
  H = { authorization: `Bearer ${(await gw.services.admin!.createKey({ name: 'k' })).key}`, 'content-type': 'application/json' };
});
after(async () => { if (db) { proxy.down(); proxy.up(); await gw.stop(); await proxy.close(); await oa.close(); } });

const call = async (method: string, path: string, body?: unknown) => {
  const t0 = Date.now();
  const r = await fetch(`${gw.url}${path}`, { method, headers: H, body: body === undefined ? null : JSON.stringify(body), signal: AbortSignal.timeout(15_000) });
  return { status: r.status, ms: Date.now() - t0, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as any };
};

test('PostgreSQL stops answering: stored response reads and feedback answer 503 within the read deadline', { skip: !db && 'PostgreSQL unreachable' }, async () => {
  const id = (await call('POST', '/v1/responses', { model: 'oa/test-model', input: 'hi' })).body.id as string;
  const inference = (await call('POST', '/v1/chat/completions', { model: 'oa/test-model', messages: [{ role: 'user', content: 'hi' }] })).body.id as string;
  assert.equal((await call('POST', '/v1/feedback', [{ id: inference, feedback: { good: true } }])).body[0].error, null);
  await responseStoreOf(gw.services)!.settle();
  await new Promise((r) => setTimeout(r, 500)); // the record writer flushes (every 50 ms): feedback then reads the inference from the store
  // Several reads at once leave the pool with open (idle) connections, which the stall then keeps.
  await Promise.all(Array.from({ length: 6 }, () => call('GET', `/v1/responses/${id}`)));
  proxy.stall();
  const answers = await Promise.all([
    call('GET', `/v1/responses/${id}`), call('GET', `/v1/responses/${id}/input_items`), call('DELETE', `/v1/responses/${id}`),
    call('POST', '/v1/responses', { model: 'oa/test-model', input: 'again', previous_response_id: id }),
    call('POST', '/v1/feedback', [{ id: inference, feedback: { good: false } }]),
  ]);
  for (const a of answers.slice(0, 4)) {
    assert.deepEqual([a.status, a.body.error?.type, a.retryAfter], [503, 'service_unavailable_error', '1'], JSON.stringify(a.body));
    assert.ok(a.ms < 10_000, `${a.ms} ms`);
  }
  const fb = answers[4]!;
  assert.deepEqual([fb.status, fb.body[0].feedback_ids, fb.body[0].error?.status_code], [200, null, 503], JSON.stringify(fb.body));
  assert.ok(fb.ms < 10_000, `${fb.ms} ms`);
  proxy.down(); proxy.up(); // the stalled connections are dropped; the pool opens fresh ones
  let back = 0;
  for (let i = 0; i < 50 && back !== 200; i++) { back = (await call('GET', `/v1/responses/${id}`)).status; if (back !== 200) await new Promise((r) => setTimeout(r, 200)); }
  assert.equal(back, 200, 'answers again once the database does');
});

test('a shutdown while PostgreSQL stops answering ends within its bounds, saying what it lost', { skip: !db && 'PostgreSQL unreachable' }, async () => {
  proxy.down(); proxy.up();
  // Rows and reads on fresh connections, then the database stops answering with work in flight.
  for (let i = 0; i < 3; i++) await call('POST', '/v1/responses', { model: 'oa/test-model', input: 'hi' });
  proxy.stall();
  for (let i = 0; i < 3; i++) await call('POST', '/v1/responses', { model: 'oa/test-model', input: 'hi' });
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const report = await Promise.race([gw.stop(), new Promise<null>((r) => { timer = setTimeout(() => r(null), 50_000); })]);
  clearTimeout(timer);
  assert.ok(report !== null, 'stop() ended');
  assert.ok(Date.now() - t0 < 45_000, `${Date.now() - t0} ms`);
  assert.ok(report.responsesLost > 0, JSON.stringify(report));
});
