// Gemini may send the final usageMetadata in a chunk of its own after the chunk holding finishReason.
// Before the fix the decoder closed the message at the finish chunk with the running usage (prompt only)
// and read nothing after it: the output was billed as 0 tokens and the client saw 0 completion tokens.
// The closing message_delta now waits for the end of the stream and carries the largest counts seen.
// Checked against the Gemini mock sending usage after the finish, beside the same mock sending it on the
// finish chunk (the control: both must bill the same).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockGemini, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import { newGeminiStreamDecoder } from '../src/formats/gemini/stream.ts';
import type { StreamEvent } from '../src/formats/canonical.ts';

let onFinish: MockUpstream; let afterFinish: MockUpstream; let gw: TestGateway; let openai: OpenAI; let anthropic: Anthropic;
const MODELS = [{ name: 'gemini-2.5-flash', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true } }];

before(async () => {
  onFinish = await startMockGemini();
  afterFinish = await startMockGemini({ usageAfterFinish: true });
  gw = await startTestGateway({
    providers: [
      { id: 'g1', format: 'gemini', base_url: onFinish.url, models: MODELS },
      { id: 'g2', format: 'gemini', base_url: afterFinish.url, models: MODELS },
    ],
    gateway: { upstream: { max_attempts: 1 } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw.stop(); await onFinish.close(); await afterFinish.close(); });

const PROMPT = 'Please write a few words about the sea and the sky';

/** One streamed answer: the usage the client saw, the text, and the inference id. */
async function ask(client: 'chat' | 'responses' | 'messages', model: string): Promise<{ id: string; text: string; output: number; input: number }> {
  let text = ''; let output = -1; let input = -1;
  if (client === 'chat') {
    const { data, response } = await openai.chat.completions.create({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: PROMPT }] }).withResponse();
    for await (const c of data) { text += c.choices[0]?.delta?.content ?? ''; if (c.usage) { output = c.usage.completion_tokens; input = c.usage.prompt_tokens; } }
    return { id: response.headers.get('x-inference-id')!, text, output, input };
  }
  if (client === 'responses') {
    const { data, response } = await openai.responses.create({ model, stream: true, input: PROMPT }).withResponse();
    for await (const e of data as AsyncIterable<any>) {
      if (e.type === 'response.output_text.delta') text += e.delta;
      if (e.type === 'response.completed') { output = e.response.usage.output_tokens; input = e.response.usage.input_tokens; }
    }
    return { id: response.headers.get('x-inference-id')!, text, output, input };
  }
  const { data, response } = await anthropic.messages.create({ model, stream: true, max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] }).withResponse();
  for await (const e of data) {
    if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    if (e.type === 'message_start') input = e.message.usage.input_tokens;
    if (e.type === 'message_delta') { output = e.usage.output_tokens; input = e.usage.input_tokens ?? input; }
  }
  return { id: response.headers.get('x-inference-id')!, text, output, input };
}

for (const client of ['chat', 'responses', 'messages'] as const) {
  test(`Gemini usage after the finish chunk -> ${client}: billed and shown as when it rides on the finish`, async () => {
    const control = await ask(client, 'g1/gemini-2.5-flash');
    const late = await ask(client, 'g2/gemini-2.5-flash');
    assert.ok(control.output > 0, 'the control reports output');
    assert.equal(late.text, control.text);
    assert.deepEqual([late.input, late.output], [control.input, control.output], 'the client sees the final usage');
    assert.equal(await settled(gw), 0);
    const [a, b] = [await recordOf(gw, control.id), await recordOf(gw, late.id)];
    assert.deepEqual([b.inputTokens, b.outputTokens, b.costUsd, b.partial], [a.inputTokens, a.outputTokens, a.costUsd, a.partial]);
  });
}

test('decoder: a trailing usage chunk with fewer fields lowers no count; the message ends with the stream', () => {
  const d = newGeminiStreamDecoder();
  const enc = (o: unknown) => new TextEncoder().encode(`data: ${JSON.stringify(o)}\r\n\r\n`);
  const events: StreamEvent[] = [];
  events.push(...d.push(enc({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 10, totalTokenCount: 10 }, responseId: 'r' })));
  assert.equal(events.filter((e) => e.type === 'message_stop').length, 0, 'not closed at the finish chunk');
  events.push(...d.push(enc({ usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, totalTokenCount: 18 }, responseId: 'r' })));
  events.push(...d.push(enc({ usageMetadata: { promptTokenCount: 10, totalTokenCount: 10 }, responseId: 'r' })));
  assert.deepEqual(d.heldUsage?.(), { input_tokens: 10, output_tokens: 8, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, cache_creation_5m: 0, cache_creation_1h: 0, reasoning_tokens: 3 }, 'a stream cut here bills the usage seen');
  events.push(...d.end());
  const md = events.find((e) => e.type === 'message_delta');
  assert.ok(md && md.type === 'message_delta');
  assert.equal(md.stop_reason, 'end_turn');
  assert.deepEqual([md.usage.input_tokens, md.usage.output_tokens, md.usage.reasoning_tokens], [10, 8, 3]);
  assert.equal(events.at(-1)?.type, 'message_stop');
});
