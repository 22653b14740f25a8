// Tests of the OpenAI mock upstream beyond the raw wire: the official `openai` client pointed
// straight at it, the Azure flavour, keyless servers, stream pacing and reply overrides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAzureOpenAI, startMockOpenAI } from './mocks/openai.ts';
import { embeddingFor } from './mocks/openai-embeddings.ts';
import { call, parseSse, readAll, sseJson } from './mocks/client.ts';

const AUTH = { authorization: 'Bearer sk-test' };
type J = Record<string, any>;
const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location'] },
  },
};

test('openai mock: the official openai client works against it', async (t) => {
  const mock = await startMockOpenAI();
  t.after(() => mock.close());
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: mock.url, maxRetries: 0 });

  const c = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello sdk' }] });
  assert.equal(c.choices[0]!.message.content, 'Echo: hello sdk');
  assert.equal(c.usage?.completion_tokens, 3);

  const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'stream me please' }] });
  let text = '';
  let usage: unknown;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, 'Echo: stream me please');
  assert.ok(usage);

  const helper = client.chat.completions.stream({ model: 'gpt-4o', tools: [weatherTool as OpenAI.ChatCompletionTool], messages: [{ role: 'user', content: 'weather in both cities' }] });
  const final = await helper.finalChatCompletion();
  const calls = final.choices[0]!.message.tool_calls ?? [];
  assert.equal(calls.length, 2);
  const first = calls[0]!;
  assert.ok(first.type === 'function');
  assert.deepEqual(JSON.parse(first.function.arguments), { location: 'Paris', unit: 'celsius' });

  const emb = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'vector' });
  assert.equal(emb.data[0]!.embedding.length, 1536);
  assert.ok(Math.abs(emb.data[0]!.embedding[0]! - embeddingFor('vector', 1536)[0]!) < 1e-6);
  const models = await client.models.list();
  assert.ok(models.data.some((m) => m.id === 'gpt-4o-mini'));

  mock.fault({ status: 429, retryAfter: '1' });
  await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }), (e: unknown) => e instanceof OpenAI.RateLimitError && e.status === 429);
});

test('openai mock: chunkDelayMs paces streams, reply overrides the text, zero-chunk disconnect', async (t) => {
  const mock = await startMockOpenAI({ chunkDelayMs: 25, reply: (u) => `Custom reply to ${u}` });
  t.after(() => mock.close());
  const url = `${mock.url}/chat/completions`;
  const t0 = Date.now();
  const r = await call(url, { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'pace' }] }, AUTH);
  const chunks = parseSse(r.text).length;
  assert.ok(Date.now() - t0 >= (chunks - 1) * 25 - 5);
  assert.equal(sseJson(r.text).map((c: J) => c.choices[0]?.delta.content ?? '').join(''), 'Custom reply to pace');
  mock.fault({ disconnectAfterChunks: 0 });
  const res = await fetch(url, { method: 'POST', headers: AUTH, body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] }) });
  assert.equal(res.status, 200);
  const cut = await readAll(res);
  assert.ok(cut.broken);
  assert.equal(cut.text, '');
});

test('openai mock: Azure flavour and keyless servers', async (t) => {
  const azure = await startMockAzureOpenAI({ apiKey: 'az-key' });
  const keyless = await startMockOpenAI({ authOptional: true });
  t.after(() => Promise.all([azure.close(), keyless.close()]));
  assert.match(azure.url, /\/openai$/);
  const chatUrl = `${azure.url}/deployments/my-gpt4o/chat/completions?api-version=2024-10-21`;
  const r = await call(chatUrl, { messages: [{ role: 'user', content: 'hi azure' }] }, { 'api-key': 'az-key' });
  assert.equal(r.status, 200);
  assert.equal((r.json as J).model, 'my-gpt4o');
  assert.equal((r.json as J).choices[0].message.content, 'Echo: hi azure');
  const denied = await call(chatUrl, { messages: [{ role: 'user', content: 'x' }] }, { 'api-key': 'wrong' });
  assert.equal(denied.status, 401);
  assert.equal((denied.json as J).error.code, '401');
  const noVersion = await call(`${azure.url}/deployments/my-gpt4o/chat/completions`, { messages: [{ role: 'user', content: 'x' }] }, { 'api-key': 'az-key' });
  assert.equal(noVersion.status, 404);
  const emb = await call(`${azure.url}/deployments/emb/embeddings?api-version=2024-10-21`, { input: 'a', dimensions: 4 }, { 'api-key': 'az-key' });
  assert.equal((emb.json as J).model, 'emb');
  const open = await call(`${keyless.url}/chat/completions`, { model: 'llama3', messages: [{ role: 'user', content: 'no key' }] }, {});
  assert.equal(open.status, 200);
});
