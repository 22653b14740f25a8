// An OpenAI-compatible stream answered 200 that carries an error object (a chunk's `error`, or an
// `event: error` frame) is classified by its `code`/`type`, as the format's one error decoder reads
// error bodies (src/formats/openai-chat/errors.ts): the status (200) says nothing. Before, every such
// error was a 502 api_error: a rate limit reached the client as a server error, and a prompt too long
// for the model was "retried" on the next target. Before content it is a failed attempt (429 and 5xx
// fall back, 400 is final); after content it ends the client's stream with its own format's error.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRawUpstream, sse, chatChunk, chatFinish, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { settled } from './helpers/records.ts';

let up: RawUpstream; let gw: TestGateway; let openai: OpenAI; let anthropic: Anthropic;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1` },
      { id: 'ob', format: 'openai-chat', base_url: `${up.url}/v1` },
    ],
    gateway: { upstream: { max_attempts: 2 }, fallbacks: { 'oa/test-model': ['ob/test-model'] } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

// OpenAI's own rate-limit error object, as its API sends it.
const RATE = { message: 'Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500, Used 500, Requested 1.', type: 'requests', param: null, code: 'rate_limit_exceeded' };
const CONTEXT = { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' };

const chatCall = () => openai.chat.completions.create({ model: 'oa/test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] });

async function failure(p: Promise<unknown>): Promise<any> {
  try { await p; } catch (e) { return e; }
  assert.fail('expected an error');
}

test('a rate-limit error chunk first, with no target left: 429 rate_limit_error to a chat client', async () => {
  up.push({ chunks: [sse({ error: RATE })] }, { chunks: [sse({ error: RATE })] });
  const e = await failure(chatCall());
  assert.equal(e.status, 429);
  assert.equal(e.error?.type, 'rate_limit_error');
  assert.match(e.message, /Rate limit reached/);
  assert.equal(up.requests.length, 2, 'the rate limit fell back to the next target');
  assert.equal(await settled(gw), 0);
});

test('a rate-limit error chunk first: the attempt falls back, the client gets the backup answer', async () => {
  up.push({ chunks: [sse({ error: RATE })] }, { chunks: [chatChunk(null), chatChunk('from backup'), chatFinish()] });
  let text = '';
  for await (const c of await chatCall()) text += c.choices[0]?.delta?.content ?? '';
  assert.equal(text, 'from backup');
  assert.equal(up.requests.length, 2);
});

test('context_length_exceeded first: a 400 invalid_request_error, not sent to the next target', async () => {
  up.push({ chunks: [sse({ error: CONTEXT })] }, { chunks: [chatChunk(null), chatChunk('never'), chatFinish()] });
  const e = await failure(anthropic.messages.create({ model: 'oa/test-model', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(e.status, 400);
  assert.equal(e.error?.error?.type, 'invalid_request_error');
  assert.equal(up.requests.length, 1, 'a prompt too long is not retried elsewhere');
});

test('an `event: error` frame with a bare error object first is that error (429), not an empty stream', async () => {
  up.push({ chunks: [sse(RATE, 'error')] }, { chunks: [sse(RATE, 'error')] });
  const e = await failure(chatCall());
  assert.equal(e.status, 429);
  assert.equal(up.requests.length, 2);
});

test('the same `event: error` frame, translated for a Messages client: 429 rate_limit_error', async () => {
  up.push({ chunks: [sse(RATE, 'error')] }, { chunks: [sse(RATE, 'error')] });
  const e = await failure(anthropic.messages.create({ model: 'oa/test-model', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(e.status, 429);
  assert.equal(e.error?.error?.type, 'rate_limit_error');
});

test('a rate-limit error after content ends a Messages client\'s stream with rate_limit_error', async () => {
  up.push({ chunks: [chatChunk(null), chatChunk('partial'), sse({ error: RATE })] });
  const stream = await anthropic.messages.create({ model: 'oa/test-model', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
  let text = '';
  const e = await failure((async () => { for await (const ev of stream) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text; })());
  assert.equal(text, 'partial');
  assert.equal(e.error?.error?.type, 'rate_limit_error');
});

test('a rate-limit error after content ends a Responses client\'s stream with code rate_limit_exceeded', async () => {
  up.push({ chunks: [chatChunk(null), chatChunk('partial'), sse({ error: RATE })] });
  const stream = await openai.responses.create({ model: 'oa/test-model', stream: true, input: 'hi' });
  let text = '';
  // The SDK throws on the `error` event, with its data.
  const e = await failure((async () => { for await (const ev of stream as AsyncIterable<any>) if (ev.type === 'response.output_text.delta') text += ev.delta; })());
  assert.equal(text, 'partial');
  assert.equal(e.error?.type, 'error');
  assert.equal(e.error?.code, 'rate_limit_exceeded');
});
