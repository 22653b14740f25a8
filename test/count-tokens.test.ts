// POST /v1/messages/count_tokens through the official Anthropic SDK (messages.countTokens) for every
// kind of target: relayed to an Anthropic provider's own count_tokens (model rewritten, the count equal
// to the input the same prompt is billed), counted exactly for OpenAI families, estimated for Gemini,
// estimated when the Anthropic upstream cannot answer; errors in the Anthropic envelope.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic, startMockGemini, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { countPromptTokens, warmTokenizers } from '../src/tokens/index.ts';
import { clientCodecFor } from '../src/formats/registry.ts';

type Rec = Record<string, any>;

let ant: MockUpstream; let oai: MockUpstream; let gem: MockUpstream; let gw: TestGateway; let client: Anthropic;

before(async () => {
  await warmTokenizers();
  [ant, oai, gem] = await Promise.all([startMockAnthropic(), startMockOpenAI(), startMockGemini()]);
  const models = (name: string) => [{ name, pricing: TEST_PRICING, capabilities: { tools: true } }];
  gw = await startTestGateway({ providers: [
    { id: 'ant', format: 'anthropic-messages', base_url: ant.url, forward_headers: ['anthropic-beta'] },
    { id: 'oai', format: 'openai-chat', base_url: oai.url, models: models('gpt-4o') },
    { id: 'gem', format: 'gemini', base_url: gem.url, models: models('gemini-2.5-flash') },
  ] });
  client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); await ant.close(); await oai.close(); await gem.close(); });

const weather = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const prompt = { system: 'You are a scientist', messages: [{ role: 'user' as const, content: 'Hello, Claude' }], tools: [weather] };

test('Anthropic target: the provider counts; the count is what the same prompt is billed as input', async () => {
  ant.reset();
  const { data, response } = await client.messages.countTokens({ model: 'ant/test-model', ...prompt }, { headers: { 'anthropic-beta': 'token-counting-2024-11-01' } }).withResponse();
  assert.equal(response.headers.get('x-gateway-token-count'), 'provider');
  const sent = ant.requests.at(-1)!;
  assert.equal(sent.path, '/v1/messages/count_tokens');
  assert.equal((sent.body as Rec).model, 'test-model');
  assert.equal((sent.body as Rec).max_tokens, undefined);
  assert.equal(sent.headers['anthropic-beta'], 'token-counting-2024-11-01');
  const billed = await client.messages.create({ model: 'ant/test-model', max_tokens: 100, ...prompt });
  assert.equal(data.input_tokens, billed.usage.input_tokens);
});

test('OpenAI target: counted exactly with the model family encoding', async () => {
  const { data, response } = await client.messages.countTokens({ model: 'oai/gpt-4o', ...prompt }).withResponse();
  const canonical = clientCodecFor('anthropic-messages').decodeRequest({ model: 'oai/gpt-4o', max_tokens: 1, ...prompt });
  const want = countPromptTokens(canonical, 'oai/gpt-4o');
  assert.equal(data.input_tokens, want.tokens);
  assert.match(response.headers.get('x-gateway-token-count')!, /o200k_base/);
  assert.equal(oai.requests.length, 0, 'no upstream call');
});

test('Gemini target: a documented estimate, marked as such', async () => {
  const { data, response } = await client.messages.countTokens({ model: 'gem/gemini-2.5-flash', ...prompt }).withResponse();
  assert.ok(data.input_tokens > 10 && data.input_tokens < 200, String(data.input_tokens));
  assert.equal(response.headers.get('x-gateway-token-count'), 'estimate:gemini');
  assert.equal(gem.requests.length, 0);
});

test('an Anthropic upstream that fails (5xx, unreachable) is replaced by the estimate; a 4xx is relayed', async () => {
  ant.reset();
  ant.fault({ status: 529 });
  const { data, response } = await client.messages.countTokens({ model: 'ant/test-model', ...prompt }).withResponse();
  assert.ok(data.input_tokens > 0);
  assert.match(response.headers.get('x-gateway-token-count')!, /^estimate:/);
  ant.fault({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0: bad' } } });
  await assert.rejects(client.messages.countTokens({ model: 'ant/test-model', ...prompt }), (e: unknown) => {
    assert.ok(e instanceof Anthropic.BadRequestError);
    assert.match(e.message, /messages\.0: bad/);
    return true;
  });
});

test('bad input answers in the Anthropic envelope', async () => {
  const post = async (body: Rec): Promise<{ status: number; json: Rec }> => {
    const r = await fetch(`${gw.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: r.status, json: await r.json() as Rec };
  };
  let r = await post({ messages: [{ role: 'user', content: 'x' }] });
  assert.equal(r.status, 400); assert.equal(r.json.type, 'error'); assert.equal(r.json.error.type, 'invalid_request_error');
  r = await post({ model: 'ant/test-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
  assert.equal(r.status, 400); assert.match(r.json.error.message, /max_tokens/);
  r = await post({ model: 'ant/test-model', messages: [] });
  assert.equal(r.status, 400);
  r = await post({ model: 'nope/x', messages: [{ role: 'user', content: 'x' }] });
  assert.equal(r.status, 404); assert.equal(r.json.error.type, 'not_found_error');
  const get = await fetch(`${gw.url}/v1/messages/count_tokens`);
  assert.equal(get.status, 405);
});

test('an Anthropic upstream whose count answer is past the JSON bound is not held whole: the gateway estimates instead', async (t) => {
  const { startRawUpstream } = await import('./helpers/raw-upstream.ts');
  const raw = await startRawUpstream();
  const g = await startTestGateway({ providers: [{ id: 'big', format: 'anthropic-messages', base_url: raw.url }] });
  t.after(async () => { await g.stop(); await raw.close(); });
  // 65 MiB of a JSON string, in 1 MiB writes: more than UPSTREAM_LIMITS.jsonBodyBytes (64 MiB).
  const mib = Buffer.alloc(1024 * 1024, 'a');
  raw.push({ status: 200, headers: { 'content-type': 'application/json' }, chunks: ['{"input_tokens":1,"pad":"', ...Array.from({ length: 65 }, () => mib), '"}'] });
  const heapBefore = process.memoryUsage().arrayBuffers;
  const r = await fetch(`${g.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'big/test-model', messages: [{ role: 'user', content: 'Hello' }] }) });
  assert.equal(r.status, 200);
  assert.notEqual(r.headers.get('x-gateway-token-count'), 'provider', 'the oversized answer was not taken');
  assert.ok(((await r.json()) as Rec).input_tokens > 0);
  assert.match(raw.requests.at(-1)!.path, /\/messages\/count_tokens$/);
  assert.ok(process.memoryUsage().arrayBuffers - heapBefore < 200 * 1024 * 1024);
});
