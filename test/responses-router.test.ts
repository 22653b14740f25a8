// Router mode on POST /v1/responses with the official `openai` client: `model: "router"` with the router
// fields picks a native Responses target (relayed, router fields stripped, the max_cost cap sent as
// max_output_tokens) or a translated one; streamed and not; stored responses and previous_response_id
// across targets of different formats; hard max_cost; upstream failures falling back; and the router's
// 400s (bad fields, nothing qualifies) in OpenAI's error envelope naming the field.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
let oai: MockUpstream; let ant: MockUpstream; let alt: MockUpstream; let gw: TestGateway; let client: OpenAI;
const LONG = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ');
const caps = (o: Rec = {}) => ({ tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false, ...o });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

before(async () => {
  const reply = (t: string) => (t.includes('LONG') ? LONG : `Echo: ${t.slice(0, 40)}`);
  [oai, ant, alt] = await Promise.all([startMockOpenAI({ reply }), startMockAnthropic({ reply }), startMockOpenAI({ reply })]);
  gw = await startTestGateway({
    providers: [
      // Serves the Responses API natively: routed Responses requests are relayed to /v1/responses.
      { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models: [
        { name: 'small-1', pricing: { prompt: '0.0000001', completion: '0.0000002' }, capabilities: caps(), context_window: 16000, max_completion_tokens: 4000 },
      ] },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [
        { name: 'big-1', pricing: { prompt: '0.00001', completion: '0.00005' }, capabilities: caps({ vision: true }), context_window: 200000, max_completion_tokens: 8000 },
      ] },
      { id: 'alt', format: 'openai-chat', base_url: alt.url, models: [
        { name: 'mid-1', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: caps(), context_window: 64000, max_completion_tokens: 8000 },
      ] },
    ],
    gateway: {
      reload: { watch: false },
      upstream: { max_attempts: 3, retry_budget_floor: 1000, ejection: { consecutive_failures: 100, base_ms: 50, max_ms: 50 } },
      router: { exploration: { share: 0 }, affinity: { enabled: false }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
    },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw?.stop(); await oai?.close(); await ant?.close(); await alt?.close(); });

/** A routed create: the router fields are gateway extensions the SDK's types do not list. */
const routed = (p: Rec): OpenAI.Responses.ResponseCreateParamsNonStreaming => ({ model: 'router', ...p }) as OpenAI.Responses.ResponseCreateParamsNonStreaming;
const ROUTER_FIELDS = ['models', 'max_cost', 'max_cost_per_million_tokens', 'willingness_to_pay', 'extra'];

async function recorded(id: string): Promise<Rec> {
  for (let i = 0; i < 50; i++) {
    const rows = await gw.services.store!.sql.all('SELECT cost_usd, output_tokens, route FROM inferences WHERE id = ?', [id]);
    if (rows.length === 1) return rows[0]!;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no record for ${id}`);
}

test('routed to a native Responses target: relayed without router fields, decision headers, gateway id', async () => {
  oai.reset();
  const { data: r, response: http } = await client.responses.create(routed({ input: 'hello router', willingness_to_pay: 1e-9, extra: { team: 'a' } })).withResponse();
  assert.equal(r.model, 'oai/small-1');
  assert.equal(r.output_text, 'Echo: hello router');
  assert.match(r.id, UUID);
  assert.equal(http.headers.get('x-router-model'), 'oai/small-1');
  assert.equal(http.headers.get('x-router-decision-id'), r.id);
  const up = oai.requests.at(-1)!;
  assert.equal(up.path, '/v1/responses');
  assert.equal((up.body as Rec).model, 'small-1');
  for (const f of ROUTER_FIELDS) assert.equal((up.body as Rec)[f], undefined, `${f} is not sent upstream`);
  assert.equal((await recorded(r.id)).route, '/v1/responses');
});

test('routed and streamed to a translated target: the full event sequence, model of the chosen target', async () => {
  ant.reset();
  const stream = client.responses.stream({ model: 'router', models: ['big-1'], input: 'stream via the router', max_output_tokens: 100 } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming);
  const types: string[] = [];
  for await (const ev of stream) types.push(ev.type);
  const r = await stream.finalResponse();
  assert.equal(r.model, 'ant/big-1');
  assert.equal(r.output_text, 'Echo: stream via the router');
  assert.deepEqual(types.slice(0, 2), ['response.created', 'response.in_progress']);
  assert.equal(types.at(-1), 'response.completed');
  assert.ok(types.includes('response.output_text.delta'));
  assert.equal(ant.requests.at(-1)!.path, '/v1/messages');
  assert.equal((ant.requests.at(-1)!.body as Rec).max_tokens, 100);
});

test('stored and chained: previous_response_id carries the conversation across routed targets of different formats', async () => {
  ant.reset(); oai.reset();
  const first = await client.responses.create(routed({ models: ['big-1'], input: 'my name is Ada', instructions: 'Be brief.' }));
  assert.equal(first.model, 'ant/big-1');
  const got = await client.responses.retrieve(first.id);
  assert.equal(got.output_text, first.output_text, 'readable at once');
  for (const stream of [false, true]) {
    const p = routed({ models: ['small-1'], previous_response_id: first.id, input: `what is my name (${stream})` });
    const second = stream ? await client.responses.stream(p as unknown as OpenAI.Responses.ResponseCreateParamsStreaming).finalResponse() : await client.responses.create(p);
    assert.equal(second.model, 'oai/small-1');
    assert.equal(second.previous_response_id, first.id);
    const up = oai.requests.at(-1)!.body as Rec;
    assert.equal(up.previous_response_id, undefined, 'the gateway sends the stored turns itself');
    const texts = (up.input as Rec[]).map((it) => (typeof it.content === 'string' ? it.content : (it.content as Rec[]).map((c) => c.text).join('')));
    assert.deepEqual(texts, ['my name is Ada', 'Echo: my name is Ada', `what is my name (${stream})`]);
    const again = await client.responses.retrieve(second.id);
    assert.equal(again.id, second.id);
    assert.equal(again.model, 'oai/small-1');
  }
});

test('max_cost is hard on both kinds of target: native gets max_output_tokens, translated gets max_tokens; recorded cost within it', async () => {
  for (const [models, mock, maxCost] of [[['small-1'], () => oai, 0.00002], [['big-1'], () => ant, 0.0005]] as const) {
    for (const stream of [false, true]) {
      mock().reset();
      const p = routed({ models, max_cost: maxCost, input: 'LONG answer please', stream });
      const { data, response: http } = stream
        ? await client.responses.create(p as unknown as OpenAI.Responses.ResponseCreateParamsStreaming).withResponse()
        : await client.responses.create(p).withResponse();
      if (stream) for await (const _ of data as AsyncIterable<unknown>) { /* drain */ }
      const cap = Number(http.headers.get('x-router-max-output-tokens'));
      assert.ok(cap > 0 && cap < 3000, `cap ${cap}`);
      const up = mock().requests.at(-1)!.body as Rec;
      if (models[0] === 'small-1') {
        assert.equal(up.max_output_tokens, cap);
        assert.equal(up.max_tokens, undefined, 'the Responses API refuses max_tokens');
      } else assert.equal(up.max_tokens, cap);
      const id = http.headers.get('x-inference-id')!;
      const rec = await recorded(id);
      assert.ok(Number(rec.cost_usd) > 0 && Number(rec.cost_usd) <= maxCost, `recorded ${rec.cost_usd} <= ${maxCost}`);
    }
  }
});

test('upstream failure: the chosen native target fails before the first byte, the next candidate answers', async () => {
  oai.reset(); alt.reset();
  oai.fault({ status: 500 });
  const r = await client.responses.create(routed({ models: ['small-1', 'mid-1'], willingness_to_pay: 1e-9, input: 'fall back please' }));
  assert.equal(r.model, 'alt/mid-1');
  assert.equal(r.output_text, 'Echo: fall back please');
  assert.equal(alt.requests.at(-1)!.path, '/v1/chat/completions');
  // Every candidate failing: the client gets the error in OpenAI's envelope, and nothing is stored.
  for (const stream of [false, true]) {
    oai.fault([{ status: 503 }, { status: 503 }, { status: 503 }]);
    const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', models: ['small-1'], input: 'fails', stream }) });
    assert.equal(res.status, 503);
    const j = await res.json() as Rec;
    assert.equal(typeof j.error.message, 'string');
    assert.equal(typeof j.error.type, 'string');
    const id = res.headers.get('x-inference-id')!;
    await assert.rejects(client.responses.retrieve(id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  }
  oai.reset();
});

test("the router's 400s in OpenAI's envelope naming the field", async () => {
  const cases: Array<[Rec, string]> = [
    [{ models: 'x' }, 'models'], [{ models: [] }, 'models'], [{ models: ['router'] }, 'models[0]'], [{ max_cost: -1 }, 'max_cost'],
    [{ max_cost: 'a' }, 'max_cost'], [{ willingness_to_pay: -0.1 }, 'willingness_to_pay'], [{ max_cost_per_million_tokens: 0 }, 'max_cost_per_million_tokens'],
    [{ extra: [1] }, 'extra'], [{ input: 5 }, 'input'], [{ input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'], [{ max_output_tokens: 0 }, 'max_output_tokens'],
  ];
  for (const [body, param] of cases) {
    await assert.rejects(client.responses.create(routed({ input: 'hi', ...body })), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError, `${JSON.stringify(body)}: ${String(e)}`);
      assert.equal(e.param, param, JSON.stringify(body));
      return true;
    });
  }
  // Nothing qualifies: the 400 says which constraint excluded which models, with the decision headers.
  const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', input: 'hi', max_cost: 1e-12 }) });
  assert.equal(res.status, 400);
  const j = await res.json() as Rec;
  assert.match(j.error.message, /max_cost/);
  assert.ok(res.headers.get('x-router-decision-id'));
  assert.equal(res.headers.get('x-router-excluded')?.includes('max_cost'), true);
  // previous_response_id unknown to the key: refused before routing, naming the field.
  await assert.rejects(client.responses.create(routed({ input: 'hi', previous_response_id: 'resp_0190f0f0-0000-7000-8000-000000000000' })),
    (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'previous_response_id');
});

test('the dry run takes a Responses body (?format=responses): the same choice as the routed request, chained turns included, 400s naming the field', async () => {
  const rank = async (body: Rec, format = 'responses'): Promise<{ status: number; json: Rec; model: string | null }> => {
    const r = await fetch(`${gw.url}/v1/router/rank?format=${format}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: r.status, json: await r.json() as Rec, model: r.headers.get('x-router-model') };
  };
  const calls = oai.requests.length + ant.requests.length + alt.requests.length;
  for (const p of [{ input: 'hello there' }, { input: 'pick a cheap one', willingness_to_pay: 0.0001 }, { input: 'with a tool', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }] }, { input: 'bounded', max_cost: 0.002 }]) {
    const dry = await rank({ model: 'router', ...p });
    assert.equal(dry.status, 200, JSON.stringify(dry.json));
    assert.equal(dry.json.object, 'router.ranking');
    const real = await client.responses.create(routed(p)).withResponse();
    assert.equal(dry.json.model, real.response.headers.get('x-router-model'), JSON.stringify(p));
    assert.equal(dry.json.model, real.data.model);
    const cap = real.response.headers.get('x-router-max-output-tokens');
    assert.equal(dry.json.plan[0].max_output_tokens, cap === null ? null : Number(cap), 'the same output cap');
  }
  // model may be left out, as on the other formats.
  assert.equal((await rank({ input: 'no model field' })).status, 200);
  // Chained: the stored turns count (the prompt is longer than the new input alone).
  const first = await client.responses.create(routed({ models: ['big-1'], input: `${'a long first turn '.repeat(200)}` }));
  const alone = await rank({ input: 'and then?', models: ['big-1'] });
  const chained = await rank({ input: 'and then?', models: ['big-1'], previous_response_id: first.id });
  const tokens = (j: Rec): number => j.candidates.find((c: Rec) => c.id === 'ant/big-1').input_tokens;
  assert.ok(tokens(chained.json) > tokens(alone.json) + 500, `${tokens(chained.json)} vs ${tokens(alone.json)}`);
  const missing = await rank({ input: 'x', previous_response_id: 'resp_nope' });
  assert.equal(missing.status, 400);
  assert.equal(missing.json.error.param, 'previous_response_id');
  // Bad fields in OpenAI's envelope, naming the field; an unknown format lists the accepted ones.
  const bad = await rank({ input: 'x', max_cost: -1 });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, 'max_cost');
  const badBody = await rank({ input: 42 });
  assert.equal(badBody.status, 400);
  const fmt = await rank({ input: 'x' }, 'gemini');
  assert.equal(fmt.status, 400);
  assert.match(fmt.json.error.message, /chat, messages, responses/);
  // The dry runs called no model: only the real creates above did.
  assert.equal(oai.requests.length + ant.requests.length + alt.requests.length - calls, 5);
});
