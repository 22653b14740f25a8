// End to end, through the real HTTP gateway: the API key lifecycle through the admin API and the
// `keys` command line (same store), authentication failures in both error envelopes without echoing
// the presented key, x-api-key and Bearer via the official SDKs, allowed-model globs (403), the public
// model listing and the admin key. Runs on SQLite and on PostgreSQL (a fresh schema per run).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockOpenAI, startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { runCli } from './helpers/process.ts';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';

const ADMIN = 'admin-secret-for-e2e-tests';

let oa: MockUpstream; let an: MockUpstream;
before(async () => { oa = await startMockOpenAI(); an = await startMockAnthropic(); });
after(async () => { await oa.close(); await an.close(); });

type Backend = 'sqlite' | 'postgres';

for (const backend of ['sqlite', 'postgres'] as Backend[]) {
  describe(`keys end to end on ${backend}`, () => {
    let gw: TestGateway;
    let skip: string | false = false;
    const schema = freshSchema('e2e_keys');
    const env: Record<string, string> = backend === 'postgres' ? { GATEWAY_PG_SCHEMA: schema } : {};

    before(async () => {
      // pgAvailable throws under CI=true: failing, not skipping.
      if (backend === 'postgres' && !(await pgAvailable())) {
        skip = `PostgreSQL unreachable at ${PG_URL}`;
        return;
      }
      gw = await startTestGateway({
        providers: [
          { id: 'mock', format: 'openai-chat', base_url: oa.url },
          { id: 'anth', format: 'anthropic-messages', base_url: an.url },
        ],
        gateway: {
          auth: { enabled: true, admin_key: ADMIN, models_public: true },
          ...(backend === 'postgres' ? { storage: { database_url: PG_URL } } : {}),
        },
        env,
      });
      assert.equal(gw.services.store!.kind, backend);
    });
    after(async () => {
      if (gw) await gw.stop();
      if (backend === 'postgres' && !skip) await dropSchema(schema);
    });

    const admin = (method: string, path: string, body?: unknown, key: string | null = ADMIN) => fetch(`${gw.url}${path}`, {
      method,
      headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const createKey = async (body: Record<string, unknown>) => {
      const r = await admin('POST', '/admin/keys', body);
      const text = await r.text();
      assert.equal(r.status, 201, text);
      return JSON.parse(text) as Record<string, unknown> & { id: string; key: string };
    };
    const chat = (headers: Record<string, string>, model = 'mock/test-model') => fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello keys' }] }),
    });
    const messages = (headers: Record<string, string>, model = 'anth/test-model') => fetch(`${gw.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
      body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hello keys' }] }),
    });
    const feedback = (headers: Record<string, string>) => fetch(`${gw.url}/v1/feedback`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify([{ id: '01890000-0000-7000-8000-000000000000', feedback: { ok: true } }]),
    });

    test('admin API: create shows the key once and never the hash; list never shows the secret; revoke', async (t) => {
      if (skip) { t.skip(skip); return; }
      const created = await createKey({ name: 'admin-made', allowed_models: ['mock/*'], rpm_limit: 1000 });
      assert.match(created.key, /^sk-gw-[0-9A-Za-z]{12}-[0-9A-Za-z]{43}$/);
      assert.equal(created.key.startsWith(`sk-gw-${created.id}-`), true);
      assert.equal(created.status, 'active');
      assert.deepEqual(created.allowed_models, ['mock/*']);
      assert.equal('hash' in created, false);
      const secretPart = created.key.slice(`sk-gw-${created.id}-`.length);

      const list = await admin('GET', '/admin/keys');
      assert.equal(list.status, 200);
      const listText = await list.text();
      assert.equal(listText.includes(secretPart), false, 'list must not contain the secret');
      assert.equal(/"hash"/.test(listText), false, 'list must not contain hashes');
      const { createHash } = await import('node:crypto');
      assert.equal(listText.includes(createHash('sha256').update(created.key).digest('hex')), false);
      const row = (JSON.parse(listText) as { data: Array<Record<string, unknown>> }).data.find((k) => k.id === created.id)!;
      assert.equal(row.name, 'admin-made');
      assert.equal(row.prefix, `sk-gw-${created.id}-`);

      // The new key works at once (the admin API refreshes the key ring).
      const ok = await chat({ authorization: `Bearer ${created.key}` });
      assert.equal(ok.status, 200, await ok.clone().text());
      assert.match(((await ok.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, /^Echo: hello keys/);

      const del = await admin('DELETE', `/admin/keys/${created.id}`);
      assert.equal(del.status, 200);
      assert.deepEqual(await del.json(), { id: created.id, revoked: true });
      const again = await admin('DELETE', `/admin/keys/${created.id}`);
      assert.equal(again.status, 404);
      const refused = await chat({ authorization: `Bearer ${created.key}` });
      assert.equal(refused.status, 401);
      const after = (await (await admin('GET', '/admin/keys')).json()) as { data: Array<Record<string, unknown>> };
      assert.equal(after.data.find((k) => k.id === created.id)!.status, 'revoked');
    });

    test('admin API: bad input is a 400 naming the parameter', async (t) => {
      if (skip) { t.skip(skip); return; }
      const r = await admin('POST', '/admin/keys', { name: 'x', rpm_limit: -1 });
      assert.equal(r.status, 400);
      const body = (await r.json()) as { error: { param: string; message: string } };
      assert.equal(body.error.param, 'rpm_limit');
    });

    test('admin routes: 401 without or with a wrong admin key, and a client key is not an admin key', async (t) => {
      if (skip) { t.skip(skip); return; }
      const client = await createKey({ name: 'not-admin' });
      for (const key of [null, 'wrong-admin-key', client.key]) {
        for (const [method, path, body] of [['GET', '/admin/keys'], ['POST', '/admin/keys', { name: 'evil' }], ['DELETE', `/admin/keys/${client.id}`]] as Array<[string, string, unknown]>) {
          const r = await admin(method, path, body, key);
          const text = await r.text();
          assert.equal(r.status, 401, `${method} ${path} with ${key === null ? 'no key' : 'a wrong key'}: ${text}`);
          assert.equal(JSON.parse(text).error.type, 'authentication_error');
          if (key) assert.equal(text.includes(key), false);
        }
      }
      // Nothing happened: the client key is still active and no "evil" key exists.
      const list = (await (await admin('GET', '/admin/keys')).json()) as { data: Array<{ id: string; name: string; status: string }> };
      assert.equal(list.data.find((k) => k.id === client.id)!.status, 'active');
      assert.equal(list.data.some((k) => k.name === 'evil'), false);
    });

    test('command line: keys create / list / revoke against the same store as the running gateway', async (t) => {
      if (skip) { t.skip(skip); return; }
      const cliEnv = { GATEWAY_CONFIG: gw.configFile, ...env };
      const made = await runCli(['keys', 'create', '--name', 'cli-made', '--models', 'mock/*,anth/test-*', '--budget', '5', '--period', 'month', '--rpm', '100', '--tpm', '100000'], cliEnv);
      assert.equal(made.code, 0, made.stdout + made.stderr);
      const keyLine = made.stdout.split('\n').map((l) => l.trim()).find((l) => l.startsWith('key: sk-gw-') || l.startsWith('sk-gw-'));
      assert.ok(keyLine, made.stdout);
      const key = keyLine.replace(/^key:\s*/, '');
      const id = /^sk-gw-([0-9A-Za-z]{12})-/.exec(key)![1]!;

      const listed = await runCli(['keys', 'list'], cliEnv);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, new RegExp(`${id}\\s+active\\s+cli-made`));
      assert.equal(listed.stdout.includes(key.slice(`sk-gw-${id}-`.length)), false, 'keys list must not print the secret');
      const listedJson = await runCli(['keys', 'list', '--json'], cliEnv);
      const rows = listedJson.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const row = rows.find((r) => r.id === id)!;
      assert.equal(row.budget_usd, '5');
      assert.equal('hash' in row, false);

      // The admin API (same store) sees the CLI's key.
      const apiList = (await (await admin('GET', '/admin/keys')).json()) as { data: Array<{ id: string; name: string }> };
      assert.equal(apiList.data.find((k) => k.id === id)?.name, 'cli-made');

      // The running gateway picks CLI changes up on its key-ring refresh (every 30 s by default); force it here.
      await gw.services.keys!.refresh();
      const ok = await chat({ authorization: `Bearer ${key}` });
      assert.equal(ok.status, 200, await ok.clone().text());

      // Rotate and edit from the command line, through the same code as the dashboard: the new secret and,
      // for the grace period, the old one work; the narrowed models apply at the next refresh.
      const rotated = await runCli(['keys', 'rotate', id, '--grace-hours', '1', '--json'], cliEnv);
      assert.equal(rotated.code, 0, rotated.stdout + rotated.stderr);
      const { key: fresh, previous_secret_valid_until: until } = JSON.parse(rotated.stdout) as { key: string; previous_secret_valid_until: string };
      assert.ok(fresh.startsWith(`sk-gw-${id}-`) && fresh !== key);
      assert.ok(Math.abs(Date.parse(until) - Date.now() - 3_600_000) < 120_000, until);
      const edited = await runCli(['keys', 'edit', id, '--models', 'anth/*', '--rpm', 'none'], cliEnv);
      assert.equal(edited.code, 0, edited.stdout + edited.stderr);
      assert.match(edited.stdout, /budget: \$5 per month {2}rpm: none {2}tpm: 100000 {2}models: anth\/\*/);
      await gw.services.keys!.refresh();
      assert.equal((await chat({ authorization: `Bearer ${fresh}` })).status, 403, 'mock/* is no longer allowed');
      assert.equal((await messages({ 'x-api-key': fresh })).status, 200);
      assert.equal((await messages({ 'x-api-key': key })).status, 200, 'the old secret works during the grace period');
      const spend = await runCli(['keys', 'list'], cliEnv);
      assert.match(spend.stdout, new RegExp(`${id}\\s+active\\s+cli-made  spent: \\$[0-9.]+ of \\$5 this month \\([0-9.]+%\\)`));

      const revoked = await runCli(['keys', 'revoke', id], cliEnv);
      assert.equal(revoked.code, 0, revoked.stdout);
      assert.match(revoked.stdout, new RegExp(`revoked key ${id}`));
      const twice = await runCli(['keys', 'revoke', id], cliEnv);
      assert.equal(twice.code, 1);
      assert.match(twice.stderr, /already revoked/);
      const usage = await runCli(['keys', 'create'], cliEnv);
      assert.equal(usage.code, 2);

      await gw.services.keys!.refresh();
      const refused = await chat({ authorization: `Bearer ${key}` });
      assert.equal(refused.status, 401);
      assert.equal((await refused.text()).includes(key), false);
      assert.equal((await messages({ 'x-api-key': fresh })).status, 401, 'revocation ends the rotated secret and its grace');
    });

    test('auth failures: 401 in the endpoint envelope, never echoing the key', async (t) => {
      if (skip) { t.skip(skip); return; }
      const revoked = await createKey({ name: 'to-revoke' });
      assert.equal((await admin('DELETE', `/admin/keys/${revoked.id}`)).status, 200);
      const expiring = await createKey({ name: 'expiring', expires_at: new Date(Date.now() + 1200).toISOString() });
      const good = await createKey({ name: 'good' });
      // Same public id as a real key, wrong secret.
      const forged = `sk-gw-${good.id}-${'A'.repeat(43)}`;
      const unknown = `sk-gw-ZZZZZZZZZZZZ-${'b'.repeat(43)}`;
      // The expiring key works, then stops.
      assert.equal((await chat({ authorization: `Bearer ${expiring.key}` })).status, 200);
      await new Promise((r) => setTimeout(r, 1300));

      const cases: Array<[string, string | null]> = [
        ['missing', null], ['malformed', 'not-a-gateway-key-xyz'], ['unknown', unknown], ['wrong secret', forged],
        ['revoked', revoked.key], ['expired', expiring.key],
      ];
      for (const [label, key] of cases) {
        for (const [route, call] of [['chat', chat], ['feedback', feedback]] as const) {
          const r = await call(key === null ? {} : { authorization: `Bearer ${key}` });
          const text = await r.text();
          assert.equal(r.status, 401, `${label} on ${route}: ${text}`);
          const body = JSON.parse(text) as { error: { type: string; code: string; message: string } };
          assert.equal(body.error.type, 'authentication_error', `${label} on ${route}`);
          assert.ok(['missing_api_key', 'invalid_api_key'].includes(body.error.code));
          if (key) assert.equal(text.includes(key), false, `${label} on ${route} echoes the key`);
          if (key) assert.equal(text.includes(key.slice(-20)), false);
        }
        for (const header of ['authorization', 'x-api-key']) {
          const r = await messages(key === null ? {} : { [header]: header === 'authorization' ? `Bearer ${key}` : key });
          const text = await r.text();
          assert.equal(r.status, 401, `${label} on messages via ${header}: ${text}`);
          const body = JSON.parse(text) as { type: string; error: { type: string; message: string } };
          assert.equal(body.type, 'error');
          assert.equal(body.error.type, 'authentication_error');
          if (key) assert.equal(text.includes(key), false, `${label} on messages echoes the key`);
        }
      }
      // A malformed Authorization header (not Bearer) is missing, not a crash.
      const basic = await chat({ authorization: 'Basic dXNlcjpwYXNz' });
      assert.equal(basic.status, 401);
      // The good key still works after all those failures.
      const statusOk = await chat({ authorization: `Bearer ${good.key}` });
      assert.equal(statusOk.status, 200);
    });

    test('SDKs: openai with Bearer, @anthropic-ai/sdk with x-api-key; wrong keys raise AuthenticationError', async (t) => {
      if (skip) { t.skip(skip); return; }
      const k = await createKey({ name: 'sdk' });
      const openai = new OpenAI({ apiKey: k.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const c = await openai.chat.completions.create({ model: 'mock/test-model', messages: [{ role: 'user', content: 'from the openai sdk' }] });
      assert.match(c.choices[0]!.message.content!, /^Echo: from the openai sdk/);
      const anthropic = new Anthropic({ apiKey: k.key, baseURL: gw.url, maxRetries: 0 });
      const before = an.requests.length;
      const m = await anthropic.messages.create({ model: 'anth/test-model', max_tokens: 64, messages: [{ role: 'user', content: 'from the anthropic sdk' }] });
      assert.equal(m.content[0]!.type, 'text');
      assert.match((m.content[0] as { text: string }).text, /^Echo: from the anthropic sdk/);
      // The gateway's key is never forwarded upstream.
      const upstream = an.requests.slice(before);
      assert.equal(upstream.length, 1);
      assert.equal(JSON.stringify(upstream[0]!.headers).includes(k.key), false);
      // Streaming through the Anthropic SDK, cross-format to the OpenAI upstream.
      const s = anthropic.messages.stream({ model: 'mock/test-model', max_tokens: 64, messages: [{ role: 'user', content: 'streamed via sdk' }] });
      const final = await s.finalMessage();
      assert.match((final.content[0] as { text: string }).text, /^Echo: streamed via sdk/);

      const bad = new Anthropic({ apiKey: `sk-gw-ZZZZZZZZZZZZ-${'c'.repeat(43)}`, baseURL: gw.url, maxRetries: 0 });
      await assert.rejects(bad.messages.create({ model: 'anth/test-model', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
        (e: unknown) => e instanceof Anthropic.AuthenticationError && e.status === 401);
      const badOpenAI = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${gw.url}/v1`, maxRetries: 0 });
      await assert.rejects(badOpenAI.chat.completions.create({ model: 'mock/test-model', messages: [{ role: 'user', content: 'x' }] }),
        (e: unknown) => e instanceof OpenAI.AuthenticationError && e.status === 401);
    });

    test('allowed_models globs: a model outside the set is 403 in the endpoint envelope', async (t) => {
      if (skip) { t.skip(skip); return; }
      const k = await createKey({ name: 'limited-models', allowed_models: ['mock/*'] });
      assert.equal((await chat({ authorization: `Bearer ${k.key}` }, 'mock/test-model')).status, 200);
      const upstreamBefore = an.requests.length;
      const r = await chat({ authorization: `Bearer ${k.key}` }, 'anth/test-model');
      const body = (await r.json()) as { error: { type: string; code: string; message: string; param: string } };
      assert.equal(r.status, 403);
      assert.equal(body.error.type, 'permission_error');
      assert.equal(body.error.code, 'model_not_allowed');
      assert.match(body.error.message, /anth\/test-model/);
      const m = await messages({ 'x-api-key': k.key }, 'anth/test-model');
      assert.equal(m.status, 403);
      const mb = (await m.json()) as { type: string; error: { type: string } };
      assert.equal(mb.type, 'error');
      assert.equal(mb.error.type, 'permission_error');
      assert.equal(an.requests.length, upstreamBefore, 'a refused model is never called upstream');
      assert.equal((await messages({ 'x-api-key': k.key }, 'mock/test-model')).status, 200);
      // An exact pattern admits exactly that model.
      const exact = await createKey({ name: 'exact', allowed_models: ['anth/test-model'] });
      assert.equal((await messages({ 'x-api-key': exact.key }, 'anth/test-model')).status, 200);
      assert.equal((await chat({ authorization: `Bearer ${exact.key}` }, 'mock/test-model')).status, 403);
    });

    test('GET /v1/models is public without a key (models_public: true); a bad key presented is still refused', async (t) => {
      if (skip) { t.skip(skip); return; }
      const r = await fetch(`${gw.url}/v1/models`);
      assert.equal(r.status, 200);
      const body = (await r.json()) as { object: string; data: Array<{ id: string }> };
      assert.equal(body.object, 'list');
      assert.deepEqual(body.data.map((m) => m.id).sort(), ['anth/test-model', 'mock/test-model', 'router']);
      const one = await fetch(`${gw.url}/v1/models/mock/test-model`);
      assert.equal(one.status, 200);
      const bad = await fetch(`${gw.url}/v1/models`, { headers: { authorization: 'Bearer sk-gw-nope' } });
      assert.equal(bad.status, 401);
    });
  });
}

