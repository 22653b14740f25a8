// The commit point and the shape of an answer: an upstream that answers 200 but opens with an error
// falls back like a 5xx (and counts against its health); the total timeout answers 504 in the route's
// envelope (or ends a started stream with an error event); streaming follows the upstream's content
// type, so a JSON answer to a stream request (and a stream to a plain request) reaches the client.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, sse, chatChunk, chatFinish, messageStart, textBlock, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { encodeFrame } from './mocks/eventstream.ts';
import { recordOf } from './helpers/records.ts';

let up: RawUpstream; let backup: MockUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  backup = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1` },
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1` },
      { id: 'br', format: 'bedrock-converse', base_url: up.url },
      { id: 'backup', format: 'openai-chat', base_url: backup.url },
    ],
    gateway: {
      fallbacks: { 'an/test-model': ['backup/test-model'], 'oa/test-model': ['backup/test-model'], 'br/test-model': ['backup/test-model'] },
      upstream: { first_byte_timeout_ms: 1500, idle_timeout_ms: 1500, max_attempts: 2, retry_budget_floor: 1000, ejection: { consecutive_failures: 1000 } },
    },
  });
});
after(async () => { await gw.stop(); await up.close(); await backup.close(); });
beforeEach(() => { backup.reset(); up.reset(); });

