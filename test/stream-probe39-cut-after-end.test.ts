// An upstream that sends its whole stream, terminal event included, and then resets the connection
// before the body's end (a proxy, a server closing early): the answer is whole. Before, a translated
// stream got an error event after its own end (a Messages client's `message_stop` followed by `event:
// error`, which the Anthropic SDK throws on; a chat client's usage chunk followed by an error chunk and
// no [DONE]) and the record was partial. Found by cutting streams at each event boundary.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRawUpstream, chatChunk, chatFinish, messageStart, textBlock, messageEnd, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';

let up: RawUpstream; let gw: TestGateway; let openai: OpenAI; let anthropic: Anthropic;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1` },
      { id: 'an', format: 'anthropic-messages', base_url: up.url },
    ],
    gateway: { upstream: { max_attempts: 1 } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

const wholeOpenAI = chatChunk(null) + chatChunk('Hello') + chatFinish({ prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 }) + 'data: [DONE]\n\n';
const wholeAnthropic = messageStart({ input_tokens: 5, output_tokens: 1 }) + textBlock('Hello') + messageEnd(7);

async function record(id: string) {
  assert.equal(await settled(gw), 0);
  return recordOf(gw, id);
}

test('OpenAI stream whole, then reset -> Messages client: the SDK gets the message, no error; not partial', async () => {
  up.push({ chunks: [wholeOpenAI], then: 'cut' });
  const { data, response } = await anthropic.messages.create({ model: 'oa/test-model', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  const types: string[] = [];
  for await (const e of data) types.push(e.type);
  assert.equal(types.at(-1), 'message_stop');
  const rec = await record(response.headers.get('x-inference-id')!);
  assert.deepEqual([Boolean(rec.partial), rec.outputTokens], [false, 7]);
});

test('Anthropic stream whole, then reset -> chat client: ends with [DONE], no error chunk; not partial', async () => {
  up.push({ chunks: [wholeAnthropic], then: 'cut' });
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify({ model: 'an/test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await res.text();
  assert.ok(!text.includes('"error"'), text.slice(-300));
  assert.ok(text.endsWith('data: [DONE]\n\n'));
  const rec = await record(res.headers.get('x-inference-id')!);
  assert.deepEqual([Boolean(rec.partial), rec.outputTokens], [false, 7]);
});

test('Anthropic stream whole, then reset -> Responses client: completed, and recorded complete', async () => {
  up.push({ chunks: [wholeAnthropic], then: 'cut' });
  const { data, response } = await openai.responses.create({ model: 'an/test-model', stream: true, input: 'hi' }).withResponse();
  let last = '';
  for await (const e of data as AsyncIterable<{ type: string }>) last = e.type;
  assert.equal(last, 'response.completed');
  const rec = await record(response.headers.get('x-inference-id')!);
  assert.deepEqual([Boolean(rec.partial), rec.outputTokens], [false, 7]);
});

test('control: a reset before the terminal event still ends with an error and a partial record', async () => {
  up.push({ chunks: [chatChunk(null) + chatChunk('Hello')], then: 'cut' });
  const r = await anthropic.messages.create({ model: 'oa/test-model', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  let error: unknown = null;
  try { for await (const _e of r.data) { /* read */ } } catch (e) { error = e; }
  assert.ok(error !== null, 'the client sees the failure');
  const rec = await record(r.response.headers.get('x-inference-id')!);
  assert.equal(rec.partial, true);
});

test('OpenAI stream whole, then reset -> same-format chat client: ends with [DONE], no error chunk; not partial', async () => {
  // The same-format relay, like the translating ones, had told the client its whole answer failed.
  up.push({ chunks: [wholeOpenAI], then: 'cut' });
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify({ model: 'oa/test-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await res.text();
  assert.ok(!text.includes('"error"'), text.slice(-300));
  assert.ok(text.endsWith('data: [DONE]\n\n'));
  const rec = await record(res.headers.get('x-inference-id')!);
  assert.deepEqual([Boolean(rec.partial), rec.outputTokens], [false, 7]);
});
