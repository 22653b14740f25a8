// Security of the surfaces a client or an attacker can reach:
// - the authorisation matrix: every route of the route table (and every admin API route) with no key,
//   a wrong key, garbage, a revoked key, an expired key, the admin key on /v1 and a client key on admin
//   routes: 401 (or 429 once the address is blocked), never served; the right credential is served;
// - CRLF and oversized values in model names, metadata and headers: a 4xx or stored verbatim, never an
//   injected header, never a crash;
// - SQL metacharacters in every stored string (model, metadata, key names, feedback metrics, tags,
//   reasons, comments), on SQLite and on PostgreSQL (a fresh schema): stored and read back exactly;
// - a secret scan of everything the gateway logged, stored, answered and showed in /metrics and /health.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request } from 'node:http';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import { SECRETS, assertNoSecrets, captureOutput, gatewayKeySecret, publicText, storedText, type OutputCapture } from './helpers/secret-scan.ts';
import { dropSchema, freshSchema, pgAvailable, PG_URL } from './helpers/pg.ts';
import { reportFigures } from './helpers/figures.ts';
import { buildRoutes } from '../src/http/server.ts';
import { apiRoutes, API_PREFIX } from '../src/http/admin-api/router.ts';

const ADMIN = SECRETS.admin;
let mock: MockUpstream; let gw: TestGateway; let capture: OutputCapture;
const keys = { valid: '', revoked: '', expired: '', revokedId: '', validId: '' };
const bodies: string[] = [];
const matrix = { keyedRoutes: 0, adminRoutes: 0, adminApiRoutes: 0, refusals: 0, served: 0 };

