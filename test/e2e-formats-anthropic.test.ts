// The official `@anthropic-ai/sdk` client on /v1/messages against every wire format (OpenAI,
// Anthropic, Gemini, Bedrock mocks): text, streaming through finalMessage(), tool use and results
// with ids intact, thinking round-tripped with its signature, structured output, stop reasons,
// usage equal to what the mock reported, upstream 400s in the Anthropic envelope, and
// container/context_management passed to Anthropic and refused elsewhere.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import type { TestGateway } from './helpers/gateway.ts';
import { lastBody, replayUsage, startWires, upstreamToolIds, type Norm, type Rec, type Wire } from './helpers/wires.ts';


let wires: Wire[] = [];
let gw: TestGateway; let client: Anthropic; let close: () => Promise<void>;

before(async () => {
  ({ wires, gw, close } = await startWires());
  client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await close(); });

const normClient = (u: Anthropic.Usage): Omit<Norm, 'reasoning'> =>
  ({ input: u.input_tokens, read: u.cache_read_input_tokens ?? 0, write: u.cache_creation_input_tokens ?? 0, output: u.output_tokens });

const weather: Anthropic.Tool = {
  name: 'get_weather', description: 'Weather for a city',
  input_schema: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location'] },
};
const time: Anthropic.Tool = { name: 'get_time', description: 'Local time in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

const textOf = (m: Anthropic.Message): string => m.content.filter((b) => b.type === 'text').map((b) => (b as Anthropic.TextBlock).text).join('');


/** The thinking text and signature the upstream received on the assistant turn, per wire format. */
function upstreamThinking(w: Wire): { text: string; signature: string } | null {
  const b = lastBody(w);
  switch (w.format) {
    case 'anthropic-messages': {
      const t = b.messages.flatMap((m: Rec) => (Array.isArray(m.content) ? m.content : [])).find((x: Rec) => x.type === 'thinking');
      return t ? { text: t.thinking, signature: t.signature } : null;
    }
    case 'bedrock-converse': {
      const t = b.messages.flatMap((m: Rec) => m.content).find((x: Rec) => x.reasoningContent);
      return t ? { text: t.reasoningContent.reasoningText.text, signature: t.reasoningContent.reasoningText.signature } : null;
    }
    case 'gemini': {
      const t = b.contents.flatMap((c: Rec) => c.parts).find((p: Rec) => p.thought === true);
      return t ? { text: t.text, signature: t.thoughtSignature } : null;
    }
    default: return null;
  }
}

const NAMES = ['openai-chat', 'anthropic-messages', 'gemini', 'bedrock-converse'];

for (const idx of [0, 1, 2, 3]) {
  const W = (): Wire => wires[idx]!;
  const name = NAMES[idx]!;
  describe(`anthropic SDK -> ${name} upstream`, () => {
    const model = (): string => `${W().id}/test-model`;

    test('non-streaming text; usage equals what the upstream reported', async () => {
      W().mock.reset();
      const m = await client.messages.create({ model: model(), max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: 'hello from the matrix' }] });
      assert.equal(textOf(m), 'Echo: hello from the matrix');
      assert.equal(m.stop_reason, 'end_turn');
      assert.equal(m.stop_sequence, null);
      assert.equal(m.type, 'message');
      assert.equal(m.model, model());
      assert.match(m.id, /^[0-9a-f-]{36}$/);
      const want = await replayUsage(W());
      assert.deepEqual(normClient(m.usage), { input: want.input, read: want.read, write: want.write, output: want.output });
    });

    test('streaming through finalMessage gives the same message and usage', async () => {
      W().mock.reset();
      const m = await client.messages.stream({ model: model(), max_tokens: 200, messages: [{ role: 'user', content: 'stream the matrix please' }] }).finalMessage();
      assert.equal(textOf(m), 'Echo: stream the matrix please');
      assert.equal(m.stop_reason, 'end_turn');
      assert.match(m.id, /^[0-9a-f-]{36}$/);
      const want = await replayUsage(W());
      assert.deepEqual(normClient(m.usage), { input: want.input, read: want.read, write: want.write, output: want.output });
    });

    test('tool use: id/name/input intact, then the tool result gives a text answer', async () => {
      W().mock.reset();
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'what is the weather in Paris?' }];
      const m = await client.messages.create({ model: model(), max_tokens: 500, tools: [weather], messages });
      assert.equal(m.stop_reason, 'tool_use');
      const uses = m.content.filter((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock[];
      assert.equal(uses.length, 1);
      assert.equal(uses[0]!.name, 'get_weather');
      assert.deepEqual(uses[0]!.input, { location: 'Paris', unit: 'celsius' });
      assert.ok(uses[0]!.id.length > 0);
      messages.push({ role: 'assistant', content: m.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: uses[0]!.id, content: '22 degrees and sunny' }] });
      const m2 = await client.messages.create({ model: model(), max_tokens: 500, tools: [weather], messages });
      assert.match(textOf(m2), /^The tool returned: .*22 degrees and sunny/);
      assert.equal(m2.stop_reason, 'end_turn');
      const want = W().format === 'gemini' ? 'get_weather' : uses[0]!.id;
      assert.deepEqual(upstreamToolIds(W()), { callIds: [want], resultIds: [want] });
    });

    test('streamed parallel tool use accumulates in finalMessage; both results round-trip', async () => {
      W().mock.reset();
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'use both tools for the weather' }];
      const m = await client.messages.stream({ model: model(), max_tokens: 500, tools: [weather, time], messages }).finalMessage();
      assert.equal(m.stop_reason, 'tool_use');
      const uses = m.content.filter((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock[];
      assert.deepEqual(uses.map((u) => [u.name, u.input]), [['get_weather', { location: 'Paris', unit: 'celsius' }], ['get_time', { city: 'London' }]]);
      assert.equal(new Set(uses.map((u) => u.id)).size, 2);
      messages.push({ role: 'assistant', content: m.content }, {
        role: 'user', content: [{ type: 'tool_result', tool_use_id: uses[0]!.id, content: 'sunny' }, { type: 'tool_result', tool_use_id: uses[1]!.id, content: 'noon' }],
      });
      const m2 = await client.messages.stream({ model: model(), max_tokens: 500, tools: [weather, time], messages }).finalMessage();
      assert.match(textOf(m2), /^The tool returned: /);
      const want = W().format === 'gemini' ? ['get_weather', 'get_time'] : uses.map((u) => u.id);
      assert.deepEqual(upstreamToolIds(W()), { callIds: want, resultIds: want });
    });

    test('structured output (output_config.format json_schema) reaches the upstream in its own shape', async () => {
      W().mock.reset();
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
      const m = await client.messages.create({ model: model(), max_tokens: 200, messages: [{ role: 'user', content: 'answer in json' }], output_config: { format: { type: 'json_schema', schema } } } as Anthropic.MessageCreateParamsNonStreaming);
      assert.equal(m.stop_reason, 'end_turn');
      const b = lastBody(W());
      switch (W().format) {
        case 'openai-chat': assert.deepEqual(b.response_format.json_schema.schema, schema); assert.equal(b.response_format.type, 'json_schema'); break;
        case 'anthropic-messages': assert.deepEqual(b.output_config, { format: { type: 'json_schema', schema } }); break;
        case 'gemini': assert.deepEqual(b.generationConfig.responseJsonSchema, schema); break;
        case 'bedrock-converse': assert.deepEqual(JSON.parse(b.outputConfig.textFormat.structure.jsonSchema.schema), schema); break;
      }
    });

    test('stop sequences and max_tokens: stop reasons', async () => {
      const s = await client.messages.create({ model: model(), max_tokens: 200, stop_sequences: ['three'], messages: [{ role: 'user', content: 'one two three four' }] });
      assert.equal(textOf(s), 'Echo: one two ');
      // Anthropic and Bedrock name the matched sequence; OpenAI and Gemini only say "stop".
      if (W().format === 'anthropic-messages' || W().format === 'bedrock-converse') {
        assert.equal(s.stop_reason, 'stop_sequence');
        assert.equal(s.stop_sequence, 'three');
      } else {
        assert.equal(s.stop_reason, 'end_turn');
        assert.equal(s.stop_sequence, null);
      }
      const l = await client.messages.create({ model: model(), max_tokens: 3, messages: [{ role: 'user', content: 'one two three four five' }] });
      assert.equal(textOf(l), 'Echo: one two');
      assert.equal(l.stop_reason, 'max_tokens');
      const ls = await client.messages.stream({ model: model(), max_tokens: 3, messages: [{ role: 'user', content: 'one two three four five' }] }).finalMessage();
      assert.equal(ls.stop_reason, 'max_tokens');
    });

    test('an upstream 400 reaches the client as a 400 in the Anthropic envelope with the upstream message', async () => {
      W().mock.fault({ status: 400 });
      await assert.rejects(client.messages.create({ model: model(), max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
        (e: unknown) => e instanceof Anthropic.BadRequestError && e.status === 400 && /Invalid request \(injected fault\)/.test(e.message)
          && (e.error as Rec).type === 'error' && (e.error as Rec).error.type === 'invalid_request_error');
      W().mock.fault({ status: 400 });
      await assert.rejects(client.messages.stream({ model: model(), max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage(),
        (e: unknown) => e instanceof Anthropic.BadRequestError && /injected fault/.test(e.message));
    });

    test('container and context_management: relayed to Anthropic (with the beta header); elsewhere the container is dropped and the edits applied, both reported', async () => {
      W().mock.reset();
      const params = {
        model: model(), max_tokens: 50, messages: [{ role: 'user' as const, content: 'hi' }],
        container: 'container_abc', context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      } as unknown as Anthropic.MessageCreateParamsNonStreaming;
      const { data: m, response } = await client.messages.create(params, { headers: { 'anthropic-beta': 'context-management-2025-06-27' } }).withResponse();
      assert.equal(textOf(m), 'Echo: hi');
      const adjustments = response.headers.get('x-gateway-adjustments') ?? '';
      if (W().format === 'anthropic-messages') {
        assert.equal(lastBody(W()).container, 'container_abc');
        assert.deepEqual(lastBody(W()).context_management, { edits: [{ type: 'clear_tool_uses_20250919' }] });
        assert.equal(adjustments, '');
      } else {
        assert.equal(JSON.stringify(lastBody(W())).includes('container_abc'), false);
        assert.match(adjustments, /container=dropped/);
        assert.match(adjustments, /context_management\.edits\[0\]=clear_tool_uses\(applied by gateway: 0 results\)/);
      }
    });

    if (idx === 0) {
      test('thinking against Chat Completions becomes reasoning_effort; reasoning tokens are recorded, no thinking text', async () => {
        W().mock.reset();
        const m = await client.messages.create({ model: model(), max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'ponder this' }] });
        assert.equal(lastBody(W()).reasoning_effort, 'low');
        assert.deepEqual(m.content.map((b) => b.type), ['text']);
        const want = await replayUsage(W());
        assert.equal(m.usage.output_tokens, want.output);
        let rec;
        for (let i = 0; i < 50 && !rec; i++) {
          await new Promise((r) => setTimeout(r, 20));
          rec = (await gw.services.store!.listInferences({ limit: 5 })).find((x) => x.id === m.id);
        }
        assert.equal(rec?.reasoningTokens, want.reasoning);
      });
    } else {
      test('thinking: text and signature come back and round-trip on the next turn (plain and streamed)', async () => {
        for (const streamed of [false, true]) {
          W().mock.reset();
          const params: Anthropic.MessageCreateParamsNonStreaming = {
            model: model(), max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'ponder this question' }],
          };
          const m = streamed ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
          const th = m.content.find((b) => b.type === 'thinking') as Anthropic.ThinkingBlock | undefined;
          assert.ok(th, `a thinking block (${streamed ? 'streamed' : 'plain'})`);
          assert.equal(th.thinking, 'Let me think about "ponder this question" step by step before answering.');
          assert.ok(th.signature.length > 20);
          assert.equal(textOf(m), 'Echo: ponder this question');
          assert.equal(m.content[0]!.type, 'thinking');
          const m2 = await client.messages.create({ ...params, messages: [...params.messages, { role: 'assistant', content: m.content }, { role: 'user', content: 'and again' }] });
          assert.equal(textOf(m2), 'Echo: and again');
          // Another signer's signature reaches the client marked with it (src/formats/signatures.ts) and goes back raw.
          const raw = th.signature.replace(/^gwsig1:gemini:test-model:/, '');
          assert.equal(raw !== th.signature, name === 'gemini');
          assert.deepEqual(upstreamThinking(W()), { text: th.thinking, signature: raw });
        }
      });
    }
  });
}

test('Gemini thoughts are counted as reasoning tokens in the inference record', async () => {
  const gem = wires[2]!;
  gem.mock.reset();
  const m = await client.messages.create({ model: 'gem/test-model', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'count my thoughts' }] });
  const want = await replayUsage(gem);
  assert.ok(want.reasoning > 0);
  assert.equal(m.usage.output_tokens, want.output);
  let rec;
  for (let i = 0; i < 50 && !rec; i++) {
    await new Promise((r) => setTimeout(r, 20));
    rec = (await gw.services.store!.listInferences({ limit: 5 })).find((x) => x.id === m.id);
  }
  assert.ok(rec, 'record flushed');
  assert.equal(rec.reasoningTokens, want.reasoning);
  assert.equal(rec.outputTokens, want.output);
});

test('baseURL with /v1 works too (the SDK then calls /v1/v1/messages)', async () => {
  const c2 = new Anthropic({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const m = await c2.messages.create({ model: 'ant/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'doubled prefix' }] });
  assert.equal(textOf(m), 'Echo: doubled prefix');
  const s = await c2.messages.stream({ model: 'oai/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'doubled stream' }] }).finalMessage();
  assert.equal(textOf(s), 'Echo: doubled stream');
});
