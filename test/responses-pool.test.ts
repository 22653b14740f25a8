// Large Responses bodies go through the conversion worker pool (workers.convert_threshold_bytes) like
// chat bodies, and give the same upstream body and client answer as the inline path: translated and
// relayed natively, streamed, custom and namespaced tool calls named from the tools the pool sends
// back, stored (input items extracted by the store's write thread, readable at once: GET, input_items,
// previous_response_id right after the response), chained requests (parsed on the main thread, since
// the stored turns go into their input), and bad input answered by the worker with the field named.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway, type TestProvider } from './helpers/gateway.ts';
import { responseStoreOf } from '../src/http/responses-route.ts';

type Rec = Record<string, any>;
let oai: MockUpstream; let ant: MockUpstream; let pooled: TestGateway; let inline: TestGateway;
let poolCalls = 0;
const THRESHOLD = 32 * 1024;
const clients: Record<'pooled' | 'inline', OpenAI> = {} as never;

before(async () => {
  [oai, ant] = await Promise.all([startMockOpenAI(), startMockAnthropic()]);
  const providers: TestProvider[] = [
    { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models: [{ name: 'gpt-5', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true } }] },
    { id: 'ant', format: 'anthropic-messages', base_url: ant.url },
  ];
  pooled = await startTestGateway({ providers, gateway: { workers: { threads: 1, convert_threshold_bytes: THRESHOLD } } });
  inline = await startTestGateway({ providers, gateway: { workers: { threads: 0 } } });
  const pool = pooled.services.convert!;
  const prepare = pool.prepare.bind(pool);
  pool.prepare = (...a) => { poolCalls++; return prepare(...a); };
  clients.pooled = new OpenAI({ baseURL: `${pooled.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  clients.inline = new OpenAI({ baseURL: `${inline.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await pooled.stop(); await inline.stop(); await oai.close(); await ant.close(); });

/** A conversation of about `bytes` bytes as Responses input items, ending with a question. */
function bigInput(bytes: number, last = 'what now?'): OpenAI.Responses.ResponseInputItem[] {
  const turn = 'This earlier turn talks about the weather in several cities and what to pack. '.repeat(20);
  const out: OpenAI.Responses.ResponseInputItem[] = [];
  for (let i = 0; out.length * turn.length < bytes; i++) out.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i}: ${turn}` });
  if ((out.at(-1) as Rec).role === 'user') out.push({ role: 'assistant', content: 'ok' });
  out.push({ role: 'user', content: last });
  return out;
}

const tools: OpenAI.Responses.Tool[] = [
  { type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  { type: 'custom', name: 'run_sql', description: 'runs SQL' },
];

/** The same request on both gateways: the upstream bodies and the answers (ids and times aside) match. */
async function both(mock: MockUpstream, params: OpenAI.Responses.ResponseCreateParamsNonStreaming, stream: boolean): Promise<{ pooled: Rec; inline: Rec; upPooled: Rec; upInline: Rec }> {
  const run = async (c: OpenAI): Promise<[Rec, Rec]> => {
    mock.reset();
    const r = stream ? await c.responses.stream(params as unknown as OpenAI.Responses.ResponseCreateParamsStreaming).finalResponse() : await c.responses.create(params);
    return [r as Rec, mock.requests.at(-1)!.body as Rec];
  };
  const before_ = poolCalls;
  const [p, upP] = await run(clients.pooled);
  assert.equal(poolCalls, before_ + 1, 'the large body went to the pool');
  const [i, upI] = await run(clients.inline);
  return { pooled: p, inline: i, upPooled: upP, upInline: upI };
}
const comparable = (r: Rec): Rec => ({ ...r, id: 'x', created_at: 0, completed_at: 0, output: (r.output as Rec[]).map((o) => ({ ...o, id: 'x' })) });

for (const stream of [false, true]) {
  for (const [model, mock] of [['ant/test-model', () => ant], ['oai/gpt-5', () => oai]] as const) {
    test(`${model} ${stream ? 'streamed' : 'plain'}: pooled = inline, upstream body and answer`, async () => {
      const params = { model, input: bigInput(100 * 1024, 'what is the weather in Paris'), tools, instructions: 'Be brief.', store: false, max_output_tokens: 300 };
      const r = await both(mock(), params, stream);
      assert.deepEqual(r.upPooled, r.upInline);
      assert.deepEqual(comparable(r.pooled), comparable(r.inline));
      assert.equal(r.pooled.output.find((o: Rec) => o.type === 'function_call')?.name, 'get_weather');
      assert.deepEqual(r.pooled.tools, r.inline.tools, 'tools echoed from the parameters the pool sent back');
      assert.equal(r.pooled.tools.length, 2);
    });
  }
}

test('custom tool calls keep their kind: the answer is encoded from the tools the pool sent back', async () => {
  const params = { model: 'ant/test-model', input: bigInput(64 * 1024, 'please run_sql select 1'), tools, tool_choice: { type: 'custom', name: 'run_sql' }, store: false } as OpenAI.Responses.ResponseCreateParamsNonStreaming;
  const r = await both(ant, params, false);
  const call = r.pooled.output.find((o: Rec) => o.type === 'custom_tool_call');
  assert.ok(call, JSON.stringify(r.pooled.output));
  assert.deepEqual(comparable(r.pooled), comparable(r.inline));
});

test('stored: readable at once (GET, input_items), chained right after, input items equal to the inline path', async () => {
  const c = clients.pooled;
  const input = bigInput(80 * 1024, 'remember the code word BLUE');
  for (let round = 0; round < 3; round++) {
    const first = await c.responses.create({ model: 'ant/test-model', input });
    // No settle: the write thread may not have committed yet.
    const got = await c.responses.retrieve(first.id);
    assert.equal(got.output_text, first.output_text);
    const items = await c.responses.inputItems.list(first.id, { order: 'asc', limit: 100 });
    assert.equal(items.data.length, Math.min(100, input.length));
    assert.equal(((items.data[0] as Rec).content as Rec[])[0]!.text, (input[0] as Rec).content);
    ant.reset();
    const second = await c.responses.create({ model: 'ant/test-model', previous_response_id: first.id, input: 'what was the code word?' });
    const sent = ant.requests.at(-1)!.body as Rec;
    assert.ok(JSON.stringify(sent.messages).includes('remember the code word BLUE'), 'the stored turns reached the upstream');
    assert.equal(second.previous_response_id, first.id);
  }
  // A large chained request: parsed here for its history, answered the same.
  const first = await c.responses.create({ model: 'ant/test-model', input: 'short start' });
  const before_ = poolCalls;
  const big = await c.responses.create({ model: 'ant/test-model', previous_response_id: first.id, input: bigInput(64 * 1024, 'and now?') });
  assert.equal(poolCalls, before_ + 1);
  const sent = ant.requests.at(-1)!.body as Rec;
  assert.equal((sent.messages as Rec[])[0]!.content[0].text, 'short start');
  await responseStoreOf(pooled.services)!.settle();
  const all = await c.responses.inputItems.list(big.id, { order: 'asc', limit: 100 });
  assert.equal((all.data.at(-1) as Rec).content[0].text, 'and now?');
  // Same ids and items as the inline gateway stores for the same input.
  const ref = await clients.inline.responses.create({ model: 'ant/test-model', input: bigInput(64 * 1024, 'and now?') });
  const refItems = await clients.inline.responses.inputItems.list(ref.id, { order: 'asc', limit: 100 });
  const strip = (xs: Rec[]): Rec[] => xs.map((x) => ({ ...x, id: String(x.id).replace(/_[0-9a-f]{32}i/, '_i') }));
  assert.deepEqual(strip(all.data as Rec[]), strip(refItems.data as Rec[]));
});

test('bad input in a large body: the worker answers 400 naming the field; nothing is stored', async () => {
  const input = bigInput(64 * 1024) as Rec[];
  input[3] = { role: 'robot', content: 'x' };
  for (const [body, param] of [[{ input }, 'input[3].role'], [{ input: bigInput(64 * 1024), max_output_tokens: -1 }, 'max_output_tokens'],
    [{ input: bigInput(64 * 1024), previous_response_id: 'resp_0190f0f0-0000-7000-8000-000000000000' }, 'previous_response_id']] as const) {
    const before_ = poolCalls;
    const res = await fetch(`${pooled.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'ant/test-model', ...body }) });
    assert.equal(res.status, 400);
    const j = await res.json() as Rec;
    assert.equal(j.error.param, param);
    assert.equal(poolCalls, before_ + 1);
  }
});
