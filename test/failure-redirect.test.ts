// An upstream redirect (3xx) is a failed attempt, never followed and never relayed as an answer: the
// provider's key goes to its configured base URL only. A 502 in the route's envelope names where it
// pointed (its origin: a path or query may hold a token) and the next target is tried. Before, a
// pass-through route relayed the 302 to the client as its answer (no location, recorded as served,
// the provider counted healthy), and the other routes answered "sent a malformed response".
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';

let up: RawUpstream; let elsewhere: RawUpstream; let backup: MockUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  elsewhere = await startRawUpstream();
  backup = await startMockOpenAI();
  const emb = { name: 'emb', pricing: { prompt: '0.000001', completion: '0' } };
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: [emb, { name: 'test-model', pricing: { prompt: '0.000001', completion: '0.000002' } }] },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1` },
      { id: 'backup', format: 'openai-chat', base_url: backup.url, models: [{ name: 'text-embedding-3-small', pricing: { prompt: '0.000001', completion: '0' } }] },
    ],
    gateway: {
      fallbacks: { 'oa/emb': ['backup/text-embedding-3-small'] },
      upstream: { max_attempts: 2, retry_budget_floor: 1000, ejection: { consecutive_failures: 1000 } },
    },
  });
});
after(async () => { await gw.stop(); await up.close(); await elsewhere.close(); await backup.close(); });
beforeEach(() => { up.reset(); elsewhere.reset(); backup.reset(); });

const healthy = (provider: string): number => gw.services.health.snapshot()[provider]?.consecutive_failures ?? 0;

test('pass-through: a 302 is a failed attempt, fallen back from, and the Location is not followed', async () => {
  const failures = healthy('oa');
  up.push({ status: 302, headers: { location: `${elsewhere.url}/v1/embeddings?sig=tok-123`, 'content-type': 'text/html' }, chunks: ['<a>moved</a>'] });
  const r = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/emb', input: 'hello' }) });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  assert.ok(Array.isArray(((await r.json()) as { data: unknown[] }).data));
  assert.equal(elsewhere.requests.length, 0, 'nothing went where the redirect pointed');
  assert.equal(healthy('oa'), failures + 1, 'the redirecting provider is counted as failing');
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.deepEqual(rec.attempts.map((a) => [a.provider, a.status]), [['oa', 302], ['backup', 200]]);
  assert.match(rec.attempts[0]!.error!, /redirect to http:\/\/127\.0\.0\.1:\d+ the gateway does not follow/);
  assert.doesNotMatch(rec.attempts[0]!.error!, /tok-123/);
});

test('pass-through with nothing to fall back to: a 502 in the envelope, not the 302', async () => {
  up.push({ status: 307, headers: { location: `${elsewhere.url}/v1/completions` }, chunks: [] });
  const r = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', prompt: 'hi' }) });
  assert.equal(r.status, 502);
  const e = ((await r.json()) as { error: { message: string; code: string } }).error;
  assert.equal(e.code, 'upstream_error');
  assert.match(e.message, /OA answered HTTP 307, a redirect to http:\/\/127\.0\.0\.1:\d+ the gateway does not follow/);
  assert.equal(elsewhere.requests.length, 0);
  assert.equal(up.requests.length, 1, 'not retried in place: the same server would redirect again');
  assert.equal(await settled(gw), 0);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.status, 502);
});

test('messages route, streamed: a 308 is a 502 in the Anthropic envelope naming the redirect', async () => {
  up.push({ status: 308, headers: { location: 'https://api.example.com/v2/messages' }, chunks: [] });
  const r = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'an/test-model', stream: true, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(r.status, 502);
  const e = (await r.json()) as { type: string; error: { type: string; message: string } };
  assert.equal(e.type, 'error');
  assert.equal(e.error.type, 'api_error');
  assert.match(e.error.message, /AN answered HTTP 308, a redirect to https:\/\/api\.example\.com the gateway does not follow/);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.deepEqual([rec.status, rec.attempts[0]!.status], [502, 308]);
});
