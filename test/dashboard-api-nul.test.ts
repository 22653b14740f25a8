// NUL characters sent to the admin API on PostgreSQL (which refuses NUL in text, SQLSTATE 22021): a sign-in,
// a user's email or name, a key id in the path, a filter in the query were each a 500 'internal error'.
// Each is now a 400 invalid_parameter naming the field, refused at the API's edge (on SQLite too); the
// older key API's DELETE /admin/keys/{id} answers such an id as one it does not know (404).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { dropSchema, freshSchema, pgAvailable, PG_URL } from './helpers/pg.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

const pgUp = await pgAvailable();
let oa: MockUpstream; let gw: TestGateway; let userId = '';
const schema = freshSchema('gw_dash_nul');
const ADMIN_KEY = 'admin-key-for-the-nul-test-0123456789abcdef';
const ADMIN = { authorization: `Bearer ${ADMIN_KEY}` };
const NUL = 'a\u0000b';

before(async () => {
  if (!pgUp) return;
  oa = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: ADMIN_KEY }, storage: { database_url: PG_URL } },
    env: { GATEWAY_PG_SCHEMA: schema },
  });
  userId = (await gw.services.dashboard!.users.create({ email: 'root@example.com', role: 'admin', password: 'a long enough password' })).id;
});
after(async () => {
  if (!pgUp) return;
  await gw.stop(); await oa.close(); await dropSchema(schema);
});

test('NUL in a body, a path or a query is a 400 naming where, never a 500', { skip: !pgUp }, async () => {
  const q = encodeURIComponent(NUL);
  const cases: Array<[string, string, unknown, string]> = [
    ['POST', '/session', { email: `x${NUL}@example.com`, password: 'whatever it is here' }, 'email'],
    ['POST', '/users', { email: `x${NUL}@example.com` }, 'email'],
    ['POST', '/users', { email: 'y@example.com', name: NUL }, 'name'],
    ['PATCH', `/users/${userId}`, { name: NUL }, 'name'],
    ['PATCH', `/users/${q}`, { name: 'q' }, 'id'],
    ['GET', `/keys/${q}`, undefined, 'id'],
    ['DELETE', `/keys/${q}`, undefined, 'id'],
    ['POST', '/keys', { name: 'k', allowed_models: ['ok', NUL] }, 'allowed_models[1]'],
    ['GET', `/usage?group=key&key=${q}`, undefined, 'key'],
    ['GET', `/usage?model=${q}`, undefined, 'model'],
    ['GET', `/requests?model=${q}`, undefined, 'model'],
    ['GET', `/models/compare?metric=${q}`, undefined, 'metric'],
    ['POST', `/router/preview?key_id=${q}`, { messages: [{ role: 'user', content: 'hi' }] }, 'key_id'],
  ];
  for (const [method, path, body, param] of cases) {
    const headers = { ...(method === 'POST' && path === '/session' ? {} : ADMIN), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const r = await fetch(`${gw.url}/admin/api/v1${path}`, { method, headers, body: body === undefined ? null : JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
    const b = (await r.json()) as { error?: { code: string; param: string | null } };
    assert.deepEqual([r.status, b.error?.code, b.error?.param], [400, 'invalid_parameter', param], `${method} ${path} ${JSON.stringify(body)}`);
  }
  assert.equal((await fetch(`${gw.url}/admin/api/v1/keys`, { headers: ADMIN })).status, 200);
});

test('DELETE /admin/keys/{id} with a NUL in the id is a 404 (no such key), not a 500', { skip: !pgUp }, async () => {
  const r = await fetch(`${gw.url}/admin/keys/${encodeURIComponent(NUL)}`, { method: 'DELETE', headers: ADMIN });
  assert.deepEqual([r.status, ((await r.json()) as { error: { code: string } }).error.code], [404, 'route_not_found']);
});
