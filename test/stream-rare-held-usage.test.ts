// A translated stream that fails after its upstream reported usage is billed that usage: Gemini's running
// usageMetadata (thought tokens included) and OpenAI's usage chunk reach a canonical event only with the
// finish, so a decoder holds them (StreamDecoder.heldUsage) for the relay to bill from. A stream that
// ends cleanly without its finish, or carries an error event, ends the decoder too; what it held must
// still count. Read with the official SDKs, which must see the failure as an error.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRawUpstream, sse, chatChunk, chatFinish, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';

let up: RawUpstream; let gw: TestGateway; let openai: OpenAI; let anthropic: Anthropic;
const MODELS = [{ name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true } }];

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: MODELS },
      { id: 'ge', format: 'gemini', base_url: `${up.url}/v1beta`, models: MODELS },
    ],
    gateway: { upstream: { max_attempts: 1 } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

type Client = 'chat' | 'responses' | 'messages';

/** Streams one answer through the SDK; returns the inference id, the text read and the error the SDK threw. */
async function ask(client: Client, model: string): Promise<{ id: string; text: string; error: unknown }> {
  const { data, response } = client === 'chat'
    ? await openai.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse()
    : client === 'responses'
      ? await openai.responses.create({ model, stream: true, input: 'hi' }).withResponse()
      : await anthropic.messages.create({ model, stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  let text = '';
  let error: unknown = null;
  try {
    for await (const e of data as AsyncIterable<Record<string, any>>) {
      if (client === 'chat') text += e.choices?.[0]?.delta?.content ?? '';
      else if (client === 'responses' && e.type === 'response.output_text.delta') text += e.delta;
      else if (client === 'responses' && e.type === 'error') error = e;
      else if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    }
  } catch (e) { error = e; }
  return { id: response.headers.get('x-inference-id')!, text, error };
}

async function recordFor(id: string) {
  assert.equal(await settled(gw), 0, 'nothing left in flight');
  return recordOf(gw, id);
}

// Gemini 2.5 reports its thought tokens in every chunk's usage: 4 here, with 1 or 2 tokens of text.
const geminiChunk = (text: string, out: number) => sse({
  candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }],
  usageMetadata: { promptTokenCount: 20, candidatesTokenCount: out, thoughtsTokenCount: 4, totalTokenCount: 24 + out }, modelVersion: 'gemini-x', responseId: 'r1',
});
const geminiError = sse({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } });

for (const client of ['chat', 'responses', 'messages'] as const) {
  test(`Gemini -> ${client}: an error chunk after content bills the usage the stream reported`, async () => {
    up.push({ chunks: [geminiChunk('Hello', 1), geminiChunk(' there', 2), geminiError] });
    const r = await ask(client, 'ge/test-model');
    assert.equal(r.text, 'Hello there');
    assert.match(String((r.error as { message?: string })?.message ?? ''), /overloaded/);
    const rec = await recordFor(r.id);
    // Before: output 3 (11 characters / 4): the 4 thought tokens and the reported 2 were lost.
    assert.deepEqual([rec.partial, rec.inputTokens, rec.outputTokens, rec.reasoningTokens], [true, 20, 6, 4]);
  });

  test(`Gemini -> ${client}: a stream closed without a finish reason bills the usage it reported`, async () => {
    up.push({ chunks: [geminiChunk('Hello', 1), geminiChunk(' there', 2)] });
    const r = await ask(client, 'ge/test-model');
    assert.equal(r.text, 'Hello there');
    assert.ok(r.error !== null, 'the client sees the failure');
    const rec = await recordFor(r.id);
    assert.deepEqual([rec.partial, rec.inputTokens, rec.outputTokens, rec.reasoningTokens], [true, 20, 6, 4]);
  });
}

for (const client of ['responses', 'messages'] as const) {
  test(`OpenAI -> ${client}: an error chunk after the usage chunk, before [DONE], bills that usage`, async () => {
    const error = sse({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } });
    up.push({ chunks: [chatChunk(null), chatChunk('some text here'), chatFinish({ prompt_tokens: 50, completion_tokens: 30, total_tokens: 80 }), error] });
    const r = await ask(client, 'oa/test-model');
    assert.equal(r.text, 'some text here');
    assert.ok(r.error !== null, 'the client sees the failure');
    const rec = await recordFor(r.id);
    // Before: 9 and 4, the prompt counted and the text's characters / 4.
    assert.deepEqual([rec.partial, rec.inputTokens, rec.outputTokens, rec.costUsd], [true, 50, 30, '0.00011']);
  });
}
