// Live discovery against mock model-list endpoints: each wire format's list with every page followed,
// the facts each list carries, and the failures a refresh must survive (bad keys, timeouts, bad JSON).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROVIDER_LISTERS } from '../src/catalog/discovery/provider-lists.ts';
import { DiscoveryError, getJson, hasCredentials } from '../src/catalog/discovery/http.ts';
import { openRouterModel } from '../src/catalog/refresh-merge.ts';
import type { Provider } from '../src/config/types.ts';
import { KEYS, startMockModelLists } from './mocks/model-lists.ts';
import { listData } from './fixtures/catalog/lists.ts';

const mock = await startMockModelLists(listData());
after(() => mock.close());

function provider(id: string, format: Provider['format'], over: Partial<Provider> = {}): Provider {
  const base = `${mock.url}${format === 'gemini' ? '/v1beta' : format === 'bedrock-converse' ? '' : '/v1'}`;
  const u = new URL(base);
  return {
    id, name: id, format, baseUrl: base, origin: u.origin, basePath: u.pathname.replace(/\/$/, ''), apiKey: '', auth: { type: 'bearer' },
    headers: {}, query: '', paths: { chat: null, embeddings: null, passthrough: null }, modelInBody: true, forwardHeaders: [], forwardQuery: [],
    mapping: {} as Provider['mapping'], mappingRows: [], toolCallIds: null, file: `${id}.yaml`, native: {}, credentialed: true, routerEnvMissing: [], ...over,
  };
}
const openai = provider('openai', 'openai-chat', { apiKey: KEYS.openai });
const anthropic = provider('anthropic', 'anthropic-messages', { apiKey: KEYS.anthropic, auth: { type: 'header', name: 'x-api-key', prefix: '' }, headers: { 'anthropic-version': '2023-06-01' } });
const gemini = provider('google', 'gemini', { apiKey: KEYS.gemini, auth: { type: 'header', name: 'x-goog-api-key', prefix: '' } });
const bedrock = provider('bedrock', 'bedrock-converse', {
  auth: { type: 'transform', transform: 'aws-sigv4', options: { region: 'us-east-1', service: 'bedrock', access_key_id: KEYS.awsKeyId, secret_access_key: 'secret' } },
});
const list = (p: Provider, timeoutMs = 2000) => PROVIDER_LISTERS[p.format]!(p, { timeoutMs });

