// The admin API's learned-state routes against a real gateway (SQLite, the router's worker thread):
// GET /admin/api/v1/router/states lists the versions; POST rolls back or resets, and the replica that
// served it routes with the new version at once (the next routed request says so in its header).
// Admins only; bad bodies are 400s naming the field, a version not stored a 404, in the admin API's
// error shape.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { saveState } from '../src/router/store.ts';
import { emptyStored } from '../src/router/train-pass.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { createApiKey, sessionHeaders } from './helpers/admin-api.ts';

const ADMIN_KEY = 'admin-key-for-the-router-state-test-0123456';
const PW = 'a long enough password';
let oa: MockUpstream;
let gw: TestGateway;
let member: Record<string, string>;
let apiKey: string;
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url, models: [
      { name: 'gamma', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false }, context_window: 16000, max_completion_tokens: 4000 },
    ] }],
    gateway: { auth: { enabled: true, admin_key: ADMIN_KEY }, router: { quality_signals: [{ metric: 'good' }] }, workers: { threads: 1 } },
  });
  await gw.services.dashboard!.users.create({ email: 'alice@example.com', role: 'member', password: PW });
  member = await sessionHeaders(gw.url, 'alice@example.com', PW);
  apiKey = (await createApiKey(gw.url, admin, { name: 'app' })).key;
  for (const v of [1, 2, 3]) assert.equal(await saveState(gw.services.store!.sql, { ...emptyStored(), version: v, outcomes: v }), true);
});
after(async () => { await gw?.stop(); await oa?.close(); });

const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> => {
  const res = await fetch(`${gw.url}/admin/api/v1${path}`, {
    method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
};

const routedVersion = async (): Promise<string | null> => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'Say hello.' }] }),
  });
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  return res.headers.get('x-router-state-version');
};

test('an admin lists the versions, rolls back and resets; this replica routes with the new version at once', async () => {
  const list = await call('GET', '/router/states', admin);
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.data.map((s: any) => [s.version, s.outcomes, s.origin]), [[3, 3, null], [2, 2, null], [1, 1, null]]);
  assert.equal(typeof list.body.data[0].bytes, 'number');
  const rb = await call('POST', '/router/states', admin, { action: 'rollback', version: 2, reason: '  undo the flood ' });
  assert.equal(rb.status, 201);
  assert.deepEqual(rb.body.state.origin, { kind: 'rollback', from_version: 2, by: 'admin-key', reason: 'undo the flood' });
  assert.equal(rb.body.state.version, 4);
  assert.equal(rb.body.state.outcomes, 2);
  assert.equal(rb.body.serving_version, 4, 'adopted by this replica before answering');
  assert.equal(await routedVersion(), '4');
  const rs = await call('POST', '/router/states', admin, { action: 'reset' });
  assert.equal(rs.status, 201);
  assert.deepEqual(rs.body.state.origin, { kind: 'reset', from_version: null, by: 'admin-key', reason: null });
  assert.equal(rs.body.serving_version, 5);
  assert.equal(await routedVersion(), '5');
  const again = await call('GET', '/router/states?limit=2', admin);
  assert.deepEqual(again.body.data.map((s: any) => s.version), [5, 4]);
  assert.equal(again.body.serving_version, 5);
});

test('bad bodies are 400s naming the field, a version not stored a 404; members and anonymous callers are refused', async () => {
  const cases: Array<[unknown, number, string]> = [
    [{}, 400, 'action'],
    [{ action: 'undo' }, 400, 'action'],
    [{ action: 'rollback' }, 400, 'version'],
    [{ action: 'rollback', version: '2' }, 400, 'version'],
    [{ action: 'rollback', version: 1.5 }, 400, 'version'],
    [{ action: 'rollback', version: 0 }, 400, 'version'],
    [{ action: 'reset', version: 2 }, 400, 'version'],
    [{ action: 'reset', reason: 7 }, 400, 'reason'],
    [{ action: 'reset', reason: 'x'.repeat(501) }, 400, 'reason'],
    [{ action: 'rollback', version: 999 }, 404, 'version'],
  ];
  const before = (await call('GET', '/router/states', admin)).body.data.length;
  for (const [body, status, param] of cases) {
    const r = await call('POST', '/router/states', admin, body);
    assert.equal(r.status, status, JSON.stringify(body));
    assert.equal(r.body.error.param, param, JSON.stringify(body));
    assert.equal(typeof r.body.error.message, 'string');
  }
  const bad = await call('POST', '/router/states', admin, '{"action":');
  assert.equal(bad.status, 400);
  assert.match((await call('POST', '/router/states', admin, { action: 'rollback', version: 999 })).body.error.message, /999 is not stored \(kept: /);
  assert.equal((await call('GET', '/router/states', member)).status, 403);
  assert.equal((await call('POST', '/router/states', member, { action: 'reset' })).status, 403);
  assert.equal((await call('GET', '/router/states', {})).status, 401);
  assert.equal((await call('GET', '/router/states', admin)).body.data.length, before, 'nothing stored by the refused calls');
});
