// Fields a translated target has no equivalent for, which only tune sampling or presentation or name
// the client's own provider's serving (cache routing, tiers, speed, region): left out, and each said so
// in x-gateway-adjustments. Through the official SDKs, before this: a chat request with penalties, seed,
// logit_bias, verbosity, metadata and a flex tier reached Anthropic without them and the header said
// only `max_tokens=default(4096)`; Gemini and Bedrock dropped the end-user id, the tier and the cache
// key unsaid, and a Messages request's `speed: fast` or `inference_geo` vanished the same way.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { MockUpstream } from './mocks/index.ts';
import { oneModelOnEach, startFourMocks } from './helpers/four-formats.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let ant: MockUpstream; let gem: MockUpstream; let bed: MockUpstream; let gw: TestGateway;
let openai: OpenAI; let anthropic: Anthropic;

before(async () => {
  ({ oai, ant, gem, bed } = await startFourMocks());
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true } };
  gw = await startTestGateway({ providers: oneModelOnEach({ oai, ant, gem, bed }, model) });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); for (const m of [oai, ant, gem, bed]) await m.close(); });

const adjustments = (h: Headers): string[] => (h.get('x-gateway-adjustments') ?? '').split(', ');

describe('a chat request translated', () => {
  test('for Anthropic: each dropped field is reported, and none is sent', async () => {
    ant.reset();
    const { response } = await openai.chat.completions.create({
      model: 'ant/test-model', messages: [{ role: 'user', content: 'Name a colour.' }], max_completion_tokens: 50,
      frequency_penalty: 0.5, presence_penalty: 0.2, seed: 7, logit_bias: { '1734': -100 }, verbosity: 'low',
      metadata: { session: 's-1' }, service_tier: 'flex', prompt_cache_key: 'k-1', prompt_cache_retention: '24h', safety_identifier: 'user-1',
    }).withResponse();
    const adj = adjustments(response.headers);
    for (const a of ['frequency_penalty=dropped', 'presence_penalty=dropped', 'seed=dropped', 'logit_bias=dropped', 'verbosity=dropped',
      'metadata=dropped(Anthropic takes only user_id)', 'service_tier=dropped(flex)', 'prompt_cache_key=dropped', 'prompt_cache_retention=dropped']) {
      assert.ok(adj.includes(a), `${a} in ${adj.join(', ')}`);
    }
    const sent = ant.requests.at(-1)!.body as Rec;
    assert.deepEqual(sent.metadata, { user_id: 'user-1' });
    for (const k of ['frequency_penalty', 'presence_penalty', 'seed', 'logit_bias', 'verbosity', 'service_tier', 'prompt_cache_key']) assert.equal(sent[k], undefined, k);
  });

  test('an Anthropic service tier passes, and is not reported', async () => {
    const { response } = await openai.chat.completions.create({ model: 'ant/test-model', messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 20, service_tier: 'auto' }).withResponse();
    assert.equal(adjustments(response.headers).some((a) => a.startsWith('service_tier')), false);
    assert.equal((ant.requests.at(-1)!.body as Rec).service_tier, 'auto');
  });

  for (const target of ['gem', 'bed']) {
    test(`for ${target}: the end-user id, the tier and the cache key and retention are reported`, async () => {
      const { response } = await openai.chat.completions.create({
        model: `${target}/test-model`, messages: [{ role: 'user', content: 'Name a colour.' }], max_completion_tokens: 50,
        safety_identifier: 'user-1', service_tier: 'priority', prompt_cache_key: 'k-1', prompt_cache_retention: 'in_memory',
      }).withResponse();
      const adj = adjustments(response.headers);
      for (const a of ['user=dropped', 'service_tier=dropped', 'prompt_cache_key=dropped', 'prompt_cache_retention=dropped']) assert.ok(adj.includes(a), `${a} in ${adj.join(', ')}`);
    });
  }
});

describe('a Messages request translated', () => {
  test('speed fast and inference_geo are reported for an OpenAI target; speed standard is nothing', async () => {
    oai.reset();
    const { response } = await anthropic.messages.create({
      model: 'oai/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'Name a colour.' }], speed: 'fast', inference_geo: 'us',
    }).withResponse();
    const adj = adjustments(response.headers);
    assert.ok(adj.includes('speed=dropped(fast)'), adj.join(', '));
    assert.ok(adj.includes('inference_geo=dropped(us)'), adj.join(', '));
    const sent = oai.requests.at(-1)!.body as Rec;
    assert.equal(sent.speed, undefined);
    const plain = await anthropic.messages.create({ model: 'oai/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }], speed: 'standard' }).withResponse();
    assert.equal(adjustments(plain.response.headers).some((a) => a.startsWith('speed')), false);
  });

  test('relayed to Anthropic they arrive as sent; a speed Anthropic does not take is a 400 naming it', async () => {
    ant.reset();
    await anthropic.messages.create({ model: 'ant/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }], speed: 'fast', inference_geo: 'us' });
    const sent = ant.requests.at(-1)!.body as Rec;
    assert.equal(sent.speed, 'fast');
    assert.equal(sent.inference_geo, 'us');
    const err = await anthropic.messages.create({ model: 'ant/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }], speed: 'turbo' as any }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    assert.match(err.message, /speed/);
    assert.equal(ant.requests.length, 1);
  });
});
