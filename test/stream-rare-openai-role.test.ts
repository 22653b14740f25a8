// Some OpenAI-compatible servers start a stream without the role chunk: the first delta carries content or
// a tool call and no `role`. The OpenAI format has the role in each choice's first delta, and the openai
// SDK's stream helper (chat.completions.stream, runTools) fails the whole answer without it ("missing role
// for choice 0"). The same-format relay gives the first delta the assistant role when the server did not;
// a stream that has it is relayed with its one role, untouched. Read with the official openai SDK.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { startRawUpstream, sse, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';

let up: RawUpstream; let gw: TestGateway; let openai: OpenAI;
const MODELS = [{ name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true } }];

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({ providers: [{ id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: MODELS }] });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw?.stop(); await up.close(); });
beforeEach(() => up.reset());

const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null): string =>
  sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'compat', choices: [{ index: 0, delta, finish_reason }] });
const usage = sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'compat', choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } });
const AZURE_PROMPT_FILTER = sse({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] });
const weather = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** Streams through the SDK's stream helper; returns the whole answer, the chunks as sent and the inference id. */
async function ask(): Promise<{ answer: OpenAI.Chat.ChatCompletion | null; error: unknown; chunks: OpenAI.Chat.ChatCompletionChunk[]; id: string }> {
  const { data, response } = await openai.chat.completions.create({ model: 'oa/test-model', stream: true, tools: [weather], messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  const [read, accumulate] = data.tee();
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const c of read) chunks.push(c);
  let answer: OpenAI.Chat.ChatCompletion | null = null;
  let error: unknown = null;
  try { answer = await ChatCompletionStream.fromReadableStream(accumulate.toReadableStream()).finalChatCompletion(); } catch (e) { error = e; }
  assert.equal(await settled(gw), 0);
  return { answer, error, chunks, id: response.headers.get('x-inference-id')! };
}

const roles = (chunks: OpenAI.Chat.ChatCompletionChunk[]): unknown[] => chunks.flatMap((c) => c.choices.flatMap((ch) => ('role' in ch.delta ? [ch.delta.role] : [])));

test('a stream without a role chunk: its first delta, text, gets the assistant role', async () => {
  up.push({ chunks: [chunk({ content: 'Hello' }), chunk({ content: ' world' }), chunk({}, 'stop'), usage, 'data: [DONE]\n\n'] });
  const r = await ask();
  // Before: the helper threw 'missing role for choice 0'.
  assert.equal(r.error, null, String(r.error));
  assert.deepEqual([r.answer!.choices[0]!.message.role, r.answer!.choices[0]!.message.content], ['assistant', 'Hello world']);
  assert.deepEqual(roles(r.chunks), ['assistant']);
  const rec = await recordOf(gw, r.id);
  assert.deepEqual([rec.partial ?? false, rec.inputTokens, rec.outputTokens], [false, 9, 4]);
});

test('after an Azure prompt-filter chunk, the first delta (a tool call) gets the role; an empty first delta too', async () => {
  up.push({ chunks: [AZURE_PROMPT_FILTER, chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }, 'tool_calls'), usage, 'data: [DONE]\n\n'] });
  const r = await ask();
  assert.equal(r.error, null, String(r.error));
  const call = r.answer!.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
  assert.deepEqual([call.id, call.function.name, call.function.arguments], ['call_1', 'get_weather', '{"city":"Oslo"}']);
  assert.deepEqual(roles(r.chunks), ['assistant']);

  up.push({ chunks: [chunk({}), chunk({ content: 'Hi' }), chunk({}, 'stop'), 'data: [DONE]\n\n'] });
  const e = await ask();
  assert.equal(e.error, null, String(e.error));
  assert.equal(e.answer!.choices[0]!.message.content, 'Hi');
  assert.deepEqual(roles(e.chunks), ['assistant']);
});

test('a stream with its role chunk keeps its one role, as sent', async () => {
  up.push({ chunks: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hi' }), chunk({ role: 'assistant', content: '!' }), chunk({}, 'stop'), 'data: [DONE]\n\n'] });
  const r = await ask();
  assert.equal(r.error, null, String(r.error));
  assert.equal(r.answer!.choices[0]!.message.content, 'Hi!');
  assert.deepEqual(roles(r.chunks), ['assistant', 'assistant']);
});
