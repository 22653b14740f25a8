// No upstream byte sequence may crash the process, leave a request hanging or pass for a success: a stream
// frame the protocol cannot carry (cut short, not JSON, `null`, a scalar, an array) is data loss. Before
// any content the attempt fails (and falls back); after content the client's stream ends at once with an
// error event in its own format, nothing after the bad frame is relayed, the record is partial and billed,
// and the upstream is released. The same in pass-through and translated streams, mid-stream, in the last
// chunk and with the whole stream in one chunk; blank data carries nothing and is ignored.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, sse, chatChunk, chatFinish, messageStart, textBlock, messageEnd, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled as settledIn } from './helpers/records.ts';
import { parseSse } from './helpers/answer-shape.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';

let up: RawUpstream; let backup: MockUpstream; let gw: TestGateway;

// `fb-model` falls back to the backup; `test-model` has nowhere to go.
const MODELS = ['test-model', 'fb-model'].map((name) => ({ name, pricing: TEST_PRICING, capabilities: { tools: true } }));

before(async () => {
  up = await startRawUpstream();
  backup = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: MODELS },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1`, models: MODELS },
      { id: 'backup', format: 'openai-chat', base_url: backup.url },
    ],
    gateway: {
      fallbacks: { 'oa/fb-model': ['backup/test-model'], 'an/fb-model': ['backup/test-model'] },
      upstream: { first_byte_timeout_ms: 1500, idle_timeout_ms: 3000, max_attempts: 2, retry_budget_floor: 1000, ejection: { consecutive_failures: 100000 } },
    },
  });
});
after(async () => { await gw.stop(); await up.close(); await backup.close(); });
beforeEach(() => { up.reset(); backup.reset(); });

const chat = (model: string, stream = true) => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(8000),
  body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
});
const messages = (model: string, stream = true) => fetch(`${gw.url}/v1/messages`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(8000),
  body: JSON.stringify({ model, stream, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
});
type Client = 'chat' | 'messages';
const ask = (client: Client, model: string, stream = true) => (client === 'chat' ? chat(model, stream) : messages(model, stream));

async function settled(): Promise<void> {
  assert.equal(await settledIn(gw), 0, 'every request finished');
}

/** Data a stream event cannot be: each is data loss, whatever the format. */
const BAD: Array<[name: string, oa: string, an: string]> = [
  ['null', 'null', 'null'], ['a number', '42', '42'], ['a string', '"text"', '"text"'], ['true', 'true', 'true'],
  ['an empty array', '[]', '[]'], ['an array', '[1,2]', '[{"type":"ping"}]'],
  // Cut short, but ending in a brace (the old relays' test for a whole frame), with the id and model the
  // OpenAI relay splices without parsing.
  ['a chunk cut short', '{"id":"chatcmpl-raw","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" lost"}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" lost"}'],
  ['a string cut short', '{"id":"chatcmpl-raw","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" lost}}]}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lost}}'],
  ['garbage inside', '{"id":"chatcmpl-raw","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" x"},"finish_reason":nul}]}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"extra":tru}'],
];

/** The upstream streams of each wire: before content, the content, the bad frame's place, the rest. */
const WIRES = {
  oa: {
    head: chatChunk(null), content: chatChunk('Hello'), bad: (d: string) => `data: ${d}\n\n`,
    rest: chatChunk(' world') + chatFinish({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }) + 'data: [DONE]\n\n',
  },
  an: {
    head: messageStart({ input_tokens: 12, output_tokens: 1 }), content: textBlock('Hello'), bad: (d: string) => `event: content_block_delta\ndata: ${d}\n\n`,
    rest: sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' world' } }, 'content_block_delta') + messageEnd(3),
  },
} as const;

/** Every frame parses (JSON or [DONE]); returns the text and whether the stream ended with an error event. */
function readStream(client: Client, text: string): { text: string; failed: boolean; done: boolean } {
  let out = ''; let failed = false; let done = false;
  for (const f of parseSse(text)) {
    if (f.data === '[DONE]') { done = true; continue; }
    const d = JSON.parse(f.data) as Record<string, any>; // throws on a frame relayed cut short
    assert.ok(!failed || (client === 'chat' && false), `nothing after the error event: ${f.data}`);
    if (client === 'chat') {
      if (d.error) { failed = true; assert.equal(typeof d.error.message, 'string'); continue; }
      out += d.choices?.[0]?.delta?.content ?? '';
    } else {
      if (f.event === 'error') { failed = true; assert.equal(d.type, 'error'); assert.equal(typeof d.error.message, 'string'); continue; }
      if (d.type === 'content_block_delta') out += d.delta.text ?? '';
      if (d.type === 'message_stop') done = true;
    }
  }
  return { text: out, failed, done };
}

// Pass-through: chat client on an OpenAI upstream, messages client on an Anthropic one; translated: the other way round.
const PATHS: Array<{ name: string; client: Client; wire: keyof typeof WIRES }> = [
  { name: 'OpenAI pass-through', client: 'chat', wire: 'oa' },
  { name: 'Anthropic pass-through', client: 'messages', wire: 'an' },
  { name: 'translated (OpenAI client, Anthropic upstream)', client: 'chat', wire: 'an' },
  { name: 'translated (Anthropic client, OpenAI upstream)', client: 'messages', wire: 'oa' },
];

for (const p of PATHS) {
  const w = WIRES[p.wire];
  for (const [bad, oaData, anData] of BAD) {
    const badFrame = w.bad(p.wire === 'oa' ? oaData : anData);

    test(`${p.name}: ${bad} after content ends the stream with an error at once, billed as partial`, async () => {
      // The upstream stays open after the bad frame: the gateway must end the answer and release it.
      const closed = up.closedEarly();
      up.push({ chunks: [w.head, w.content, badFrame, w.rest], then: 'stall' });
      const t0 = Date.now();
      const r = await ask(p.client, `${p.wire}/test-model`);
      assert.equal(r.status, 200);
      const s = readStream(p.client, await r.text());
      assert.ok(Date.now() - t0 < 2500, `ended at once, not at the idle timeout (${Date.now() - t0} ms)`);
      assert.equal(s.text, 'Hello', 'what came before the bad frame, and nothing after it');
      assert.ok(s.failed, 'the stream ends with an error event');
      await settled();
      const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
      assert.equal(rec.status, 200);
      assert.equal(rec.partial, true, 'recorded as partial, never as a success');
      assert.ok(rec.inputTokens > 0 && rec.outputTokens > 0, `billed ${rec.inputTokens}/${rec.outputTokens}`);
      assert.notEqual(rec.costUsd, '0');
      // The upstream never ends this response: only the gateway aborting it closes the socket.
      const t1 = Date.now();
      while (up.closedEarly() <= closed && Date.now() - t1 < 2000) await new Promise((ok) => setTimeout(ok, 10));
      assert.ok(up.closedEarly() > closed, 'the upstream was released');
    });
  }

  test(`${p.name}: a cut frame before any content falls back to the next target`, async () => {
    up.push({ chunks: [w.head, w.bad(p.wire === 'oa' ? BAD[6]![1] : BAD[6]![2]), w.content, w.rest] });
    const r = await ask(p.client, `${p.wire}/fb-model`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-gateway-provider'), 'backup');
    const s = readStream(p.client, await r.text());
    assert.match(s.text, /Echo: hi/);
    assert.ok(!s.failed && s.done);
    await settled();
    const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
    assert.deepEqual(rec.attempts.map((a) => [a.provider, a.status]), [[p.wire, 500], ['backup', 200]]);
    assert.match(rec.attempts[0]!.error!, /cannot read \(\d+ characters that are not JSON/);
  });

  test(`${p.name}: \`data: null\` before any content with nowhere to fall back is a 502 in the envelope`, async () => {
    up.push({ chunks: [w.head, w.bad('null'), w.content, w.rest] });
    const r = await ask(p.client, `${p.wire}/test-model`);
    assert.equal(r.status, 502);
    const body = await r.json() as { type?: string; error: { type: string; message: string } };
    if (p.client === 'messages') assert.equal(body.type, 'error');
    assert.match(body.error.message, /JSON null instead of an object/);
    await settled();
    const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
    assert.equal(rec.status, 502);
    assert.equal(rec.errorCode, 'upstream_error');
    assert.equal(rec.outputTokens, 0);
  });

  test(`${p.name}: the bad frame in the last chunk, and the whole stream in one chunk`, async () => {
    up.push({ chunks: [w.head + w.content, w.bad('7') + w.rest] }, { chunks: [w.head + w.content + w.bad('[]') + w.rest] });
    for (let i = 0; i < 2; i++) {
      const r = await ask(p.client, `${p.wire}/test-model`);
      assert.equal(r.status, 200);
      const s = readStream(p.client, await r.text());
      assert.equal(s.text, 'Hello');
      assert.ok(s.failed);
      const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
      assert.equal(rec.partial, true);
    }
    await settled();
  });

  test(`${p.name}: events with blank data carry nothing and are ignored`, async () => {
    up.push({ chunks: [w.head, p.wire === 'oa' ? 'data:\n\n' : 'event: ping\ndata:\n\n', w.content, 'data: \n\n', w.rest] });
    const r = await ask(p.client, `${p.wire}/test-model`);
    const s = readStream(p.client, await r.text());
    assert.equal(s.text, 'Hello world');
    assert.ok(s.done && !s.failed);
    const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
    assert.equal(rec.partial ?? false, false);
    await settled();
  });
}

