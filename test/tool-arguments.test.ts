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

// Streamed and translated: the same calls as the collected answers above, relayed chunk by chunk.
const SSE_CT = { 'content-type': 'text/event-stream' };
const sse = (o: unknown): string => `data: ${JSON.stringify(o)}\n\n`;
const chatChunk = (delta: Rec, finish: string | null = null): string =>
  sse({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
/** An OpenAI chat stream of one call to get_weather whose arguments arrive in the given pieces. */
const chatToolStream = (pieces: string[]): string[] => [
  chatChunk({ role: 'assistant', content: null }),
  chatChunk({ tool_calls: [{ index: 0, id: 'call_7', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  ...pieces.map((arguments_) => chatChunk({ tool_calls: [{ index: 0, function: { arguments: arguments_ } }] })),
  chatChunk({}, 'tool_calls'),
  sse({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } }),
  'data: [DONE]\n\n',
];

test('a streaming Messages client (the Anthropic SDK) given a call whose streamed arguments are not JSON gets an input it can parse: {}', async () => {
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0 });
  const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
  const ask = () => client.messages.stream({ model: 'router', models: ['oa/test-model'], max_tokens: 100, tools, messages: [{ role: 'user', content: 'weather in Paris?' }] } as never);

  // Not JSON (the SDK's parser throws on it), JSON but no object, and unfinished.
  for (const pieces of [['{"city": ', 'Paris}'], ['[1, ', '2]'], ['{"city": ', '"Par']]) {
    up.push({ headers: SSE_CT, chunks: chatToolStream(pieces) });
    const broken = await ask().finalMessage();
    const call = broken.content.find((b) => b.type === 'tool_use');
    assert.ok(call && call.type === 'tool_use', JSON.stringify(broken.content));
    assert.deepEqual(call.input, {}, `${pieces.join('')}: as the collected answer gives it`);
    assert.equal(broken.stop_reason, 'tool_use');
  }

  up.push({ headers: SSE_CT, chunks: chatToolStream(['{"city": ', '"Paris"}']) });
  const good = await ask().finalMessage();
  const ok = good.content.find((b) => b.type === 'tool_use');
  assert.deepEqual(ok && ok.type === 'tool_use' ? ok.input : null, { city: 'Paris' }, 'valid arguments arrive whole');
});

test('a streaming chat client given a call an Anthropic upstream streamed with an empty input gets "{}" as arguments, as the collected answer gives', async () => {
  const ev = (type: string, o: Rec): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
  up.push({ headers: SSE_CT, chunks: [
    ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {} } }),
    ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '' } }),
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 3 } }),
    ev('message_stop', {}),
  ] });
  const r = await fetch(gw.url + '/v1/chat/completions', {
    method: 'POST', headers: JSON_CT, signal: AbortSignal.timeout(8000),
    body: JSON.stringify({ model: 'router', models: ['an/test-model'], stream: true, tools: [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }], messages: [{ role: 'user', content: 'time?' }] }),
  });
  assert.equal(r.status, 200);
  let args = '';
  for (const line of (await r.text()).split('\n')) {
    if (!line.startsWith('data: {')) continue;
    for (const tc of (JSON.parse(line.slice(6)) as Rec).choices?.[0]?.delta?.tool_calls ?? []) args += tc.function?.arguments ?? '';
  }
  assert.equal(args, '{}');
});
