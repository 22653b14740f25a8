// The admin API while its PostgreSQL stops answering (a TCP proxy the test controls passes no more
// bytes, the connections stay open: a partition, a server hung on a lock): every call is answered 503
// storage_unavailable with retry-after once dashboard.answer_timeout_ms passes, a sign-in included,
// instead of waiting with no end on a pooled connection; the gateway lives on and answers again after.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';
import { captureOutput, type OutputCapture } from './helpers/secret-scan.ts';

const pgUp = await pgAvailable();
let oa: MockUpstream; let proxy: TcpProxy; let gw: TestGateway; let capture: OutputCapture | undefined;
const schema = freshSchema('gw_dash_stall');
const ADMIN_KEY = 'admin-key-for-the-store-stall-test-01234567';
const ADMIN = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
const PW = 'a long enough password';

before(async () => {
  if (!pgUp) return;
  oa = await startMockOpenAI();
  proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
  gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: ADMIN_KEY }, storage: { database_url: proxy.url() }, dashboard: { answer_timeout_ms: 1500 } },
    env: { GATEWAY_PG_SCHEMA: schema },
  });
  await gw.services.dashboard!.users.create({ email: 'root@example.com', role: 'admin', password: PW });
});
after(async () => {
  if (!pgUp) return;
  capture?.stop();
  proxy.up(); await gw.stop(); await proxy.close(); await oa.close(); await dropSchema(schema);
});

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = ADMIN) => {
  const t0 = Date.now();
  const r = await fetch(`${gw.url}/admin/api/v1${path}`, { method, headers, body: body === undefined ? null : JSON.stringify(body), signal: AbortSignal.timeout(15_000) });
  return { status: r.status, ms: Date.now() - t0, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as { error?: { code: string; message: string } } };
};

test('PostgreSQL stops answering: admin calls are 503 storage_unavailable after answer_timeout_ms, and answer again once it is back', { skip: !pgUp }, async () => {
  assert.equal((await call('GET', '/keys')).status, 200);
  capture = captureOutput();
  proxy.stall();
  const calls: Array<[string, string, unknown?, Record<string, string>?]> = [
    ['GET', '/keys'], ['GET', '/usage'], ['GET', '/requests'], ['POST', '/keys', { name: 'during' }],
    ['POST', '/session', { email: 'root@example.com', password: PW }, { 'content-type': 'application/json' }],
  ];
  const answers = await Promise.all(calls.map(([m, p, b, h]) => call(m, p, b, h)));
  for (const [i, a] of answers.entries()) {
    const what = `${calls[i]![0]} ${calls[i]![1]}: ${JSON.stringify(a.body)}`;
    assert.deepEqual([a.status, a.body.error?.code, a.retryAfter], [503, 'storage_unavailable', '1'], what);
    assert.ok(a.ms >= 1400 && a.ms < 10_000, `${what} after ${a.ms} ms`);
  }
  assert.equal((await fetch(`${gw.url}/health`)).status, 200, 'the gateway lives on');
  proxy.down(); proxy.up(); // the stalled connections are dropped; the pool opens fresh ones
  let back = 0;
  for (let i = 0; i < 50 && back !== 200; i++) { back = (await call('GET', '/keys')).status; if (back !== 200) await new Promise((r) => setTimeout(r, 200)); }
  assert.equal(back, 200);
  capture.stop(); capture = undefined;
});
