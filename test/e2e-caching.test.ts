// Prompt caching end to end: cache_control breakpoints reach Anthropic unchanged and Bedrock as
// cachePoints; the first call reports a cache write (5m/1h split), a matching later call reads;
// prompts below the minimum (1024 tokens, 2048 for a haiku model) are not cached; OpenAI's and
// Gemini's automatic caching shows up as cache reads in both client formats; and the inference
// record's cost uses the cache prices.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import type { InferenceRecord } from '../src/store/types.ts';

type Rec = Record<string, any>;
let ant: MockUpstream; let bed: MockUpstream; let oai: MockUpstream; let gem: MockUpstream;
let gw: TestGateway; let anthropic: Anthropic; let openai: OpenAI;

const caps = { tools: true, reasoning: true, prompt_caching: true };
before(async () => {
  [ant, bed, oai, gem] = await Promise.all([startMockAnthropic(), startMockBedrock(), startMockOpenAI(), startMockGemini()]);
  const models = [{ name: 'test-model', pricing: TEST_PRICING, capabilities: caps }, { name: 'claude-haiku-test', pricing: TEST_PRICING, capabilities: caps }];
  gw = await startTestGateway({
    providers: [
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models },
      { id: 'bed', format: 'bedrock-converse', base_url: bed.url, models },
      { id: 'oai', format: 'openai-chat', base_url: oai.url },
      { id: 'gem', format: 'gemini', base_url: gem.url },
    ],
  });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); for (const m of [ant, bed, oai, gem]) await m.close(); });

/** About `tokens` tokens of text (the mocks count ceil(chars / 4)). */
function longText(tokens: number, seed = 'policy'): string {
  let s = '';
  for (let i = 0; s.length < tokens * 4; i++) s += `The ${seed} paragraph ${i} says to be kind and precise. `;
  return s.slice(0, tokens * 4);
}

