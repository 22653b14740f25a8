// Tool call ids a conversation carries, made by another provider or by the client, reach a provider
// that refuses them: Mistral takes only 9 letters or digits, Anthropic and Bedrock letters, digits,
// '_' and '-', OpenAI at most 40 characters. The gateway replaces such ids on the way up with ones made
// from them (the same id always gives the same replacement, so calls and results still match), says
// so in x-gateway-adjustments, and leaves the client's ids alone. Named models (relayed and converted),
// the official SDKs, and router mode moving a conversation to Mistral by fallback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { fitCanonicalToolIds, fitRelayedToolIds, fitsRule, replacementId, FORMAT_TOOL_IDS } from '../src/formats/tool-ids.ts';
import type { CanonicalRequest } from '../src/formats/canonical.ts';
import { startMockAnthropic, startMockBedrock, startMockMistral, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { upstreamToolIds } from './helpers/wires.ts';

type Rec = Record<string, any>;
const MISTRAL = { alphabet: 'alnum', length: 9 } as const;

test('rules: ids that fit are kept; others get a stable replacement that fits', () => {
  assert.equal(fitsRule('abcDEF123', MISTRAL), true);
  for (const id of ['call_0fypS1hVX', 'toolu_01A09q90qw90lq917835lq9', 'abc', 'functions.bash:0']) {
    assert.equal(fitsRule(id, MISTRAL), false, id);
    const r = replacementId(id, MISTRAL);
    assert.match(r, /^[a-zA-Z0-9]{9}$/);
    assert.equal(replacementId(id, MISTRAL), r, 'the same id, the same replacement');
  }
  assert.notEqual(replacementId('call_1', MISTRAL), replacementId('call_2', MISTRAL));
  const anthropic = FORMAT_TOOL_IDS['anthropic-messages']!;
  assert.equal(fitsRule('toolu_01A09q90qw90lq917835lq9', anthropic), true);
  assert.equal(fitsRule('call_abc-DEF', anthropic), true);
  assert.equal(fitsRule('functions.get_weather:0', anthropic), false);
  assert.match(replacementId('functions.get_weather:0', anthropic), /^[A-Za-z0-9]{24}$/);
  const openai = FORMAT_TOOL_IDS['openai-chat']!;
  assert.equal(fitsRule('x'.repeat(40), openai), true);
  assert.equal(fitsRule('fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f', openai), false);
  assert.equal(fitsRule('functions.get_weather:0', openai), true, 'OpenAI limits the length only');
  assert.equal(FORMAT_TOOL_IDS.gemini, null);
});

test('canonical and relayed requests: replaced consistently, copies only, nothing allocated when all fit', () => {
  const req: CanonicalRequest = {
    model: 'm', messages: [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_A', name: 'f', input: {} }, { type: 'tool_use', id: 'toolu_B', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_A', content: [] }, { type: 'tool_result', tool_use_id: 'toolu_B', content: [] }] },
    ],
  } as CanonicalRequest;
  const { req: out, adjustment } = fitCanonicalToolIds(req, MISTRAL);
  assert.equal(adjustment, 'tool_call_ids=replaced(2)');
  const [a, b] = (out.messages[1]!.content as Rec[]).map((x) => x.id);
  assert.deepEqual((out.messages[2]!.content as Rec[]).map((x) => x.tool_use_id), [a, b]);
  assert.equal((req.messages[1]!.content[0] as Rec).id, 'toolu_A', 'the decoded request (shared by attempts) is untouched');
  assert.equal(out.messages[0], req.messages[0], 'unchanged turns are shared');
  assert.equal(fitCanonicalToolIds(req, FORMAT_TOOL_IDS['anthropic-messages']!).req, req, 'all fit: the same object');
  assert.equal(fitCanonicalToolIds(req, null).req, req);

  const client = { model: 'x', messages: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_0fypS1hVX', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_0fypS1hVX', content: 'ok' },
  ] };
  const relayed: Rec = { ...client };
  assert.equal(fitRelayedToolIds(relayed, 'openai-chat', MISTRAL), 'tool_call_ids=replaced(1)');
  assert.equal(relayed.messages[1].tool_calls[0].id, relayed.messages[2].tool_call_id);
  assert.match(relayed.messages[2].tool_call_id, /^[a-zA-Z0-9]{9}$/);
  assert.equal(client.messages[1]!.tool_calls![0]!.id, 'call_0fypS1hVX', "the client's body is untouched");
  const fits: Rec = { ...client };
  assert.equal(fitRelayedToolIds(fits, 'openai-chat', FORMAT_TOOL_IDS['openai-chat']), null);
  assert.equal(fits.messages, client.messages, 'all fit: the same array');
});

