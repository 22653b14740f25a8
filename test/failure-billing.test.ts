// Money on the failure paths: a stream cut short (client hang-up, upstream death) is billed for what it
// consumed and marked partial, and the key's reservation is settled with that; pass-through routes
// reserve output and read usage in every shape; web searches and images are charged; garbage usage
// values never throw in cost arithmetic nor leak a reservation.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, sse, chatChunk, chatFinish, messageStart, textBlock, messageEnd, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import type { MemoryLimiter } from '../src/limits/memory.ts';
import { toNanos } from '../src/limits/limiter.ts';
import { canonicalUsage } from '../src/formats/openai-chat/response.ts';
import { costOf } from '../src/catalog/cost.ts';
import { zeroPricing } from '../src/catalog/types.ts';
import { costExtrasOf } from '../src/engine/usage.ts';

const ADMIN = 'admin-key-for-billing-tests-0123456789';
let up: RawUpstream; let gw: TestGateway;

const PRICED = { ...TEST_PRICING, web_search: '0.01', image: '0.001' };

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: [{ name: 'test-model', pricing: PRICED, max_completion_tokens: 1000 }] },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1`, models: [{ name: 'test-model', pricing: PRICED, max_completion_tokens: 1000 }] },
      { id: 'ge', format: 'gemini', base_url: `${up.url}/v1beta`, models: [{ name: 'test-model', pricing: PRICED, max_completion_tokens: 1000 }] },
    ],
    gateway: { auth: { enabled: true, admin_key: ADMIN }, upstream: { first_byte_timeout_ms: 2000, idle_timeout_ms: 3000, max_attempts: 1 } },
  });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

async function createKey(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const r = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 201);
  return (await r.json()) as { id: string; key: string };
}

const spent = (id: string): bigint => (gw.services.limiter as unknown as MemoryLimiter).spentNanos({ id, budgetUsd: '1000', budgetPeriod: 'month' } as never);

const post = (path: string, key: string, body: Record<string, unknown>, signal?: AbortSignal) => fetch(`${gw.url}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body),
  ...(signal ? { signal } : {}),
});

const PROMPT = 'x'.repeat(400);

test('client hangs up mid-stream: input and relayed output are billed, the record is partial, the reservation settled with it', async () => {
  const k = await createKey({ name: 'hangup', budget_usd: '100' });
  up.push({ chunks: [chatChunk(null), chatChunk('a'.repeat(400))], then: 'stall' });
  const ac = new AbortController();
  const r = await post('/v1/chat/completions', k.key, { model: 'oa/test-model', stream: true, max_tokens: 500, messages: [{ role: 'user', content: PROMPT }] }, ac.signal);
  const reader = r.body!.getReader();
  let seen = '';
  while (!seen.includes('aaaa')) seen += new TextDecoder().decode((await reader.read()).value);
  ac.abort();
  assert.equal(await settled(gw), 0);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.status, 499);
  assert.equal(rec.partial, true);
  assert.ok(rec.inputTokens >= 100, `input estimated from the request: ${rec.inputTokens}`);
  assert.equal(rec.outputTokens, 100, 'output counted from the 400 characters relayed');
  assert.notEqual(rec.costUsd, '0');
  // The stream had begun: its time to first token is recorded (it was null for every hang-up).
  assert.equal(typeof rec.ttftMs, 'number'); assert.ok(rec.ttftMs! <= rec.latencyMs, `ttft ${rec.ttftMs} within latency ${rec.latencyMs}`);
  // The reservation was settled with the bill, not released.
  assert.equal(spent(k.id), toNanos(rec.costUsd));
});

test('client hangs up before the first content (the upstream already streaming): the input is billed, partial', async () => {
  const k = await createKey({ name: 'early-hangup', budget_usd: '100' });
  up.push({ chunks: [messageStart({ input_tokens: 777, output_tokens: 1 })], then: 'stall' });
  const ac = new AbortController();
  const pending = post('/v1/messages', k.key, { model: 'an/test-model', stream: true, max_tokens: 500, messages: [{ role: 'user', content: 'think hard' }] }, ac.signal).catch(() => null);
  for (let i = 0; i < 100 && up.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 150));
  ac.abort();
  await pending;
  assert.equal(await settled(gw), 0);
  const recs = await gw.services.store!.listInferences({ limit: 5, keyId: k.id });
  for (let i = 0; i < 100 && recs.length === 0; i++) { await new Promise((r) => setTimeout(r, 20)); recs.push(...await gw.services.store!.listInferences({ limit: 5, keyId: k.id })); }
  const rec = recs[0]!;
  assert.equal(rec.status, 499);
  assert.equal(rec.partial, true);
  assert.equal(rec.inputTokens, 777);
  assert.equal(rec.ttftMs, null, 'no content reached the client');
  assert.equal(spent(k.id), toNanos(rec.costUsd));
});

