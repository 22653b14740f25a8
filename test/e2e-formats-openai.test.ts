// The official `openai` client on /v1/chat/completions against every wire format (OpenAI, Anthropic,
// Gemini, Bedrock mocks): text, streaming through the SDK's accumulating helper, tool calls and
// results with ids intact, structured output, stop/length finishes, usage equal to what the mock
// reported (replayed straight to the mock), and upstream 400s in the OpenAI envelope.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { TestGateway } from './helpers/gateway.ts';
import { lastBody, replayUsage, startWires, upstreamToolIds, type Norm, type Rec, type Wire } from './helpers/wires.ts';


let wires: Wire[] = [];
let gw: TestGateway; let client: OpenAI; let close: () => Promise<void>;

before(async () => {
  ({ wires, gw, close } = await startWires());
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await close(); });


/** The OpenAI client's usage in the same shape (prompt_tokens include reads and writes). */
function normClient(u: OpenAI.CompletionUsage): Omit<Norm, 'write'> & { prompt: number } {
  const read = u.prompt_tokens_details?.cached_tokens ?? 0;
  return { prompt: u.prompt_tokens, input: u.prompt_tokens - read, read, output: u.completion_tokens, reasoning: u.completion_tokens_details?.reasoning_tokens ?? 0 };
}

const weather: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location'] } },
};
const time: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_time', description: 'Local time in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};