async function createKey(g: TestGateway, body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const r = await fetch(`${g.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 201, await r.clone().text());
  return (await r.json()) as { id: string; key: string };
}

before(async () => {
  capture = captureOutput();
  mock = await startMockOpenAI({ apiKey: SECRETS.provider });
  gw = await startTestGateway({
    providers: [{ id: 'oai', format: 'openai-chat', base_url: mock.url, api_key: SECRETS.provider, models: [{ name: 'test-model', pricing: TEST_PRICING }] }],
    gateway: { auth: { enabled: true, admin_key: ADMIN, models_public: false }, storage: { log_bodies: 'full' } },
  });
  const v = await createKey(gw, { name: 'valid' });
  keys.valid = v.key; keys.validId = v.id;
  const r = await createKey(gw, { name: 'to revoke' });
  keys.revoked = r.key; keys.revokedId = r.id;
  assert.equal((await fetch(`${gw.url}/admin/keys/${r.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } })).status, 200);
  const e = await createKey(gw, { name: 'expiring', expires_at: new Date(Date.now() + 1500).toISOString() });
  keys.expired = e.key;
  // Served while it lasts, refused after.
  assert.equal((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${e.key}` } })).status, 200);
  await new Promise((ok) => setTimeout(ok, 1600));
});

after(async () => {
  try {
    assertNoSecrets({ 'the logs': capture.text(), 'the records': await storedText(gw), 'answers': bodies.join('\n'), '/metrics and /health': await publicText(gw.url) },
      [SECRETS.provider, ADMIN, gatewayKeySecret(keys.valid), gatewayKeySecret(keys.revoked), gatewayKeySecret(keys.expired)]);
  } finally {
    capture.stop();
    reportFigures('security', { ...matrix, secretScan: 'logs, records, answers, /metrics, /health, /health/ready' });
    await gw.stop(); await mock.close();
  }
});

// ---- the authorisation matrix ----

/** A concrete path for a route pattern. */
const concrete = (pattern: string): string => pattern.replace(/\/:id$/, '/01a20000-0000-7000-8000-000000000000').replace(/\/:id\//g, '/01a20000-0000-7000-8000-000000000000/')
  .replace(/\/\*$/, pattern === '/v1/*' ? '/embeddings' : pattern.startsWith('/v1/models') ? '/oai/test-model' : '/x');

/**
 * Failed admin attempts are limited per client address (10 a minute, then 429 even with the right key).
 * Each batch of bad attempts comes from its own loopback address (a fresh connection bound to it) so the
 * matrix measures the check, not the limiter; the limiter has its own test (auth-admin-key).
 */
let addressTurn = 0; let attemptsOnAddress = 0;
function nextBadAddress(): string {
  if (++attemptsOnAddress > 8) { addressTurn++; attemptsOnAddress = 1; }
  return `127.0.0.${10 + addressTurn}`;
}

/** One request on a new connection from `localAddress`, as a fetch Response. */
function fromAddress(localAddress: string, method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<Response> {
  const u = new URL(`${gw.url}${path}`);
  return new Promise((ok, fail) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers, localAddress, agent: false, timeout: 10_000 }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c)).on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        ok(new Response(Buffer.concat(parts), { status: res.statusCode!, headers: h }));
      });
    });
    req.on('error', fail).on('timeout', () => req.destroy(new Error('timeout')));
    req.end(body);
  });
}

type Cred = { name: string; header?: string; badAdmin?: boolean };
const wellFormedUnknown = 'sk-gw-AAAAAAAAAAAA-BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';

async function call(method: string, path: string, cred: Cred): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (cred.header !== undefined) headers.authorization = cred.header;
  const body = method !== 'GET' && method !== 'DELETE' ? '{}' : undefined;
  const r = cred.badAdmin
    ? await fromAddress(nextBadAddress(), method, path, headers, body)
    : await fetch(`${gw.url}${path}`, { method, headers, body, signal: AbortSignal.timeout(10_000) }).catch((e: unknown) => { throw new Error(`${method} ${path} with ${cred.name}: ${String((e as Error).cause ?? e)}`); });
  // The live tail never ends: its headers are the answer.
  if ((r.headers.get('content-type') ?? '').includes('text/event-stream')) { await r.body?.cancel(); return r; }
  bodies.push(await r.clone().text());
  return r;
}

test('authorisation matrix: every /v1 route refuses no key, wrong, garbage, revoked, expired and admin keys; serves a valid key', async () => {
  const table = buildRoutes(gw.services).routes.filter((r) => r.auth === 'key' || r.auth === 'models');
  assert.ok(table.length >= 12, `the route table lists the keyed routes (${table.length})`);
  const refused: Cred[] = [
    { name: 'no key' }, { name: 'wrong key', header: `Bearer ${wellFormedUnknown}` }, { name: 'garbage', header: 'Bearer abc' },
    { name: 'basic auth', header: 'Basic dXNlcjpwYXNz' }, { name: 'revoked', header: `Bearer ${keys.revoked}` },
    { name: 'expired', header: `Bearer ${keys.expired}` }, { name: 'the admin key', header: `Bearer ${ADMIN}` },
  ];
  let checked = 0;
  for (const route of table) {
    const path = concrete(route.pattern);
    for (const cred of refused) {
      const r = await call(route.method, path, cred);
      assert.equal(r.status, 401, `${route.method} ${path} with ${cred.name}: ${r.status}`);
      const body = (await r.json()) as Record<string, any>;
      if (route.envelope === 'anthropic') assert.equal(body.type, 'error');
      else assert.equal(typeof body.error?.message, 'string');
      checked++; matrix.refusals++;
    }
    const ok = await call(route.method, path, { name: 'valid', header: `Bearer ${keys.valid}` });
    assert.ok(ok.status !== 401 && ok.status !== 403, `${route.method} ${path} with a valid key: ${ok.status}`);
    matrix.served++;
    // x-api-key (the Anthropic SDK's header) authenticates the same.
    const viaHeader = await fetch(`${gw.url}${path}`, { method: route.method, headers: { 'x-api-key': keys.valid, 'content-type': 'application/json' }, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: '{}' }) });
    await viaHeader.text();
    assert.ok(viaHeader.status !== 401, `${route.method} ${path} with x-api-key: ${viaHeader.status}`);
  }
  assert.ok(checked > 80);
  matrix.keyedRoutes = table.length;
  assert.equal(await settled(gw), 0);
});

test('authorisation matrix: every admin route and admin API route refuses no key, a wrong admin key and a client key; serves the admin key', async () => {
  const admin = buildRoutes(gw.services).routes.filter((r) => r.auth === 'admin').map((r) => ({ method: r.method, path: concrete(r.pattern), via: 'route' }));
  const api = apiRoutes().filter((r) => r.who !== 'public').map((r) => ({ method: r.method, path: concrete(`${API_PREFIX}${r.path}`), via: 'api' }));
  assert.ok(admin.length >= 3 && api.length >= 15, `${admin.length} admin routes, ${api.length} admin API routes`);
  matrix.adminRoutes = admin.length; matrix.adminApiRoutes = api.length;
  const refused: Cred[] = [
    { name: 'no key', badAdmin: true }, { name: 'a wrong admin key', header: `Bearer ${ADMIN.slice(0, -1)}X`, badAdmin: true },
    { name: 'a client key', header: `Bearer ${keys.valid}`, badAdmin: true }, { name: 'a revoked client key', header: `Bearer ${keys.revoked}`, badAdmin: true },
  ];
  for (const route of [...admin, ...api]) {
    for (const cred of refused) {
      const r = await call(route.method, route.path, cred);
      assert.equal(r.status, 401, `${route.method} ${route.path} with ${cred.name}: ${r.status} ${bodies.at(-1)}`);
      matrix.refusals++;
    }
    const ok = await call(route.method, route.path, { name: 'admin', header: `Bearer ${ADMIN}` });
    // The admin key acts as a user without an account: changing "its" password is the one thing it cannot do.
    if (route.path.endsWith('/session/password')) { assert.equal(ok.status, 403); continue; }
    assert.ok(ok.status !== 401 && ok.status !== 403 && ok.status !== 429, `${route.method} ${route.path} with the admin key: ${ok.status} ${bodies.at(-1)}`);
    matrix.served++;
  }
  // The valid key still works after all those attempts (none of them touched it).
  assert.equal((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${keys.valid}` } })).status, 200);
});

