// Provider responses exactly as their docs show them (test/fixtures/formats/documented/), served by a
// raw upstream behind the gateway and read by the other format's official SDK: the expectations
// come from what the documented bytes mean, not from the gateway's own earlier output.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, TEST_PRICING } from './helpers/gateway.ts';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/formats/documented/${name}`, import.meta.url), 'utf8');

// The upstream model name picks the documented answer to replay.
const upstream = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => { body += c.toString(); });
  req.on('end', () => {
    const model = String((JSON.parse(body) as { model?: unknown }).model);
    res.writeHead(200, { 'content-type': 'text/event-stream' }).end(fixture(`${model}.sse`));
  });
});
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
const caps = { tools: true, vision: true, reasoning: true, structured_output: true, prompt_caching: true };
const models = (names: string[]) => names.map((name) => ({ name, pricing: TEST_PRICING, capabilities: caps, max_completion_tokens: 32000 }));
const gw = await startTestGateway({
  providers: [
    { id: 'ant', format: 'anthropic-messages', base_url: `${base}/v1`, models: models(['anthropic-stream-basic', 'anthropic-stream-tool-use', 'anthropic-stream-thinking', 'anthropic-stream-error']) },
    { id: 'oai', format: 'openai-chat', base_url: `${base}/v1`, models: models(['openai-stream-reference']) },
  ],
});
after(async () => { await gw.stop(); upstream.close(); });
const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'k', maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'k', maxRetries: 0 });
const ask = (model: string) => ({ model, stream: true as const, messages: [{ role: 'user' as const, content: 'Hello' }] });

test('Anthropic docs, basic stream -> OpenAI client: the text, stop and the usage the stream reported', async () => {
  const c = await openai.chat.completions.stream({ ...ask('ant/anthropic-stream-basic'), stream_options: { include_usage: true } }).finalChatCompletion();
  assert.equal(c.choices[0]!.message.content, 'Hello!');
  assert.equal(c.choices[0]!.finish_reason, 'stop');
  assert.deepEqual([c.usage!.prompt_tokens, c.usage!.completion_tokens], [25, 15]);
});

test('Anthropic docs, tool use stream -> OpenAI client: text, then one tool call with the documented arguments', async () => {
  const c = await openai.chat.completions.stream({ ...ask('ant/anthropic-stream-tool-use'), stream_options: { include_usage: true } }).finalChatCompletion();
  const m = c.choices[0]!.message;
  assert.equal(m.content, "Okay, let's check the weather for San Francisco, CA:");
  assert.equal(m.tool_calls!.length, 1);
  const call = m.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  assert.equal(call.id, 'toolu_01T1x1fJ34qAmk2tNTrN7Up6');
  assert.equal(call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.function.arguments), { location: 'San Francisco, CA', unit: 'fahrenheit' });
  assert.equal(c.choices[0]!.finish_reason, 'tool_calls');
  assert.deepEqual([c.usage!.prompt_tokens, c.usage!.completion_tokens], [472, 89]);
});

test('Anthropic docs, thinking stream (message_start without usage) -> OpenAI client: the answer after the reasoning', async () => {
  const c = await openai.chat.completions.stream(ask('ant/anthropic-stream-thinking')).finalChatCompletion();
  assert.equal(c.choices[0]!.message.content, 'The greatest common divisor of 1071 and 462 is **21**.');
  assert.equal(c.choices[0]!.finish_reason, 'stop');
});

test('Anthropic docs, an overloaded_error event mid-stream -> the OpenAI client sees an error, not a clean end', async () => {
  const stream = openai.chat.completions.stream(ask('ant/anthropic-stream-error'));
  await assert.rejects(stream.finalChatCompletion(), /Overloaded/);
});

test('OpenAI reference chunks -> Anthropic client: the documented text and end_turn', async () => {
  const m = await anthropic.messages.stream({ model: 'oai/openai-stream-reference', max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] }).finalMessage();
  assert.deepEqual(m.content.map((b) => [b.type, (b as Anthropic.TextBlock).text]), [['text', 'Hello']]);
  assert.equal(m.stop_reason, 'end_turn');
});
