// Conformance: what the client-side encoders emit is parsed by the official SDKs. Recorded
// upstream streams of one format are decoded, re-encoded for the other format's client, and
// handed to that format's SDK through a fake fetch (no network).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { Codec } from '../src/formats/codec.ts';
import { openaiChatCodec } from '../src/formats/openai-chat/index.ts';
import { anthropicMessagesCodec } from '../src/formats/anthropic-messages/index.ts';

const fixture = (format: string, name: string): { in: string[] } =>
  JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'formats', format, `${name}.json`), 'utf8'));

/** Decode a recorded upstream stream and re-encode it for another client format. */
function translate(from: Codec, to: Codec, lines: string[], includeUsage: boolean): string {
  const d = from.upstream.newStreamDecoder();
  const events = [...d.push(new TextEncoder().encode(lines.join('\n'))), ...d.end()];
  const e = to.client!.newStreamEncoder({ includeUsage });
  return events.map((ev) => e.encode(ev)).join('') + e.end();
}

const sseFetch = (body: string) => async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });

test('OpenAI SDK accumulates a chat stream translated from an Anthropic stream', async () => {
  const body = translate(anthropicMessagesCodec, openaiChatCodec, fixture('anthropic-messages', 'upstream-stream-full').in, true);
  const client = new OpenAI({ apiKey: 'k', baseURL: 'http://gateway.test/v1', fetch: sseFetch(body) });
  const stream = client.chat.completions.stream({ model: 'anthropic/claude', messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } });
  const final = await stream.finalChatCompletion();
  assert.equal(final.id, 'msg_s1');
  const msg = final.choices[0]!.message;
  assert.equal(msg.content, 'Olá, mundo 🌍');
  assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
  assert.deepEqual(msg.tool_calls?.map((c) => c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : null), [['toolu_7', 'calc', { a: 1, b: 2 }]]);
  assert.equal(final.usage?.prompt_tokens, 1225);
  assert.equal(final.usage?.prompt_tokens_details?.cached_tokens, 1200);
  assert.equal(final.usage?.completion_tokens, 91);
});

test('Anthropic SDK accumulates a Messages stream translated from an OpenAI stream with parallel tools', async () => {
  const body = translate(openaiChatCodec, anthropicMessagesCodec, fixture('openai-chat', 'upstream-stream-parallel-tools').in, true);
  const client = new Anthropic({ apiKey: 'k', baseURL: 'http://gateway.test', fetch: sseFetch(body) });
  const final = await client.messages.stream({ model: 'openai/gpt-5-mini', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
  assert.equal(final.id, 'chatcmpl-9');
  assert.equal(final.stop_reason, 'tool_use');
  assert.deepEqual(final.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_use' ? [b.id, b.name, b.input] : b.type)), [
    'Sure, checking.', ['call_a', 'weather', { city: 'Oslo' }], ['call_b', 'time', { tz: 'CET' }],
  ]);
  assert.equal(final.usage.input_tokens, 20);
  assert.equal(final.usage.cache_read_input_tokens, 100);
  assert.equal(final.usage.output_tokens, 33);
});

test('Anthropic SDK reads thinking and signature re-encoded from an Anthropic stream', async () => {
  const body = translate(anthropicMessagesCodec, anthropicMessagesCodec, fixture('anthropic-messages', 'upstream-stream-full').in, true);
  const client = new Anthropic({ apiKey: 'k', baseURL: 'http://gateway.test', fetch: sseFetch(body) });
  const final = await client.messages.stream({ model: 'anthropic/claude', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
  assert.deepEqual(final.content[0], { type: 'thinking', thinking: 'Weigh it.', signature: 'EqQBCgIYAhIM' });
  assert.equal(final.usage.service_tier, 'standard');
});

test('OpenAI SDK surfaces an error frame translated from an Anthropic overloaded_error', async () => {
  const body = translate(anthropicMessagesCodec, openaiChatCodec, fixture('anthropic-messages', 'upstream-stream-error').in, false);
  const client = new OpenAI({ apiKey: 'k', baseURL: 'http://gateway.test/v1', fetch: sseFetch(body), maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'a/b', messages: [{ role: 'user', content: 'x' }], stream: true });
  await assert.rejects(async () => {
    for await (const _ of stream) { /* drain */ }
  }, /Overloaded/);
});