// ---- CRLF and oversized values ----

const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.valid}`, ...headers }, body: JSON.stringify(body),
});

test('CRLF in model names and metadata never becomes a header; oversized values are refused or stored whole', async () => {
  const injected = 'oai/test-model\r\nx-injected: yes\r\n\r\n<html>';
  const r = await chat({ model: injected, messages: [{ role: 'user', content: 'hi' }] });
  bodies.push(await r.clone().text());
  assert.ok(r.status === 400 || r.status === 404, `an unknown model is a 4xx: ${r.status}`);
  assert.equal(r.headers.get('x-injected'), null);
  for (const [k, v] of r.headers) assert.doesNotMatch(`${k}: ${v}`, /[\r\n]/);

  const metadata = { 'k\r\nset-cookie': 'v\r\nSet-Cookie: a=b', long: 'm'.repeat(100_000), [`${'K'.repeat(300)}`]: 'x' };
  const m = await chat({ model: 'oai/test-model', metadata, messages: [{ role: 'user', content: 'metadata please' }] });
  const text = await m.text();
  bodies.push(text);
  assert.ok(m.status === 200 || (m.status >= 400 && m.status < 500), `${m.status} ${text.slice(0, 200)}`);
  assert.equal(m.headers.get('set-cookie'), null);
  if (m.status === 200) {
    const rec = await recordOf(gw, m.headers.get('x-inference-id')!);
    assert.equal(rec.metadata?.['k\r\nset-cookie'], 'v\r\nSet-Cookie: a=b', 'stored verbatim');
  }

  assert.equal(await settled(gw), 0);
});

/**
 * Every place a client's value comes back in an error: each answer is a 4xx in its route's envelope whose
 * message quotes the value's first 200 characters, an ellipsis and its length, never the whole value.
 */
test('oversized values quoted in error messages are cut to 200 characters with their length, on every route', async () => {
  const big = (c: string, n = 100_000) => c.repeat(n);
  const auth = { authorization: `Bearer ${keys.valid}` };
  const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) });
  const msg = [{ role: 'user', content: 'hi' }];
  const cases: Array<{ what: string; send: () => Promise<Response>; status: number; length: number; envelope?: 'anthropic' | 'feedback' }> = [
    { what: 'an unknown model', send: () => post('/v1/chat/completions', { model: `oai/${big('x')}`, messages: msg }), status: 404, length: 100_004 },
    { what: 'an unknown provider', send: () => post('/v1/chat/completions', { model: `${big('p')}/m`, messages: msg }), status: 404, length: 100_000 },
    { what: 'a model without a provider', send: () => post('/v1/chat/completions', { model: big('b'), messages: msg }), status: 400, length: 100_000 },
    { what: 'an unknown model (messages route)', send: () => post('/v1/messages', { model: `oai/${big('y')}`, max_tokens: 5, messages: msg }), status: 404, length: 100_004, envelope: 'anthropic' },
    { what: 'an unknown model (pass-through route)', send: () => post('/v1/embeddings', { model: `oai/${big('e')}`, input: 'x' }), status: 404, length: 100_004 },
    { what: 'an enum value (content block type)', send: () => post('/v1/messages', { model: 'oai/test-model', max_tokens: 5, messages: [{ role: 'user', content: [{ type: big('t') }] }] }), status: 400, length: 100_000, envelope: 'anthropic' },
    { what: 'a listing filter', send: () => fetch(`${gw.url}/v1/models?capability=${big('c', 8000)}`, { headers: auth }), status: 400, length: 8000 },
    { what: 'a path no route serves', send: () => fetch(`${gw.url}/nothing/${big('r', 8000)}`, { headers: auth }), status: 404, length: 8009 },
    { what: 'a feedback metric name', send: () => post('/v1/feedback', [{ id: '01a1fda7-335c-71a2-8953-d37d7b0b1f27', feedback: { [big('k')]: true } }]), status: 200, length: 100_000, envelope: 'feedback' },
    { what: 'a feedback field', send: () => post('/v1/feedback', [{ id: '01a1fda7-335c-71a2-8953-d37d7b0b1f27', [big('f')]: 1, feedback: { a: true } }]), status: 200, length: 100_000, envelope: 'feedback' },
  ];
  for (const c of cases) {
    const r = await c.send();
    const text = await r.text();
    bodies.push(text);
    assert.equal(r.status, c.status, `${c.what}: ${text.slice(0, 300)}`);
    assert.ok(text.length < 1500, `${c.what}: the answer quotes the value shortened (${text.length} bytes)`);
    const body = JSON.parse(text) as Record<string, any>;
    const message: string = c.envelope === 'feedback' ? body[0].error.message : body.error.message;
    if (c.envelope === 'anthropic') assert.equal(body.type, 'error');
    assert.match(message, new RegExp(`…["']? \\(${c.length} characters\\)`), `${c.what}: ${message}`);
    if (c.envelope !== 'feedback' && c.envelope !== 'anthropic' && body.error.param !== null) assert.ok(body.error.param.length < 300, `${c.what}: param ${body.error.param.slice(0, 80)}`);
    // The refused request's record keeps a bounded copy of the model it named.
    const id = r.headers.get('x-inference-id');
    if (id && c.envelope !== 'feedback') {
      const rec = await recordOf(gw, id);
      assert.ok(rec.requestedModel.length < 250 && rec.route.length < 250, `${c.what}: record ${rec.requestedModel.slice(0, 60)} (${rec.requestedModel.length})`);
      if (c.length === 100_004) assert.match(rec.requestedModel, /… \(100004 characters\)$/);
      assert.ok((rec.requestBody ?? '').length < 200_000, 'with log_bodies: full the body itself is kept as sent');
    }
  }
  assert.equal(await settled(gw), 0);
});