test('upstream dies mid-stream: input from message_start, output counted, partial, stream ended with an error event', async () => {
  const k = await createKey({ name: 'cut', budget_usd: '100' });
  up.push({ chunks: [messageStart({ input_tokens: 1234, output_tokens: 1 }), textBlock('b'.repeat(200))], then: 'cut' });
  const r = await post('/v1/messages', k.key, { model: 'an/test-model', stream: true, max_tokens: 500, messages: [{ role: 'user', content: 'hi' }] });
  const text = await r.text();
  assert.match(text, /event: error/);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.status, 200);
  assert.equal(rec.partial, true);
  assert.equal(rec.inputTokens, 1234);
  assert.equal(rec.outputTokens, 50);
  assert.equal(rec.costUsd, '0.001334');
  assert.equal(spent(k.id), toNanos('0.001334'));
});

test('upstream reset after the finish reason and usage, before [DONE]: the client got an error event, so the record is partial', async () => {
  const k = await createKey({ name: 'cut-late' });
  up.push({ chunks: [chatChunk(null), chatChunk('some text here'), chatFinish({ prompt_tokens: 50, completion_tokens: 30, total_tokens: 80 })], then: 'cut' });
  const r = await post('/v1/chat/completions', k.key, { model: 'oa/test-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
  assert.match(await r.text(), /upstream stream failed/);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  // Before, the same-format relay had seen the finish and recorded a complete answer.
  assert.deepEqual([rec.status, rec.partial, rec.inputTokens, rec.outputTokens, rec.costUsd], [200, true, 50, 30, '0.00011']);
});

test('a translated stream cut after the upstream reported usage is billed that usage, not an estimate (OpenAI, Gemini)', async () => {
  const k = await createKey({ name: 'cut-translated' });
  up.push({ chunks: [chatChunk(null), chatChunk('some text here'), chatFinish({ prompt_tokens: 50, completion_tokens: 30, total_tokens: 80 })], then: 'cut' });
  const r = await post('/v1/messages', k.key, { model: 'oa/test-model', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
  assert.match(await r.text(), /event: error/);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  // Before: 9 and 4, the prompt counted and the text's characters / 4 (OpenAI's usage chunk waits for [DONE] to reach an event).
  assert.deepEqual([rec.partial, rec.inputTokens, rec.outputTokens, rec.costUsd], [true, 50, 30, '0.00011']);

  // Gemini: each chunk carries the usage so far; the last one's reached the record only with a finish reason.
  const part = (text: string, out: number) => sse({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }], usageMetadata: { promptTokenCount: 40, candidatesTokenCount: out, totalTokenCount: 40 + out } });
  up.push({ chunks: [part('short', 20), part(' text', 60)], then: 'cut' });
  const g = await post('/v1/chat/completions', k.key, { model: 'ge/test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  assert.match(await g.text(), /upstream stream failed/);
  const grec = await recordOf(gw, g.headers.get('x-inference-id')!);
  // Before: output 3 (10 characters / 4).
  assert.deepEqual([grec.partial, grec.inputTokens, grec.outputTokens], [true, 40, 60]);
});

test('a stream that completes normally is not partial and bills the reported usage', async () => {
  const k = await createKey({ name: 'ok' });
  up.push({ chunks: [messageStart({ input_tokens: 10, output_tokens: 1 }), textBlock('fine'), messageEnd(3)] });
  const r = await post('/v1/messages', k.key, { model: 'an/test-model', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
  await r.text();
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.partial, undefined);
  assert.equal(rec.outputTokens, 3);
});

test('web searches the upstream ran are billed at the web_search price (Anthropic server_tool_use)', async () => {
  const k = await createKey({ name: 'search' });
  up.push({ headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({
    id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'found it' }], stop_reason: 'end_turn', stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 10, server_tool_use: { web_search_requests: 3 } },
  })] });
  const r = await post('/v1/messages', k.key, { model: 'an/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'search' }] });
  assert.equal(r.status, 200);
  await r.text();
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  // 100 x 0.000001 + 10 x 0.000002 + 3 x 0.01
  assert.equal(rec.costUsd, '0.03012');
});

test('input images are billed at the image price when the catalog lists one', async () => {
  const k = await createKey({ name: 'images' });
  up.push({ headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({
    id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'a cat' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  })] });
  const r = await post('/v1/chat/completions', k.key, { model: 'oa/test-model', messages: [{ role: 'user', content: [
    { type: 'text', text: 'what are these?' },
    { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
    { type: 'image_url', image_url: { url: 'https://example.com/b.png' } },
  ] }] });
  assert.equal(r.status, 200);
  await r.text();
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.costUsd, '0.00212'); // 0.0001 + 0.00002 + 2 x 0.001
});

for (const [name, usage] of [
  ['negative and fractional', { prompt_tokens: -50, completion_tokens: 2.6, total_tokens: 1 }],
  ['huge', { prompt_tokens: 1e300, completion_tokens: 5, total_tokens: 1e300 }],
  ['strings and nulls', { prompt_tokens: '12', completion_tokens: null, prompt_tokens_details: { cached_tokens: 'x' } }],
] as const) {
  test(`usage values that are ${name} never throw in cost arithmetic nor leak the reservation`, async () => {
    const k = await createKey({ name: `garbage-${name}`, budget_usd: '1000000000' });
    up.push({ headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({
      id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage,
    })] });
    const r = await post('/v1/chat/completions', k.key, { model: 'oa/test-model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(r.status, 200);
    await r.text();
    const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
    for (const n of [rec.inputTokens, rec.outputTokens, rec.cacheReadTokens]) assert.ok(Number.isSafeInteger(n) && n >= 0, `${n}`);
    assert.equal(spent(k.id), toNanos(rec.costUsd), 'the reservation settled with the bill');
  });
}

test('pass-through: a budgeted key cannot make 150k-token calls for free (Responses-shaped usage read)', async () => {
  const k = await createKey({ name: 'tiny-budget', budget_usd: '0.01' });
  const answer = JSON.stringify({ id: 'resp', object: 'response', output: [{ type: 'message', content: [{ type: 'output_text', text: 'done' }] }], usage: { input_tokens: 150_000, output_tokens: 10, total_tokens: 150_010 } });
  up.push({ headers: { 'content-type': 'application/json' }, chunks: [answer] }, { headers: { 'content-type': 'application/json' }, chunks: [answer] });
  const first = await post('/v1/responses-like', k.key, { model: 'oa/test-model', input: 'p', max_output_tokens: 16 });
  assert.equal(first.status, 200);
  await first.text();
  const rec = await recordOf(gw, first.headers.get('x-inference-id')!);
  assert.equal(rec.inputTokens, 150_000);
  assert.equal(rec.costUsd, '0.15002');
  const second = await post('/v1/responses-like', k.key, { model: 'oa/test-model', input: 'p', max_output_tokens: 16 });
  assert.equal(second.status, 402, 'the budget is spent');
  await second.text();
});

test('pass-through reserves output: a request whose maximum output alone passes the budget is refused', async () => {
  const k = await createKey({ name: 'output-reserve', budget_usd: '0.001' });
  // 1000 output tokens at 0.000002 = $0.002 > $0.001: refused before any upstream call.
  const r = await post('/v1/completions', k.key, { model: 'oa/test-model', prompt: 'p', max_tokens: 1000 });
  assert.equal(r.status, 402);
  await r.text();
  assert.equal(up.requests.length, 0);
});

test('pass-through streamed completions: usage asked for upstream, hidden from the client that did not ask, billed', async () => {
  const k = await createKey({ name: 'stream-completions' });
  up.push({ chunks: [
    sse({ id: 'c', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: 'Hello', finish_reason: null }], usage: null }),
    sse({ id: 'c', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: '!', finish_reason: 'stop' }], usage: null }),
    sse({ id: 'c', object: 'text_completion', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 } }),
    'data: [DONE]\n\n',
  ] });
  const r = await post('/v1/completions', k.key, { model: 'oa/test-model', prompt: 'p', stream: true, max_tokens: 16 });
  const text = await r.text();
  assert.match(text, /Hello/);
  assert.doesNotMatch(text, /usage/, 'the client did not ask for usage');
  assert.match(text, /\[DONE\]/);
  const sent = JSON.parse(up.requests.at(-1)!.body) as { stream_options?: { include_usage?: boolean } };
  assert.equal(sent.stream_options?.include_usage, true);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.inputTokens, 20);
  assert.equal(rec.outputTokens, 2);
  assert.equal(rec.partial, undefined);
});