let mistral: MockUpstream; let anthropic: MockUpstream; let openai: MockUpstream; let bedrock: MockUpstream; let gw: TestGateway;
const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };

before(async () => {
  [mistral, anthropic, openai, bedrock] = await Promise.all([startMockMistral(), startMockAnthropic(), startMockOpenAI(), startMockBedrock()]);
  gw = await startTestGateway({
    providers: [
      { id: 'mistral', format: 'openai-chat', base_url: mistral.url, tool_call_ids: { alphabet: 'alnum', length: 9 },
        models: [{ name: 'devstral-test', pricing: TEST_PRICING, capabilities: caps, context_window: 32000, max_completion_tokens: 4000 }] },
      { id: 'anthropic', format: 'anthropic-messages', base_url: anthropic.url,
        models: [{ name: 'claude-test', pricing: { prompt: '0.000003', completion: '0.000015' }, capabilities: caps, context_window: 32000, max_completion_tokens: 4000 }] },
      { id: 'openai', format: 'openai-chat', base_url: openai.url, models: [{ name: 'gpt-4o-mini', pricing: TEST_PRICING, capabilities: caps, context_window: 32000, max_completion_tokens: 4000 }] },
      { id: 'bedrock', format: 'bedrock-converse', base_url: bedrock.url,
        models: [{ name: 'anthropic.claude-test-v1:0', pricing: TEST_PRICING, capabilities: caps, context_window: 32000, max_completion_tokens: 4000 }] },
    ],
    gateway: { router: { exploration: { share: 0 } } },
  });
});
after(async () => { await gw?.stop(); await Promise.all([mistral, anthropic, openai, bedrock].map((m) => m?.close())); });

const weather = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

/** A Chat Completions history whose one call carries `id` (made by whoever answered the first turn). */
const chatHistory = (id: string): OpenAI.ChatCompletionMessageParam[] => [
  { role: 'user', content: 'What is the weather in Paris?' },
  { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
  { role: 'tool', tool_call_id: id, content: '18 C and sunny' },
];

/** The ids of calls and results in the last body an upstream received, read in its wire format (helpers/wires.ts). */
function upstreamIds(up: MockUpstream): { calls: string[]; results: string[] } {
  const format = up === anthropic ? 'anthropic-messages' : up === bedrock ? 'bedrock-converse' : 'openai-chat';
  const { callIds, resultIds } = upstreamToolIds({ id: '', format, mock: up });
  return { calls: callIds, results: resultIds };
}

test('openai SDK -> Mistral (relayed): an OpenAI-made call id is replaced, streamed and not', async () => {
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  for (const stream of [false, true]) {
    const { data, response } = await client.chat.completions.create({ model: 'mistral/devstral-test', messages: chatHistory('call_0fypS1hVXa1b2c3d4e5f6g7h'), tools: [weather], stream } as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    if (stream) { let text = ''; for await (const c of data as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) text += c.choices[0]?.delta.content ?? ''; assert.ok(text.length > 0); }
    else assert.ok((data as OpenAI.ChatCompletion).choices[0]!.message.content);
    const ids = upstreamIds(mistral);
    assert.match(ids.calls[0]!, /^[a-zA-Z0-9]{9}$/);
    assert.deepEqual(ids.results, ids.calls, 'the result answers the replaced call');
    assert.match(response.headers.get('x-gateway-adjustments') ?? '', /tool_call_ids=replaced\(1\)/);
  }
  // Mistral's own ids come back as they are, and go up again untouched on the next turn.
  const first = await client.chat.completions.create({ model: 'mistral/devstral-test', messages: [{ role: 'user', content: 'What is the weather in Paris? Use the tool.' }], tools: [weather], tool_choice: 'required' });
  const own = first.choices[0]!.message.tool_calls![0]!.id;
  assert.match(own, /^[a-zA-Z0-9]{9}$/);
  const { response } = await client.chat.completions.create({ model: 'mistral/devstral-test', messages: chatHistory(own), tools: [weather] }).withResponse();
  assert.deepEqual(upstreamIds(mistral).calls, [own]);
  assert.doesNotMatch(response.headers.get('x-gateway-adjustments') ?? '', /tool_call_ids/);
});

test('anthropic SDK (Claude Code-style toolu_ ids) -> Mistral (converted): replaced, the answer parses', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const msg = await client.messages.create({
    model: 'mistral/devstral-test', max_tokens: 200,
    tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
    messages: [
      { role: 'user', content: 'What is the weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: '18 C' }] },
    ],
  });
  assert.equal(msg.type, 'message');
  const ids = upstreamIds(mistral);
  assert.match(ids.calls[0]!, /^[a-zA-Z0-9]{9}$/);
  assert.deepEqual(ids.results, ids.calls);
});

test('Kimi-style ids ("functions.get_weather:0") -> Anthropic (converted) and Bedrock; over-long ids -> OpenAI', async () => {
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  for (const [model, up, re] of [['anthropic/claude-test', anthropic, /^[a-zA-Z0-9_-]+$/], ['bedrock/anthropic.claude-test-v1:0', bedrock, /^[a-zA-Z0-9_-]+$/]] as const) {
    const r = await client.chat.completions.create({ model, messages: chatHistory('functions.get_weather:0'), tools: [weather] });
    assert.ok(r.choices[0]!.message.content, model);
    const ids = upstreamIds(up);
    assert.match(ids.calls[0]!, re, model);
    assert.deepEqual(ids.results, ids.calls, model);
  }
  const long = 'fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f';
  const r = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: chatHistory(long), tools: [weather] });
  assert.ok(r.choices[0]!.message.content);
  const ids = upstreamIds(openai);
  assert.ok(ids.calls[0]!.length <= 40);
  assert.deepEqual(ids.results, ids.calls);
});

