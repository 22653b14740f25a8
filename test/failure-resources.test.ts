// Resources a misbehaving upstream or a reload could exhaust: the client's keep-alive socket keeps the
// server's own timeout after a pass-through request (http-proxy-3's `timeout` set a short one on it);
// upstream JSON, error bodies and SSE events are bounded; upstream pools follow reloads.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { readFileSync, writeFileSync } from 'node:fs';
import { startRawUpstream, chatChunk, chatFinish, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { settled } from './helpers/records.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { transportPools } from '../src/engine/transport.ts';
import { createSseParser, SseLimitError } from '../src/formats/sse.ts';
import { createEventStreamDecoder } from '../src/formats/bedrock/eventstream.ts';
import { encodeFrame } from './mocks/eventstream.ts';

let up: RawUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [{ id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1` }],
    gateway: { upstream: { first_byte_timeout_ms: 300, idle_timeout_ms: 3000, max_attempts: 1 }, server: { keep_alive_timeout_ms: 10_000 } },
  });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

/** One request over `agent` (a single keep-alive socket); resolves with status, body and whether the socket was reused. */
function send(agent: Agent, path: string, body: unknown): Promise<{ status: number; text: string; reused: boolean; port: number }> {
  return new Promise((resolve, reject) => {
    const u = new URL(gw.url + path);
    const data = JSON.stringify(body);
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, reused: req.reusedSocket, port: req.socket?.localPort ?? 0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

const EMBEDDINGS = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'm', usage: { prompt_tokens: 1, total_tokens: 1 } });

test('a pass-through stream may pause longer than the first-byte timeout: neither socket is cut (idle timeout applies)', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const chunk = (text: string, finish: string | null = null): string => `data: ${JSON.stringify({ id: 'c', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text, finish_reason: finish }] })}\n\n`;
    up.push({ chunks: [chunk('one'), chunk(' two'), chunk(' three', 'stop'), 'data: [DONE]\n\n'], gapMs: 500 });
    const a = await send(agent, '/v1/completions', { model: 'oa/test-model', prompt: 'x', stream: true, stream_options: { include_usage: true } });
    assert.equal(a.status, 200);
    assert.match(a.text, /one.* two.* three/s);
    assert.match(a.text, /\[DONE\]/);
    // The connection is still good for the next request.
    up.push({ headers: { 'content-type': 'application/json' }, chunks: [EMBEDDINGS] });
    const b = await send(agent, '/v1/embeddings', { model: 'oa/test-model', input: 'x' });
    assert.equal(b.status, 200);
    assert.equal(b.port, a.port);
  } finally { agent.destroy(); }
});

test('the client keep-alive connection serves later requests after a pass-through request', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    up.push({ headers: { 'content-type': 'application/json' }, chunks: [EMBEDDINGS] });
    const a = await send(agent, '/v1/embeddings', { model: 'oa/test-model', input: 'x' });
    assert.equal(a.status, 200);
    // Idle for longer than the upstream first-byte timeout (300 ms), well within keep_alive_timeout_ms.
    await new Promise((r) => setTimeout(r, 800));
    up.push({ chunks: [chatChunk(null), chatChunk('still here'), chatFinish(), 'data: [DONE]\n\n'] });
    const b = await send(agent, '/v1/chat/completions', { model: 'oa/test-model', stream: true, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(b.status, 200);
    assert.match(b.text, /still here/);
    assert.equal(b.reused, true, 'the same keep-alive socket served the second request');
    assert.equal(b.port, a.port);
    // A stream on that socket that pauses longer than 300 ms between chunks is not cut either.
    up.push({ chunks: [chatChunk(null), chatChunk('before'), chatChunk(' after'), chatFinish(), 'data: [DONE]\n\n'], gapMs: 450 });
    const c = await send(agent, '/v1/chat/completions', { model: 'oa/test-model', stream: true, messages: [{ role: 'user', content: 'x' }] });
    assert.match(c.text, /before/);
    assert.match(c.text, / after/);
    assert.match(c.text, /\[DONE\]/);
    assert.equal(c.port, a.port);
  } finally { agent.destroy(); }
});

test('an upstream event that never ends its line is cut at the limit: a clean upstream error', async () => {
  // 17 Mi characters without a line break: past the 16 Mi-character SSE event limit.
  const line = 'data: ' + 'a'.repeat(17 * 1024 * 1024);
  up.push({ chunks: [line], then: 'stall' });
  const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', stream: true, messages: [{ role: 'user', content: 'x' }] }) });
  assert.equal(r.status, 502);
  assert.match(((await r.json()) as { error: { message: string } }).error.message, /an event larger than/);
  assert.equal(await settled(gw), 0);
});

test('an upstream JSON answer past 64 MiB is an upstream error, not unbounded memory', async () => {
  const big = Buffer.alloc(65 * 1024 * 1024, 0x20);
  up.push({ headers: { 'content-type': 'application/json' }, chunks: [big] });
  const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', messages: [{ role: 'user', content: 'x' }] }) });
  assert.equal(r.status, 502);
  assert.match(((await r.json()) as { error: { message: string } }).error.message, /larger than 67108864 bytes/);
});

test('an upstream error body is read up to 64 KiB only', async () => {
  const message = 'e'.repeat(2 * 1024 * 1024);
  up.push({ status: 400, headers: { 'content-type': 'text/plain' }, chunks: [message] });
  const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', messages: [{ role: 'user', content: 'x' }] }) });
  assert.equal(r.status, 400);
  const text = await r.text();
  assert.ok(text.length < 70 * 1024, `error answer of ${text.length} bytes`);
});

test('the SSE parser refuses an event past its limit (line or data lines)', () => {
  const p = createSseParser({ maxEventChars: 100 });
  assert.deepEqual(p.push(Buffer.from('data: ok\n\n')), [{ data: 'ok' }]);
  assert.throws(() => p.push(Buffer.from('data: ' + 'x'.repeat(200))), SseLimitError);
  const q = createSseParser({ maxEventChars: 100 });
  assert.throws(() => { for (let i = 0; i < 20; i++) q.push(Buffer.from('data: 0123456789\n')); }, SseLimitError);
  const r = createSseParser({ maxEventChars: 100 });
  assert.throws(() => { for (let i = 0; i < 20; i++) r.push(Buffer.from('0123456789')); }, SseLimitError);
});

test('a reload that removes an origin closes its pool; changed connection settings rebuild it', async () => {
  const mock: MockUpstream = await startMockOpenAI();
  const g = await startTestGateway({ providers: [{ id: 'gone', format: 'openai-chat', base_url: mock.url }, { id: 'stays', format: 'openai-chat', base_url: `${up.url}/v1` }] });
  try {
    const origin = new URL(mock.url).origin;
    const r = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gone/test-model', messages: [{ role: 'user', content: 'x' }] }) });
    assert.equal(r.status, 200);
    await r.text();
    assert.ok(transportPools().some((p) => p.origin === origin));
    const before = transportPools().find((p) => p.origin === origin)!.settings;
    // Connection settings change: the next request gets a pool built with them.
    const doc = parse(readFileSync(g.configFile, 'utf8')) as { upstream: Record<string, unknown> };
    doc.upstream.connections_per_origin = 7;
    writeFileSync(g.configFile, stringify(doc));
    assert.equal((await g.services.holder.reload()).ok, true);
    const r2 = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gone/test-model', messages: [{ role: 'user', content: 'x' }] }) });
    await r2.text();
    const after = transportPools().find((p) => p.origin === origin)!.settings;
    assert.notEqual(after, before);
    assert.match(after, /^7\//);
    // The provider is removed: its pool goes with it.
    rmSync(join(g.providersDir, 'gone.yaml'));
    assert.equal((await g.services.holder.reload()).ok, true);
    assert.equal(transportPools().some((p) => p.origin === origin), false);
  } finally { await g.stop(); await mock.close(); }
});

test('a Bedrock frame arriving in many small chunks is joined once (was quadratic: 36 s of CPU for 20 MB)', () => {
  const payload = JSON.stringify({ contentBlockIndex: 0, delta: { text: 'x'.repeat(20 * 1024 * 1024) } });
  const frame = encodeFrame({ ':event-type': 'contentBlockDelta', ':message-type': 'event', ':content-type': 'application/json' }, payload);
  const d = createEventStreamDecoder();
  const t0 = performance.now();
  let frames = 0;
  for (let i = 0; i < frame.length; i += 16384) frames += d.push(frame.subarray(i, i + 16384)).length;
  const ms = performance.now() - t0;
  assert.equal(frames, 1);
  assert.ok(ms < 5000, `${ms.toFixed(0)} ms`);
});
