// The official `openai` client pointed at the gateway: plain and streamed completions, tool calls
// passed through, usage on request only, and errors surfaced as the SDK's own error classes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

let oa: MockUpstream; let gw: TestGateway; let client: OpenAI;
before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }] });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused-when-auth-off', maxRetries: 0 });
});
after(async () => { await gw.stop(); await oa.close(); });

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
};

test('non-streaming completion', async () => {
  const r = await client.chat.completions.create({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'hello gateway' }] });
  assert.equal(r.choices[0]!.message.content, 'Echo: hello gateway');
  assert.equal(r.choices[0]!.finish_reason, 'stop');
  assert.equal(r.model, 'mockai/test-model');
  assert.ok(r.usage!.prompt_tokens > 0);
});

test('streaming completion; the usage chunk the gateway asked for is hidden from a client that did not', async () => {
  const stream = await client.chat.completions.create({ model: 'mockai/test-model', stream: true, messages: [{ role: 'user', content: 'stream me please' }] });
  let text = ''; let ids = new Set<string>(); let usageSeen = false;
  for await (const c of stream) {
    ids.add(c.id);
    text += c.choices[0]?.delta?.content ?? '';
    if (c.usage) usageSeen = true;
  }
  assert.equal(text, 'Echo: stream me please');
  assert.equal(ids.size, 1);
  assert.equal(usageSeen, false);
  const sent = oa.requests.at(-1)!.body as Record<string, any>;
  assert.equal(sent.stream_options.include_usage, true);
});

test('streaming with include_usage delivers the usage chunk', async () => {
  const stream = await client.chat.completions.create({ model: 'mockai/test-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'count me' }] });
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const c of stream) if (c.usage) usage = c.usage;
  assert.ok(usage && usage.completion_tokens > 0 && usage.prompt_tokens > 0);
});

test('tool calls pass through, non-streaming and streamed (accumulated by the SDK helper)', async () => {
  const r = await client.chat.completions.create({ model: 'mockai/test-model', tools: [weatherTool], messages: [{ role: 'user', content: 'what is the weather in Paris?' }] });
  const call = r.choices[0]!.message.tool_calls![0]!;
  assert.equal(r.choices[0]!.finish_reason, 'tool_calls');
  assert.equal(call.type === 'function' && call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.type === 'function' ? call.function.arguments : '{}'), { location: 'Paris' });

  const runner = client.chat.completions.stream({ model: 'mockai/test-model', tools: [weatherTool], messages: [{ role: 'user', content: 'what is the weather in Paris?' }] });
  const final = await runner.finalChatCompletion();
  const sc = final.choices[0]!.message.tool_calls![0]!;
  assert.equal(sc.type === 'function' && sc.function.name, 'get_weather');
  assert.match(sc.id, /^call_/);
  assert.deepEqual(JSON.parse(sc.type === 'function' ? sc.function.arguments : '{}'), { location: 'Paris' });
});

test('errors arrive as the SDK error classes', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'mockai/test-model', temperature: 5, messages: [{ role: 'user', content: 'x' }] }),
    (e: unknown) => e instanceof OpenAI.BadRequestError && e.status === 400 && /temperature/.test(e.message));
  await assert.rejects(client.chat.completions.create({ model: 'mockai/missing', messages: [{ role: 'user', content: 'x' }] }),
    (e: unknown) => e instanceof OpenAI.NotFoundError);
  oa.fault([{ status: 429, retryAfter: 30 }]);
  await assert.rejects(client.chat.completions.create({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'x' }] }),
    (e: unknown) => e instanceof OpenAI.RateLimitError && e.headers?.get('retry-after') === '30');
  oa.fault([{ status: 400, body: { error: { message: 'upstream says no', type: 'invalid_request_error', param: 'messages', code: null } } }]);
  await assert.rejects(client.chat.completions.create({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'x' }] }),
    (e: unknown) => e instanceof OpenAI.BadRequestError && /upstream says no/.test(e.message));
});

test('embeddings pass through to the provider named by model', async () => {
  const r = await client.embeddings.create({ model: 'mockai/test-model', input: 'embed me' });
  assert.ok(r.data[0]!.embedding.length > 10);
  const sent = oa.requests.at(-1)!;
  assert.equal(sent.path, '/v1/embeddings');
  assert.equal((sent.body as any).model, 'test-model');
  assert.equal(sent.headers.authorization, 'Bearer sk-upstream-test');
});

test('a cost bound on a pass-through route is refused with a 400 naming it, not dropped', async () => {
  const before = oa.requests.length;
  for (const [field, value] of [['max_cost', 0.001], ['max_cost_per_million_tokens', 2]] as const) {
    const e = await client.embeddings.create({ model: 'mockai/test-model', input: 'embed me', [field]: value } as never).then(() => null, (x: unknown) => x);
    assert.ok(e instanceof OpenAI.BadRequestError, `${field}: ${String(e)}`);
    assert.equal((e.error as { param?: string }).param, field);
    assert.match(e.message, new RegExp(`'${field}' is enforced on /v1/chat/completions`));
  }
  assert.equal(oa.requests.length, before, 'nothing reached the provider');
  // The other router fields are still dropped on their way upstream (they bound nothing).
  await client.embeddings.create({ model: 'mockai/test-model', input: 'embed me', extra: { team: 'x' } } as never);
  assert.equal((oa.requests.at(-1)!.body as Record<string, unknown>).extra, undefined);
});

test('models.list() works against the gateway', async () => {
  const ids: string[] = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids, ['mockai/test-model', 'router'], 'the model and router mode (docs/router.md)');
});

test('an embeddings upstream that dies mid-body cuts the response without harming the gateway', async () => {
  oa.fault({ disconnectAfterChunks: 1 });
  await assert.rejects(fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mockai/test-model', input: 'x' }) }).then((r) => r.text()));
  const r = await client.embeddings.create({ model: 'mockai/test-model', input: 'still alive' });
  assert.ok(r.data[0]!.embedding.length > 0);
});