test('anthropic SDK -> Anthropic (relayed as is): an id Anthropic refuses is replaced; ids that fit are relayed untouched', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const body = (id: string): Anthropic.MessageCreateParamsNonStreaming => ({
    model: 'anthropic/claude-test', max_tokens: 200,
    tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id, name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: '18 C' }] },
    ],
  });
  const { response } = await client.messages.create(body('functions.get_weather:0')).withResponse();
  assert.match(upstreamIds(anthropic).calls[0]!, /^[a-zA-Z0-9_-]+$/);
  assert.match(response.headers.get('x-gateway-adjustments') ?? '', /tool_call_ids=replaced\(1\)/);
  await client.messages.create(body('toolu_01A09q90qw90lq917835lq9'));
  assert.deepEqual(upstreamIds(anthropic), { calls: ['toolu_01A09q90qw90lq917835lq9'], results: ['toolu_01A09q90qw90lq917835lq9'] });
});

test('router mode: Anthropic down, the conversation falls back to Mistral with its toolu_ ids replaced', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  anthropic.fault({ status: 503 });
  const { data: msg, response } = await client.messages.create({
    model: 'router', models: ['anthropic/claude-test', 'mistral/devstral-test'], willingness_to_pay: 1000, max_tokens: 200,
    tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: '18 C' }] },
    ],
  } as Anthropic.MessageCreateParamsNonStreaming).withResponse();
  assert.equal(msg.type, 'message');
  assert.equal(msg.model, 'mistral/devstral-test', 'served by the fallback');
  assert.equal(response.headers.get('x-router-model'), 'anthropic/claude-test', 'the router chose Anthropic first');
  assert.match(upstreamIds(mistral).calls[0]!, /^[a-zA-Z0-9]{9}$/);
});

test('a body above the pool threshold: the worker that converts it fits the ids the same way', async () => {
  const pooled = await startTestGateway({
    providers: [{ id: 'mistral', format: 'openai-chat', base_url: mistral.url, tool_call_ids: { alphabet: 'alnum', length: 9 },
      models: [{ name: 'devstral-test', pricing: TEST_PRICING, capabilities: caps, context_window: 200000, max_completion_tokens: 4000 }] }],
    gateway: { workers: { threads: 1, convert_threshold_bytes: 1024 } },
  });
  try {
    const client = new Anthropic({ baseURL: pooled.url, apiKey: 'unused', maxRetries: 0 });
    const id = 'toolu_01A09q90qw90lq917835lq9';
    const { data: msg, response } = await client.messages.create({
      model: 'mistral/devstral-test', max_tokens: 200,
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: `Weather in Paris? ${'Some context about the trip. '.repeat(200)}` },
        { role: 'assistant', content: [{ type: 'tool_use', id, name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: '18 C' }] },
      ],
    }).withResponse();
    assert.equal(msg.type, 'message');
    assert.match(response.headers.get('x-gateway-adjustments') ?? '', /tool_call_ids=replaced\(1\)/);
    const ids = upstreamIds(mistral);
    assert.equal(ids.calls[0], replacementId(id, MISTRAL), 'the same replacement as inline');
    assert.deepEqual(ids.results, ids.calls);
  } finally { await pooled.stop(); }
});