for (const idx of [0, 1, 2, 3]) {
  const W = (): Wire => wires[idx]!;
  const name = ['openai-chat', 'anthropic-messages', 'gemini', 'bedrock-converse'][idx]!;
  describe(`openai SDK -> ${name} upstream`, () => {
    const model = (): string => `${W().id}/test-model`;

    test('non-streaming text; usage equals what the upstream reported', async () => {
      W().mock.reset();
      const r = await client.chat.completions.create({ model: model(), max_tokens: 200, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello from the matrix' }] });
      assert.equal(r.choices[0]!.message.content, 'Echo: hello from the matrix');
      assert.equal(r.choices[0]!.finish_reason, 'stop');
      assert.equal(r.model, model());
      assert.match(r.id, /^[0-9a-f-]{36}$/);
      const got = normClient(r.usage!);
      const want = await replayUsage(W());
      assert.deepEqual({ input: got.input, read: got.read, output: got.output, reasoning: got.reasoning },
        { input: want.input + want.write, read: want.read, output: want.output, reasoning: want.reasoning });
      assert.equal(r.usage!.total_tokens, r.usage!.prompt_tokens + r.usage!.completion_tokens);
    });

    test('streaming through finalChatCompletion gives the same message and usage', async () => {
      W().mock.reset();
      const runner = client.chat.completions.stream({ model: model(), max_tokens: 200, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'stream the matrix please' }] });
      const final = await runner.finalChatCompletion();
      assert.equal(final.choices[0]!.message.content, 'Echo: stream the matrix please');
      assert.equal(final.choices[0]!.finish_reason, 'stop');
      assert.ok(final.usage, 'usage chunk delivered');
      const want = await replayUsage(W());
      assert.equal(final.usage!.completion_tokens, want.output);
      assert.equal(final.usage!.prompt_tokens, want.input + want.read + want.write);
    });

    test('tool call: id/name/arguments intact, then the tool result gives a text answer', async () => {
      W().mock.reset();
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'what is the weather in Paris?' }];
      const r = await client.chat.completions.create({ model: model(), tools: [weather], messages });
      assert.equal(r.choices[0]!.finish_reason, 'tool_calls');
      const calls = r.choices[0]!.message.tool_calls!;
      assert.equal(calls.length, 1);
      const call = calls[0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      assert.equal(call.function.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris', unit: 'celsius' });
      assert.ok(call.id.length > 0);
      messages.push(r.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '22 degrees and sunny' });
      const r2 = await client.chat.completions.create({ model: model(), tools: [weather], messages });
      // Gemini function responses are objects, so a text result travels as {result: text}.
      assert.equal(r2.choices[0]!.message.content, W().format === 'gemini' ? 'The tool returned: {"result":"22 degrees and sunny"}' : 'The tool returned: 22 degrees and sunny');
      assert.equal(r2.choices[0]!.finish_reason, 'stop');
      const ids = upstreamToolIds(W());
      const want = W().format === 'gemini' ? 'get_weather' : call.id;
      assert.deepEqual(ids, { callIds: [want], resultIds: [want] });
    });

    test('streamed parallel tool calls accumulate in finalChatCompletion; both results round-trip', async () => {
      W().mock.reset();
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'use both tools for the weather' }];
      const final = await client.chat.completions.stream({ model: model(), tools: [weather, time], messages }).finalChatCompletion();
      const calls = final.choices[0]!.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
      assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
      assert.deepEqual(calls.map((c) => c.function.name), ['get_weather', 'get_time']);
      assert.deepEqual(calls.map((c) => JSON.parse(c.function.arguments)), [{ location: 'Paris', unit: 'celsius' }, { city: 'London' }]);
      assert.equal(new Set(calls.map((c) => c.id)).size, 2, 'distinct call ids');
      messages.push({ role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: calls[0]!.id, content: 'sunny' }, { role: 'tool', tool_call_id: calls[1]!.id, content: 'noon' });
      const r2 = await client.chat.completions.stream({ model: model(), tools: [weather, time], messages }).finalChatCompletion();
      assert.match(r2.choices[0]!.message.content!, /^The tool returned: /);
      const ids = upstreamToolIds(W());
      const want = W().format === 'gemini' ? ['get_weather', 'get_time'] : calls.map((c) => c.id);
      assert.deepEqual(ids, { callIds: want, resultIds: want });
    });

    test('structured output (json_schema) reaches the upstream in its own shape', async () => {
      W().mock.reset();
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
      const r = await client.chat.completions.create({
        model: model(), messages: [{ role: 'user', content: 'answer in json' }],
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
      });
      assert.equal(r.choices[0]!.finish_reason, 'stop');
      const b = lastBody(W());
      switch (W().format) {
        case 'openai-chat': assert.deepEqual(b.response_format, { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } }); break;
        case 'anthropic-messages': assert.deepEqual(b.output_config, { format: { type: 'json_schema', schema } }); break;
        case 'gemini':
          assert.equal(b.generationConfig.responseMimeType, 'application/json');
          assert.deepEqual(b.generationConfig.responseJsonSchema ?? b.generationConfig.responseSchema, schema);
          break;
        case 'bedrock-converse':
          assert.equal(b.outputConfig.textFormat.type, 'json_schema');
          assert.equal(b.outputConfig.textFormat.structure.jsonSchema.name, 'answer');
          assert.deepEqual(JSON.parse(b.outputConfig.textFormat.structure.jsonSchema.schema), schema);
          break;
      }
    });

    test('stop sequences cut the text (finish stop); max_tokens gives finish length', async () => {
      const s = await client.chat.completions.create({ model: model(), stop: ['three'], messages: [{ role: 'user', content: 'one two three four' }] });
      assert.equal(s.choices[0]!.message.content, 'Echo: one two ');
      assert.equal(s.choices[0]!.finish_reason, 'stop');
      const l = await client.chat.completions.create({ model: model(), max_completion_tokens: 3, messages: [{ role: 'user', content: 'one two three four five' }] });
      assert.equal(l.choices[0]!.message.content, 'Echo: one two');
      assert.equal(l.choices[0]!.finish_reason, 'length');
      const ls = await client.chat.completions.stream({ model: model(), max_tokens: 3, messages: [{ role: 'user', content: 'one two three four five' }] }).finalChatCompletion();
      assert.equal(ls.choices[0]!.finish_reason, 'length');
    });

    test('an upstream 400 reaches the client as a 400 in the OpenAI envelope with the upstream message', async () => {
      W().mock.fault({ status: 400 });
      await assert.rejects(client.chat.completions.create({ model: model(), messages: [{ role: 'user', content: 'x' }] }),
        (e: unknown) => e instanceof OpenAI.BadRequestError && e.status === 400 && /Invalid request \(injected fault\)/.test(e.message)
          && (e.error as Rec).type === 'invalid_request_error');
      W().mock.fault({ status: 400 });
      await assert.rejects(client.chat.completions.stream({ model: model(), messages: [{ role: 'user', content: 'x' }] }).finalChatCompletion(),
        (e: unknown) => e instanceof OpenAI.BadRequestError && /injected fault/.test(e.message));
    });
  });
}

test('reasoning tokens are reported (OpenAI reasoning_effort)', async () => {
  const oai = wires[0]!;
  oai.mock.reset();
  const r = await client.chat.completions.create({ model: 'oai/test-model', reasoning_effort: 'low', messages: [{ role: 'user', content: 'think a little' }] });
  assert.equal(r.usage!.completion_tokens_details!.reasoning_tokens, 16);
  assert.equal(r.usage!.completion_tokens, (await replayUsage(oai)).output);
});
