// The Responses API relayed natively to a provider that serves it (paths.responses, as OpenAI's YAML
// declares): the upstream gets the client's body with the model rewritten, store: false and encrypted
// reasoning asked for, and no previous_response_id (the gateway sends the stored turns itself); the
// client gets the gateway's id and model, the upstream's events and usage. Hosted tools reach the
// upstream; reasoning items survive a stored conversation; a fallback to a translated target works;
// chat-completions clients of the same provider still go to /chat/completions.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { estimateTokens, startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let ant: MockUpstream; let gw: TestGateway; let client: OpenAI;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

before(async () => {
  [oai, ant] = await Promise.all([startMockOpenAI(), startMockAnthropic()]);
  const models = [{ name: 'gpt-5', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true } }];
  gw = await startTestGateway({
    providers: [
      { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url },
    ],
    gateway: { fallbacks: { 'oai/gpt-5': ['ant/test-model'] } },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); await oai.close(); await ant.close(); });

const sent = (): { path: string; body: Rec } => { const r = oai.requests.at(-1)!; return { path: r.path, body: r.body as Rec }; };

test('relayed as is: model rewritten, stored by the gateway not the provider, ids and usage', async () => {
  oai.reset();
  const r = await client.responses.create({ model: 'oai/gpt-5', input: 'hello native', instructions: 'Be brief.', tools: [{ type: 'web_search' }] });
  assert.equal(r.output_text, 'Echo: hello native');
  assert.match(r.id, UUID);
  assert.equal(r.model, 'oai/gpt-5');
  const up = sent();
  assert.equal(up.path, '/v1/responses');
  assert.equal(up.body.model, 'gpt-5');
  assert.equal(up.body.store, false);
  assert.deepEqual(up.body.include, ['reasoning.encrypted_content']);
  assert.deepEqual(up.body.tools, [{ type: 'web_search' }], 'hosted tools reach a native upstream');
  assert.equal((r as Rec).store, true, 'the client sees its own store setting');
  // The mock's own count of that prompt (instructions and input; hosted tools add nothing) and of its reply.
  assert.deepEqual(r.usage, { input_tokens: estimateTokens('Be brief.\nhello native'), input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: estimateTokens('Be brief.\nhello native') + 3 });
});

test('a stored conversation with reasoning items goes back whole, encrypted reasoning included', async () => {
  oai.reset();
  const first = await client.responses.create({ model: 'oai/gpt-5', input: 'what is the weather in Oslo', reasoning: { effort: 'low', summary: 'auto' },
    tools: [{ type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] });
  const reasoning = first.output.find((o) => o.type === 'reasoning')!;
  assert.ok(reasoning.type === 'reasoning' && typeof reasoning.encrypted_content === 'string');
  assert.equal(first.usage!.output_tokens_details.reasoning_tokens, 16);
  const call = first.output.find((o) => o.type === 'function_call')!;
  assert.ok(call.type === 'function_call');
  const second = await client.responses.create({ model: 'oai/gpt-5', previous_response_id: first.id, reasoning: { effort: 'low' },
    input: [{ type: 'function_call_output', call_id: call.call_id, output: 'snow' }],
    tools: [{ type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] });
  assert.equal(second.output_text, 'The tool returned: snow');
  assert.equal(second.previous_response_id, first.id);
  const up = sent().body;
  assert.equal(up.previous_response_id, undefined, 'the provider never sees the gateway ids');
  assert.deepEqual(up.input.map((i: Rec) => i.type ?? 'message'), ['message', 'reasoning', 'function_call', 'function_call_output']);
  assert.equal(up.input[1].encrypted_content, reasoning.encrypted_content);
});

test('streamed: the upstream events with the gateway id and model, sequence numbers kept', async () => {
  oai.reset();
  const stream = client.responses.stream({ model: 'oai/gpt-5', input: 'stream native please' });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const ev of stream) events.push(ev);
  const r = await stream.finalResponse();
  assert.equal(r.output_text, 'Echo: stream native please');
  assert.match(r.id, UUID);
  assert.equal(events[0]!.type, 'response.created');
  assert.ok(events[0]!.type === 'response.created' && events[0]!.response.id === r.id && events[0]!.response.model === 'oai/gpt-5');
  assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
  assert.equal(sent().body.stream, true);
  await new Promise((res) => setTimeout(res, 100));
  const rec = (await gw.services.store!.listInferences({ limit: 20 })).find((x) => x.id === r.id)!;
  assert.equal(rec.provider, 'oai');
  assert.equal(rec.outputTokens, r.usage!.output_tokens);
  assert.equal(rec.finishReason, 'end_turn');
});

test('the native target down: the fallback (a translated Anthropic model) answers the same request', async () => {
  oai.reset(); ant.reset();
  for (let i = 0; i < 3; i++) oai.fault({ status: 500 });
  const { data: r, response } = await client.responses.create({ model: 'oai/gpt-5', input: 'fall back please' }).withResponse();
  assert.equal(r.output_text, 'Echo: fall back please');
  assert.equal(response.headers.get('x-gateway-provider'), 'ant');
  assert.equal(r.model, 'ant/test-model');
});

test('an upstream 400 comes back in OpenAI envelope; chat clients of the provider still use /chat/completions', async () => {
  oai.reset();
  await assert.rejects(client.responses.create({ model: 'oai/gpt-5', input: 'x', previous_response_id: 'resp_unknown' }), (e: unknown) => e instanceof OpenAI.BadRequestError);
  await assert.rejects(
    client.responses.create({ model: 'oai/gpt-5', input: 'x', ...({ bogus_param: 1 } as object) }),
    (e: unknown) => e instanceof OpenAI.BadRequestError && /Unknown parameter: 'bogus_param'/.test(e.message),
  );
  const c = await client.chat.completions.create({ model: 'oai/gpt-5', messages: [{ role: 'user', content: 'chat still' }] });
  assert.equal(c.choices[0]!.message.content, 'Echo: chat still');
  assert.equal(sent().path, '/v1/chat/completions');
});
