// An OpenAI-format stream that says nothing (its role chunk, then [DONE]: no content, no finish reason) is
// no answer, whatever the client's format: the same-format relay fails it before anything reaches the
// client ("sent nothing before closing the stream", 502, and the attempt may fall back), and so must the
// translating decoder, instead of a 200 with an empty message and no stop reason. Read with the SDKs.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRawUpstream, chatChunk, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { recordOf, settled } from './helpers/records.ts';

let up: RawUpstream; let backup: MockUpstream; let gw: TestGateway; let openai: OpenAI; let anthropic: Anthropic;
const MODELS = ['test-model', 'fb-model'].map((name) => ({ name, pricing: TEST_PRICING, capabilities: { tools: true } }));
const SILENT = [chatChunk(null), 'data: [DONE]\n\n'];

before(async () => {
  up = await startRawUpstream();
  backup = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: MODELS },
      { id: 'backup', format: 'openai-chat', base_url: backup.url },
    ],
    gateway: { fallbacks: { 'oa/fb-model': ['backup/test-model'] }, upstream: { max_attempts: 2, retry_budget_floor: 1000, ejection: { consecutive_failures: 100000 } } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw?.stop(); await up.close(); await backup.close(); });
beforeEach(() => { up.reset(); backup.reset(); });

const streams = {
  chat: (model: string) => openai.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'Say hi' }] }),
  responses: (model: string) => openai.responses.create({ model, stream: true, input: 'Say hi' }),
  messages: (model: string) => anthropic.messages.create({ model, stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'Say hi' }] }),
};

for (const client of ['chat', 'responses', 'messages'] as const) {
  test(`${client}: role chunk then [DONE] is a 502 in the client's own error shape, never an empty 200`, async () => {
    up.push({ chunks: SILENT });
    // Before (responses, messages): 200, an empty message with stop_reason null / status completed.
    const err = await streams[client]('oa/test-model').then(() => null, (e: unknown) => e);
    assert.ok(err instanceof (client === 'messages' ? Anthropic.APIError : OpenAI.APIError), `an SDK error, got ${String(err)}`);
    assert.equal((err as { status: number }).status, 502);
    assert.equal(await settled(gw), 0);
  });

  test(`${client}: role chunk then [DONE] falls back to the next target, whose answer the client gets`, async () => {
    up.push({ chunks: SILENT });
    const { data, response } = await streams[client]('oa/fb-model').withResponse();
    let text = '';
    for await (const e of data as AsyncIterable<Record<string, any>>) {
      if (client === 'chat') text += e.choices?.[0]?.delta?.content ?? '';
      else if (client === 'responses' && e.type === 'response.output_text.delta') text += e.delta;
      else if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    }
    assert.match(text, /^Echo: Say hi/);
    assert.equal(backup.requests.length, 1);
    const rec = await recordOf(gw, response.headers.get('x-inference-id')!);
    assert.equal(rec.servedModel, 'backup/test-model');
  });
}
