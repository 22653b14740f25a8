// The input billed for an answer that reported none (cut short, or without usage) is the prompt counted
// by src/tokens for the served model (exact o200k for an OpenAI model here), not request bytes / 4; a
// body the worker pool prepared (no parsed request on the main thread) keeps the bytes bound, and its
// images, counted in the worker, are billed at the image price.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, chatChunk, chatFinish, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import { clientCodecFor } from '../src/formats/registry.ts';
import { validateChatRequest } from '../src/formats/openai-chat/validate.ts';
import { countPromptTokens } from '../src/tokens/index.ts';
import { costOf } from '../src/catalog/cost.ts';
import { zeroPricing } from '../src/catalog/types.ts';

const PRICED = { ...TEST_PRICING, image: '0.001' };
let up: RawUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [{ id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: [{ name: 'gpt-4o-mini', pricing: PRICED, max_completion_tokens: 1000 }] }],
    gateway: { upstream: { max_attempts: 1 }, workers: { threads: 1, convert_threshold_bytes: 20_000 } },
  });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

const post = (text: string, signal?: AbortSignal) => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: text, ...(signal ? { signal } : {}),
});

/** What src/tokens counts for this chat body and model (the test's own decode of the same body). */
const counted = (body: Record<string, unknown>, model: string): number =>
  countPromptTokens(clientCodecFor('openai-chat').decodeRequest(validateChatRequest(body)), model).tokens;

test('a client hang-up bills the prompt counted for the model, not the request bytes / 4', async () => {
  const body = { model: 'oa/gpt-4o-mini', stream: true, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] };
  // Whitespace between the members: many bytes, few tokens (bytes / 4 would bill about 50x too much).
  const text = JSON.stringify(body).replaceAll(',"', `,${' '.repeat(800)}"`);
  up.push({ chunks: [chatChunk(null), chatChunk('a'.repeat(40))], then: 'stall' });
  const ac = new AbortController();
  const r = await post(text, ac.signal);
  const reader = r.body!.getReader();
  let seen = '';
  while (!seen.includes('aaaa')) seen += new TextDecoder().decode((await reader.read()).value);
  ac.abort();
  assert.equal(await settled(gw), 0);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.partial, true);
  const want = counted(body, 'oa/gpt-4o-mini');
  assert.equal(rec.inputTokens, want);
  // o200k: "Be brief." is 3 tokens, "hi" 1, 4 per message and 3 to prime the reply (OpenAI's cookbook count).
  assert.equal(want, 3 + 1 + 2 * 4 + 3);
  assert.ok(Math.ceil(Buffer.byteLength(text) / 4) > 20 * rec.inputTokens, 'the byte estimate would be far off');
  assert.equal(rec.outputTokens, 10);
});

test('an answer that reports no usage is billed the counted prompt as well', async () => {
  const body = { model: 'oa/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'count these words please' }] };
  up.push({ chunks: [chatChunk('ok'), chatFinish(), 'data: [DONE]\n\n'] });
  const r = await post(JSON.stringify(body, null, 8));
  await r.text();
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.inputTokens, counted(body, 'oa/gpt-4o-mini'));
  assert.equal(rec.partial, undefined);
});

test('a body the worker pool prepared: the byte bound for input, and its images billed', async () => {
  const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(30_000)}` } };
  const body = { model: 'oa/gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, image, image] }] };
  const text = JSON.stringify(body);
  assert.ok(text.length > 20_000, 'above the pool threshold');
  // A whole JSON answer without usage: input estimated, two images priced.
  up.push({ headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ id: 'c', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'a cat' }, finish_reason: 'stop' }] })] });
  const r = await post(text);
  assert.equal(r.status, 200, await r.clone().text());
  await r.text();
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.inputTokens, Math.ceil(Buffer.byteLength(text) / 4), 'no parsed request on the main thread: bytes / 4');
  const usage = { input_tokens: rec.inputTokens, output_tokens: rec.outputTokens, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, cache_creation_5m: 0, cache_creation_1h: 0, reasoning_tokens: 0 };
  assert.equal(rec.costUsd, costOf({ ...zeroPricing(), ...PRICED }, usage, { images: 2, at: Date.now() }));
  assert.notEqual(rec.costUsd, costOf({ ...zeroPricing(), ...PRICED }, usage, { at: Date.now() }), 'the images are in the bill');
});
