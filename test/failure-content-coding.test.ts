// An upstream body in a content encoding (gzip, deflate, br, zstd) is decoded before anything reads it,
// in every wire format, streamed and not, for answers and error bodies, on interpreted and pass-through
// routes; one that does not decode, or an encoding the gateway cannot undo, is a clear 502 in the
// route's envelope. Before, the bytes were read raw: a good answer was "a malformed response" (502),
// an error's message binary garbage, a pass-through answer relayed with its usage unread (billed $0).
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { brotliCompressSync, constants, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { startRawUpstream, sse, chatChunk, chatFinish, messageStart, textBlock, messageEnd, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import { eventFrame } from './mocks/eventstream.ts';

let up: RawUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: [{ name: 'test-model', pricing: { prompt: '0.000001', completion: '0.000002' } }, { name: 'emb', pricing: { prompt: '0.000001', completion: '0' } }] },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1` },
      { id: 'ge', format: 'gemini', base_url: `${up.url}/v1beta` },
      { id: 'br', format: 'bedrock-converse', base_url: up.url },
    ],
    gateway: { upstream: { first_byte_timeout_ms: 2000, idle_timeout_ms: 2000, max_attempts: 1, ejection: { consecutive_failures: 1000 } } },
  });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

const ask = async (model: string, stream: boolean, path = '/v1/chat/completions') => {
  const r = await fetch(`${gw.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000),
    body: JSON.stringify(path === '/v1/messages'
      ? { model, stream, max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }
      : { model, stream, messages: [{ role: 'user', content: 'hello' }] }),
  });
  const text = await r.text();
  assert.equal(await settled(gw), 0, 'nothing left in flight');
  return { r, text, rec: await recordOf(gw, r.headers.get('x-inference-id')!) };
};

const CHAT_JSON = JSON.stringify({
  id: 'chatcmpl-z', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Decoded answer' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
});

