// Client query parameters a provider declares (forward_query) reach it: `?beta=true` as Claude Code and
// the Anthropic SDK's beta client send it, on pass-through (plain, streamed, a body the worker pool
// prepared, count_tokens), on translation only where the provider's `from` says so; everything else is
// left out and reported in x-gateway-adjustments. The provider's own query and auth parameters win.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigError, loadConfig } from '../src/config/load.ts';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { providerDoc, startTestGateway, type TestGateway } from './helpers/gateway.ts';

let anthropic: MockUpstream; let openai: MockUpstream; let gw: TestGateway;

before(async () => {
  anthropic = await startMockAnthropic();
  openai = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [
      { id: 'ant', format: 'anthropic-messages', base_url: anthropic.url, forward_query: ['beta'], forward_headers: ['anthropic-beta'] },
      // Declared for OpenAI clients too: relayed when an OpenAI client's request is translated for it.
      { id: 'antx', format: 'anthropic-messages', base_url: anthropic.url, forward_query: [{ name: 'beta', from: ['openai-chat'] }] },
      { id: 'plain', format: 'anthropic-messages', base_url: anthropic.url },
      { id: 'oai', format: 'openai-chat', base_url: openai.url, query: { 'api-version': 'provider' }, forward_query: ['api-version', 'trace'] },
    ],
    gateway: { workers: { threads: 1, convert_threshold_bytes: 200_000 } },
  });
});
after(async () => { await gw.stop(); await anthropic.close(); await openai.close(); });

const messages = (query: string, model: string, extra: Record<string, unknown> = {}) => fetch(`${gw.url}/v1/messages${query}`, {
  method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-beta': 'context-management-2025-06-27' },
  body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hello' }], ...extra }),
});
const chat = (query: string, model: string) => fetch(`${gw.url}/v1/chat/completions${query}`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
});
const lastPath = (m: MockUpstream): string => m.requests.at(-1)!.path;

test('?beta=true reaches an Anthropic provider that declares it (pass-through), with nothing reported', async () => {
  const r = await messages('?beta=true', 'ant/test-model');
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(lastPath(anthropic), '/v1/messages?beta=true');
  assert.equal(anthropic.requests.at(-1)!.headers['anthropic-beta'], 'context-management-2025-06-27');
  assert.doesNotMatch(r.headers.get('x-gateway-adjustments') ?? '', /beta/);
  await r.text();
  const s = await messages('?beta=true', 'ant/test-model', { stream: true });
  assert.equal(s.status, 200);
  assert.match(await s.text(), /message_stop/);
  assert.equal(lastPath(anthropic), '/v1/messages?beta=true');
});

test('a body the worker pool prepared carries the query too', async () => {
  const big = 'x'.repeat(250_000);
  const r = await fetch(`${gw.url}/v1/messages?beta=true`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'ant/test-model', max_tokens: 20, messages: [{ role: 'user', content: big }] }),
  });
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(lastPath(anthropic), '/v1/messages?beta=true');
  await r.text();
});

test('a provider that does not declare it, or a translated target: left out and reported', async () => {
  const r = await messages('?beta=true', 'plain/test-model');
  assert.equal(r.status, 200);
  assert.equal(lastPath(anthropic), '/v1/messages');
  assert.match(r.headers.get('x-gateway-adjustments') ?? '', /\?beta=dropped/);
  await r.text();
  // Claude Code against an OpenAI model: the Anthropic parameter means nothing to OpenAI.
  const o = await messages('?beta=true&trace=1', 'oai/test-model');
  assert.equal(o.status, 200, await o.clone().text());
  assert.equal(lastPath(openai), '/v1/chat/completions?api-version=provider');
  assert.match(o.headers.get('x-gateway-adjustments') ?? '', /\?beta=dropped, \?trace=dropped/);
  await o.text();
});

test('`from` relays a parameter on translation from the client formats it names', async () => {
  const r = await chat('?beta=true', 'antx/test-model');
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(lastPath(anthropic), '/v1/messages?beta=true');
  await r.text();
  const m = await messages('?beta=true', 'antx/test-model');
  assert.equal(lastPath(anthropic), '/v1/messages?beta=true', 'pass-through relays it as well');
  await m.text();
});

test('the provider\'s own query parameter is never taken from the client; other declared ones are', async () => {
  const r = await chat('?api-version=client&trace=abc&trace=def', 'oai/test-model');
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(lastPath(openai), '/v1/chat/completions?trace=abc&trace=def&api-version=provider');
  assert.match(r.headers.get('x-gateway-adjustments') ?? '', /\?api-version=dropped/);
  await r.text();
});

test('odd names are reported encoded and bounded; nothing breaks the answer', async () => {
  const many = Array.from({ length: 12 }, (_, i) => `p${i}=1`).join('&');
  const r = await messages(`?${encodeURIComponent('a\r\nb')}=1&${many}`, 'plain/test-model');
  assert.equal(r.status, 200, await r.clone().text());
  const adj = r.headers.get('x-gateway-adjustments') ?? '';
  assert.match(adj, /\?a%0D%0Ab=dropped/);
  assert.match(adj, /\?\(5 more\)=dropped/);
  await r.text();
});

test('count_tokens?beta=true reaches the provider\'s own count_tokens', async () => {
  const r = await fetch(`${gw.url}/v1/messages/count_tokens?beta=true`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'ant/test-model', messages: [{ role: 'user', content: 'hello' }] }),
  });
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(lastPath(anthropic), '/v1/messages/count_tokens?beta=true');
  assert.equal(r.headers.get('x-gateway-token-count'), 'provider');
});

test('forward_query is validated: names only, and `from` only client formats', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-fq-'));
  mkdirSync(join(dir, 'providers'));
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers' }));
  writeFileSync(join(dir, 'providers', 'acme.yaml'), stringify({
    ...providerDoc({ id: 'acme', format: 'anthropic-messages', base_url: 'http://127.0.0.1:1/v1' }),
    forward_query: ['beta', 'bad name', { name: 'x', from: ['gemini-ish'] }],
  }));
  let problems: string[] = [];
  try { loadConfig(join(dir, 'gateway.yaml'), {}); } catch (e) { assert.ok(e instanceof ConfigError); problems = e.problems.map((p) => `${p.path}: ${p.message}`); }
  assert.ok(problems.some((p) => p.startsWith('/forward_query/1')), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('/forward_query/2')), problems.join('\n'));
  assert.ok(!problems.some((p) => p.startsWith('/forward_query/0')), problems.join('\n'));
});

test('the repository\'s Anthropic provider declares beta', () => {
  const cfg = loadConfig(new URL('../gateway.yaml', import.meta.url).pathname, {});
  const ant = cfg.providers.find((p) => p.doc.id === 'anthropic');
  assert.deepEqual(ant?.doc.forward_query, ['beta']);
});
