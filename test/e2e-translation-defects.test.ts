// Translation defects of issue 16, each reproduced end to end with the official SDKs against the
// strict mocks (which refuse what the real APIs refuse): every test here failed on the code before
// the fix, with the upstream's own 400 or a wrong answer, and now checks the answer and the
// x-gateway-adjustments report.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING } from './helpers/gateway.ts';

type Json = Record<string, unknown>;
const caps = (reasoning: boolean, structured = true) => ({ tools: true, vision: true, reasoning, structured_output: structured, prompt_caching: true });
const model = (name: string, reasoning: boolean, max: number, structured = true) => ({ name, pricing: TEST_PRICING, capabilities: caps(reasoning, structured), max_completion_tokens: max, context_window: 200000 });

const openaiMock = await startMockOpenAI();
const anthropicMock = await startMockAnthropic();
const geminiMock = await startMockGemini();
const bedrockMock = await startMockBedrock();
const gw = await startTestGateway({
  providers: [
    { id: 'anthropic', format: 'anthropic-messages', base_url: anthropicMock.url, models: [
      model('claude-sonnet-4-5', true, 64000), model('claude-3-5-haiku-20241022', false, 8192, false),
    ] },
    { id: 'openai', format: 'openai-chat', base_url: openaiMock.url, models: [model('gpt-4o', false, 16384), model('gpt-5.1', true, 128000)] },
    { id: 'google', format: 'gemini', base_url: geminiMock.url, models: [model('gemini-2.5-pro', true, 65536), model('gemini-2.0-flash', false, 8192)] },
    { id: 'bedrock', format: 'bedrock-converse', base_url: bedrockMock.url, models: [model('amazon.nova-pro-v1:0', false, 8192)] },
  ],
});
after(async () => {
  await gw.stop();
  await Promise.all([openaiMock.close(), anthropicMock.close(), geminiMock.close(), bedrockMock.close()]);
});

const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0 });
const weather = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const time = { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } } };
const lastBody = (m: MockUpstream): Json => m.requests.at(-1)!.body as Json;

/** An OpenAI chat call that must succeed; returns the answer and the adjustments header. */
async function chat(params: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming): Promise<{ res: OpenAI.Chat.ChatCompletion; adjustments: string }> {
  const { data, response } = await openai.chat.completions.create(params).withResponse();
  return { res: data, adjustments: response.headers.get('x-gateway-adjustments') ?? '' };
}