test('pass-through: Responses-shaped usage (cached input, reasoning, web search calls) and embeddings are read', async () => {
  const k = await createKey({ name: 'shapes' });
  up.push({ headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({
    id: 'resp_1', object: 'response', output: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }, { type: 'message', content: [{ type: 'output_text', text: 'x' }] }],
    usage: { input_tokens: 1000, input_tokens_details: { cached_tokens: 400 }, output_tokens: 50, output_tokens_details: { reasoning_tokens: 20 }, total_tokens: 1050 },
  })] });
  const r = await post('/v1/responses-like', k.key, { model: 'oa/test-model', input: 'x' });
  assert.equal(r.status, 200);
  await r.text();
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.inputTokens, 600);
  assert.equal(rec.cacheReadTokens, 400);
  assert.equal(rec.outputTokens, 50);
  assert.equal(rec.reasoningTokens, 20);
  // 600 x 0.000001 + 400 x 0.0000001 + 50 x 0.000002 + 1 web search x 0.01
  assert.equal(rec.costUsd, '0.01074');

  up.push({ headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1] }], model: 'm', usage: { prompt_tokens: 8, total_tokens: 8 } })] });
  const e = await post('/v1/embeddings', k.key, { model: 'oa/test-model', input: 'x' });
  await e.text();
  const er = await recordOf(gw, e.headers.get('x-inference-id')!);
  assert.equal(er.inputTokens, 8);
  assert.equal(er.outputTokens, 0);
});

