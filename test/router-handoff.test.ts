// A conversation the router moves between providers mid tool loop: the first turn's answer (tool
// calls, made by one provider in its own ids and shapes) comes back in the client's next turn, which
// the router sends to another provider. Every ordered pair of five providers (OpenAI, Anthropic,
// Gemini, Bedrock-Claude, Mistral), from the official openai (Chat Completions) and @anthropic-ai/sdk
// clients, plain and with parallel calls, each turn routed with `models` naming the provider that
// must serve it, and with thinking on (each provider's signatures go back only to their signer; Gemini
// 3 wants a signature on function calls). The mocks refuse what the real APIs refuse (tool call ids,
// call/result pairing, role order, thought signatures), so any history one provider made that another
// would refuse fails here: on the code before this session's fixes, every variant fails (the pairs into
// Mistral on tool call ids, into Gemini 3 on missing or foreign signatures).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockMistral, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway, type TestProvider } from './helpers/gateway.ts';

const caps = { tools: true, vision: false, reasoning: true, structured_output: false, prompt_caching: false };
type P = { id: string; format: TestProvider['format']; start: () => Promise<MockUpstream>; model: string; upstream?: string; extra?: Partial<TestProvider> };
const PROVIDERS: P[] = [
  { id: 'openai', format: 'openai-chat', start: startMockOpenAI, model: 'gpt-5-mini' },
  { id: 'anthropic', format: 'anthropic-messages', start: startMockAnthropic, model: 'claude-test' },
  // Gemini 3: its function calls carry thought signatures it wants back, and it refuses other models'.
  { id: 'gemini', format: 'gemini', start: startMockGemini, model: 'gemini-3-flash-preview' },
  { id: 'bedrock', format: 'bedrock-converse', start: startMockBedrock, model: 'claude-test', upstream: 'anthropic.claude-test-v1:0' },
  { id: 'mistral', format: 'openai-chat', start: startMockMistral, model: 'devstral-test', extra: { tool_call_ids: { alphabet: 'alnum', length: 9 } } },
];

let mocks: MockUpstream[] = []; let gw: TestGateway;
before(async () => {
  mocks = await Promise.all(PROVIDERS.map((p) => p.start()));
  gw = await startTestGateway({
    providers: PROVIDERS.map((p, i) => ({
      id: p.id, format: p.format, base_url: mocks[i]!.url, ...p.extra,
      models: [{ name: p.model, ...(p.upstream ? { upstream: p.upstream } : {}), pricing: TEST_PRICING, capabilities: caps, context_window: 32000, max_completion_tokens: 4000 }],
    })),
    gateway: { router: { exploration: { share: 0 }, affinity: { enabled: false } } },
  });
});
after(async () => { await gw?.stop(); await Promise.all(mocks.map((m) => m.close())); });

const target = (p: P): string => `${p.id}/${p.model}`;
const PAIRS = PROVIDERS.flatMap((a) => PROVIDERS.filter((b) => b !== a).map((b) => [a, b] as const));

