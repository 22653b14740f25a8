// Messages stream encoder details not covered by the recorded fixtures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicMessagesCodec } from '../src/formats/anthropic-messages/index.ts';
import { createSseParser } from '../src/formats/sse.ts';
import { mergeUsage } from '../src/formats/canonical.ts';

const frames = (text: string) => createSseParser().push(new TextEncoder().encode(text)).map((f) => ({ event: f.event, data: JSON.parse(f.data) as unknown }));

test('a block_start already carrying text or thinking is followed by deltas, so nothing is lost', () => {
  const e = anthropicMessagesCodec.client!.newStreamEncoder({ includeUsage: false });
  const text = e.encode({ type: 'block_start', index: 0, block: { type: 'text', text: 'pre' } })
    + e.encode({ type: 'block_start', index: 1, block: { type: 'thinking', thinking: 'hm', signature: 'S' } });
  assert.deepEqual(frames(text), [
    { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
    { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'pre' } } },
    { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: '', signature: '' } } },
    { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: 'hm' } } },
    { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'signature_delta', signature: 'S' } } },
  ]);
});

test('message_delta carries output_tokens always and other usage only when known; errors use Anthropic types', () => {
  const e = anthropicMessagesCodec.client!.newStreamEncoder({ includeUsage: false });
  assert.deepEqual(frames(e.encode({ type: 'message_delta', stop_reason: 'end_turn', stop_sequence: null, usage: {} })), [
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 0 } } },
  ]);
  assert.deepEqual(frames(e.encode({ type: 'message_delta', stop_reason: 'max_tokens', stop_sequence: null, usage: { output_tokens: 7, reasoning_tokens: 3, cache_creation_1h: 5 } }))[0]!.data, {
    type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null },
    usage: { output_tokens: 7, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 5 }, output_tokens_details: { thinking_tokens: 3 } },
  });
  assert.deepEqual(frames(e.encode({ type: 'error', error: { type: 'rate_limit', message: 'slow' } })), [
    { event: 'error', data: { type: 'error', error: { type: 'rate_limit_error', message: 'slow' } } },
  ]);
  assert.equal(e.end(), '');
});

test('a message_delta without the cache split keeps the split message_start reported', () => {
  const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  const d = anthropicMessagesCodec.upstream.newStreamDecoder();
  const events = d.push(new TextEncoder().encode(
    sse('message_start', { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'c', content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: 3, output_tokens: 1, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 2000 } } } })
    + sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9, cache_creation_input_tokens: 2000 } }),
  ));
  let usage = null;
  for (const ev of events) if (ev.type === 'message_start' || ev.type === 'message_delta') usage = mergeUsage(usage, ev.usage);
  assert.equal(usage!.cache_creation_1h, 2000);
  assert.equal(usage!.cache_creation_5m, 0);
  assert.equal(usage!.output_tokens, 9);
});