const system = (text: string, ttl?: '5m' | '1h'): Anthropic.TextBlockParam[] =>
  [{ type: 'text', text, cache_control: ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' } }];

async function recordOf(id: string): Promise<InferenceRecord> {
  for (let i = 0; i < 100; i++) {
    const r = (await gw.services.store!.listInferences({ limit: 50 })).find((x) => x.id === id);
    if (r) return r;
    await new Promise((ok) => setTimeout(ok, 10));
  }
  throw new Error(`no record for ${id}`);
}

/** Exact decimal of n * 10^-scale, trailing zeros trimmed (the store's decimal strings compare the same way). */
function decimal(n: bigint, scale: number): string {
  const s = n.toString().padStart(scale + 1, '0');
  const out = `${s.slice(0, -scale)}.${s.slice(-scale)}`.replace(/0+$/, '').replace(/\.$/, '');
  return out;
}
const trim = (d: string): string => (d.includes('.') ? d.replace(/0+$/, '').replace(/\.$/, '') : d);

/** Cost in units of 1e-8 USD from TEST_PRICING: prompt 100, completion 200, read 10, write 125, write 1h 200. */
const expectedCost = (u: { input: number; output: number; read: number; w5m: number; w1h: number }): string =>
  decimal(BigInt(u.input * 100 + u.output * 200 + u.read * 10 + u.w5m * 125 + u.w1h * 200), 8);

test('Anthropic upstream: breakpoints pass unchanged; write (5m) then read; cost uses cache prices', async () => {
  ant.reset();
  const sys = system(longText(1500));
  const first = await anthropic.messages.create({ model: 'ant/test-model', max_tokens: 100, system: sys, messages: [{ role: 'user', content: 'first question' }] });
  assert.deepEqual((ant.requests.at(-1)!.body as Rec).system, sys, 'cache_control reached Anthropic unchanged');
  const u1 = first.usage;
  assert.ok(u1.cache_creation_input_tokens! >= 1500, `written ${u1.cache_creation_input_tokens}`);
  assert.equal(u1.cache_read_input_tokens, 0);
  assert.deepEqual(u1.cache_creation, { ephemeral_5m_input_tokens: u1.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 });

  const second = await anthropic.messages.create({ model: 'ant/test-model', max_tokens: 100, system: sys, messages: [{ role: 'user', content: 'second question' }] });
  const u2 = second.usage;
  assert.equal(u2.cache_creation_input_tokens, 0);
  assert.equal(u2.cache_read_input_tokens, u1.cache_creation_input_tokens);
  assert.deepEqual(u2.cache_creation, { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });

  const r1 = await recordOf(first.id);
  assert.equal(r1.cacheWriteTokens, u1.cache_creation_input_tokens);
  assert.equal(trim(r1.costUsd), expectedCost({ input: u1.input_tokens, output: u1.output_tokens, read: 0, w5m: u1.cache_creation_input_tokens!, w1h: 0 }));
  const r2 = await recordOf(second.id);
  assert.equal(r2.cacheReadTokens, u2.cache_read_input_tokens);
  assert.equal(trim(r2.costUsd), expectedCost({ input: u2.input_tokens, output: u2.output_tokens, read: u2.cache_read_input_tokens!, w5m: 0, w1h: 0 }));
});

test('Anthropic upstream, streamed: a 1h breakpoint reports the 1h split and bills at the 1h price', async () => {
  ant.reset();
  const sys = system(longText(1200, 'hourly'), '1h');
  const first = await anthropic.messages.stream({ model: 'ant/test-model', max_tokens: 100, system: sys, messages: [{ role: 'user', content: 'cache for an hour' }] }).finalMessage();
  assert.deepEqual((ant.requests.at(-1)!.body as Rec).system, sys);
  const u = first.usage;
  assert.ok(u.cache_creation_input_tokens! >= 1200);
  assert.deepEqual(u.cache_creation, { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: u.cache_creation_input_tokens });
  const rec = await recordOf(first.id);
  assert.equal(trim(rec.costUsd), expectedCost({ input: u.input_tokens, output: u.output_tokens, read: 0, w5m: 0, w1h: u.cache_creation_input_tokens! }));
  const again = await anthropic.messages.stream({ model: 'ant/test-model', max_tokens: 100, system: sys, messages: [{ role: 'user', content: 'read it back' }] }).finalMessage();
  assert.equal(again.usage.cache_read_input_tokens, u.cache_creation_input_tokens);
  assert.equal(again.usage.cache_creation_input_tokens, 0);
});

test('below the minimum nothing is cached: 1024 tokens, 2048 for a haiku model', async () => {
  ant.reset();
  const small = system(longText(800, 'short'));
  for (let i = 0; i < 2; i++) {
    const m = await anthropic.messages.create({ model: 'ant/test-model', max_tokens: 50, system: small, messages: [{ role: 'user', content: `q${i}` }] });
    assert.equal(m.usage.cache_creation_input_tokens, 0);
    assert.equal(m.usage.cache_read_input_tokens, 0);
  }
  const mid = system(longText(1500, 'middle'));
  for (let i = 0; i < 2; i++) {
    const h = await anthropic.messages.create({ model: 'ant/claude-haiku-test', max_tokens: 50, system: mid, messages: [{ role: 'user', content: `h${i}` }] });
    assert.equal(h.usage.cache_creation_input_tokens, 0, 'haiku minimum is 2048');
    assert.equal(h.usage.cache_read_input_tokens, 0);
  }
  const s = await anthropic.messages.create({ model: 'ant/test-model', max_tokens: 50, system: mid, messages: [{ role: 'user', content: 'sonnet-sized' }] });
  assert.ok(s.usage.cache_creation_input_tokens! > 0, 'the same prompt is cached on a non-haiku model');
  const big = system(longText(2100, 'large'));
  const h1 = await anthropic.messages.create({ model: 'ant/claude-haiku-test', max_tokens: 50, system: big, messages: [{ role: 'user', content: 'x' }] });
  assert.ok(h1.usage.cache_creation_input_tokens! >= 2048);
  const h2 = await anthropic.messages.create({ model: 'ant/claude-haiku-test', max_tokens: 50, system: big, messages: [{ role: 'user', content: 'y' }] });
  assert.equal(h2.usage.cache_read_input_tokens, h1.usage.cache_creation_input_tokens);
});

test('Bedrock upstream: breakpoints become cachePoints (ttl kept); write then read; minimums apply', async () => {
  bed.reset();
  const text = longText(1300, 'bedrock');
  const tools: Anthropic.Tool[] = [{ name: 'lookup', description: 'Look something up', input_schema: { type: 'object', properties: { q: { type: 'string' } } }, cache_control: { type: 'ephemeral' } }];
  const first = await anthropic.messages.create({ model: 'bed/test-model', max_tokens: 100, tools, system: system(text), messages: [{ role: 'user', content: 'first' }] });
  const body = bed.requests.at(-1)!.body as Rec;
  assert.deepEqual(body.system, [{ text }, { cachePoint: { type: 'default' } }]);
  assert.deepEqual(body.toolConfig.tools.at(-1), { cachePoint: { type: 'default' } });
  assert.ok(first.usage.cache_creation_input_tokens! >= 1300);
  assert.equal(first.usage.cache_read_input_tokens, 0);
  assert.equal(first.usage.cache_creation?.ephemeral_5m_input_tokens, first.usage.cache_creation_input_tokens);
  const second = await anthropic.messages.stream({ model: 'bed/test-model', max_tokens: 100, tools, system: system(text), messages: [{ role: 'user', content: 'second' }] }).finalMessage();
  assert.equal(second.usage.cache_read_input_tokens, first.usage.cache_creation_input_tokens);
  assert.equal(second.usage.cache_creation_input_tokens, 0);
  const rec = await recordOf(second.id);
  assert.equal(trim(rec.costUsd), expectedCost({ input: second.usage.input_tokens, output: second.usage.output_tokens, read: second.usage.cache_read_input_tokens!, w5m: 0, w1h: 0 }));

  // A 1h breakpoint on a message block travels as cachePoint.ttl.
  await anthropic.messages.create({ model: 'bed/test-model', max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'text', text: 'short', cache_control: { type: 'ephemeral', ttl: '1h' } }] }] });
  assert.deepEqual((bed.requests.at(-1)!.body as Rec).messages[0].content, [{ text: 'short' }, { cachePoint: { type: 'default', ttl: '1h' } }]);

  const hk = system(longText(1500, 'bedrock-haiku'));
  for (let i = 0; i < 2; i++) {
    const h = await anthropic.messages.create({ model: 'bed/claude-haiku-test', max_tokens: 50, system: hk, messages: [{ role: 'user', content: `h${i}` }] });
    assert.equal(h.usage.cache_creation_input_tokens, 0);
    assert.equal(h.usage.cache_read_input_tokens, 0);
  }
});

