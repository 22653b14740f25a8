// A conversation holding tool calls and tool results that declares no tools: a final "summarise what
// you did" turn sent without them, an agent whose tools were all removed mid-conversation. Bedrock's
// Converse refuses tool blocks without a toolConfig ("The toolConfig field must be defined when using
// toolUse and toolResult content blocks."), so the gateway tells the calls and results as text there
// (src/formats/tool-history-text.ts), reported `tool_history=text(...)`; before, the user got the
// upstream 400. OpenAI Chat Completions, OpenAI Responses, Gemini and Anthropic (since 2025-02-27)
// take such a conversation as it is, and get it unchanged.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { holdsToolBlocks, toolHistoryAsText } from '../src/formats/tool-history-text.ts';
import { encodeBedrockRequest } from '../src/formats/bedrock/encode.ts';
import type { CanonicalRequest, Message } from '../src/formats/canonical.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { startFourFormats, type FourFormats } from './helpers/four-formats.ts';

type Rec = Record<string, any>;
const BEDROCK = 'bedrock/anthropic.claude-test-v1:0';
const ADJUSTMENT = 'tool_history=text(no tools declared: Converse needs toolConfig with tool blocks)';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

test('lowering: calls become assistant text, results user text; an image kept as an image, an error said in words, order and roles kept', () => {
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Look at the chart and the log.' }] },
    { role: 'assistant', content: [
      { type: 'text', text: 'Reading both.' },
      { type: 'tool_use', id: 't1', name: 'screenshot', input: { page: 'chart' } },
      { type: 'tool_use', id: 't2', name: 'read_log', input: { path: '/var/log/app' } },
    ] },
    { role: 'user', content: [
      { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'The chart:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] },
      { type: 'tool_result', tool_use_id: 't2', is_error: true, content: [{ type: 'text', text: 'permission denied' }], cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'What do you see?' },
    ] },
  ];
  const out = toolHistoryAsText(messages);
  assert.deepEqual(out, [
    messages[0],
    { role: 'assistant', content: [
      { type: 'text', text: 'Reading both.' },
      { type: 'text', text: 'Called tool screenshot (call t1) with input {"page":"chart"}.' },
      { type: 'text', text: 'Called tool read_log (call t2) with input {"path":"/var/log/app"}.' },
    ] },
    { role: 'user', content: [
      { type: 'text', text: 'Result of screenshot (call t1):\nThe chart:' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'text', text: 'Error from read_log (call t2):\npermission denied', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'What do you see?' },
    ] },
  ]);
  assert.equal(holdsToolBlocks(out), false);
  assert.equal(messages[1]!.content.length, 3, 'the decoded conversation (shared by attempts) is untouched');
  // A result with only an image, or nothing at all; a result whose call is not in the history.
  const bare = toolHistoryAsText([
    { role: 'user', content: [
      { type: 'tool_result', tool_use_id: 'x1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] },
      { type: 'tool_result', tool_use_id: 'x2', content: [] },
    ] },
  ]);
  assert.deepEqual(bare[0]!.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text), [
    'Result of a tool (call x1): (image below)',
    'Result of a tool (call x2): (no output)',
  ]);
  const plain: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
  assert.equal(toolHistoryAsText(plain), plain, 'no tool blocks: the same array');
});

/** A canonical two-call conversation, then a final user turn; `tools` as given. */
function canonical(extra: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: 'm', system: [], stream: false,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }, { type: 'text', text: 'Summarise.' }] },
    ],
    ...extra,
  } as CanonicalRequest;
}

