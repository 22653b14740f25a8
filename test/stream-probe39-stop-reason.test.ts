// A stream's stop reason, once known, is never erased by a later message_delta without one. Anthropic
// streams may carry more than one message_delta (a usage-only one after the one with the stop reason, as
// Anthropic-compatible servers send); before the fix the Responses encoder took the last one's null and
// reported a max_tokens answer as `completed`, and the Messages encoder relayed the null (and output_tokens
// 0), which the SDK's MessageStream assigns to the message. Checked with the official SDKs through the
// gateway, and per encoder.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startRawUpstream, sse, messageStart, textBlock, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import type { StreamEvent } from '../src/formats/canonical.ts';
import { createResponsesStreamEncoder } from '../src/formats/openai-responses/stream-encoder.ts';
import { createChatStreamEncoder } from '../src/formats/openai-chat/stream-encoder.ts';
import { createMessagesStreamEncoder } from '../src/formats/anthropic-messages/stream-encoder.ts';
import { createSseParser } from '../src/formats/sse.ts';

let up: RawUpstream; let gw: TestGateway; let openai: OpenAI;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [{ id: 'an', format: 'anthropic-messages', base_url: up.url }],
    gateway: { upstream: { max_attempts: 1 } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

/** An Anthropic stream cut by max_tokens, then a second, usage-only message_delta (stop_reason null). */
const twoDeltas = messageStart() + textBlock('Hello')
  + sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop')
  + sse({ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 7 } }, 'message_delta')
  + sse({ type: 'message_delta', delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 9 } }, 'message_delta')
  + sse({ type: 'message_stop' }, 'message_stop');

test('Anthropic -> Responses client: a later usage-only message_delta keeps the answer incomplete (max_output_tokens)', async () => {
  up.push({ chunks: [twoDeltas] });
  const { data, response } = await openai.responses.create({ model: 'an/test-model', stream: true, input: 'hi' }).withResponse();
  let last: Record<string, any> | null = null;
  for await (const e of data as AsyncIterable<Record<string, any>>) last = e;
  assert.equal(last?.type, 'response.incomplete');
  assert.equal(last?.response.status, 'incomplete');
  assert.deepEqual(last?.response.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(last?.response.usage.output_tokens, 9, 'the later usage still counts');
  assert.equal(await settled(gw), 0);
  const rec = await recordOf(gw, response.headers.get('x-inference-id')!);
  assert.equal(rec.outputTokens, 9);
});

test('Anthropic -> chat client: the finish_reason is length, from the first delta', async () => {
  up.push({ chunks: [twoDeltas] });
  const stream = await openai.chat.completions.create({ model: 'an/test-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
  const finishes: unknown[] = []; let usage: any = null;
  for await (const c of stream) { if (c.choices[0]?.finish_reason) finishes.push(c.choices[0].finish_reason); if (c.usage) usage = c.usage; }
  assert.deepEqual(finishes, ['length']);
  assert.equal(usage.completion_tokens, 9);
});

// ---- Per encoder: the same canonical events ---------------------------------------------------------------

const events: StreamEvent[] = [
  { type: 'message_start', id: 'id1', model: 'm', usage: { input_tokens: 3 } },
  { type: 'block_start', index: 0, block: { type: 'text', text: '' } },
  { type: 'block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
  { type: 'block_stop', index: 0 },
  { type: 'message_delta', stop_reason: 'max_tokens', stop_sequence: null, usage: { output_tokens: 7 } },
  { type: 'message_delta', stop_reason: null, stop_sequence: null, usage: {} },
  { type: 'message_stop' },
];

const frames = (text: string): Array<Record<string, any>> => {
  const p = createSseParser();
  return [...p.push(new TextEncoder().encode(text)), ...p.end()].filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data));
};
const encodeAll = (enc: { encode(ev: StreamEvent): string; end(): string }): Array<Record<string, any>> =>
  frames(events.map((ev) => enc.encode(structuredClone(ev))).join('') + enc.end());

test('Responses encoder: the terminal event keeps the first stop reason', () => {
  const out = encodeAll(createResponsesStreamEncoder({ request: { model: 'm', input: 'hi' } }));
  const last = out.at(-1)!;
  assert.equal(last.type, 'response.incomplete');
  assert.deepEqual(last.response.incomplete_details, { reason: 'max_output_tokens' });
});

test('Messages encoder: a later message_delta repeats the stop reason and output tokens, never nulls them', () => {
  const deltas = encodeAll(createMessagesStreamEncoder()).filter((e) => e.type === 'message_delta');
  assert.equal(deltas.length, 2);
  for (const d of deltas) {
    assert.equal(d.delta.stop_reason, 'max_tokens');
    assert.equal(d.usage.output_tokens, 7);
  }
});

test('chat encoder: one finish chunk, length', () => {
  const out = encodeAll(createChatStreamEncoder({ includeUsage: false }));
  assert.deepEqual(out.map((c) => c.choices[0]?.finish_reason).filter((f) => f !== null), ['length']);
});