describe('anthropic SDK: tool calls made by one provider, answered on another', () => {
  const client = (): Anthropic => new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const tools: Anthropic.Tool[] = [
    { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    { name: 'get_time', description: 'Local time in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  ];
  for (const [both, thinking] of [[false, false], [true, false], [false, true]] as const) {
    test(`every ordered pair of providers${both ? ', two parallel calls' : ''}${thinking ? ', thinking on (signed by whoever thought)' : ''}`, async () => {
      const think = thinking ? { thinking: { type: 'enabled' as const, budget_tokens: 1024 }, max_tokens: 2048 } : { max_tokens: 300 };
      for (const [a, b] of PAIRS) {
        const ask = `What is the weather in Paris?${both ? ' Use both tools.' : ''}`;
        const messages: Anthropic.MessageParam[] = [{ role: 'user', content: ask }];
        // A forced tool choice and thinking do not go together (Claude refuses it): thinking turns call on "weather".
        const first = await client().messages.create({ model: 'router', models: [target(a)], ...think, tools, ...(thinking ? {} : { tool_choice: { type: 'any' } }), messages } as unknown as Anthropic.MessageCreateParamsNonStreaming)
          .catch((e: Error) => { throw new Error(`${a.id} (turn 1): ${e.message}`); });
        assert.equal(first.model, target(a));
        const calls = first.content.filter((c): c is Anthropic.ToolUseBlock => c.type === 'tool_use');
        assert.equal(calls.length, both ? 2 : 1, `${a.id} made the calls`);
        // Signed thinking comes back from the providers that sign it: the history then carries their signature.
        if (thinking && ['anthropic', 'bedrock', 'gemini'].includes(a.id)) assert.ok(first.content.some((c) => c.type === 'thinking' && c.signature !== ''), `${a.id}: signed thinking`);
        messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: calls.map((c) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: `18 C (${c.name})` })) });
        const stream = client().messages.stream({ model: 'router', models: [target(b)], ...think, tools, messages } as unknown as Anthropic.MessageStreamParams);
        const second = await stream.finalMessage().catch((e: Error) => { throw new Error(`${a.id} -> ${b.id}: ${e.message}`); });
        assert.equal(second.model, target(b), `${a.id} -> ${b.id}`);
        assert.match(second.content.map((c) => (c.type === 'text' ? c.text : '')).join(''), /18 C/, `${a.id} -> ${b.id}: the answer reads the results`);
      }
    });
  }
});

describe('openai SDK (Chat Completions): tool calls made by one provider, answered on another', () => {
  const client = (): OpenAI => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const fn = (name: string): OpenAI.ChatCompletionTool => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } });
  const tools = [fn('get_weather'), fn('get_time')];
  for (const both of [false, true]) {
    test(`every ordered pair of providers${both ? ', two parallel calls' : ''}`, async () => {
      for (const [a, b] of PAIRS) {
        const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `What is the weather in Paris?${both ? ' Use both tools.' : ''}` }];
        const first = await client().chat.completions.create({ model: 'router', models: [target(a)], tools, tool_choice: 'required', messages } as OpenAI.ChatCompletionCreateParamsNonStreaming);
        assert.equal(first.model, target(a));
        const msg = first.choices[0]!.message;
        assert.equal(msg.tool_calls?.length, both ? 2 : 1, `${a.id} made the calls`);
        // The assistant message goes back as the SDK returned it (extra fields included), as agents do.
        messages.push(msg as OpenAI.ChatCompletionMessageParam, ...msg.tool_calls!.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: `18 C (${(c as OpenAI.ChatCompletionMessageFunctionToolCall).function.name})` })));
        let text = '';
        try {
          const stream = await client().chat.completions.create({ model: 'router', models: [target(b)], tools, messages, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
          for await (const c of stream) { text += c.choices[0]?.delta.content ?? ''; assert.equal(c.model, target(b)); }
        } catch (e) { throw new Error(`${a.id} -> ${b.id}: ${(e as Error).message}`); }
        assert.match(text, /18 C/, `${a.id} -> ${b.id}: the answer reads the results`);
      }
    });
  }
});

describe('openai SDK (Responses): function calls made by one provider, answered on another', () => {
  const client = (): OpenAI => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const fn = (name: string): OpenAI.Responses.FunctionTool => ({ type: 'function', name, strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } });
  const tools = [fn('get_weather'), fn('get_time')];
  for (const both of [false, true]) {
    test(`every ordered pair of providers${both ? ', two parallel calls' : ''} (the history sent back in full, store off)`, async () => {
      for (const [a, b] of PAIRS) {
        const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: `What is the weather in Paris?${both ? ' Use both tools.' : ''}` }];
        const first = await client().responses.create({ model: 'router', models: [target(a)], tools, tool_choice: 'required', store: false, input } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
        const calls = first.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call');
        assert.equal(calls.length, both ? 2 : 1, `${a.id} made the calls`);
        input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]), ...calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `18 C (${c.name})` })));
        const second = await client().responses.create({ model: 'router', models: [target(b)], tools, store: false, input } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
          .catch((e: Error) => { throw new Error(`${a.id} -> ${b.id}: ${e.message}`); });
        assert.equal(second.model, target(b));
        assert.match(second.output_text, /18 C/, `${a.id} -> ${b.id}: the answer reads the results`);
      }
    });
  }
});
