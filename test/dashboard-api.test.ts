// The admin API (/admin/api/v1) against a real gateway: every route under every kind of caller (the
// authorisation matrix), sign-in limits, CSRF and origin checks, sign-out, key edit and rotation with a
// grace period, member isolation in usage/history/exports/tail, and rollup totals equal to the raw records.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

const ADMIN_KEY = 'admin-key-for-the-api-test-0123456789abcdef';
const PW = 'a long enough password';
let oa: MockUpstream; let gw: TestGateway;
type Caller = { name: string; headers: Record<string, string> };
let admin: Caller, alice: Caller, aliceNoCsrf: Caller, keyCaller: Caller;
const anon: Caller = { name: 'anonymous', headers: {} };
let aliceKey = '', bobKeyId = '', aliceKeyId = '', bobRequest = '', aliceRequest = '', bobUserId = '';

async function call(c: Caller, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${gw.url}/admin/api/v1${path}`, {
    method, headers: { ...c.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* CSV, JSONL */ }
  return { status: res.status, body: parsed, headers: res.headers };
}

async function signIn(email: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${gw.url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PW }) });
  assert.equal(res.status, 200);
  const setCookie = res.headers.get('set-cookie')!;
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  return { cookie: setCookie.split(';')[0]!, csrf: ((await res.json()) as { csrf_token: string }).csrf_token };
}

before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } },
  });
  const users = gw.services.dashboard!.users;
  await users.create({ email: 'root@example.com', role: 'admin', password: PW });
  const a = await users.create({ email: 'alice@example.com', role: 'member', password: PW });
  const b = await users.create({ email: 'bob@example.com', role: 'member', password: PW });
  bobUserId = b.id;
  const s1 = await signIn('root@example.com');
  admin = { name: 'admin session', headers: { cookie: s1.cookie, 'x-csrf-token': s1.csrf } };
  const s2 = await signIn('alice@example.com');
  alice = { name: 'member session', headers: { cookie: s2.cookie, 'x-csrf-token': s2.csrf } };
  aliceNoCsrf = { name: 'member session without CSRF', headers: { cookie: s2.cookie } };
  keyCaller = { name: 'admin key', headers: { authorization: `Bearer ${ADMIN_KEY}` } };
  const ka = await call(keyCaller, 'POST', '/keys', { name: 'alice-key', owner_id: a.id });
  const kb = await call(keyCaller, 'POST', '/keys', { name: 'bob-key', owner_id: b.id, budget_usd: '1' });
  aliceKey = ka.body.key; aliceKeyId = ka.body.record.id; bobKeyId = kb.body.record.id;
  const ask = async (key: string, text: string) => (await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'mockai/test-model', messages: [{ role: 'user', content: text }] })).id;
  aliceRequest = await ask(aliceKey, 'alice asks');
  bobRequest = await ask(kb.body.key, 'bob asks something longer than alice');
  await new Promise((r) => setTimeout(r, 200));
});
after(async () => { await gw.stop(); await oa.close(); });

describe('authorisation matrix', () => {
  // [method, path, body, expected status for: anonymous, admin session, member session, admin key, member without CSRF]
  const rows = (): Array<[string, string, unknown, number[]]> => [
    // A visitor without a session is answered 200 signed out (test/dashboard-probe39-signed-out.test.ts).
    ['GET', '/session', undefined, [200, 200, 200, 200, 200]],
    ['GET', '/users', undefined, [401, 200, 403, 200, 403]],
    ['POST', '/users', { email: `u${Math.random()}@example.com`.replace('0.', ''), role: 'member' }, [401, 201, 403, 201, 403]],
    ['PATCH', `/users/${bobUserId}`, { name: 'Bob B' }, [401, 200, 403, 200, 403]],
    ['GET', '/keys', undefined, [401, 200, 200, 200, 200]],
    ['GET', `/keys/${bobKeyId}`, undefined, [401, 200, 404, 200, 404]],
    ['GET', `/keys/${aliceKeyId}`, undefined, [401, 200, 200, 200, 200]],
    ['POST', '/keys', { name: 'made' }, [401, 201, 201, 201, 403]],
    ['POST', '/keys', { name: 'with budget', budget_usd: '5' }, [401, 201, 403, 201, 403]],
    ['PATCH', `/keys/${bobKeyId}`, { name: 'renamed' }, [401, 200, 404, 200, 403]],
    ['PATCH', `/keys/${aliceKeyId}`, { rpm_limit: 5 }, [401, 200, 403, 200, 403]],
    ['PATCH', `/keys/${aliceKeyId}`, { name: 'alice-key' }, [401, 200, 200, 200, 403]],
    ['POST', `/keys/${bobKeyId}/rotate`, { grace_hours: 1 }, [401, 200, 404, 200, 403]],
    ['GET', '/usage', undefined, [401, 200, 200, 200, 200]],
    ['GET', '/usage/export?format=csv', undefined, [401, 200, 200, 200, 200]],
    ['GET', '/requests', undefined, [401, 200, 200, 200, 200]],
    ['GET', `/requests/${bobRequest}`, undefined, [401, 200, 404, 200, 404]],
    ['GET', '/requests/export', undefined, [401, 200, 200, 200, 200]],
    ['GET', '/models', undefined, [401, 200, 200, 200, 200]],
    ['GET', '/models/compare', undefined, [401, 200, 200, 200, 200]],
    ['GET', '/router', undefined, [401, 200, 200, 200, 200]],
    ['DELETE', `/keys/${bobKeyId}`, undefined, [401, 404, 404, 404, 403]].map((x, i) => (i === 3 ? [401, 200, 404, 409, 403] : x)) as [string, string, unknown, number[]],
  ];
  test('every route answers each caller as the matrix says', async () => {
    const callers = [anon, admin, alice, keyCaller, aliceNoCsrf];
    for (const [method, path, body, expected] of rows()) {
      // Callers run from least to most privileged so a change by one does not hide another's refusal.
      const order = [0, 4, 2, 1, 3];
      const got: number[] = new Array(5);
      for (const i of order) {
        const b = method === 'POST' && path === '/users' && body ? { ...(body as object), email: `x${i}${Date.now()}@example.com` } : body;
        got[i] = (await call(callers[i]!, method, path, b)).status;
      }
      assert.deepEqual(got, expected, `${method} ${path}`);
    }
  });
  test('the tail refuses anonymous callers and streams to members', async () => {
    assert.equal((await call(anon, 'GET', '/tail')).status, 401);
    const ac = new AbortController();
    const res = await fetch(`${gw.url}/admin/api/v1/tail`, { headers: alice.headers, signal: ac.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /text\/event-stream/);
    ac.abort();
  });
  test('unknown routes and methods get 404 and 405 in the error envelope', async () => {
    const r = await call(admin, 'GET', '/nope');
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'route_not_found');
    // Answered by the API's own table: the methods that path has, not every method some API route has.
    for (const [path, allow] of [['/keys', 'GET, POST'], [`/keys/${aliceKeyId}`, 'GET, PATCH, DELETE']] as const) {
      const m = await call(admin, 'PUT', path);
      assert.equal(m.status, 405, path);
      assert.equal(m.headers.get('allow'), allow, path);
      assert.equal(m.body.error.code, 'method_not_allowed');
    }
  });
});

describe('what a member sees', () => {
  test('usage, history and exports hold only their own keys', async () => {
    const usage = (await call(alice, 'GET', '/usage?group=key&range=1d')).body;
    assert.deepEqual(usage.groups.map((g: { group: string }) => g.group), [aliceKeyId]);
    const all = (await call(admin, 'GET', '/usage?group=key')).body;
    assert.ok(all.groups.length >= 2);
    const page = (await call(alice, 'GET', '/requests')).body;
    assert.deepEqual(page.data.map((r: { id: string }) => r.id), [aliceRequest]);
    const got = (await call(alice, 'GET', '/requests/export?format=jsonl')).body;
    const exp = typeof got === 'string' ? got : JSON.stringify(got);
    assert.ok(exp.includes(aliceRequest) && !exp.includes(bobRequest));
    const byId = (await call(alice, 'GET', `/requests?id=${bobRequest}`)).body;
    assert.deepEqual(byId.data, []);
    const cmp = (await call(alice, 'GET', '/models/compare')).body;
    assert.equal(cmp.models[0].requests, 1);
  });
});

describe('sessions', () => {
  test('a change from another origin is refused even with the CSRF token', async () => {
    const r = await call({ name: 'x', headers: { ...admin.headers, origin: 'https://evil.example' } }, 'POST', '/keys', { name: 'csrf' });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'csrf_failed');
  });
  test('wrong passwords are limited per account (429 with retry-after), one message for unknown and wrong', async () => {
    const attempt = (email: string) => fetch(`${gw.url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'not the password' }) });
    const unknown = await attempt('nobody@example.com');
    assert.equal(unknown.status, 401);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await attempt('bob@example.com')).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
    const limited = await fetch(`${gw.url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bob@example.com', password: PW }) });
    assert.equal(limited.status, 429, 'even the right password waits for the window');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
  });
  test('sign-out revokes the session', async () => {
    const s = await signIn('root@example.com');
    const c = { name: 's', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } };
    assert.equal((await call(c, 'DELETE', '/session')).status, 200);
    assert.deepEqual((await call(c, 'GET', '/session')).body, { signed_in: false, user: null });
    assert.equal((await call(c, 'GET', '/keys')).status, 401);
  });
  test('an idle session ends', async () => {
    const s = await signIn('root@example.com');
    const d = gw.services.dashboard!.sessions;
    const limits = d.limits;
    d.limits = { ...limits, idleMs: 1 };
    await new Promise((r) => setTimeout(r, 5));
    try {
      assert.equal((await call({ name: 's', headers: { cookie: s.cookie } }, 'GET', '/session')).body.signed_in, false);
      assert.equal((await call({ name: 's', headers: { cookie: s.cookie } }, 'GET', '/keys')).status, 401);
    } finally { d.limits = limits; }
  });
});

describe('keys', () => {
  test('rotation: the new secret works at once, the old one until the grace period ends', async () => {
    const created = (await call(keyCaller, 'POST', '/keys', { name: 'rotating' })).body;
    const oldKey = created.key as string;
    const r = (await call(admin, 'POST', `/keys/${created.record.id}/rotate`, { grace_hours: 1 })).body;
    assert.notEqual(r.key, oldKey);
    assert.equal(r.record.id, created.record.id);
    const ok = async (key: string) => (await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'hi' }] }) })).status;
    assert.equal(await ok(r.key), 200);
    assert.equal(await ok(oldKey), 200);
    const r2 = (await call(admin, 'POST', `/keys/${created.record.id}/rotate`, { grace_hours: 0 })).body;
    assert.equal(await ok(r2.key), 200);
    assert.equal(await ok(r.key), 401, 'no grace: the previous secret stops at once');
    assert.equal(await ok(oldKey), 200, 'the first grace period still runs');
  });
  test('edits validate like creation and apply to the running key ring', async () => {
    const bad = await call(admin, 'PATCH', `/keys/${aliceKeyId}`, { budget_usd: '-3' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'budget_usd');
    const k = (await call(admin, 'PATCH', `/keys/${aliceKeyId}`, { allowed_models: ['other/*'] })).body;
    assert.deepEqual(k.allowed_models, ['other/*']);
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${aliceKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'hi' }] }) });
    assert.equal(res.status, 403);
    await call(admin, 'PATCH', `/keys/${aliceKeyId}`, { allowed_models: [] });
  });
});

describe('rollups', () => {
  test('usage totals equal the sums over the raw records', async () => {
    await new Promise((r) => setTimeout(r, 200));
    const raw = await gw.services.store!.sql.all('SELECT COUNT(*) AS n, SUM(input_tokens) AS i, SUM(output_tokens) AS o FROM inferences');
    const u = (await call(admin, 'GET', '/usage?group=model')).body;
    assert.equal(u.totals.requests, Number(raw[0]!.n));
    assert.equal(u.totals.input_tokens, Number(raw[0]!.i));
    assert.equal(u.totals.output_tokens, Number(raw[0]!.o));
    const csv = (await call(admin, 'GET', '/usage/export?format=csv&group=model')).body as string;
    assert.match(csv.split('\r\n')[0]!, /^bucket,group,label,requests/);
  });
  test('bad parameters are 400 with the parameter named', async () => {
    for (const [q, param] of [['tz=Mars/Olympus', 'tz'], ['bucket=minute', 'bucket'], ['from=yesterday', 'from'], ['group=planet', 'group']] as const) {
      const r = await call(admin, 'GET', `/usage?${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.param, param, q);
    }
    const r = await call(admin, 'GET', '/usage?bucket=hour&from=2020-01-01T00:00:00Z');
    assert.equal(r.status, 400);
  });
});
