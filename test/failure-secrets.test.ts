// Secrets never leave through upstream text: the configured provider keys, and anything shaped like a
// key or a bearer token, are redacted from error answers, stream error events and records. An upstream
// 401/403 is the operator's problem (502, fallen back from), and pass-through forwards an allow-list
// of upstream response headers only.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, sse, chatChunk, messageStart, textBlock, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { recordOf } from './helpers/records.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { createRedactor } from '../src/engine/redact.ts';

const PROVIDER_KEY = 'prov-secret-ABCDEFGH12345';
const OTHER_SHAPES = ['sk-proj-Zx9Zx9Zx9Zx9Zx9Zx9Zx9Zx9', 'Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig', 'AKIAIOSFODNN7EXAMPLE', 'AIzaSyA1234567890abcdefghijklmnopqrstuv'];
let up: RawUpstream; let backup: MockUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  backup = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, api_key: PROVIDER_KEY },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1`, api_key: PROVIDER_KEY },
      { id: 'fb', format: 'openai-chat', base_url: `${up.url}/v1`, api_key: PROVIDER_KEY },
      { id: 'backup', format: 'openai-chat', base_url: backup.url },
    ],
    gateway: { fallbacks: { 'fb/test-model': ['backup/test-model'] }, upstream: { max_attempts: 2, retry_budget_floor: 1000, first_byte_timeout_ms: 2000 } },
  });
});
after(async () => { await gw.stop(); await up.close(); await backup.close(); });
beforeEach(() => { up.reset(); backup.reset(); });

const leaks = (text: string): string[] => [PROVIDER_KEY, ...OTHER_SHAPES.map((s) => s.replace(/^Bearer /, ''))].filter((s) => text.includes(s));

const chat = (model: string, stream = false, path = '/v1/chat/completions') => fetch(`${gw.url}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify(path === '/v1/messages' ? { model, stream, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] } : { model, stream, messages: [{ role: 'user', content: 'x' }] }),
});

const tellingError = `Invalid request: your key ${PROVIDER_KEY} lacks access; also saw ${OTHER_SHAPES.join(' and ')}`;

test('an upstream error message carrying keys reaches neither the client nor the record', async () => {
  up.push({ status: 400, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ error: { message: tellingError, type: 'invalid_request_error' } })] });
  const r = await chat('oa/test-model');
  assert.equal(r.status, 400);
  const text = await r.text();
  assert.deepEqual(leaks(text), []);
  assert.match(text, /\[redacted\]/);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.deepEqual(leaks(JSON.stringify(rec)), []);
});

test('a stream error event (Anthropic pass-through) is redacted', async () => {
  up.push({ chunks: [messageStart(), textBlock('some text'), sse({ type: 'error', error: { type: 'api_error', message: tellingError } }, 'error')] });
  const r = await chat('an/test-model', true, '/v1/messages');
  const text = await r.text();
  assert.match(text, /some text/);
  assert.match(text, /event: error/);
  assert.deepEqual(leaks(text), []);
});

test('an error chunk (OpenAI pass-through) is redacted', async () => {
  up.push({ chunks: [chatChunk(null), chatChunk('hello'), sse({ error: { message: tellingError, type: 'server_error', code: 500 } })] });
  const r = await chat('oa/test-model', true);
  const text = await r.text();
  assert.match(text, /hello/);
  assert.deepEqual(leaks(text), []);
});

test('a translated stream error (Anthropic upstream, OpenAI client) is redacted', async () => {
  up.push({ chunks: [messageStart(), textBlock('some text'), sse({ type: 'error', error: { type: 'api_error', message: tellingError } }, 'error')] });
  const r = await chat('an/test-model', true);
  const text = await r.text();
  assert.match(text, /some text/);
  assert.deepEqual(leaks(text), []);
});

test('an upstream 401 is the operator\'s problem: 502 to the client, never its own 401', async () => {
  up.push({ status: 401, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ error: { message: `Incorrect API key provided: ${PROVIDER_KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } })] });
  const r = await chat('oa/test-model');
  assert.equal(r.status, 502);
  const body = await r.json() as { error: { type: string; code: string; message: string } };
  assert.equal(body.error.type, 'api_error');
  assert.equal(body.error.code, 'upstream_error');
  assert.match(body.error.message, /refused the gateway's credentials/);
  assert.deepEqual(leaks(body.error.message), []);
  up.push({ status: 403, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ type: 'error', error: { type: 'permission_error', message: 'no access' } })] });
  const m = await chat('an/test-model', false, '/v1/messages');
  assert.equal(m.status, 502);
  assert.equal(((await m.json()) as { error: { type: string } }).error.type, 'api_error');
});

test('an upstream 401 falls back to the next target', async () => {
  up.push({ status: 401, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ error: { message: 'bad key' } })] });
  const r = await chat('fb/test-model');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  await r.text();
});

test('pass-through forwards only an allow-list of upstream headers, and redacts its errors', async () => {
  up.push({
    headers: {
      'content-type': 'application/json', 'openai-organization': 'org-operator', 'x-ratelimit-limit-requests': '10000',
      'x-ratelimit-remaining-tokens': '29999000', 'openai-project': 'proj_x', 'set-cookie': 'a=b', 'x-request-id': 'req_1', 'cache-control': 'no-store',
    },
    chunks: [JSON.stringify({ object: 'list', data: [], model: 'm', usage: { prompt_tokens: 1, total_tokens: 1 } })],
  });
  const r = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', input: 'x' }) });
  assert.equal(r.status, 200);
  await r.text();
  for (const h of ['openai-organization', 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-tokens', 'openai-project', 'set-cookie', 'x-request-id']) assert.equal(r.headers.get(h), null, h);
  assert.equal(r.headers.get('content-type'), 'application/json');
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.ok(r.headers.get('x-inference-id'));

  up.push({ status: 500, headers: { 'content-type': 'application/json', 'openai-organization': 'org-operator' }, chunks: [JSON.stringify({ error: { message: tellingError } })] });
  const e = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', input: 'x' }) });
  assert.equal(e.status, 502);
  assert.equal(e.headers.get('openai-organization'), null);
  assert.deepEqual(leaks(await e.text()), []);
});

test('the redactor: configured secrets and key shapes, never ordinary words', () => {
  const r = createRedactor(['my-provider-secret-123', 'short']);
  assert.equal(r('key my-provider-secret-123 failed'), 'key [redacted] failed');
  assert.equal(r('short words stay'), 'short words stay', 'secrets under 8 characters are not searched for');
  assert.equal(r('Authorization: Bearer abc.def.ghi-123'), 'Authorization: [redacted]');
  assert.equal(r('https://x/v1?key=AIzaSecretValue&alt=sse'), 'https://x/v1?key=[redacted]&alt=sse');
  assert.equal(r('sk-gw-0123456789abcdef-xyz'), '[redacted]');
  assert.equal(r('The model is overloaded. Please retry in 30 seconds (request req_abc123).'), 'The model is overloaded. Please retry in 30 seconds (request req_abc123).');
});