/** Sends raw bytes on a fresh connection and returns what came back (the server closes or answers). */
function raw(bytes: string): Promise<string> {
  const { port } = new URL(gw.url);
  return new Promise((ok) => {
    const s = connect(Number(port), '127.0.0.1');
    let out = '';
    s.setEncoding('latin1');
    s.on('data', (d: string) => { out += d; });
    s.on('close', () => ok(out)).on('error', () => ok(out));
    s.setTimeout(5000, () => s.destroy());
    s.end(bytes);
  });
}

test('raw headers: bare CR, NUL and oversized headers get a 4xx and a closed connection; the process serves on', async () => {
  const body = '{"model":"oai/test-model","messages":[{"role":"user","content":"hi"}]}';
  const cases: Array<[string, string, RegExp]> = [
    ['bare CR in a header value', `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.valid}\rX-Evil: 1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`, /^HTTP\/1\.1 4\d\d/],
    ['NUL in a header value', `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \u0000${keys.valid}\r\n\r\n`, /^HTTP\/1\.1 4\d\d/],
    ['a 64 KiB header', `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(65_536)}\r\nAuthorization: Bearer ${keys.valid}\r\n\r\n`, /^HTTP\/1\.1 431/],
    ['a header folded over lines', `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer\r\n ${keys.valid}\r\n\r\n`, /^HTTP\/1\.1 4\d\d/],
    ['a CRLF-laden request line', 'GET /v1/models\r\nX-Evil: 1 HTTP/1.1\r\nHost: x\r\n\r\n', /^HTTP\/1\.1 4\d\d/],
  ];
  for (const [name, request, expected] of cases) {
    const answer = await raw(request);
    bodies.push(answer);
    assert.match(answer, expected, `${name}: ${answer.slice(0, 120)}`);
    assert.doesNotMatch(answer, /x-evil/i, name);
  }
  assert.equal((await fetch(`${gw.url}/health`)).status, 200);
});

// ---- SQL metacharacters in every stored string ----

const NASTY = [`'; DROP TABLE inferences; --`, `" OR "1"="1`, `\\'\\"\\\\`, `%_[]^$`, `Robert'); DELETE FROM api_keys;--`, '$1 $$ ?', `\u2028\u2029é😀`, `a\u0000b`] as const;

