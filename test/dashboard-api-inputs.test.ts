// The admin API's answers to bad input and misuse, each found probing a real gateway: a body that does
// not parse is refused, never read as an empty one; a refused edit changes nothing; a member's admin-only
// field is refused, not ignored; a password change's current password is guessed under the sign-in limits.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { createApiKey } from './helpers/admin-api.ts';

const ADMIN_KEY = 'admin-key-for-the-inputs-test-0123456789abcdef';
const ADMIN = { authorization: `Bearer ${ADMIN_KEY}` };
const PW = 'a long enough password';
let oa: MockUpstream; let gw: TestGateway;

async function call(method: string, path: string, body: string | null, headers: Record<string, string> = ADMIN): Promise<{ status: number; body: any }> {
  const res = await fetch(`${gw.url}/admin/api/v1${path}`, {
    method, headers: { ...headers, ...(body === null ? {} : { 'content-type': 'application/json' }) }, body, signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: await res.json() };
}

before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }], gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } } });
});
after(async () => { await gw.stop(); await oa.close(); });

test('a rotation whose body does not parse is refused and rotates nothing; no body takes the configured grace', async () => {
  const k = await createApiKey(gw.url, ADMIN, { name: 'to-rotate' });
  // A trailing comma after grace_hours 0: read as {} this rotated with a day's grace for the old secret.
  for (const [body, code] of [['{"grace_hours": 0,}', 'invalid_json'], ['[0]', 'invalid_body'], ['"0"', 'invalid_body']] as const) {
    const r = await call('POST', `/keys/${k.record.id}/rotate`, body);
    assert.equal(r.status, 400, body);
    assert.equal(r.body.error.code, code, body);
  }
  const still = await call('GET', `/keys/${k.record.id}`, null);
  assert.equal(still.body.previous_secret_valid_until, null);
  const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${k.key}` } });
  assert.equal(models.status, 200, 'the secret was not rotated');
  for (const body of [null, '', ' \n']) {
    const r = await call('POST', `/keys/${k.record.id}/rotate`, body);
    assert.equal(r.status, 200, JSON.stringify(body));
    const graceMs = Date.parse(r.body.previous_secret_valid_until) - Date.now();
    assert.ok(graceMs > 23 * 3_600_000 && graceMs <= 24 * 3_600_000, `default grace: ${r.body.previous_secret_valid_until}`);
  }
});

test('a key edit refused for its owner_id changes nothing', async () => {
  const k = await createApiKey(gw.url, ADMIN, { name: 'before' });
  const r = await call('PATCH', `/keys/${k.record.id}`, JSON.stringify({ name: 'after', rpm_limit: 7, owner_id: 'no-such-user' }));
  assert.equal(r.status, 400);
  assert.equal(r.body.error.param, 'owner_id');
  const now = await call('GET', `/keys/${k.record.id}`, null);
  assert.equal(now.body.name, 'before');
  assert.equal(now.body.rpm_limit, null);
});

/** A dashboard user's session headers for changes: the cookie and the CSRF token. */
async function signIn(email: string): Promise<Record<string, string>> {
  const res = await fetch(`${gw.url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PW }) });
  assert.equal(res.status, 200);
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': ((await res.json()) as { csrf_token: string }).csrf_token };
}

test('a member naming an owner for a key is refused (403 naming owner_id), not ignored', async () => {
  const users = gw.services.dashboard!.users;
  const carol = await users.create({ email: 'carol@example.com', role: 'member', password: PW });
  const dave = await users.create({ email: 'dave@example.com', role: 'member', password: PW });
  const asCarol = await signIn('carol@example.com');
  const made = await call('POST', '/keys', JSON.stringify({ name: 'for dave', owner_id: dave.id }), asCarol);
  assert.equal(made.status, 403);
  assert.equal(made.body.error.param, 'owner_id');
  assert.deepEqual(await users.keysOf(carol.id), []);
  const own = await call('POST', '/keys', JSON.stringify({ name: 'mine' }), asCarol);
  assert.equal(own.status, 201);
  const give = await call('PATCH', `/keys/${own.body.record.id}`, JSON.stringify({ name: 'given', owner_id: dave.id }), asCarol);
  assert.equal(give.status, 403);
  assert.equal(give.body.error.param, 'owner_id');
  assert.equal((await call('GET', `/keys/${own.body.record.id}`, null)).body.name, 'mine');
  assert.deepEqual(await users.keysOf(dave.id), []);
});

