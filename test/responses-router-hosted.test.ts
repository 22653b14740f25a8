// Router mode on POST /v1/responses with OpenAI hosted-tool items: a conversation holding a
// web_search_call item (or forcing a hosted tool with tool_choice) is ranked, not refused, and goes
// only to candidates that serve the Responses API natively (paths.responses), which get the items
// unchanged; with no such candidate the router's 400 names capability:native_responses and the
// candidates it excluded; fallbacks stay on native targets; the dry run shows the reason; a search run
// by the upstream comes back in the stream and, chained, keeps the next turn native. Item and tool
// shapes are the openai package's (ResponseFunctionWebSearch, WebSearchTool, WebSearchPreviewTool,
// ToolChoiceTypes); the mock refuses malformed ones as the API does.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
let oai: MockUpstream; let oai2: MockUpstream; let ant: MockUpstream; let alt: MockUpstream; let gw: TestGateway; let client: OpenAI;
const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const model = (name: string, prompt: string, completion: string) => ({ name, pricing: { prompt, completion }, capabilities: caps, context_window: 64000, max_completion_tokens: 4000 });

before(async () => {
  [oai, oai2, ant, alt] = await Promise.all([startMockOpenAI(), startMockOpenAI(), startMockAnthropic(), startMockOpenAI()]);
  gw = await startTestGateway({
    providers: [
      // Two providers serving the Responses API natively, and two reached by translation (Messages, Chat Completions).
      { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models: [model('small-1', '0.0000001', '0.0000002')] },
      { id: 'oai2', format: 'openai-chat', base_url: oai2.url, paths: { responses: '/responses' }, models: [model('other-1', '0.000002', '0.000004')] },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [model('big-1', '0.00000005', '0.0000001')] },
      { id: 'alt', format: 'openai-chat', base_url: alt.url, models: [model('mid-1', '0.00000006', '0.00000012')] },
    ],
    gateway: {
      reload: { watch: false },
      upstream: { max_attempts: 3, retry_budget_floor: 1000, ejection: { consecutive_failures: 100, base_ms: 50, max_ms: 50 } },
      router: { exploration: { share: 0 }, affinity: { enabled: false }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
    },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw?.stop(); await Promise.all([oai?.close(), oai2?.close(), ant?.close(), alt?.close()]); });

const ALL = ['small-1', 'other-1', 'big-1', 'mid-1'];

/** A web search the model ran in an earlier turn, as ResponseFunctionWebSearch types it (every field required). */
const searched = (query: string): OpenAI.Responses.ResponseFunctionWebSearch => ({
  id: 'ws_68c9f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2', type: 'web_search_call', status: 'completed',
  action: { type: 'search', query, queries: [query], sources: [{ type: 'url', url: 'https://www.yr.no/en/forecast/daily-table/1-72837/Norway/Oslo/Oslo/Oslo' }] },
});

/** A conversation after a web search: the user's question, the search, the answer, a follow-up. */
const conversation = (query = 'weather in Oslo today'): OpenAI.Responses.ResponseInputItem[] => [
  { role: 'user', content: 'What is the weather in Oslo?' },
  searched(query),
  { type: 'message', id: 'msg_68c9f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c3', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Light snow, -3 C.', annotations: [] }] },
  { role: 'user', content: 'And tomorrow?' },
];

const WEB_SEARCH: OpenAI.Responses.WebSearchTool = { type: 'web_search' };

/** A routed create: the router fields are gateway extensions the SDK's types do not list. */
const routed = (p: Rec): OpenAI.Responses.ResponseCreateParamsNonStreaming => ({ model: 'router', ...p }) as OpenAI.Responses.ResponseCreateParamsNonStreaming;
const callsTo = (...m: MockUpstream[]): number => m.reduce((n, x) => n + x.requests.length, 0);
const resetAll = (): void => { for (const m of [oai, oai2, ant, alt]) m.reset(); };

async function rank(body: Rec): Promise<{ status: number; json: Rec }> {
  const r = await fetch(`${gw.url}/v1/router/rank?format=responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() as Rec };
}

test('a web_search_call item and a web_search tool: routed to the cheapest native candidate, the upstream gets the items unchanged', async () => {
  resetAll();
  const input = conversation();
  // Cost first (a tiny W): without the item the translated ant/big-1 (cheapest) would be chosen.
  const { data: r, response: http } = await client.responses.create(routed({ models: ALL, willingness_to_pay: 1e-12, input, tools: [WEB_SEARCH] })).withResponse();
  assert.equal(r.model, 'oai/small-1');
  assert.equal(r.output_text, 'Echo: And tomorrow?');
  assert.equal(http.headers.get('x-router-model'), 'oai/small-1');
  assert.match(http.headers.get('x-router-excluded') ?? '', /capability:native_responses=2/);
  const up = oai.requests.at(-1)!;
  assert.equal(up.path, '/v1/responses');
  assert.deepEqual((up.body as Rec).input, input, 'every item goes up as the client sent it');
  assert.deepEqual((up.body as Rec).tools, [WEB_SEARCH]);
  assert.equal(callsTo(ant, alt, oai2), 0);
  // The control: the same conversation without the search item goes where it went before, the cheapest.
  const plain = await client.responses.create(routed({ models: ALL, willingness_to_pay: 1e-12, input: input.filter((it) => it.type !== 'web_search_call') }));
  assert.equal(plain.model, 'ant/big-1');
});

test('only translated candidates: a 400 naming capability:native_responses and each candidate it excluded, no upstream call', async () => {
  resetAll();
  await assert.rejects(client.responses.create(routed({ models: ['big-1', 'mid-1'], input: conversation(), tools: [WEB_SEARCH] })), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.equal(e.param, 'model');
    assert.match(e.message, /capability:native_responses excluded 2: /);
    assert.match(e.message, /ant\/big-1 \(the request holds input\[1\] web_search_call, which only a server of the Responses API runs/);
    assert.match(e.message, /alt\/mid-1 \(/);
    assert.ok(e.headers.get('x-router-decision-id'));
    return true;
  });
  // A forced hosted tool (ToolChoiceTypes) is the same constraint, named as such.
  const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', models: ['big-1'], input: 'look it up', tools: [{ type: 'web_search_preview' }], tool_choice: { type: 'web_search_preview' } }) });
  assert.equal(res.status, 400);
  const j = await res.json() as Rec;
  assert.match(j.error.message, /capability:native_responses excluded 1: ant\/big-1 \(the request holds tool_choice web_search_preview/);
  assert.equal(callsTo(oai, oai2, ant, alt), 0);
});

test('streamed: a forced web search runs upstream and streams back; chained, the stored search keeps the next turn native', async () => {
  resetAll();
  const stream = client.responses.stream({
    model: 'router', models: ALL, willingness_to_pay: 1e-12, input: 'search the forecast for Oslo',
    tools: [{ type: 'web_search_preview' }], tool_choice: { type: 'web_search_preview' },
  } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming);
  const types: string[] = [];
  for await (const ev of stream) types.push(ev.type);
  const first = await stream.finalResponse();
  assert.equal(first.model, 'oai/small-1');
  assert.ok(types.includes('response.web_search_call.searching'), types.join(' '));
  assert.equal(types.at(-1), 'response.completed');
  assert.deepEqual(first.output.map((o) => o.type), ['web_search_call', 'message']);
  assert.deepEqual((oai.requests.at(-1)!.body as Rec).tool_choice, { type: 'web_search_preview' });
  // The next turn names no hosted tool: the stored web_search_call item alone keeps it native.
  const second = await client.responses.create(routed({ models: ALL, willingness_to_pay: 1e-12, previous_response_id: first.id, input: 'and tomorrow?' }));
  assert.equal(second.model, 'oai/small-1');
  const items = (oai.requests.at(-1)!.body as Rec).input as Rec[];
  assert.deepEqual(items.map((it) => it.type ?? 'message'), ['message', 'web_search_call', 'message', 'message']);
  assert.deepEqual(items[1], first.output[0], 'the search item goes back as the upstream made it');
  assert.equal(callsTo(ant, alt), 0);
});

test('fallbacks stay native: the chosen native target failing, the next native one answers, never a translated one', async () => {
  resetAll();
  oai.fault({ status: 500 });
  const r = await client.responses.create(routed({ models: ALL, willingness_to_pay: 1e-12, input: conversation(), tools: [WEB_SEARCH] }));
  assert.equal(r.model, 'oai2/other-1');
  assert.deepEqual((oai2.requests.at(-1)!.body as Rec).input, conversation());
  // Both native targets down: the error, and still no attempt on the translated candidates.
  oai.fault([{ status: 503 }, { status: 503 }, { status: 503 }]);
  oai2.fault([{ status: 503 }, { status: 503 }, { status: 503 }]);
  await assert.rejects(client.responses.create(routed({ models: ALL, willingness_to_pay: 1e-12, input: conversation(), tools: [WEB_SEARCH] })),
    (e: unknown) => e instanceof OpenAI.APIError && e.status === 503);
  assert.equal(callsTo(ant, alt), 0);
  oai.reset(); oai2.reset();
});

test('the dry run ranks it: the native candidates in the plan, the others excluded with the reason; the item text counted', async () => {
  const calls = callsTo(oai, oai2, ant, alt);
  const dry = await rank({ models: ALL, willingness_to_pay: 1e-12, input: conversation(), tools: [WEB_SEARCH] });
  assert.equal(dry.status, 200, JSON.stringify(dry.json));
  assert.equal(dry.json.model, 'oai/small-1');
  assert.deepEqual(dry.json.plan.map((t: Rec) => t.id), ['oai/small-1', 'oai2/other-1']);
  assert.deepEqual(dry.json.excluded_by, { 'capability:native_responses': 2 });
  const out = dry.json.candidates.filter((c: Rec) => c.excluded).map((c: Rec) => [c.id, c.excluded.constraint]);
  assert.deepEqual(out.sort(), [['alt/mid-1', 'capability:native_responses'], ['ant/big-1', 'capability:native_responses']]);
  assert.match(dry.json.candidates.find((c: Rec) => c.id === 'ant/big-1').excluded.reason, /input\[1\] web_search_call/);
  // Nothing native among the candidates: the ranking says so (no model), as the routed request's 400 does.
  const none = await rank({ models: ['big-1', 'mid-1'], input: conversation() });
  assert.equal(none.status, 200);
  assert.equal(none.json.model, null);
  assert.deepEqual(none.json.excluded_by, { 'capability:native_responses': 2 });
  // The search's text (queries, sources) is part of the prompt's cost.
  const tokens = (j: Rec): number => j.candidates.find((c: Rec) => c.id === 'oai/small-1').input_tokens;
  const short = await rank({ models: ['small-1'], input: conversation('oslo') });
  const long = await rank({ models: ['small-1'], input: conversation(`${'weather forecast Oslo hourly '.repeat(100)}`) });
  assert.ok(tokens(long.json) > tokens(short.json) + 400, `${tokens(long.json)} vs ${tokens(short.json)}`);
  assert.equal(callsTo(oai, oai2, ant, alt), calls, 'the dry runs called no model');
});

test('a web_search tool offered alone is no requirement: a translated candidate still serves it without the tool, as before', async () => {
  resetAll();
  const { data: r, response: http } = await client.responses.create(routed({ models: ALL, willingness_to_pay: 1e-12, input: 'hello', tools: [WEB_SEARCH] })).withResponse();
  assert.equal(r.model, 'ant/big-1');
  assert.match(http.headers.get('x-gateway-adjustments') ?? '', /tools\.web_search=dropped/);
  assert.equal(http.headers.get('x-router-excluded'), null);
});

test('input_tokens counts a hosted-tool conversation for a native model (its items as text) and refuses it for a translated one', async () => {
  const count = (m: string) => fetch(`${gw.url}/v1/responses/input_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: m, input: conversation('snow depth Holmenkollen ski jump this weekend'), tools: [WEB_SEARCH] }) });
  const native = await count('oai/small-1');
  const body = await native.json() as Rec;
  assert.equal(native.status, 200, JSON.stringify(body));
  const plain = await (await fetch(`${gw.url}/v1/responses/input_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/small-1', input: conversation().filter((it) => (it as Rec).type !== 'web_search_call'), tools: [WEB_SEARCH] }) })).json() as Rec;
  assert.ok(body.input_tokens > plain.input_tokens, `the search's query and sources count: ${body.input_tokens} vs ${plain.input_tokens}`);
  const translated = await count('alt/mid-1');
  assert.equal(translated.status, 400);
  assert.match(((await translated.json()) as Rec).error.message, /web_search_call/);
});

test('max_cost holds with hosted-tool items it can count and is refused where an item cannot be counted (an OpenAI compaction)', async () => {
  const ok = await client.responses.create(routed({ input: conversation(), tools: [WEB_SEARCH], max_cost: 0.5 }));
  assert.equal(ok.status, 'completed');
  const before = callsTo(oai, oai2, ant, alt);
  const sealed: OpenAI.Responses.ResponseCompactionItemParam = { type: 'compaction', id: 'cmp_68c9f1a2b3c4d5e6f7a8b9c0d1e2f3a4', encrypted_content: 'gAAAAABo' + 'x'.repeat(400) };
  const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', input: [sealed, { role: 'user', content: 'Go on.' }], max_cost: 0.5 }) });
  assert.equal(res.status, 400);
  const j = await res.json() as Rec;
  assert.equal(j.error.param, 'max_cost');
  assert.match(j.error.message, /input\[0\] compaction cannot be counted/);
  const ref = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', input: [{ type: 'item_reference', id: 'msg_68c9f1a2b3c4d5e6f7a8b9c0d1e2f3a4' }, { role: 'user', content: 'Go on.' }], max_cost: 0.5 }) });
  assert.equal(ref.status, 400);
  assert.match(((await ref.json()) as Rec).error.message, /input\[0\] item_reference cannot be counted/);
  assert.equal(callsTo(oai, oai2, ant, alt), before, 'no upstream call');
});
