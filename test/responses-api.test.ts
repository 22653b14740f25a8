// The official `openai` SDK's Responses helpers (responses.create, .stream, .parse) on POST /v1/responses
// against every wire format (OpenAI chat, Anthropic, Gemini, Bedrock mocks): text and usage equal to
// what the upstream reported, the streamed event sequence, function tools with call ids intact across
// a tool loop (items resent as agents do), Anthropic thinking round-tripped with its signature inside
// reasoning items, structured output, and upstream errors in OpenAI's envelope.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { lastBody, replayUsage, startWires, upstreamToolIds, type Rec, type Wire } from './helpers/wires.ts';

let wires: Wire[] = [];
let gw: TestGateway; let client: OpenAI; let close: () => Promise<void>;

before(async () => {
  ({ wires, gw, close } = await startWires());
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await close(); });

const weather: OpenAI.Responses.FunctionTool = {
  type: 'function', name: 'get_weather', description: 'Weather for a city', strict: false,
  parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location'] },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NAMES = ['openai-chat', 'anthropic-messages', 'gemini', 'bedrock-converse'];

for (const idx of [0, 1, 2, 3]) {
  const W = (): Wire => wires[idx]!;
  describe(`openai SDK responses -> ${NAMES[idx]} upstream`, () => {
    const model = (): string => `${W().id}/test-model`;

    test('responses.create: text, ids, usage equal to what the upstream reported', async () => {
      W().mock.reset();
      const { data: r, response: http } = await client.responses.create({ model: model(), instructions: 'Be brief.', input: 'hello from responses' }).withResponse();
      assert.equal(r.output_text, 'Echo: hello from responses');
      assert.equal(r.object, 'response');
      assert.equal(r.status, 'completed');
      assert.equal(r.model, model());
      assert.match(r.id, UUID);
      assert.equal(http.headers.get('x-inference-id'), r.id);
      assert.equal(r.instructions, 'Be brief.');
      assert.equal(r.output.length, 1);
      const msg = r.output[0]!;
      assert.equal(msg.type, 'message');
      assert.ok(msg.type === 'message' && msg.role === 'assistant' && msg.status === 'completed');
      const want = await replayUsage(W());
      assert.deepEqual(r.usage, {
        input_tokens: want.input + want.read + want.write, input_tokens_details: { cached_tokens: want.read },
        output_tokens: want.output, output_tokens_details: { reasoning_tokens: want.reasoning }, total_tokens: want.input + want.read + want.write + want.output,
      });
    });

    test('responses.stream: the event sequence, numbered from 0, and the final response', async () => {
      W().mock.reset();
      const stream = client.responses.stream({ model: model(), input: 'stream the responses please', max_output_tokens: 200 });
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const ev of stream) events.push(ev);
      const r = await stream.finalResponse();
      assert.equal(r.output_text, 'Echo: stream the responses please');
      assert.match(r.id, UUID);
      const types = events.map((e) => e.type);
      assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
      assert.deepEqual(types.slice(-4), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
      assert.ok(types.filter((t) => t === 'response.output_text.delta').length >= 2);
      assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
      const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
      assert.equal(deltas, 'Echo: stream the responses please');
      const done = events.at(-1)!;
      assert.ok(done.type === 'response.completed' && done.response.usage!.output_tokens > 0);
      assert.equal(r.max_output_tokens, 200);
    });

    for (const streamed of [false, true]) {
      test(`function tool loop (${streamed ? 'streamed' : 'plain'}): call ids intact, output resent as items`, async () => {
        W().mock.reset();
        const params = { model: model(), input: 'what is the weather in Paris', tools: [weather], store: false };
        const first = streamed ? await client.responses.stream(params).finalResponse() : await client.responses.create(params);
        const call = first.output.find((o) => o.type === 'function_call');
        assert.ok(call && call.type === 'function_call', 'a function call');
        assert.equal(call.name, 'get_weather');
        assert.deepEqual(JSON.parse(call.arguments), { location: 'Paris', unit: 'celsius' });
        assert.match(call.id!, /^fc_/);
        assert.equal(first.status, 'completed');
        const second = await client.responses.create({
          model: model(), tools: [weather], store: false,
          input: [{ role: 'user', content: 'what is the weather in Paris' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: '21 degrees and sunny' }],
        });
        // Gemini carries a text tool result as {result: text}, which its mock echoes as JSON.
        assert.equal(second.output_text, W().format === 'gemini' ? 'The tool returned: {"result":"21 degrees and sunny"}' : 'The tool returned: 21 degrees and sunny');
        const ids = upstreamToolIds(W());
        if (W().format === 'gemini') assert.deepEqual(ids, { callIds: ['get_weather'], resultIds: ['get_weather'] });
        else assert.deepEqual(ids, { callIds: [call.call_id], resultIds: [call.call_id] });
      });
    }
  });
}

describe('reasoning and structured output', () => {
  test('Anthropic thinking comes back as a reasoning item and returns to Anthropic signed and unchanged', async () => {
    const ant = wires[1]!;
    ant.mock.reset();
    const first = await client.responses.create({ model: 'ant/test-model', input: 'what is the weather in Lyon', tools: [weather], reasoning: { effort: 'high', summary: 'auto' }, max_output_tokens: 30000 });
    const reasoning = first.output.find((o) => o.type === 'reasoning');
    assert.ok(reasoning && reasoning.type === 'reasoning', `a reasoning item in ${JSON.stringify(first.output)}`);
    const sent = lastBody(ant);
    assert.equal(sent.thinking?.type === 'enabled' || sent.thinking?.type === 'adaptive', true, 'effort reached Anthropic as thinking');
    assert.match(reasoning.summary[0]!.text, /step by step/);
    assert.ok(typeof reasoning.encrypted_content === 'string' && reasoning.encrypted_content.length > 0);
    const call = first.output.find((o) => o.type === 'function_call')!;
    assert.ok(call.type === 'function_call');
    await client.responses.create({
      model: 'ant/test-model', tools: [weather], reasoning: { effort: 'high' }, max_output_tokens: 30000,
      input: [{ role: 'user', content: 'what is the weather in Lyon' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: 'rain' }],
    });
    const assistant = (lastBody(ant).messages as Rec[]).find((m) => m.role === 'assistant')!;
    const thinking = (assistant.content as Rec[]).find((b) => b.type === 'thinking')!;
    assert.equal(thinking.thinking, reasoning.summary[0]!.text);
    assert.match(String(thinking.signature), /^[A-Za-z0-9+/=]{20,}$/);
  });

  test('responses.parse with a json_schema text format', async (t) => {
    const mock = await startMockAnthropic({ reply: () => '{"city":"Paris","celsius":21}' });
    const models = [{ name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true, structured_output: true } }];
    const g = await startTestGateway({ providers: [{ id: 'ant', format: 'anthropic-messages', base_url: mock.url, models }] });
    t.after(async () => { await g.stop(); await mock.close(); });
    const c = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const schema = { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'], additionalProperties: false };
    const r = await c.responses.parse({ model: 'ant/test-model', input: 'weather as JSON', text: { format: { type: 'json_schema', name: 'weather', schema, strict: true } } });
    assert.deepEqual(r.output_parsed, { city: 'Paris', celsius: 21 });
    assert.deepEqual(r.text?.format, { type: 'json_schema', name: 'weather', schema, strict: true });
    const sent = mock.requests.at(-1)!.body as Rec;
    assert.deepEqual(sent.output_config?.format?.schema ?? sent.output_format?.schema, schema);
  });
});

describe('errors', () => {
  test('an upstream 400 comes back in OpenAI envelope as an APIError', async () => {
    const ant = wires[1]!;
    ant.mock.reset();
    ant.mock.fault({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: bad thing' } } });
    await assert.rejects(client.responses.create({ model: 'ant/test-model', input: 'hi' }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.match(e.message, /bad thing/);
      assert.equal((e.error as Rec).type, 'invalid_request_error');
      return true;
    });
  });

  test('a stream cut by the upstream ends with error and response.failed, after the text sent so far', async () => {
    const ant = wires[1]!;
    ant.mock.reset();
    ant.mock.fault({ disconnectAfterChunks: 5 });
    const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'ant/test-model', input: 'a long answer that will be cut', stream: true }) });
    assert.equal(res.status, 200);
    const text = await res.text();
    const events = text.split('\n\n').filter((f) => f.includes('data: ')).map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as Rec);
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'response.created');
    assert.deepEqual(types.slice(-2), ['error', 'response.failed']);
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    const failed = events.at(-1)!.response as Rec;
    assert.equal(failed.status, 'failed');
    assert.equal((failed.error as Rec).code, 'server_error');
  });

  test('bad input: a 400 in OpenAI envelope naming the field', async () => {
    const post = async (body: Rec): Promise<{ status: number; error: Rec }> => {
      const r = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.status, error: ((await r.json()) as { error: Rec }).error };
    };
    let r = await post({ model: 'ant/test-model' });
    assert.equal(r.status, 400); assert.equal(r.error.param, 'input'); assert.equal(r.error.type, 'invalid_request_error');
    r = await post({ model: 'ant/test-model', input: [{ role: 'robot', content: 'x' }] });
    assert.equal(r.status, 400); assert.equal(r.error.param, 'input[0].role');
    r = await post({ model: 'ant/test-model', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] });
    assert.equal(r.error.param, 'input[0].call_id');
    r = await post({ model: 'ant/test-model', input: 'x', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } });
    assert.equal(r.status, 400); assert.equal(r.error.code, 'unsupported_parameter'); assert.equal(r.error.param, 'tool_choice');
    r = await post({ model: 'ant/test-model', input: [{ type: 'computer_call_output', call_id: 'c', output: {} }] });
    assert.equal(r.error.code, 'unsupported_parameter'); assert.equal(r.error.param, 'input[0].type');
    r = await post({ model: 'ant/test-model', input: 'x', background: true });
    assert.equal(r.error.param, 'background');
    r = await post({ model: 'nope/none', input: 'x' });
    assert.equal(r.status, 404); assert.equal(r.error.code, 'model_not_found');
  });

  test('hosted tools are left out for a translated target (reported), function tools still work', async () => {
    const ant = wires[1]!;
    ant.mock.reset();
    const { data: r, response: http } = await client.responses.create({ model: 'ant/test-model', input: 'hi there', tools: [weather, { type: 'web_search' }] }).withResponse();
    assert.equal(r.output_text, 'Echo: hi there');
    assert.deepEqual((lastBody(ant).tools as Rec[]).map((t) => t.name), ['get_weather']);
    assert.match(http.headers.get('x-gateway-adjustments') ?? '', /web_search/);
  });
});