test('OpenAI-compatible: one page as OpenAI answers, every cursor page where a provider pages', async () => {
  const one = await list(openai);
  assert.equal(one.pages, 1);
  assert.deepEqual(one.models.map((m) => m.name), ['gpt-5.5', 'gpt-5.4', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-5.7-preview', 'text-embedding-3-small']);
  // shutdown_date (openai SDK's Model) is a scheduled retirement.
  assert.deepEqual(one.models[1]!.facts, { added_at: '2026-03-05T00:00:00+00:00', retires_at: '2027-03-05T00:00:00+00:00', status: 'deprecated' });
  mock.openaiPageSize = 4;
  try {
    const paged = await list(openai);
    assert.equal(paged.pages, 2);
    assert.equal(paged.models.length, 6);
    assert.equal(mock.requests.filter((r) => r.route === 'openai').at(-1)!.query.get('after'), 'gpt-4.1-mini');
  } finally { mock.openaiPageSize = 0; }
});

test('Anthropic: limit and after_id pages; display names, limits, lifecycle and capabilities from ModelInfo', async () => {
  const r = await list(anthropic);
  assert.equal(r.pages, 3); // the mock pages by 2
  assert.equal(r.models.length, 5);
  const reqs = mock.requests.filter((x) => x.route === 'anthropic');
  assert.equal(reqs[0]!.query.get('limit'), '1000');
  assert.equal(reqs[1]!.query.get('after_id'), 'claude-opus-4-8');
  assert.equal(reqs[0]!.headers['x-api-key'], KEYS.anthropic);
  const opus41 = r.models.find((m) => m.name === 'claude-opus-4-1-20250805')!.facts;
  assert.deepEqual([opus41.status, opus41.retires_at, opus41.context_window, opus41.max_completion_tokens], ['deprecated', '2027-08-05T00:00:00+00:00', 200000, 32000]);
  const sonnet = r.models.find((m) => m.name === 'claude-sonnet-5')!.facts;
  assert.deepEqual(sonnet.capabilities, { vision: true, reasoning: true });
  assert.deepEqual(sonnet.modalities, { input: ['text', 'image', 'pdf'], output: ['text'] });
});

test('Gemini: pageToken pages, and only models generateContent can call', async () => {
  const r = await list(gemini);
  assert.equal(r.pages, 2); // 3 per page here
  assert.deepEqual(r.models.map((m) => m.name), ['gemini-3.5-flash', 'gemini-3.1-pro-preview', 'gemini-4-flash-preview']);
  assert.deepEqual(r.models[0]!.facts, { display_name: 'Gemini 3.5 Flash', context_window: 1048576, max_completion_tokens: 65536, capabilities: { reasoning: true } });
  assert.equal(mock.requests.filter((x) => x.route === 'gemini')[0]!.headers['x-goog-api-key'], KEYS.gemini);
});

test('Bedrock: ListFoundationModels (on-demand ids) and ListInferenceProfiles (every page), SigV4-signed', async () => {
  const r = await list(bedrock);
  assert.deepEqual(r.models.map((m) => m.name).sort(), [
    'amazon.nova-pro-v1:0', 'amazon.titan-embed-text-v2:0',
    'eu.anthropic.claude-sonnet-4-5-20250929-v1:0', 'global.anthropic.claude-sonnet-4-5-20250929-v1:0', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  ]);
  // The base id has no on-demand throughput: it is not listed, its profiles carry its facts.
  const us = r.models.find((m) => m.name.startsWith('us.'))!.facts;
  assert.deepEqual(us.modalities, { input: ['text', 'image'], output: ['text'] });
  assert.equal(mock.requests.filter((x) => x.route === 'bedrock-profiles').length, 2);
  assert.match(String(mock.requests.find((x) => x.route === 'bedrock-models')!.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIATESTKEY\//);
});

test('failures: a refused key is an auth error, a hang a timeout, garbage invalid; no key at all is skipped', async () => {
  await assert.rejects(list({ ...openai, apiKey: 'sk-wrong' }), (e: unknown) => e instanceof DiscoveryError && e.kind === 'auth' && e.status === 401);
  await assert.rejects(list({ ...gemini, apiKey: 'bad' }), (e: unknown) => e instanceof DiscoveryError && e.kind === 'auth' && e.status === 403);
  mock.faults.set('anthropic', { hang: true });
  const t0 = Date.now();
  await assert.rejects(list(anthropic, 300), (e: unknown) => e instanceof DiscoveryError && e.kind === 'timeout');
  assert.ok(Date.now() - t0 < 2000);
  mock.faults.set('anthropic', { status: 529 });
  await assert.rejects(list(anthropic), (e: unknown) => e instanceof DiscoveryError && e.kind === 'http' && e.status === 529);
  mock.faults.set('anthropic', { body: '{"data": [' });
  await assert.rejects(list(anthropic), (e: unknown) => e instanceof DiscoveryError && e.kind === 'invalid');
  mock.faults.set('anthropic', { body: '{"models": []}' });
  await assert.rejects(list(anthropic), /no "data" list/);
  mock.faults.clear();
  await assert.rejects(getJson('http://127.0.0.1:1/nothing', { timeoutMs: 1000 }), (e: unknown) => e instanceof DiscoveryError && e.kind === 'network');
  // A key in the query string never reaches a message.
  await assert.rejects(getJson(`${mock.url}/v1beta/models?key=SECRET-IN-QUERY`, { timeoutMs: 1000, headers: {} }).then(() => { throw new Error('x'); }), (e: unknown) => !String((e as Error).message).includes('SECRET'));
  assert.equal(hasCredentials({ ...openai, apiKey: '' }), false);
  assert.equal(hasCredentials({ ...bedrock }), true);
});

test('an answer without a length that never ends is cut at the size cap, not buffered until the timeout', async (t) => {
  // Chunked (no content-length): the cap was checked only after res.text() had read it all, so a source
  // streaming fast held gigabytes (1.9 GB in 4 s on loopback) before its timeout let go.
  const chunk = Buffer.alloc(1 << 20, 0x20);
  let sent = 0;
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const pump = (): void => { while (res.write(chunk)) sent += chunk.length; res.once('drain', pump); };
    pump();
    req.on('close', () => res.destroy());
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => { server.closeAllConnections(); server.close(); });
  const t0 = Date.now();
  await assert.rejects(getJson(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api.json`, { timeoutMs: 20_000 }),
    (e: unknown) => e instanceof DiscoveryError && e.kind === 'invalid' && /more than the 33554432 bytes allowed/.test(e.message));
  assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
  assert.ok(sent < 256 * 1024 * 1024, `the server got to send ${sent} bytes`);
});

test('OpenRouter records: per-token prices as published, variable-price routers unpriced, file input as pdf', () => {
  const data = listData().openrouter;
  const sonnet = openRouterModel(data.find((m) => m.id === 'anthropic/claude-sonnet-4.5')!)!;
  assert.deepEqual([sonnet.pricing!.prompt, sonnet.pricing!.completion, sonnet.pricing!.web_search, sonnet.pricing!.input_cache_read], ['0.000003', '0.000015', '0.01', '0.0000003']);
  assert.deepEqual(sonnet.dev.input, ['text', 'image', 'pdf']);
  assert.deepEqual([sonnet.dev.context, sonnet.dev.outputLimit, sonnet.dev.toolCall, sonnet.dev.reasoning], [1000000, 64000, true, true]);
  assert.equal(sonnet.dev.releaseDate, '2025-09-29');
  assert.equal(openRouterModel(data.find((m) => m.id === 'openrouter/auto')!)!.pricing, null);
  assert.equal(openRouterModel({ nope: true }), null);
});