test('pass-through: a Responses stream is billed from its response.completed event', async () => {
  const k = await createKey({ name: 'resp-stream' });
  up.push({ chunks: [
    sse({ type: 'response.created', response: { id: 'r' } }, 'response.created'),
    sse({ type: 'response.output_text.delta', delta: 'Hi' }, 'response.output_text.delta'),
    sse({ type: 'response.completed', response: { id: 'r', usage: { input_tokens: 30, output_tokens: 4, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } } }, 'response.completed'),
  ] });
  const r = await post('/v1/responses-like', k.key, { model: 'oa/test-model', input: 'x', stream: true });
  const text = await r.text();
  assert.match(text, /response.completed/);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.inputTokens, 30);
  assert.equal(rec.outputTokens, 4);
});

test('pass-through stream cut by the upstream: ended with an error event, billed as partial', async () => {
  const k = await createKey({ name: 'resp-cut', budget_usd: '100' });
  up.push({ chunks: [sse({ type: 'response.output_text.delta', delta: 'c'.repeat(80) }, 'response.output_text.delta')], then: 'cut' });
  const r = await post('/v1/responses-like', k.key, { model: 'oa/test-model', input: PROMPT, stream: true });
  const text = await r.text();
  assert.match(text, /"error"/);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.partial, true);
  assert.equal(rec.outputTokens, 20);
  assert.ok(rec.inputTokens >= 100);
  assert.equal(spent(k.id), toNanos(rec.costUsd));
});

test('audio tokens and long-context tiers reach cost arithmetic (usage extraction and extras)', () => {
  const u = canonicalUsage({ prompt_tokens: 100, completion_tokens: 10, prompt_tokens_details: { audio_tokens: 40, cached_tokens: 0 }, completion_tokens_details: { audio_tokens: 5, reasoning_tokens: 0 } });
  assert.equal(u.audio_input_tokens, 40);
  assert.equal(u.audio_output_tokens, 5);
  const pricing = { ...zeroPricing(), prompt: '0.000001', completion: '0.000002', input_audio: '0.00001', output_audio: '0.00002' };
  // 60 text x 0.000001 + 40 audio x 0.00001 + 5 text x 0.000002 + 5 audio x 0.00002
  assert.equal(costOf(pricing, u, costExtrasOf(u, {}, pricing, Date.now())), '0.00057');
  const tiered = { ...zeroPricing(), prompt: '0.000001', completion: '0.000002', tiers: [{ above_input_tokens: 200_000, prompt: '0.000002', completion: '0.000004' }] };
  const long = { ...canonicalUsage({ prompt_tokens: 250_000, completion_tokens: 100 }) };
  assert.equal(costOf(tiered, long, costExtrasOf(long, {}, tiered, Date.now())), '0.5004');
  // Images counted from the request only when the model prices them.
  const body = { messages: [{ role: 'user', content: [{ type: 'image_url' }, { type: 'text' }, { type: 'image_url' }] }], input: [{ content: [{ type: 'input_image' }] }] };
  assert.equal(costExtrasOf(u, body, { ...pricing, image: '0.01' }, 0).images, 3);
  assert.equal(costExtrasOf(u, body, pricing, 0).images, undefined);
});
