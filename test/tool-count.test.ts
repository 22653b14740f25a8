// More tools than a target takes: OpenAI's Chat Completions (and the APIs that copy it) refuse more
// than 128 ("Invalid 'tools': array too long"), which Claude Code with a few MCP servers passes. Router
// mode treats "more than 128 tools in the model's context" as a capability: candidates on such APIs are
// excluded (capability:tools, with the reason), so the request goes where it is taken instead of to a
// 400 no fallback retries. Deferred tools a client-side search has not loaded do not count.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
let openai: MockUpstream; let anthropic: MockUpstream; let gw: TestGateway;
const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const model = (name: string, pricing: Rec) => ({ name, pricing, capabilities: caps, context_window: 400000, max_completion_tokens: 4000 });

before(async () => {
  [openai, anthropic] = await Promise.all([startMockOpenAI(), startMockAnthropic()]);
  gw = await startTestGateway({
    providers: [
      // OpenAI the better pick on every count (a published prior, cheaper): only the tool count moves the choice.
      { id: 'openai', format: 'openai-chat', base_url: openai.url, models: [model('gpt-4o', TEST_PRICING)] },
      { id: 'anthropic', format: 'anthropic-messages', base_url: anthropic.url, models: [model('claude-test', { prompt: '0.00003', completion: '0.00015' })] },
    ],
    gateway: { router: { exploration: { share: 0 } } },
  });
});
after(async () => { await gw?.stop(); await Promise.all([openai, anthropic].map((m) => m?.close())); });

const tools = (n: number, deferred = false): Anthropic.Tool[] => Array.from({ length: n }, (_, i) => ({
  name: `mcp__server__tool_${i}`, description: `Tool ${i}`, input_schema: { type: 'object' as const, properties: {} }, ...(deferred ? { defer_loading: true } : {}),
}) as Anthropic.Tool);
const body = (list: Anthropic.Tool[], extra: Rec = {}): Rec => ({ model: 'router', models: ['openai/gpt-4o', 'anthropic/claude-test'], max_tokens: 200, tools: list, messages: [{ role: 'user', content: 'Hello' }], ...extra });
const rank = async (b: Rec): Promise<{ status: number; json: Rec }> => {
  const r = await fetch(`${gw.url}/v1/router/rank?format=messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
  return { status: r.status, json: await r.json() as Rec };
};
const openaiOf = (j: Rec): Rec => j.candidates.find((c: Rec) => c.id === 'openai/gpt-4o');

test('128 tools: OpenAI stays the choice; 129: it is excluded as capability:tools, with the reason', async () => {
  const at = await rank(body(tools(128)));
  assert.equal(at.json.model, 'openai/gpt-4o');
  const over = await rank(body(tools(129)));
  assert.equal(over.json.model, 'anthropic/claude-test');
  const c = openaiOf(over.json);
  assert.equal(c.excluded.constraint, 'capability:tools');
  assert.match(c.excluded.reason, /more than 128 tools; the model's API takes at most 128/);
});

test('routed with 150 tools: answered by Anthropic, OpenAI never called; only OpenAI named: a 400 naming the constraint', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const calls = openai.requests.length;
  const { data, response } = await client.messages.create(body(tools(150)) as Anthropic.MessageCreateParamsNonStreaming).withResponse();
  assert.equal(data.model, 'anthropic/claude-test');
  assert.match(response.headers.get('x-router-excluded') ?? '', /capability:tools=1/);
  assert.equal(openai.requests.length, calls);
  const r = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body(tools(150), { models: ['openai/gpt-4o'] })) });
  assert.equal(r.status, 400);
  const err = await r.json() as Rec;
  assert.match(err.error.message, /capability:tools excluded 1: openai\/gpt-4o \(the request declares more than 128 tools/);
});

test('deferred tools a search has not loaded do not count: 200 deferred and 10 declared route to OpenAI', async () => {
  const r = await rank(body([...tools(10), ...tools(200, true).map((t) => ({ ...t, name: `${t.name}_d` }))]));
  assert.equal(r.json.model, 'openai/gpt-4o');
  assert.equal(openaiOf(r.json).excluded, undefined);
});

test('a named OpenAI model with 150 tools: the provider refuses, and its 400 reaches the client', async () => {
  const r = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ ...body(tools(150)), model: 'openai/gpt-4o', models: undefined }) });
  assert.equal(r.status, 400);
  assert.match(((await r.json()) as Rec).error.message, /array too long\. Expected an array with maximum length 128, but got an array with length 150/);
});
