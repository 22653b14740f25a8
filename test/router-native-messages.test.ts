// Router mode with an ask only Anthropic's Messages API acts on (`mcp_servers`, a continued `thread`,
// `compaction`, @anthropic-ai/sdk 1.14's beta fields): the translators refuse it with a 400 naming the
// field (CanonicalRequest.native_only), so the router keeps it to the candidates that speak Messages
// natively (capability:native_messages). Before, a router choosing the cheaper translated candidate
// ended the request in that 400 (the same hole capability:native_chat closed for chat requests).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
let oai: MockUpstream; let ant: MockUpstream; let gw: TestGateway;
const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const model = (name: string, prompt: string, completion: string) => ({ name, pricing: { prompt, completion }, capabilities: caps, context_window: 64000, max_completion_tokens: 4000 });

before(async () => {
  [oai, ant] = await Promise.all([startMockOpenAI(), startMockAnthropic()]);
  gw = await startTestGateway({
    providers: [
      // The cheapest candidate is reached by translation; the Messages one costs 20x more.
      { id: 'oai', format: 'openai-chat', base_url: oai.url, models: [model('cheap-1', '0.0000001', '0.0000002')] },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, forward_headers: ['anthropic-beta'], models: [model('claude-1', '0.000002', '0.000004')] },
    ],
    gateway: { reload: { watch: false }, router: { exploration: { share: 0 }, affinity: { enabled: false } } },
  });
});
after(async () => { await gw?.stop(); await Promise.all([oai?.close(), ant?.close()]); });

const MCP = [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }];
const messages = (extra: Rec, path = '/v1/messages') => fetch(`${gw.url}${path}`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'mcp-client-2025-11-20' },
  body: JSON.stringify({ model: 'router', max_tokens: 50, messages: [{ role: 'user', content: 'Say hi' }], models: ['cheap-1', 'claude-1'], willingness_to_pay: 1e-12, ...extra }),
});

test('mcp_servers: routed to the Messages candidate, the cheaper translated one excluded naming the field', async () => {
  oai.reset(); ant.reset();
  const res = await messages({ mcp_servers: MCP });
  const body = await res.json() as Rec;
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.model, 'ant/claude-1');
  assert.match(res.headers.get('x-router-excluded') ?? '', /capability:native_messages=1/);
  assert.deepEqual((ant.requests.at(-1)!.body as Rec).mcp_servers, MCP, 'the ask reaches Anthropic as sent');
  assert.equal(oai.requests.length, 0);
  // The control: without the ask, cost first picks the translated candidate.
  const plain = await (await messages({})).json() as Rec;
  assert.equal(plain.model, 'oai/cheap-1');
});

test('the dry run shows the exclusion and its reason; only translated candidates: the router\'s 400, nothing sent', async () => {
  const res = await fetch(`${gw.url}/v1/router/rank?format=messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ max_tokens: 50, models: ['cheap-1', 'claude-1'], messages: [{ role: 'user', content: 'hi' }], compaction: { instructions: 'Summarise.' } }) });
  const j = await res.json() as Rec;
  assert.equal(res.status, 200, JSON.stringify(j));
  assert.deepEqual(j.excluded_by, { 'capability:native_messages': 1 });
  const out = j.candidates.find((c: Rec) => c.id === 'oai/cheap-1');
  assert.match(out.excluded.reason, /'compaction', which only Anthropic's Messages API acts on/);
  oai.reset(); ant.reset();
  const refused = await messages({ mcp_servers: MCP, models: ['cheap-1'] });
  const err = await refused.json() as Rec;
  assert.equal(refused.status, 400);
  assert.equal(err.type, 'error');
  assert.match(err.error.message, /capability:native_messages excluded 1: oai\/cheap-1/);
  assert.equal(oai.requests.length + ant.requests.length, 0);
});