test('Bedrock encoder: no tools (none sent, none left, or tool_choice none without tools) -> text and images, reported; with tools the blocks stay', () => {
  const target = { upstreamModel: 'anthropic.claude-test-v1:0', provider: 'bedrock' };
  for (const extra of [{}, { tools: [] }, { tool_choice: { type: 'none' as const } }]) {
    const { body, adjustments } = encodeBedrockRequest(canonical(extra), target) as { body: Rec; adjustments: string[] };
    assert.equal(body.toolConfig, undefined, JSON.stringify(extra));
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ text: 'Weather?' }] },
      { role: 'assistant', content: [{ text: 'Called tool get_weather (call c1) with input {"city":"Paris"}.' }] },
      { role: 'user', content: [{ text: 'Result of get_weather (call c1): (image below)' }, { image: { format: 'png', source: { bytes: PNG } } }, { text: 'Summarise.' }] },
    ], JSON.stringify(extra));
    assert.ok(adjustments.includes(ADJUSTMENT), JSON.stringify(adjustments));
  }
  const tools = [{ name: 'get_weather', input_schema: { type: 'object' } }];
  const { body, adjustments } = encodeBedrockRequest(canonical({ tools }), target) as { body: Rec; adjustments: string[] };
  assert.equal(body.messages[1].content[0].toolUse.name, 'get_weather');
  assert.equal(body.toolConfig.tools[0].toolSpec.name, 'get_weather');
  assert.ok(!adjustments.some((a) => a.startsWith('tool_history')));
});

let fx: FourFormats | undefined;
let gw: TestGateway; let bedrock: MockUpstream; let openai: MockUpstream; let anthropic: MockUpstream; let gemini: MockUpstream;
before(async () => { fx = await startFourFormats(); ({ gw, bedrock, openai, anthropic, gemini } = fx); });
after(async () => { await fx?.close(); });