test('a gzip, deflate, br or zstd JSON answer is decoded (OpenAI chat)', async () => {
  for (const [coding, encode] of [['gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync], ['zstd', zstdCompressSync]] as const) {
    up.push({ headers: { 'content-type': 'application/json', 'content-encoding': coding }, chunks: [encode(CHAT_JSON)] });
    const { r, text, rec } = await ask('oa/test-model', false);
    assert.equal(r.status, 200, `${coding}: ${text}`);
    assert.equal((JSON.parse(text) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, 'Decoded answer');
    assert.deepEqual([rec.status, rec.inputTokens, rec.outputTokens, rec.costUsd], [200, 11, 3, '0.000017'], coding);
  }
});

test('a gzip stream is decoded as it arrives, split anywhere (Anthropic upstream, to a chat client and to its own)', async () => {
  const body = gzipSync(messageStart({ input_tokens: 12, output_tokens: 1 }) + textBlock('Streamed through gzip') + messageEnd(4));
  // Cut into small pieces, so the decoder meets headers and frames split across chunks.
  const pieces = Array.from({ length: Math.ceil(body.length / 7) }, (_, i) => body.subarray(i * 7, i * 7 + 7));
  for (const path of ['/v1/chat/completions', '/v1/messages']) {
    up.push({ headers: { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, chunks: pieces });
    const { r, text, rec } = await ask('an/test-model', true, path);
    assert.equal(r.status, 200);
    assert.match(text, /Streamed through gzip/);
    assert.doesNotMatch(text, /"error"/);
    assert.deepEqual([rec.status, rec.inputTokens, rec.outputTokens, rec.partial ?? false], [200, 12, 4, false], path);
  }
});

test('Gemini (deflate) and Bedrock event-stream (br) streams are decoded', async () => {
  up.push({ headers: { 'content-type': 'text/event-stream', 'content-encoding': 'deflate' }, chunks: [deflateSync(
    sse({ candidates: [{ content: { role: 'model', parts: [{ text: 'Gemini decoded' }] }, index: 0 }] })
    + sse({ candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9 } }),
  )] });
  const g = await ask('ge/test-model', true);
  assert.match(g.text, /Gemini decoded/);
  assert.deepEqual([g.rec.status, g.rec.inputTokens, g.rec.outputTokens], [200, 7, 2]);

  up.push({ headers: { 'content-type': 'application/vnd.amazon.eventstream', 'content-encoding': 'br' }, chunks: [brotliCompressSync(Buffer.concat([
    eventFrame('messageStart', { role: 'assistant' }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Bedrock decoded' } }),
    eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
    eventFrame('messageStop', { stopReason: 'end_turn' }),
    eventFrame('metadata', { usage: { inputTokens: 8, outputTokens: 2, totalTokens: 10 }, metrics: { latencyMs: 10 } }),
  ]))] });
  const b = await ask('br/test-model', true, '/v1/messages');
  assert.match(b.text, /Bedrock decoded/);
  assert.deepEqual([b.rec.status, b.rec.inputTokens, b.rec.outputTokens], [200, 8, 2]);
});

test('an encoded error body keeps its message and status (a gzip 429)', async () => {
  up.push({ status: 429, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, chunks: [gzipSync(JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }))] });
  const { r, text } = await ask('oa/test-model', false);
  assert.equal(r.status, 429);
  assert.equal((JSON.parse(text) as { error: { message: string } }).error.message, 'OA: Rate limit reached for requests');
});

test('a body that does not decode, or an encoding the gateway cannot undo, is a 502 saying so', async () => {
  up.push({ headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, chunks: [gzipSync(CHAT_JSON).subarray(0, 20)] });
  const cut = await ask('oa/test-model', false);
  assert.equal(cut.r.status, 502);
  assert.match((JSON.parse(cut.text) as { error: { message: string } }).error.message, /gzip body does not decode/);
  assert.equal(cut.rec.status, 502);

  up.push({ headers: { 'content-type': 'text/event-stream', 'content-encoding': 'compress' }, chunks: ['whatever'] });
  const unknown = await ask('an/test-model', true, '/v1/messages');
  assert.equal(unknown.r.status, 502);
  const e = JSON.parse(unknown.text) as { type: string; error: { message: string } };
  assert.equal(e.type, 'error');
  assert.match(e.error.message, /content encoding the gateway cannot decode: "compress"/);

  // After content: the stream ends with an error event, billed as partial.
  // The content flushed (a sync flush: decodable so far), then bytes that are no deflate data.
  const head = gzipSync(chatChunk(null) + chatChunk('Some text before the damage'), { finishFlush: constants.Z_SYNC_FLUSH });
  up.push({ headers: { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, chunks: [head, Buffer.alloc(64, 0xff)], gapMs: 50 });
  const late = await ask('oa/test-model', true);
  assert.equal(late.r.status, 200);
  assert.match(late.text, /Some text before the damage/);
  assert.match(late.text, /does not decode/);
  assert.equal(late.rec.partial, true);
});

test('a decoded answer past the JSON bound is refused, not held (a gzip of 70 MiB of zeros)', async () => {
  up.push({ headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, chunks: [gzipSync(Buffer.alloc(70 * 1024 * 1024, 0x20))] });
  const { r, text } = await ask('oa/test-model', false);
  assert.equal(r.status, 502);
  assert.match(text, /larger than/);
});

test('pass-through: a gzip answer is relayed decoded and billed from its usage', async () => {
  up.push({ headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, chunks: [gzipSync(JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'emb', usage: { prompt_tokens: 1000, total_tokens: 1000 } }))] });
  const r = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/emb', input: 'hello' }) });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-encoding'), null);
  assert.deepEqual((await r.json() as { data: Array<{ embedding: number[] }> }).data[0]!.embedding, [0.1, 0.2]);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.deepEqual([rec.inputTokens, rec.costUsd], [1000, '0.001']);

  up.push({ headers: { 'content-type': 'text/event-stream', 'content-encoding': 'br' }, chunks: [brotliCompressSync(chatChunk(null) + chatChunk('legacy') + chatFinish({ prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 }) + 'data: [DONE]\n\n')] });
  const s = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', prompt: 'hi', stream: true }) });
  const text = await s.text();
  assert.match(text, /legacy/);
  assert.match(text, /\[DONE\]/);
  const srec = await recordOf(gw, s.headers.get('x-inference-id')!);
  assert.deepEqual([srec.inputTokens, srec.outputTokens, srec.partial ?? false], [20, 5, false]);

  up.push({ status: 400, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, chunks: [gzipSync(JSON.stringify({ error: { message: 'Invalid input', type: 'invalid_request_error' } }))] });
  const bad = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/emb', input: 'hello' }) });
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { error: { message: string } }).error.message, /Invalid input/);
});

test('a client slower than the decoder holds the decoded bytes back, as it holds raw ones (12 MB decoded from one gzip chunk)', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error): void => { warnings.push(`${w.name}: ${w.message}`); };
  process.on('warning', onWarning);
  try {
    const text = 'x'.repeat(1000);
    up.push({ headers: { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, chunks: [gzipSync(chatChunk(null) + chatChunk(text).repeat(12_000) + chatFinish({ prompt_tokens: 3, completion_tokens: 3000, total_tokens: 3003 }) + 'data: [DONE]\n\n')] });
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    // The client reads nothing for a while: the gateway pauses; one compressed chunk must not pour
    // megabytes into the client's socket buffer regardless (each pause added a 'drain' listener).
    await new Promise((ok) => setTimeout(ok, 1000));
    const got = await r.text();
    assert.equal(got.split(text).length - 1, 12_000, 'every chunk arrived');
    await new Promise((ok) => setImmediate(ok));
    assert.deepEqual(warnings.filter((w) => w.includes('MaxListeners')), []);
    const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
    assert.deepEqual([rec.status, rec.partial ?? false], [200, false]);
  } finally { process.off('warning', onWarning); }
});