test('reasoning_effort with tools to Claude: the second turn (a tool loop with no signed thinking) drops the derived thinking', async () => {
  const first = await chat({ model: 'anthropic/claude-sonnet-4-5', reasoning_effort: 'high', tools: [weather], messages: [{ role: 'user', content: 'What is the weather in Paris?' }] });
  assert.equal(first.res.choices[0]!.finish_reason, 'tool_calls');
  assert.equal((lastBody(anthropicMock).thinking as Json).type, 'enabled');
  const call = first.res.choices[0]!.message.tool_calls![0]!;
  const second = await chat({
    model: 'anthropic/claude-sonnet-4-5', reasoning_effort: 'high', tools: [weather],
    messages: [{ role: 'user', content: 'What is the weather in Paris?' }, first.res.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18C, sunny' }],
  });
  assert.match(second.res.choices[0]!.message.content!, /^The tool returned: 18C/);
  assert.equal(lastBody(anthropicMock).thinking, undefined);
  assert.match(second.adjustments, /reasoning_effort=dropped\(history has tool calls without signed thinking\)/);
});

test('tool_choice "required" with reasoning_effort to Claude: thinking dropped, the forced choice kept', async () => {
  const { res, adjustments } = await chat({ model: 'anthropic/claude-sonnet-4-5', reasoning_effort: 'medium', tools: [weather], tool_choice: 'required', messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(res.choices[0]!.finish_reason, 'tool_calls');
  assert.deepEqual(lastBody(anthropicMock).tool_choice, { type: 'any' });
  assert.match(adjustments, /reasoning_effort=dropped\(tool_choice forces tool use\)/);
});

test('effort becomes thinking only on models that reason and where max_tokens leaves room', async () => {
  const gem = await chat({ model: 'google/gemini-2.0-flash', reasoning_effort: 'high', messages: [{ role: 'user', content: 'Hi' }] });
  assert.match(gem.res.choices[0]!.message.content!, /^Echo: Hi/);
  assert.equal((lastBody(geminiMock).generationConfig as Json | undefined)?.thinkingConfig, undefined);
  assert.match(gem.adjustments, /reasoning_effort=dropped\(model does not reason\)/);

  const nova = await chat({ model: 'bedrock/amazon.nova-pro-v1:0', reasoning_effort: 'high', messages: [{ role: 'user', content: 'Hi' }] });
  assert.match(nova.res.choices[0]!.message.content!, /^Echo: Hi/);
  assert.equal(lastBody(bedrockMock).additionalModelRequestFields, undefined);
  assert.match(nova.adjustments, /reasoning_effort=dropped\(model does not reason\)/);

  const tight = await chat({ model: 'anthropic/claude-sonnet-4-5', reasoning_effort: 'high', max_completion_tokens: 1000, messages: [{ role: 'user', content: 'Hi' }] });
  assert.match(tight.res.choices[0]!.message.content!, /^Echo: Hi/);
  assert.equal(lastBody(anthropicMock).thinking, undefined);
  assert.match(tight.adjustments, /reasoning_effort=dropped\(max_tokens 1000 leaves no room for thinking\)/);
});

test('thinking disabled for Gemini 2.5 Pro (which cannot turn thinking off) is dropped, not sent as budget 0', async () => {
  const { data, response } = await anthropic.messages.create({ model: 'google/gemini-2.5-pro', max_tokens: 500, thinking: { type: 'disabled' }, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
  assert.equal(data.stop_reason, 'end_turn');
  assert.equal((lastBody(geminiMock).generationConfig as Json).thinkingConfig, undefined);
  assert.match(response.headers.get('x-gateway-adjustments') ?? '', /thinking=dropped\(model cannot turn thinking off\)/);
});

test('json_schema to Anthropic: output_config.format only when strict and the model has structured output', async () => {
  const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  const loose = await chat({ model: 'anthropic/claude-sonnet-4-5', response_format: { type: 'json_schema', json_schema: { name: 'out', schema } }, messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(lastBody(anthropicMock).output_config, undefined);
  assert.match(JSON.stringify(lastBody(anthropicMock).system), /JSON Schema/);
  assert.match(loose.adjustments, /response_format=json_schema\(not strict\)->system instruction/);

  const strictSchema = { ...schema, additionalProperties: false };
  await chat({ model: 'anthropic/claude-sonnet-4-5', response_format: { type: 'json_schema', json_schema: { name: 'out', schema: strictSchema, strict: true } }, messages: [{ role: 'user', content: 'Hi' }] });
  assert.deepEqual((lastBody(anthropicMock).output_config as Json).format, { type: 'json_schema', schema: strictSchema });

  const old = await chat({ model: 'anthropic/claude-3-5-haiku-20241022', response_format: { type: 'json_schema', json_schema: { name: 'out', schema: strictSchema, strict: true } }, messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(lastBody(anthropicMock).output_config, undefined);
  assert.match(old.adjustments, /response_format=json_schema\(model lacks structured output\)->system instruction/);
});

test('a refusal from an OpenAI model ends as refusal for an Anthropic client, streamed and not', async () => {
  const plain = await anthropic.messages.create({ model: 'openai/gpt-4o', max_tokens: 200, messages: [{ role: 'user', content: 'Please refuse me' }] });
  assert.equal(plain.stop_reason, 'refusal');
  const streamed = await anthropic.messages.stream({ model: 'openai/gpt-4o', max_tokens: 200, messages: [{ role: 'user', content: 'Please refuse me' }] }).finalMessage();
  assert.equal(streamed.stop_reason, 'refusal');
  assert.match((streamed.content[0] as Anthropic.TextBlock).text, /can't help/);
});

test('tool_result.is_error reaches an OpenAI model as an error in the tool message', async () => {
  const { data, response } = await anthropic.messages.create({
    model: 'openai/gpt-4o', max_tokens: 200, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
    messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', is_error: true, content: 'service down' }] },
    ],
  }).withResponse();
  assert.match((data.content[0] as Anthropic.TextBlock).text, /^The tool returned: Error: service down/);
  const tool = (lastBody(openaiMock).messages as Json[]).find((m) => m.role === 'tool')!;
  assert.equal(tool.content, 'Error: service down');
  assert.match(response.headers.get('x-gateway-adjustments') ?? '', /is_error->content/);
});

test('parallel tool calls from an OpenAI model stream as one block after another (the SDK reports each block right)', async () => {
  const tools: Anthropic.Tool[] = [
    { name: 'get_weather', input_schema: weather.function.parameters as Anthropic.Tool.InputSchema },
    { name: 'get_time', input_schema: time.function.parameters as Anthropic.Tool.InputSchema },
  ];
  const stream = anthropic.messages.stream({ model: 'openai/gpt-4o', max_tokens: 300, tools, messages: [{ role: 'user', content: 'weather and time, both please' }] });
  const completed: Anthropic.ContentBlock[] = [];
  stream.on('contentBlock', (b) => completed.push(b));
  const open: number[] = [];
  let overlap = false;
  stream.on('streamEvent', (e) => {
    if (e.type === 'content_block_start') { if (open.length > 0) overlap = true; open.push(e.index); }
    if (e.type === 'content_block_stop') open.splice(open.indexOf(e.index), 1);
  });
  const msg = await stream.finalMessage();
  assert.equal(overlap, false, 'a block started while another was open');
  assert.equal(msg.stop_reason, 'tool_use');
  assert.deepEqual(completed.map((b) => (b as Anthropic.ToolUseBlock).name), ['get_weather', 'get_time']);
  assert.deepEqual(completed.map((b) => (b as Anthropic.ToolUseBlock).input), [{ city: 'Paris' }, { tz: 'other tz' }]);
  assert.deepEqual(completed, msg.content);
});

test('adjustments the gateway made are reported: default output limit from the catalog, sampling removed under derived thinking', async () => {
  const { adjustments } = await chat({ model: 'anthropic/claude-sonnet-4-5', reasoning_effort: 'low', temperature: 0.5, messages: [{ role: 'user', content: 'Hi' }] });
  const body = lastBody(anthropicMock);
  assert.equal(body.max_tokens, 64000);
  assert.equal(body.temperature, undefined);
  assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 2048 });
  for (const a of ['max_tokens=default(64000)', 'reasoning_effort=low->thinking.budget_tokens(2048)', 'temperature=dropped(thinking)']) {
    assert.ok(adjustments.includes(a), `${a} in ${adjustments}`);
  }
});