test('OpenAI upstream automatic caching: cache reads for both client formats; cost bills reads at the read price', async () => {
  oai.reset();
  const text = longText(1400, 'openai');
  const a1 = await anthropic.messages.create({ model: 'oai/test-model', max_tokens: 100, system: text, messages: [{ role: 'user', content: 'one' }] });
  assert.equal(a1.usage.cache_read_input_tokens, 0);
  const a2 = await anthropic.messages.create({ model: 'oai/test-model', max_tokens: 100, system: text, messages: [{ role: 'user', content: 'two' }] });
  assert.ok(a2.usage.cache_read_input_tokens! >= 1024, `read ${a2.usage.cache_read_input_tokens}`);
  assert.equal(a2.usage.cache_read_input_tokens! % 128, 0);
  assert.equal(a2.usage.cache_creation_input_tokens, 0);
  const total = Math.ceil((text.length + 1 + 'two'.length) / 4);
  assert.equal(a2.usage.input_tokens + a2.usage.cache_read_input_tokens!, total, 'uncached + cached = the prompt');
  const rec = await recordOf(a2.id);
  assert.equal(rec.cacheReadTokens, a2.usage.cache_read_input_tokens);
  assert.equal(trim(rec.costUsd), expectedCost({ input: a2.usage.input_tokens, output: a2.usage.output_tokens, read: a2.usage.cache_read_input_tokens!, w5m: 0, w1h: 0 }));

  const o = await openai.chat.completions.create({ model: 'oai/test-model', messages: [{ role: 'system', content: text }, { role: 'user', content: 'three' }] });
  assert.ok(o.usage!.prompt_tokens_details!.cached_tokens! >= 1024);
  const os = await openai.chat.completions.stream({ model: 'oai/test-model', stream_options: { include_usage: true }, messages: [{ role: 'system', content: text }, { role: 'user', content: 'four' }] }).finalChatCompletion();
  assert.ok(os.usage!.prompt_tokens_details!.cached_tokens! >= 1024);
});

test('Gemini implicit caching is reported as cache reads (cachedContentTokenCount)', async () => {
  gem.reset();
  const text = longText(1400, 'gemini');
  await openai.chat.completions.create({ model: 'gem/test-model', messages: [{ role: 'system', content: text }, { role: 'user', content: 'one' }] });
  const o = await openai.chat.completions.create({ model: 'gem/test-model', messages: [{ role: 'system', content: text }, { role: 'user', content: 'two' }] });
  const cached = o.usage!.prompt_tokens_details!.cached_tokens!;
  assert.ok(cached >= 1024);
  const a = await anthropic.messages.create({ model: 'gem/test-model', max_tokens: 100, system: text, messages: [{ role: 'user', content: 'three' }] });
  assert.ok(a.usage.cache_read_input_tokens! >= 1024);
  assert.equal(a.usage.cache_creation_input_tokens, 0);
  // cache_control has no Gemini counterpart: it is dropped, never sent.
  await anthropic.messages.create({ model: 'gem/test-model', max_tokens: 100, system: system(text), messages: [{ role: 'user', content: 'four' }] });
  assert.doesNotMatch(JSON.stringify(gem.requests.at(-1)!.body), /cache_control|cachePoint/);
});