test('a password change checks the current password under the sign-in limits', async () => {
  await gw.services.dashboard!.users.create({ email: 'erin@example.com', role: 'member', password: PW });
  const asErin = await signIn('erin@example.com');
  const change = (current: string, next = 'another long password') => call('POST', '/session/password', JSON.stringify({ current_password: current, new_password: next }), asErin);
  const short = await change(PW, 'short');
  assert.deepEqual([short.status, short.body.error.param], [400, 'new_password']);
  for (let i = 0; i < 5; i++) assert.equal((await change(`guess ${i}`)).status, 401);
  const res = await fetch(`${gw.url}/admin/api/v1/session/password`, {
    method: 'POST', headers: { ...asErin, 'content-type': 'application/json' }, body: JSON.stringify({ current_password: PW, new_password: 'another long password' }),
  });
  assert.equal(res.status, 429);
  assert.ok(Number(res.headers.get('retry-after')) > 0);
  assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'too_many_attempts');
  const signin = await fetch(`${gw.url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'erin@example.com', password: PW }) });
  assert.equal(signin.status, 429, 'one count for the account, whichever route guesses');
});

test('history refuses a reversed window (400 naming from), as usage does, instead of an empty page', async () => {
  for (const path of ['/requests', '/requests/export', '/usage']) {
    const r = await call('GET', `${path}?from=2030-01-01T00:00:00Z&to=2020-01-01T00:00:00Z`, null);
    assert.deepEqual([r.status, r.body.error?.code, r.body.error?.param], [400, 'invalid_parameter', 'from'], path);
  }
  assert.equal((await call('GET', '/requests?from=2020-01-01T00:00:00Z&to=2030-01-01T00:00:00Z', null)).status, 200);
});

test('a sign-in with an email of half a megabyte is a wrong password, and stores no row of its size', async () => {
  const huge = `${'x'.repeat(512 * 1024)}@example.com`;
  const r = await call('POST', '/session', JSON.stringify({ email: huge, password: PW }), {});
  assert.deepEqual([r.status, r.body.error.code], [401, 'invalid_credentials']);
  const rows = await gw.services.store!.sql.all('SELECT MAX(LENGTH(k)) AS n FROM dashboard_login_failures');
  assert.ok(Number(rows[0]!.n) <= 322, `longest sign-in window key: ${rows[0]!.n} characters`);
});

test('a count parameter takes digits only: hex, exponents and padding are 400 naming it', async () => {
  for (const [path, param] of [['/usage?top=0x10', 'top'], ['/usage?top=1e1', 'top'], ['/requests?limit=%2010', 'limit'], ['/router?top=0b11', 'top'], ['/router/states?limit=1.0', 'limit']]) {
    const r = await call('GET', path!, null);
    assert.deepEqual([r.status, r.body.error?.param], [400, param], path);
  }
  assert.equal((await call('GET', '/usage?top=10', null)).status, 200);
});

test('a parameter that takes one value, given twice, is a 400 naming it; lists still repeat', async () => {
  for (const [path, param] of [['/usage?top=5&top=6', 'top'], ['/usage?bucket=hour&bucket=day', 'bucket'], ['/usage?tz=UTC&tz=Europe/Berlin', 'tz'],
    ['/requests?from=2026-01-01&from=2026-02-01', 'from'], ['/requests?status=ok&status=error', 'status'], ['/requests/export?format=csv&format=jsonl', 'format'],
    ['/models/compare?metric=a&metric=b', 'metric']]) {
    const r = await call('GET', path!, null);
    assert.deepEqual([r.status, r.body.error?.param], [400, param], path);
  }
  assert.equal((await call('GET', '/usage?model=a&model=b&group=model', null)).status, 200);
});

test('a user created with a password that is no string is refused (400 naming password), not given a generated one', async () => {
  for (const password of [12345678, true, ['a long enough password'], { p: 'x' }]) {
    const r = await call('POST', '/users', JSON.stringify({ email: `np${Math.random().toString(36).slice(2)}@example.com`, password }));
    assert.equal(r.status, 400, JSON.stringify(password));
    assert.equal(r.body.error.param, 'password');
  }
  const made = await call('POST', '/users', JSON.stringify({ email: `gen${Math.random().toString(36).slice(2)}@example.com`, password: null }));
  assert.equal(made.status, 201);
  assert.equal(typeof made.body.password, 'string', 'null: one is generated and shown once');
});

test('error answers carry the security headers successful ones carry', async () => {
  const ok = await fetch(`${gw.url}/admin/api/v1/users`, { headers: ADMIN });
  for (const res of [
    await fetch(`${gw.url}/admin/api/v1/users`), // 401
    await fetch(`${gw.url}/admin/api/v1/keys/no-such-key`, { headers: ADMIN }), // 404
    await fetch(`${gw.url}/admin/api/v1/users`, { method: 'POST', headers: { ...ADMIN, 'content-type': 'application/json' }, body: '{' }), // 400
  ]) {
    assert.ok(res.status >= 400, String(res.status));
    for (const h of ['x-content-type-options', 'x-frame-options', 'content-security-policy']) assert.equal(res.headers.get(h), ok.headers.get(h), `${res.status} ${h}`);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    await res.text();
  }
  await ok.text();
});

test('GET /keys in pages: limit and cursor walk the same keys as the whole list, newest first, none twice; edges refused by name', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await call('POST', '/keys', JSON.stringify({ name: `paged ${i}` }), ADMIN)).status, 201);
  const whole = await call('GET', '/keys', null);
  assert.equal(whole.body.next_cursor, null);
  const ids: string[] = whole.body.data.map((k: { id: string }) => k.id);
  assert.ok(ids.length >= 5);
  const walked: string[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 100; n++) {
    const page = await call('GET', `/keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`, null);
    assert.equal(page.status, 200);
    assert.ok(page.body.data.length <= 2);
    walked.push(...page.body.data.map((k: { id: string }) => k.id));
    cursor = page.body.next_cursor;
    if (cursor === null) break;
    assert.equal(cursor, walked.at(-1));
  }
  assert.deepEqual(walked, ids);
  // A page that ends exactly at the last key has no next page (no empty page to fetch).
  assert.equal((await call('GET', `/keys?limit=${ids.length}`, null)).body.next_cursor, null);
  assert.equal((await call('GET', `/keys?limit=${ids.length - 1}`, null)).body.next_cursor, ids.at(-2));
  assert.deepEqual((await call('GET', `/keys?limit=5&cursor=${ids.at(-1)}`, null)).body, { data: [], next_cursor: null });
  for (const [q, param] of [['limit=0', 'limit'], ['limit=1001', 'limit'], ['limit=2&cursor=nosuchkey', 'cursor'], [`cursor=${ids[0]}`, 'cursor']] as const) {
    const r = await call('GET', `/keys?${q}`, null);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error.param, param, q);
  }
});

test('a change whose body is not labelled application/json is a 415 naming the type, and changes nothing', async () => {
  const raw = async (method: string, path: string, body: string | null, headers: Record<string, string>) => {
    const res = await fetch(`${gw.url}${path}`, { method, headers, body, signal: AbortSignal.timeout(10_000) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const users = gw.services.dashboard!.users;
  await users.create({ email: 'frank@example.com', role: 'admin', password: PW });
  const asFrank = await signIn('frank@example.com');
  const name = () => `ct-${Math.random().toString(36).slice(2)}`;
  // fetch labels a string body text/plain;charset=UTF-8 unless told otherwise: the label a form would send.
  for (const [label, headers] of [
    ['text/plain', { ...ADMIN }], ['form', { ...ADMIN, 'content-type': 'application/x-www-form-urlencoded' }],
    ['none', { ...ADMIN, 'content-type': '' }], ['latin1', { ...ADMIN, 'content-type': 'application/json; charset=iso-8859-1' }],
    ['session text/plain', { ...asFrank, 'content-type': 'text/plain' }],
  ] as Array<[string, Record<string, string>]>) {
    for (const path of label.startsWith('session') ? ['/admin/api/v1/keys'] : ['/admin/api/v1/keys', '/admin/keys']) {
      const n = name();
      const r = await raw('POST', path, JSON.stringify({ name: n }), headers);
      assert.deepEqual([r.status, r.body.error?.code, r.body.error?.type], [415, 'unsupported_media_type', 'invalid_request_error'], `${label} ${path}`);
      assert.match(r.body.error.message, /application\/json/);
      assert.ok(!(await call('GET', '/keys', null)).body.data.some((k: { name: string }) => k.name === n), `${label}: no key was made`);
    }
  }
  const signin = await raw('POST', '/admin/api/v1/session', JSON.stringify({ email: 'frank@example.com', password: PW }), { 'content-type': 'text/plain' });
  assert.equal(signin.status, 415, 'sign-in too');
  // The label in any case, with a UTF-8 charset, is accepted; so is a change with no body.
  for (const ct of ['application/json', 'Application/JSON; Charset=UTF-8', 'application/json;charset="utf-8"']) {
    assert.equal((await raw('POST', '/admin/api/v1/keys', JSON.stringify({ name: name() }), { ...ADMIN, 'content-type': ct })).status, 201, ct);
  }
  const k = await createApiKey(gw.url, ADMIN, { name: 'no body' });
  assert.equal((await raw('POST', `/admin/api/v1/keys/${k.record.id}/rotate`, null, ADMIN)).status, 200, 'a body-less change needs no label');
  assert.equal((await raw('DELETE', `/admin/api/v1/keys/${k.record.id}`, null, asFrank)).status, 200);
  // The CSRF check still comes first for a session: no token is a 403 whatever the label.
  const noCsrf = await raw('POST', '/admin/api/v1/keys', JSON.stringify({ name: name() }), { cookie: asFrank.cookie!, 'content-type': 'text/plain' });
  assert.deepEqual([noCsrf.status, noCsrf.body.error.code], [403, 'csrf_failed']);
});