for (const bad of ['"text"', '5', 'null', '[]']) {
  test(`Anthropic pass-through and translated: message_start.message = ${bad} is an upstream error, not a crash`, async () => {
    for (const client of ['messages', 'chat'] as const) {
      up.push({ chunks: [sse(`{"type":"message_start","message":${bad}}`, 'message_start'), textBlock('Hi'), messageEnd(3)] });
      const r = await ask(client, 'an/test-model');
      // Nothing usable came before the malformed start: answered as an upstream error in the envelope.
      assert.equal(r.status, 502, client);
      const body = await r.json() as { error: { type: string; message: string } };
      assert.equal(body.error.type, 'api_error');
      assert.match(body.error.message, /message_start without a message object/);
      const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
      assert.equal(rec.status, 502);
      assert.equal(rec.errorCode, 'upstream_error');
    }
    await settled();
  });
}

test('a client that did not ask to stream: a cut frame anywhere fails the attempt (nothing was sent), with fallback', async () => {
  up.push({ chunks: [chatChunk(null), chatChunk('Hello'), `data: ${BAD[6]![1]}\n\n`, chatChunk(' world'), chatFinish(), 'data: [DONE]\n\n'] });
  const r = await messages('oa/fb-model', false);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  await r.text();
  up.push({ chunks: [chatChunk(null), chatChunk('Hello'), 'data: 3\n\n', chatFinish(), 'data: [DONE]\n\n'] });
  const r2 = await messages('oa/test-model', false);
  assert.equal(r2.status, 502);
  await r2.text();
  await settled();
});

