// Tool call arguments a model wrote that are no object's JSON (an unfinished string, an array, a
// number): OpenAI's formats carry them as text and accept them back in history, Anthropic's, Bedrock's
// and Gemini's need an object. The gateway keeps the text (given back as written to OpenAI formats) and
// an empty input elsewhere (src/formats/tool-arguments.ts). Before, router mode refused such a chat
// history with a 400 ("tool call arguments are not valid JSON") that OpenAI itself does not give, and a
// Messages client given such a call (from an OpenAI-format upstream) got `input` as a string, which the
// gateway then refused when the client sent its history back.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { argumentsText, toolInput } from '../src/formats/tool-arguments.ts';

type Rec = Record<string, any>;
let up: RawUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  const models = [{ name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 4096, capabilities: { tools: true } }];
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1`, models },
    ],
    gateway: { router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } } },
  });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

const BROKEN = '{"city": "Par';
const JSON_CT = { 'content-type': 'application/json' };
const chatAnswer = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } });
const messageAnswer = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } });
const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const chatHistory = (args: string) => [
  { role: 'user', content: 'weather in Paris?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: args } }] },
  { role: 'tool', tool_call_id: 'call_1', content: 'error: the arguments were not valid JSON' },
  { role: 'user', content: 'try again' },
];

async function post(path: string, body: unknown): Promise<{ status: number; json: Rec }> {
  const r = await fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(8000) });
  return { status: r.status, json: await r.json() as Rec };
}

test('toolInput / argumentsText: an object\'s JSON is the input; anything else is kept as written beside an empty input', () => {
  assert.deepEqual(toolInput(''), { input: {} });
  assert.deepEqual(toolInput('{"a":1}'), { input: { a: 1 } });
  for (const text of [BROKEN, '[1,2]', '5', 'null', '"s"']) {
    const b = { type: 'tool_use' as const, id: 'c', name: 'f', ...toolInput(text) };
    assert.deepEqual(b.input, {}, text);
    assert.equal(argumentsText(b), text, 'given back as written');
  }
  assert.equal(argumentsText({ type: 'tool_use', id: 'c', name: 'f', input: { a: 1 } }), '{"a":1}');
});

test('router mode takes a chat history holding arguments that are not JSON (OpenAI accepts it): an OpenAI-format target gets them as written', async () => {
  up.push({ headers: JSON_CT, chunks: [chatAnswer] });
  const r = await post('/v1/chat/completions', { model: 'router', models: ['oa/test-model'], messages: chatHistory(BROKEN), tools: [weather] });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const sent = JSON.parse(up.requests[0]!.body) as Rec;
  assert.equal(sent.messages[1].tool_calls[0].function.arguments, BROKEN);
});

test('the same history routed to an Anthropic target: the call goes with an empty input and nothing of the gateway\'s own', async () => {
  up.push({ headers: JSON_CT, chunks: [messageAnswer] });
  const r = await post('/v1/chat/completions', { model: 'router', models: ['an/test-model'], messages: chatHistory('[1, 2]'), tools: [weather] });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const sent = JSON.parse(up.requests[0]!.body) as Rec;
  const call = sent.messages[1].content.find((b: Rec) => b.type === 'tool_use');
  assert.deepEqual(call, { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} });
});

test('a Messages client given a call whose arguments are not JSON (an OpenAI-format upstream) gets an object input, and its history is taken back', async () => {
  const toolAnswer = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: BROKEN } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } });
  up.push({ headers: JSON_CT, chunks: [toolAnswer] }, { headers: JSON_CT, chunks: [chatAnswer] });
  const tools = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
  const first = await post('/v1/messages', { model: 'router', models: ['oa/test-model'], max_tokens: 100, tools, messages: [{ role: 'user', content: 'weather in Paris?' }] });
  assert.equal(first.status, 200, JSON.stringify(first.json));
  const call = first.json.content.find((b: Rec) => b.type === 'tool_use');
  assert.deepEqual(call.input, {}, 'an object, as Anthropic\'s format has it');
  assert.equal(call.raw_arguments, undefined, 'nothing of the gateway\'s own in the answer');
  const second = await post('/v1/messages', {
    model: 'router', models: ['oa/test-model'], max_tokens: 100, tools,
    messages: [{ role: 'user', content: 'weather in Paris?' }, { role: 'assistant', content: first.json.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'missing city', is_error: true }] }],
  });
  assert.equal(second.status, 200, JSON.stringify(second.json));
});
