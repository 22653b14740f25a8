// Valid JSON of the wrong shape: OpenAI-compatible servers that stream a tool call's `function.arguments`
// as a JSON object instead of a string (llama.cpp's server since 2026-03, TGI). Before, the translating
// decoder read only strings: the call reached a Messages or Responses client with no arguments (`{}`),
// silently. Its JSON is the arguments text now.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRawUpstream, sse, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

let up: RawUpstream; let gw: TestGateway; let openai: OpenAI; let anthropic: Anthropic;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({ providers: [{ id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1` }], gateway: { upstream: { max_attempts: 1 } } });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

const chunk = (delta: unknown, finish: string | null = null) =>
  sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
const objectArgs = [
  chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris', days: 2 } } }] }),
  chunk({}, 'tool_calls'),
  'data: [DONE]\n\n',
];

test('object arguments -> Messages client: the tool_use input is the object', async () => {
  up.push({ chunks: objectArgs });
  const msg = await anthropic.messages.stream({
    model: 'oa/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'weather?' }],
    tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } }],
  }).finalMessage();
  const call = msg.content.find((b) => b.type === 'tool_use');
  assert.deepEqual(call && call.type === 'tool_use' ? call.input : null, { city: 'Paris', days: 2 });
  assert.equal(msg.stop_reason, 'tool_use');
});

test('object arguments -> Responses client: the function_call arguments are its JSON', async () => {
  up.push({ chunks: objectArgs });
  const final = await openai.responses.stream({
    model: 'oa/test-model', input: 'weather?',
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } }, strict: false }],
  }).finalResponse();
  const call = final.output.find((o) => o.type === 'function_call');
  assert.deepEqual(call && call.type === 'function_call' ? JSON.parse(call.arguments) : null, { city: 'Paris', days: 2 });
});

test('object arguments in a whole (not streamed) answer -> Messages client: the tool_use input is the object', async () => {
  // The non-streaming decoder read them with String(): "[object Object]", which is no JSON.
  const body = { id: 'chatcmpl-2', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris', days: 2 } } }] } }], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } };
  up.push({ headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify(body)] });
  const msg = await anthropic.messages.create({
    model: 'oa/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'weather?' }],
    tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } }],
  });
  const call = msg.content.find((b) => b.type === 'tool_use');
  assert.deepEqual(call && call.type === 'tool_use' ? call.input : null, { city: 'Paris', days: 2 });
});