test('pass-through route (/v1/completions): a cut frame is never relayed; the stream ends with an error event, partial', async () => {
  const chunk = (text: string) => sse({ id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text, finish_reason: null }] });
  for (const includeUsage of [false, true]) {
    up.push({ chunks: [chunk('Hello'), 'data: {"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" lo\n\n', chunk(' world')], then: 'stall' });
    const r = await fetch(`${gw.url}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(8000),
      body: JSON.stringify({ model: 'oa/test-model', prompt: 'hi', stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }),
    });
    assert.equal(r.status, 200);
    const frames = parseSse(await r.text());
    const parsed = frames.map((f) => JSON.parse(f.data) as Record<string, any>); // every frame parses
    assert.equal(parsed[0]!.choices[0].text, 'Hello');
    assert.match(parsed.at(-1)!.error.message, /cannot read/);
    assert.ok(!parsed.some((d) => d.choices?.[0]?.text === ' world'), 'nothing after the bad frame');
    const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
    assert.equal(rec.partial, true);
    assert.ok(rec.inputTokens > 0 && rec.outputTokens > 0);
  }
  await settled();
});

test('a non-streaming answer that is a JSON scalar is an upstream error', async () => {
  for (const body of ['null', '3', '"x"', '[]']) {
    up.push({ headers: { 'content-type': 'application/json' }, chunks: [body] });
    const r = await chat('oa/test-model', false);
    assert.equal(r.status, 502, body);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'upstream_error');
  }
  await settled();
});

test('the process is still serving after all of the above', async () => {
  up.push({ chunks: [chatChunk(null), chatChunk('alive'), chatFinish(), 'data: [DONE]\n\n'] });
  const r = await chat('oa/test-model');
  assert.match(await r.text(), /alive/);
  await settled();
});
