// Once a stream is committed to its client, upstream silences (a model thinking with nothing relayed,
// Gemini and Bedrock, which send no pings, Anthropic pings that a translation does not relay) sent the
// client nothing at all, so a proxy or client with an idle timeout cut the answer. Now a stream silent
// for server.stream_keepalive_ms gets a keep-alive: an SSE comment for chat and Responses clients (the
// `openai` SDK's decoder skips `:` lines), Anthropic's own `event: ping` for a Messages client. The
// official SDKs read such streams unchanged.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRawUpstream, sse, chatChunk, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { settled } from './helpers/records.ts';

let up: RawUpstream; let gw: TestGateway;
/** Every body the SDK clients read, as raw text (a tee of the response). */
const bodies: Array<Promise<string>> = [];
const teeFetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const res = await fetch(url, init);
  bodies.push(res.clone().text().catch(() => ''));
  return res;
};
let openai: OpenAI; let anthropic: Anthropic;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      { id: 'ge', format: 'gemini', base_url: `${up.url}/v1beta` },
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1` },
    ],
    gateway: { server: { stream_keepalive_ms: 100 }, upstream: { max_attempts: 1 } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 15000, fetch: teeFetch });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0, timeout: 15000, fetch: teeFetch });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => { up.reset(); bodies.length = 0; });

const gem = (text: string, finish?: string) => sse({
  candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
  usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 }, modelVersion: 'g', responseId: 'r1',
});

/** Posts a streaming request and reads the body until `want` has appeared `times` times; then hangs up. */
async function readUntil(path: string, body: unknown, want: string, times: number): Promise<string> {
  const ac = new AbortController();
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', signal: ac.signal, headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  while (text.split(want).length - 1 < times) {
    const { value, done } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
  }
  ac.abort();
  await reader.cancel().catch(() => {});
  assert.equal(text.split(want).length - 1, times, `${JSON.stringify(want)} came ${times} times before the stream ended`);
  return text;
}

test('Gemini thinking silently after its first text -> chat client: SSE comments between whole events', async () => {
  up.push({ chunks: [gem('Hello')], then: 'stall' });
  const text = await readUntil('/v1/chat/completions', { model: 'ge/test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }, ': keep-alive\n\n', 2);
  assert.match(text, /"content":"Hello"/);
  const at = text.indexOf(': keep-alive\n\n');
  assert.ok(at > 0, 'a keep-alive came during the silence');
  assert.ok(text.slice(0, at).endsWith('\n\n'), 'after a whole event');
  assert.equal(await settled(gw), 0, 'the hang-up ended the attempt');
});

test('the same silence -> Responses client: comments, no extra event numbers', async () => {
  up.push({ chunks: [gem('Hello')], then: 'stall' });
  const text = await readUntil('/v1/responses', { model: 'ge/test-model', stream: true, input: 'hi' }, ': keep-alive\n\n', 2);
  assert.match(text, /response\.output_text\.delta/);
  assert.ok(text.includes(': keep-alive\n\n'));
  const seqs = [...text.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
  assert.deepEqual(seqs, seqs.map((_, i) => i), 'events numbered from 0 without gaps');
});

test('the same silence -> Messages client: Anthropic ping events', async () => {
  up.push({ chunks: [gem('Hello')], then: 'stall' });
  const text = await readUntil('/v1/messages', { model: 'ge/test-model', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }, 'event: ping\n', 2);
  assert.match(text, /event: ping\ndata: \{"type":"ping"\}\n\n/);
});

test('a same-format OpenAI relay silent after content gets comments too', async () => {
  up.push({ chunks: [chatChunk(null), chatChunk('Hello')], then: 'stall' });
  const text = await readUntil('/v1/chat/completions', { model: 'oa/test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }, ': keep-alive\n\n', 2);
  assert.match(text, /"content":"Hello"/);
});

// Gaps of 500 ms between upstream chunks with a keep-alive every 100 ms: the SDKs read comments (or pings)
// between the events and give exactly the answer.
test('the openai SDK streaming chat through keep-alives reads the whole answer', async () => {
  up.push({ chunks: [gem('Hello'), gem(' there'), gem(' friend', 'STOP')], gapMs: 500 });
  let content = ''; let finish: string | null = null;
  for await (const c of await openai.chat.completions.create({ model: 'ge/test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] })) {
    content += c.choices[0]?.delta?.content ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(content, 'Hello there friend');
  assert.equal(finish, 'stop');
  const raw = await bodies[0]!;
  assert.ok(raw.includes(': keep-alive\n\n'), 'the stream the SDK read held keep-alives');
});

test('the openai SDK streaming Responses through keep-alives reads the whole answer', async () => {
  up.push({ chunks: [gem('Hello'), gem(' there'), gem(' friend', 'STOP')], gapMs: 500 });
  const stream = openai.responses.stream({ model: 'ge/test-model', input: 'hi' });
  const final = await stream.finalResponse();
  assert.equal(final.output_text, 'Hello there friend');
  assert.equal(final.status, 'completed');
  assert.ok((await bodies[0]!).includes(': keep-alive\n\n'));
});

test('the Anthropic SDK reads the whole answer through pings', async () => {
  up.push({ chunks: [gem('Hello'), gem(' there'), gem(' friend', 'STOP')], gapMs: 500 });
  const msg = await anthropic.messages.stream({ model: 'ge/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
  assert.equal(msg.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), 'Hello there friend');
  assert.equal(msg.stop_reason, 'end_turn');
  assert.ok((await bodies[0]!).includes('event: ping'));
});

test('stream_keepalive_ms 0 sends none', async () => {
  const quiet = await startTestGateway({
    providers: [{ id: 'ge', format: 'gemini', base_url: `${up.url}/v1beta` }],
    gateway: { server: { stream_keepalive_ms: 0 }, upstream: { max_attempts: 1 } },
  });
  try {
    up.push({ chunks: [gem('Hello'), gem(' there', 'STOP')], gapMs: 400 });
    const res = await fetch(`${quiet.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify({ model: 'ge/test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    const text = await res.text();
    assert.match(text, /there/);
    assert.ok(!text.includes(': keep-alive'));
  } finally { await quiet.stop(); }
});

test('no keep-alive after the client\'s own end while the upstream lingers after [DONE]', async () => {
  up.push({ chunks: [chatChunk(null) + chatChunk('Hello') + sse({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + 'data: [DONE]\n\n'], then: 'stall' });
  // The test gateway's upstream idle timeout (2 s) ends the lingering upstream; the answer was whole.
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify({ model: 'oa/test-model', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await res.text();
  assert.ok(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n'), text.slice(-200));
});