const post = (path: string, body: unknown, headers: Record<string, string> = {}) => fetch(`${gw.url}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers }, body: JSON.stringify(body),
});
const lastBody = (up: MockUpstream): Rec => up.requests.at(-1)!.body as Rec;

/** What Converse must receive for the weather conversation below: every tool block as text, no toolConfig. */
const LOWERED = [
  { role: 'user', content: [{ text: 'What is the weather in Paris and in Rome?' }] },
  { role: 'assistant', content: [{ text: 'Called tool get_weather (call call_1) with input {"city":"Paris"}.' }] },
  { role: 'user', content: [{ text: 'Result of get_weather (call call_1):\n18 degrees, cloudy' }] },
  { role: 'assistant', content: [{ text: 'Called tool get_weather (call call_2) with input {"city":"Rome"}.' }] },
  { role: 'user', content: [{ text: 'Error from get_weather (call call_2):\nweather service unavailable' }] },
  { role: 'assistant', content: [{ text: 'Paris is 18 degrees and cloudy; Rome could not be read.' }] },
  { role: 'user', content: [{ text: 'Summarise what you did.' }] },
];

/** Chat Completions: two tool turns (the second failed), the answer, then a final turn without tools. */
const chatBody = (model: string, stream = false): Rec => ({
  model, max_tokens: 200, stream,
  messages: [
    { role: 'user', content: 'What is the weather in Paris and in Rome?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '18 degrees, cloudy' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] },
    { role: 'tool', tool_call_id: 'call_2', content: 'Error: weather service unavailable' },
    { role: 'assistant', content: 'Paris is 18 degrees and cloudy; Rome could not be read.' },
    { role: 'user', content: 'Summarise what you did.' },
  ],
});

/** The same conversation from a Messages client (the failed call as `is_error`). */
const messagesBody = (model: string, stream = false): Rec => ({
  model, max_tokens: 200, stream,
  messages: [
    { role: 'user', content: 'What is the weather in Paris and in Rome?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '18 degrees, cloudy' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_2', is_error: true, content: 'weather service unavailable' }] },
    { role: 'assistant', content: 'Paris is 18 degrees and cloudy; Rome could not be read.' },
    { role: 'user', content: 'Summarise what you did.' },
  ],
});

/** The same conversation from a Responses client. */
const responsesBody = (model: string, stream = false): Rec => ({
  model, max_output_tokens: 200, stream,
  input: [
    { role: 'user', content: 'What is the weather in Paris and in Rome?' },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call_output', call_id: 'call_1', output: '18 degrees, cloudy' },
    { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
    { type: 'function_call_output', call_id: 'call_2', output: 'Error: weather service unavailable' },
    { role: 'assistant', content: 'Paris is 18 degrees and cloudy; Rome could not be read.' },
    { role: 'user', content: 'Summarise what you did.' },
  ],
});

/** The messages Converse got, the error result of a client without `is_error` read as a success with its words. */
const expected = (errorAsWords: boolean) => (errorAsWords
  ? LOWERED.map((m, i) => (i === 4 ? { role: 'user', content: [{ text: 'Result of get_weather (call call_2):\nError: weather service unavailable' }] } : m))
  : LOWERED);

test('the Bedrock mock refuses the conversation as sent, as Converse does (the case the gateway must not send)', async () => {
  const r = await fetch(`${bedrock.url}/model/anthropic.claude-test-v1%3A0/converse`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/us-east-1/bedrock/aws4_request' },
    body: JSON.stringify({ messages: [
      { role: 'user', content: [{ text: 'Weather?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_1', name: 'get_weather', input: {} } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_1', content: [{ text: '18' }] } }, { text: 'Summarise.' }] },
    ] }),
  });
  const text = await r.text();
  assert.equal(r.status, 400, text);
  assert.match(text, /The toolConfig field must be defined when using toolUse and toolResult content blocks\./);
});

for (const stream of [false, true]) {
  const how = stream ? 'streamed' : 'not streamed';
  const cases: Array<[string, string, Rec, boolean]> = [
    ['Chat Completions', '/v1/chat/completions', chatBody(BEDROCK, stream), true],
    ['Messages', '/v1/messages', messagesBody(BEDROCK, stream), false],
    ['Responses', '/v1/responses', responsesBody(BEDROCK, stream), true],
  ];
  for (const [client, path, body, errorAsWords] of cases) {
    test(`${client} client -> Bedrock, a final turn without tools (${how}): 200, the tool blocks sent as text, reported`, async () => {
      const r = await post(path, body);
      const text = await r.text();
      assert.equal(r.status, 200, text);
      assert.ok(r.headers.get('x-gateway-adjustments')?.includes(ADJUSTMENT), r.headers.get('x-gateway-adjustments') ?? '(no adjustments)');
      const up = bedrock.requests.at(-1)!;
      assert.match(up.path, stream ? /\/converse-stream$/ : /\/converse$/);
      assert.equal((up.body as Rec).toolConfig, undefined);
      assert.deepEqual((up.body as Rec).messages, expected(errorAsWords));
      if (stream) assert.match(text, /data: /);
      else assert.ok(text.length > 0 && !text.includes('toolConfig'), text);
    });
  }
}

test('Chat Completions client -> Bedrock with tools and tool_choice "none": the tools left out, the history as text (the model cannot call one)', async () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const r = await post('/v1/chat/completions', { ...chatBody(BEDROCK), tools, tool_choice: 'none' });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  assert.ok(r.headers.get('x-gateway-adjustments')?.includes('tool_history=text(tool_choice none'), r.headers.get('x-gateway-adjustments') ?? '(no adjustments)');
  const up = bedrock.requests.at(-1)!.body as Rec;
  assert.equal(up.toolConfig, undefined, 'Converse has no "none": declared tools could be called');
  assert.deepEqual(up.messages, expected(true));
  // With "auto" the tools and the blocks stay as they are.
  const auto = await post('/v1/chat/completions', { ...chatBody(BEDROCK), tools, tool_choice: 'auto' });
  assert.equal(auto.status, 200, await auto.text());
  const sent = bedrock.requests.at(-1)!.body as Rec;
  assert.equal(sent.toolConfig.tools[0].toolSpec.name, 'get_weather');
  assert.ok(JSON.stringify(sent.messages).includes('"toolUse"'));
});

test('Messages client -> Bedrock, every tool removed mid-conversation: 200, the earlier calls sent as text, both lowerings reported', async () => {
  const body = {
    model: BEDROCK, max_tokens: 200,
    tools: [{ name: 'Bash', description: 'Runs a command', input_schema: { type: 'object', properties: { cmd: { type: 'string' } } } }],
    messages: [
      { role: 'user', content: 'What is in the folder?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'Bash', input: { cmd: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: 'a.txt' }] },
      { role: 'assistant', content: 'The folder holds a.txt.' },
      { role: 'user', content: 'Now tell me what you did, without running anything.' },
      { role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'Bash' } }] },
    ],
  };
  const r = await post('/v1/messages', body, { 'anthropic-beta': 'mid-conversation-tool-changes-2026-07-01' });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  const adjustments = r.headers.get('x-gateway-adjustments') ?? '';
  assert.match(adjustments, /tool_changes=applied\(added 0, removed 1\)/);
  assert.ok(adjustments.includes(ADJUSTMENT), adjustments);
  const up = lastBody(bedrock);
  assert.equal(up.toolConfig, undefined);
  assert.deepEqual(up.messages.slice(1, 3), [
    { role: 'assistant', content: [{ text: 'Called tool Bash (call toolu_01A09q90qw90lq917835lq9) with input {"cmd":"ls"}.' }] },
    { role: 'user', content: [{ text: 'Result of Bash (call toolu_01A09q90qw90lq917835lq9):\na.txt' }] },
  ]);
});

test('OpenAI Chat Completions, Anthropic and Gemini take tool history without tools: relayed or translated with the tool blocks kept, nothing reported', async () => {
  // Chat Completions client -> OpenAI (relayed): the messages as sent.
  let r = await post('/v1/chat/completions', chatBody('openai/gpt-4o-mini'));
  assert.equal(r.status, 200, await r.clone().text());
  assert.deepEqual(lastBody(openai).messages, chatBody('openai/gpt-4o-mini').messages);
  assert.equal(lastBody(openai).tools, undefined);
  assert.doesNotMatch(r.headers.get('x-gateway-adjustments') ?? '', /tool_history/);
  // Messages client -> Anthropic (relayed): the messages as sent.
  r = await post('/v1/messages', messagesBody('anthropic/claude-test'));
  assert.equal(r.status, 200, await r.clone().text());
  assert.deepEqual(lastBody(anthropic).messages, messagesBody('anthropic/claude-test').messages);
  assert.equal(lastBody(anthropic).tools, undefined);
  assert.doesNotMatch(r.headers.get('x-gateway-adjustments') ?? '', /tool_history/);
  // Messages client -> OpenAI (translated): tool_calls and tool messages, no tools.
  r = await post('/v1/messages', messagesBody('openai/gpt-4o-mini'));
  assert.equal(r.status, 200, await r.clone().text());
  const oa = lastBody(openai);
  assert.equal(oa.tools, undefined);
  assert.deepEqual(oa.messages.filter((m: Rec) => m.role === 'tool').map((m: Rec) => m.tool_call_id), ['call_1', 'call_2']);
  assert.deepEqual(oa.messages.flatMap((m: Rec) => m.tool_calls ?? []).map((c: Rec) => c.function.name), ['get_weather', 'get_weather']);
  assert.doesNotMatch(r.headers.get('x-gateway-adjustments') ?? '', /tool_history/);
  // Messages client -> Gemini (translated): functionCall / functionResponse parts, no tools.
  r = await post('/v1/messages', messagesBody('gemini/gemini-2.5-flash'));
  assert.equal(r.status, 200, await r.clone().text());
  const ge = lastBody(gemini);
  assert.equal(ge.tools, undefined);
  const parts = ge.contents.flatMap((c: Rec) => c.parts);
  assert.deepEqual(parts.filter((p: Rec) => p.functionCall).map((p: Rec) => p.functionCall.args), [{ city: 'Paris' }, { city: 'Rome' }]);
  assert.equal(parts.filter((p: Rec) => p.functionResponse).length, 2);
  assert.doesNotMatch(r.headers.get('x-gateway-adjustments') ?? '', /tool_history/);
});

test('Responses client -> a provider serving Responses natively: the function_call items relayed as sent, without tools', async () => {
  const oai = await startMockOpenAI();
  const native = await startTestGateway({ providers: [
    { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models: [{ name: 'gpt-5', pricing: TEST_PRICING, capabilities: { tools: true } }] },
  ] });
  try {
    const body = responsesBody('oai/gpt-5');
    const r = await fetch(`${native.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 200, await r.clone().text());
    const up = oai.requests.at(-1)!;
    assert.match(up.path, /\/responses$/);
    assert.deepEqual((up.body as Rec).input, body.input);
    assert.equal((up.body as Rec).tools, undefined);
  } finally {
    await native.stop();
    await oai.close();
  }
});
