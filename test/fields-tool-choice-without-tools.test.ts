// A tool choice with no tools to choose from, translated for Anthropic, which refuses `tool_choice`
// without `tools` ("tool_choice may only be specified while providing tools."). Before, a chat request
// with tool_choice "required" or parallel_tool_calls false and no tools, or a Responses request whose
// only tools are hosted by OpenAI (left out), went to Anthropic with a tool_choice and was refused
// upstream. Now tool_choice goes only with tools (as the chat, Gemini and Bedrock encoders already
// do), and a choice that forced a tool is reported as dropped.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let ant: MockUpstream; let gw: TestGateway; let openai: OpenAI;

before(async () => {
  ant = await startMockAnthropic();
  gw = await startTestGateway({
    providers: [{ id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [{ name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true } }] }],
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); await ant.close(); });

const adjustments = (h: Headers): string[] => (h.get('x-gateway-adjustments') ?? '').split(', ');
const lastSent = (): Rec => ant.requests.at(-1)!.body as Rec;

describe('translated for Anthropic with no tools', () => {
  test('chat tool_choice "required": answered, no tool_choice sent, reported', async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'ant/test-model', messages: [{ role: 'user', content: 'Hello' }], tool_choice: 'required' }).withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal('tool_choice' in lastSent(), false);
    assert.ok(adjustments(response.headers).includes('tool_choice=any->dropped(no tools)'), response.headers.get('x-gateway-adjustments') ?? '');
  });

  test('chat parallel_tool_calls false: answered, nothing sent, nothing reported', async () => {
    const { response } = await openai.chat.completions.create({ model: 'ant/test-model', messages: [{ role: 'user', content: 'Hello' }], parallel_tool_calls: false }).withResponse();
    assert.equal('tool_choice' in lastSent(), false);
    assert.equal(adjustments(response.headers).some((a) => a.startsWith('tool_choice')), false);
  });

  test('Responses with only hosted tools and tool_choice "required": answered, reported', async () => {
    const { data, response } = await openai.responses.create({ model: 'ant/test-model', input: 'Hello', tools: [{ type: 'web_search' }], tool_choice: 'required' }).withResponse();
    assert.equal(data.status, 'completed');
    assert.equal('tool_choice' in lastSent(), false);
    const adj = adjustments(response.headers);
    assert.ok(adj.includes('tool_choice=any->dropped(no tools)'), adj.join(', '));
    assert.ok(adj.includes('tools.web_search=dropped (hosted by OpenAI)'), adj.join(', '));
  });
});

describe('with tools', () => {
  test('the choice goes as before', async () => {
    await openai.chat.completions.create({
      model: 'ant/test-model', messages: [{ role: 'user', content: 'Weather in Paris?' }], parallel_tool_calls: false, tool_choice: 'required',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    assert.deepEqual(lastSent().tool_choice, { type: 'any', disable_parallel_tool_use: true });
  });
});

describe('the Anthropic mock', () => {
  test('refuses tool_choice without tools, as the API does', async () => {
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
    const err = await anthropic.messages.create({ model: 'ant/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'Hello' }], tool_choice: { type: 'auto' } }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    assert.match(err.message, /tool_choice may only be specified while providing tools/);
  });
});