async function storedStringsRoundTrip(g: TestGateway): Promise<void> {
  const nasty = NASTY.join(' | ');
  // A key name is shown in lists and logs: control characters (NUL included, which PostgreSQL text cannot hold) are refused.
  const refused = await fetch(`${g.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: nasty }) });
  assert.equal(refused.status, 400, await refused.text());
  const printable = nasty.replace(/\u0000/g, '');
  const k = await createKey(g, { name: printable });
  const listed = (await (await fetch(`${g.url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { data?: Array<{ id: string; name: string }> } | Array<{ id: string; name: string }>;
  const list = Array.isArray(listed) ? listed : listed.data ?? [];
  assert.equal(list.find((x) => x.id === k.id)?.name, printable, 'a key name is stored verbatim');

  const metadata: Record<string, string> = {};
  NASTY.forEach((s, i) => { metadata[`k${i}${s.replace(/\u0000/g, '')}`] = s; });
  const r = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${k.key}` },
    body: JSON.stringify({ model: 'oai/test-model', metadata, user: nasty, messages: [{ role: 'user', content: nasty }] }),
  });
  const answer = await r.text();
  assert.equal(r.status, 200, answer.slice(0, 300));
  const id = r.headers.get('x-inference-id')!;
  const rec = await recordOf(g, id);
  assert.deepEqual(rec.metadata ? Object.fromEntries(Object.entries(rec.metadata).filter(([key]) => key.startsWith('k'))) : null, metadata, 'metadata stored verbatim');
  assert.ok(rec.requestBody?.includes(JSON.stringify(nasty).slice(1, -1)), 'the logged body keeps the text');

  // Feedback: metric names, comments, reasons and tags.
  const fb = await fetch(`${g.url}/v1/feedback`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${k.key}` },
    body: JSON.stringify([{ id, feedback: { "quality'; DROP TABLE feedback;--": true, note: nasty, score: { value: 0.5, reason: nasty } }, tags: { "t'--": nasty.replace(/\u0000/g, '') } }]),
  });
  const results = (await fb.json()) as Array<{ feedback_ids: Record<string, string> | null; error?: unknown }>;
  assert.equal(fb.status, 200);
  assert.ok(results[0]!.feedback_ids, JSON.stringify(results));
  const stats = await g.services.store!.feedbackStats({ since: '2000-01-01T00:00:00Z', until: '2100-01-01T00:00:00Z' });
  for (let i = 0; i < 100 && !stats.some((s) => s.metric === "quality'; DROP TABLE feedback;--"); i++) {
    await new Promise((ok) => setTimeout(ok, 50));
    stats.splice(0, stats.length, ...await g.services.store!.feedbackStats({ since: '2000-01-01T00:00:00Z', until: '2100-01-01T00:00:00Z' }));
  }
  assert.ok(stats.some((s) => s.metric === "quality'; DROP TABLE feedback;--"), 'the metric name is stored verbatim');
  // Every value answered with an id is stored (a NUL in a comment once got its row refused on PostgreSQL).
  const rows = await g.services.store!.sql.all('SELECT metric, value FROM feedback WHERE inference_id = ? ORDER BY metric', [id]);
  const heldNul = g.services.store!.kind === 'postgres' ? nasty.replace(/\u0000/g, '\uFFFD') : nasty;
  assert.deepEqual(rows.map((x) => [x.metric, x.value]), [["quality'; DROP TABLE feedback;--", 'true'], ['note', heldNul], ['score.reason', heldNul], ['score.value', '0.5']]
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1)));
  // Every table is still there and answering.
  assert.ok((await g.services.store!.listKeys()).some((x) => x.id === k.id));
  assert.ok((await g.services.store!.listInferences({ limit: 5 })).length >= 1);
}

test('SQL metacharacters in every stored string: SQLite stores and returns them verbatim', async () => {
  await storedStringsRoundTrip(gw);
});

const pgUp = await pgAvailable();
test('SQL metacharacters in every stored string: PostgreSQL (fresh schema) stores and returns them verbatim', { skip: !pgUp }, async (t) => {
  const schema = freshSchema('gw_security');
  const g = await startTestGateway({
    providers: [{ id: 'oai', format: 'openai-chat', base_url: mock.url, api_key: SECRETS.provider, models: [{ name: 'test-model', pricing: TEST_PRICING }] }],
    gateway: { auth: { enabled: true, admin_key: ADMIN }, storage: { database_url: PG_URL, log_bodies: 'full' } },
    env: { GATEWAY_PG_SCHEMA: schema },
  });
  t.after(async () => { await g.stop(); await dropSchema(schema); });
  await storedStringsRoundTrip(g);
});