const ask = (g: TestGateway, model: string, stream: boolean, path = '/v1/chat/completions') => fetch(`${g.url}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(8000),
  body: JSON.stringify(path === '/v1/messages'
    ? { model, stream, max_tokens: 64, messages: [{ role: 'user', content: 'commit please' }] }
    : { model, stream, messages: [{ role: 'user', content: 'commit please' }] }),
});

const failuresOf = (provider: string): number => gw.services.health.snapshot()[provider]?.consecutive_failures ?? 0;

const SSE = { 'content-type': 'text/event-stream' };
const JSON_CT = { 'content-type': 'application/json' };

test('Anthropic: 200 whose first event is overloaded_error falls back, and counts against the provider', async () => {
  const before = failuresOf('an');
  up.push({ headers: SSE, chunks: [messageStart(), sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error')] });
  const r = await ask(gw, 'an/test-model', true);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  const text = await r.text();
  assert.match(text, /Echo: commit/);
  assert.doesNotMatch(text, /Overloaded/);
  assert.equal(backup.requests.length, 1);
  assert.equal(failuresOf('an'), before + 1);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.deepEqual(rec.attempts.map((a) => [a.provider, a.status]), [['an', 529], ['backup', 200]]);
  assert.match(rec.attempts[0]!.error!, /Overloaded/);
});

test('Anthropic: the overloaded error in a non-streaming request falls back too', async () => {
  up.push({ headers: SSE, chunks: [messageStart() + sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error')] });
  const r = await ask(gw, 'an/test-model', false);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
});

test('OpenAI-compatible: an error chunk before any content falls back', async () => {
  up.push({ headers: SSE, chunks: [chatChunk(null), sse({ error: { message: 'The server is overloaded', type: 'server_error', code: 503 } })] });
  const r = await ask(gw, 'oa/test-model', true);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  assert.match(await r.text(), /Echo: commit/);
});

test('a bare JSON error under an event-stream type (no SSE framing) is read as that error: its message is the attempt\'s, not "nothing before closing the stream"', async () => {
  for (const [model, path, body] of [
    ['oa/test-model', '/v1/chat/completions', { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } }],
    ['an/test-model', '/v1/messages', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded right now' } }],
  ] as const) {
    up.push({ headers: SSE, chunks: [JSON.stringify(body)] });
    const r = await ask(gw, model, true, path);
    assert.equal(r.headers.get('x-gateway-provider'), 'backup', model);
    await r.text();
    const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
    assert.match(rec.attempts[0]!.error ?? '', model.startsWith('oa') ? /exceeded your current quota/ : /Overloaded right now/, JSON.stringify(rec.attempts[0]));
  }
});

test('Bedrock: an exception frame as the first event falls back', async () => {
  up.push({
    headers: { 'content-type': 'application/vnd.amazon.eventstream' },
    chunks: [encodeFrame({ ':message-type': 'exception', ':exception-type': 'serviceUnavailableException', ':content-type': 'application/json' }, JSON.stringify({ message: 'Bedrock is unavailable' }))],
  });
  const r = await ask(gw, 'br/test-model', true);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  assert.match(await r.text(), /Echo: commit/);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.attempts[0]!.status, 529);
});

test('an error after content is relayed, not fallen back from (output already reached the client)', async () => {
  up.push({ headers: SSE, chunks: [messageStart(), textBlock('Partial answer'), sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error')] });
  const r = await ask(gw, 'an/test-model', true);
  assert.equal(r.headers.get('x-gateway-provider'), 'an');
  const text = await r.text();
  assert.match(text, /Partial answer/);
  assert.match(text, /"error"/);
  assert.equal(backup.requests.length, 0);
});

test('pings and a message_start are held back until content: an upstream that then closes is fallen back from', async () => {
  up.push({ headers: SSE, chunks: [messageStart(), sse({ type: 'ping' }, 'ping')], then: 'end' });
  const r = await ask(gw, 'an/test-model', true, '/v1/messages');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  const text = await r.text();
  assert.equal((text.match(/event: message_start/g) ?? []).length, 1, 'one message_start reached the client');
});

test('a JSON answer to a stream request becomes a stream in the client format (same format)', async () => {
  up.push({ headers: JSON_CT, chunks: [JSON.stringify({
    id: 'chatcmpl-json', object: 'chat.completion', created: 1, model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'A whole answer' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
  })] });
  const r = await ask(gw, 'oa/test-model', true);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type')!, /text\/event-stream/);
  const text = await r.text();
  assert.match(text, /"content":"A whole answer"/);
  assert.match(text, /data: \[DONE\]/);
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.status, 200);
  assert.equal(rec.inputTokens, 11);
  assert.equal(rec.outputTokens, 3);
  assert.equal(rec.costUsd, '0.000017');
});

test('a JSON answer to a stream request becomes a stream (translated, Anthropic upstream to an OpenAI client)', async () => {
  up.push({ headers: JSON_CT, chunks: [JSON.stringify({
    id: 'msg_json', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'Translated whole' }],
    stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 9, output_tokens: 2 },
  })] });
  const r = await ask(gw, 'an/test-model', true);
  const text = await r.text();
  assert.match(text, /Translated whole/);
  assert.match(text, /"finish_reason":"stop"/);
  assert.match(text, /\[DONE\]/);
});

test('a JSON error body with status 200 to a stream request is the error it is (fallen back from)', async () => {
  up.push({ headers: JSON_CT, chunks: [JSON.stringify({ error: { message: 'model is overloaded', type: 'server_error', code: 503 } })] });
  const r = await ask(gw, 'oa/test-model', true);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  await r.text();
});

test('a stream answering a non-streaming request is collected into one JSON answer', async () => {
  up.push({ headers: SSE, chunks: [chatChunk(null), chatChunk('Collected '), chatChunk('answer'), chatFinish({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 }), 'data: [DONE]\n\n'] });
  const r = await ask(gw, 'oa/test-model', false);
  assert.equal(r.status, 200);
  const body = await r.json() as { object: string; choices: Array<{ message: { content: string } }>; usage: { prompt_tokens: number } };
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.choices[0]!.message.content, 'Collected answer');
  assert.equal(body.usage.prompt_tokens, 7);
});

test('a collected stream that is cut is a failure to fall back from, not a half answer', async () => {
  up.push({ headers: SSE, chunks: [messageStart(), textBlock('Half')], then: 'cut' });
  const r = await ask(gw, 'an/test-model', false);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  assert.match(((await r.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, /Echo/);
});

for (const stream of [false, true]) {
  test(`total timeout shorter than the attempts (${stream ? 'stream' : 'JSON'}): 504 in the route's envelope, recorded`, async () => {
    const g = await startTestGateway({
      providers: [{ id: 'slow', format: 'openai-chat', base_url: `${up.url}/v1` }],
      gateway: { upstream: { total_timeout_ms: 400, first_byte_timeout_ms: 300, max_attempts: 3, retry_budget_floor: 1000 } },
    });
    try {
      up.push({ delayMs: 1000, headers: SSE, chunks: [chatChunk('late')] }, { delayMs: 1000, headers: SSE, chunks: [chatChunk('late')] });
      const t0 = Date.now();
      const r = await ask(g, 'slow/test-model', stream);
      assert.equal(r.status, 504);
      const body = await r.json() as { error: { code: string; type: string } };
      assert.equal(body.error.code, 'upstream_timeout');
      assert.equal(body.error.type, 'timeout_error');
      assert.ok(Date.now() - t0 < 1500, `answered in ${Date.now() - t0} ms`);
      const rec = await recordOf(g, r.headers.get('x-inference-id')!);
      assert.equal(rec.status, 504);
      assert.equal(rec.errorCode, 'upstream_timeout');
      // Messages route: the same in Anthropic's envelope.
      up.push({ delayMs: 1000, headers: SSE, chunks: [messageStart()] }, { delayMs: 1000, headers: SSE, chunks: [messageStart()] });
      const m = await fetch(`${g.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'slow/test-model', stream, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }) });
      assert.equal(m.status, 504);
      const mb = await m.json() as { type: string; error: { type: string } };
      assert.equal(mb.type, 'error');
      assert.equal(mb.error.type, 'timeout_error');
    } finally { await g.stop(); }
  });
}

test('total timeout after the stream started: the stream ends with an error event, billed as partial', async () => {
  const g = await startTestGateway({
    providers: [{ id: 'slow', format: 'openai-chat', base_url: `${up.url}/v1` }],
    gateway: { upstream: { total_timeout_ms: 500, first_byte_timeout_ms: 2000, idle_timeout_ms: 5000 } },
  });
  try {
    up.push({ headers: SSE, chunks: [chatChunk(null), chatChunk('started and then')], then: 'stall' });
    const r = await ask(g, 'slow/test-model', true);
    assert.equal(r.status, 200);
    const text = await r.text();
    assert.match(text, /started and then/);
    assert.match(text, /"error":\{"message":"the request exceeded the total time limit/);
    const rec = await recordOf(g, r.headers.get('x-inference-id')!);
    assert.equal(rec.partial, true);
    assert.ok(rec.outputTokens >= 4, `output billed: ${rec.outputTokens}`);
  } finally { await g.stop(); }
});

test('a slow upstream that keeps the first byte past the total timeout on the last target is a 504, not a silent 499', async () => {
  const g = await startTestGateway({
    providers: [{ id: 'slow', format: 'anthropic-messages', base_url: `${up.url}/v1` }],
    gateway: { upstream: { total_timeout_ms: 600, first_byte_timeout_ms: 250, max_attempts: 5, retry_budget_floor: 1000 } },
  });
  try {
    for (let n = 0; n < 5; n++) up.push({ delayMs: 2000, headers: SSE, chunks: [messageStart()] });
    const r = await ask(g, 'slow/test-model', false, '/v1/messages');
    assert.equal(r.status, 504);
    assert.equal(((await r.json()) as { error: { type: string } }).error.type, 'timeout_error');
  } finally { await g.stop(); }
});