test('GET /v1/models needs a key when auth.models_public is false', async (t) => {
  const gw = await startTestGateway({
    providers: [{ id: 'mock', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: ADMIN, models_public: false } },
  });
  t.after(() => gw.stop());
  const r = await fetch(`${gw.url}/v1/models`);
  assert.equal(r.status, 401);
  const created = (await (await fetch(`${gw.url}/admin/keys`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'lister' }),
  })).json()) as { key: string };
  const ok = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${created.key}` } });
  assert.equal(ok.status, 200);
});

test('admin API is disabled (not 200) when no admin key is configured', async (t) => {
  const gw = await startTestGateway({
    providers: [{ id: 'mock', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: '' } },
  });
  t.after(() => gw.stop());
  for (const auth of [{}, { authorization: 'Bearer ' }, { authorization: 'Bearer anything' }]) {
    const r = await fetch(`${gw.url}/admin/keys`, { headers: auth });
    assert.notEqual(r.status, 200);
    assert.ok(r.status === 401 || r.status === 501, String(r.status));
  }
});

test('a key created by the command line works on a running gateway at once (refresh on an unknown id)', async () => {
  const { startTestGateway } = await import('./helpers/gateway.ts');
  const { runCli } = await import('./helpers/process.ts');
  const { startMockOpenAI } = await import('./mocks/index.ts');
  const mock = await startMockOpenAI();
  const gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: mock.url }], gateway: { auth: { enabled: true } } });
  try {
    const created = await runCli(['keys', 'create', '--name', 'late'], { GATEWAY_CONFIG: gw.configFile });
    const key = /sk-gw-\S+/.exec(created.stdout)![0];
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'x' }] }) });
    assert.equal(r.status, 200);
    const m = await (await fetch(`${gw.url}/metrics`)).text();
    assert.doesNotMatch(m, /route="\/v1\/chat\/completions",model="unknown",provider="none",status="401"/);
    const bad = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-gw-nope-nope', 'content-type': 'application/json' }, body: '{}' });
    assert.equal(bad.status, 401);
    assert.match(await (await fetch(`${gw.url}/metrics`)).text(), /gateway_requests_total\{route="\/v1\/chat\/completions",model="unknown",provider="none",status="401"\} 1/);
  } finally { await gw.stop(); await mock.close(); }
});
