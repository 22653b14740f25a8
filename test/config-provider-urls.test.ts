// <PROVIDER>_BASE_URL in each vendor's own client convention: ANTHROPIC_BASE_URL without /v1 (as the
// Anthropic SDK and Claude Code read it), OPENAI_BASE_URL with /v1, GOOGLE_BASE_URL without
// /v1beta; either form accepted, and the gateway's requests then reach the right paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { providerBaseUrl } from '../src/config/env.ts';
import { startMockAnthropic, startMockGemini, startMockOpenAI } from './mocks/index.ts';
import { startTestGateway } from './helpers/gateway.ts';

test('providerBaseUrl: the version segment is added where the vendor convention leaves it out', () => {
  const ant = (v: string) => providerBaseUrl(v, 'https://api.anthropic.com/v1', 'anthropic-messages');
  assert.equal(ant('http://127.0.0.1:9000'), 'http://127.0.0.1:9000/v1');
  assert.equal(ant('http://127.0.0.1:9000/'), 'http://127.0.0.1:9000/v1');
  assert.equal(ant('http://127.0.0.1:9000/v1'), 'http://127.0.0.1:9000/v1');
  assert.equal(ant('http://127.0.0.1:9000/v1/'), 'http://127.0.0.1:9000/v1');
  assert.equal(ant('https://proxy.example/anthropic'), 'https://proxy.example/anthropic/v1');
  const oai = (v: string) => providerBaseUrl(v, 'https://api.openai.com/v1', 'openai-chat');
  assert.equal(oai('http://127.0.0.1:9000/v1'), 'http://127.0.0.1:9000/v1');
  assert.equal(oai('http://127.0.0.1:9000'), 'http://127.0.0.1:9000/v1');
  assert.equal(oai('https://gateway.example/openai/v1'), 'https://gateway.example/openai/v1');
  // A path of its own is the whole base, as OpenAI's SDK takes it (compatible servers without /v1).
  assert.equal(oai('https://api.perplexity.example/chat'), 'https://api.perplexity.example/chat');
  const gem = (v: string) => providerBaseUrl(v, 'https://generativelanguage.googleapis.com/v1beta', 'gemini');
  assert.equal(gem('http://127.0.0.1:9000'), 'http://127.0.0.1:9000/v1beta');
  assert.equal(gem('http://127.0.0.1:9000/v1beta'), 'http://127.0.0.1:9000/v1beta');
  assert.equal(gem('http://127.0.0.1:9000/v1'), 'http://127.0.0.1:9000/v1');
  // No version in the YAML (Bedrock's origin): the value as it is.
  assert.equal(providerBaseUrl('http://127.0.0.1:9000', 'https://bedrock-runtime.us-east-1.amazonaws.com', 'bedrock-converse'), 'http://127.0.0.1:9000');
  assert.equal(providerBaseUrl('not a url', 'https://api.anthropic.com/v1', 'anthropic-messages'), 'not a url');
});

test('a gateway started with the SDK-convention variables reaches every mock at the right path', async (t) => {
  const [ant, oai, gem] = await Promise.all([startMockAnthropic(), startMockOpenAI(), startMockGemini()]);
  const origin = (u: string): string => new URL(u).origin;
  const gw = await startTestGateway({
    providers: [
      { id: 'anthropic', format: 'anthropic-messages', base_url: 'https://api.anthropic.com/v1' },
      { id: 'openai', format: 'openai-chat', base_url: 'https://api.openai.com/v1' },
      { id: 'google', format: 'gemini', base_url: 'https://generativelanguage.googleapis.com/v1beta' },
    ],
    // Anthropic and Google as their SDKs take them (origin only); OpenAI as its SDK does (with /v1).
    env: { ANTHROPIC_BASE_URL: origin(ant.url), OPENAI_BASE_URL: oai.url, GOOGLE_BASE_URL: origin(gem.url) },
  });
  t.after(async () => { await gw.stop(); await Promise.all([ant.close(), oai.close(), gem.close()]); });
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'k', maxRetries: 0 });
  for (const model of ['anthropic/test-model', 'openai/test-model', 'google/test-model']) {
    const m = await client.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal((m.content[0] as Anthropic.TextBlock).text, 'Echo: hi', model);
  }
  assert.equal(ant.requests.at(-1)!.path, '/v1/messages');
  assert.equal(oai.requests.at(-1)!.path, '/v1/chat/completions');
  assert.equal(gem.requests.at(-1)!.path, '/v1beta/models/test-model:generateContent');
});
