// The sync's merge rules: which models count as chat models, which source wins each price, tiers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildModel, exclusionReason, mergePricing } from '../src/catalog/build.ts';
import { makerOf, PROVIDER_SOURCES } from '../src/catalog/providers-map.ts';
import { priceSheet, PRICES_AS_OF } from '../src/catalog/sources.ts';
import type { DevModel } from '../src/catalog/sources.ts';

const dev = (id: string, over: Partial<DevModel> = {}): DevModel => ({
  id, name: id.toUpperCase(), reasoning: false, toolCall: true, releaseDate: '2025-02-19', lastUpdated: '2025-03-01',
  input: ['image', 'text'], output: ['text'], context: 200000, outputLimit: 64000,
  cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }, ...over,
});
const src = (id: string) => PROVIDER_SOURCES.find((s) => s.id === id)!;

test('prices: genai-prices per field when present, else models.dev, converted per token', () => {
  const p = mergePricing({ input: 3, output: 15, cache_read: 0.3, cache_write: 3.75, reasoning: 20 },
    { input_mtok: 2.5, output_mtok: 10, cache_write_1h_mtok: 6, web_searches_kcount: 10, requests_kcount: 5 })!;
  assert.equal(p.prompt, '0.0000025');
  assert.equal(p.completion, '0.00001');
  assert.equal(p.input_cache_read, '0.0000003');
  assert.equal(p.input_cache_write, '0.00000375');
  assert.equal(p.input_cache_write_1h, '0.000006');
  assert.equal(p.internal_reasoning, '0.00002');
  assert.equal(p.web_search, '0.01');
  assert.equal(p.request, '0.005');
  assert.equal(p.image, '0');
  assert.equal(mergePricing(null, null), null);
});

test('chat models only', () => {
  assert.equal(exclusionReason(dev('gpt-4o')), null);
  assert.equal(exclusionReason(dev('whisper-large-v3')), 'not a chat model');
  assert.equal(exclusionReason(dev('text-embedding-3-small')), 'not a chat model');
  assert.equal(exclusionReason(dev('flux_1-dev', { output: ['image'] })), 'not a chat model');
  assert.equal(exclusionReason(dev('painter', { output: ['image'] })), 'no text in or out');
});

test('makers are read from the family name, whatever the host prefix', () => {
  assert.equal(makerOf('gpt-4.1'), 'openai');
  assert.equal(makerOf('o3-mini'), 'openai');
  assert.equal(makerOf('openai/gpt-oss-120b'), 'openai-open-weights');
  assert.equal(makerOf('anthropic.claude-3-haiku-20240307-v1:0'), 'anthropic');
  assert.equal(makerOf('amazon.nova-pro-v1:0'), 'amazon');
  assert.equal(makerOf('accounts/fireworks/models/deepseek-r1-0528'), 'deepseek');
  assert.equal(makerOf('llama-3.3-nemotron-super-49b-v1.5'), 'nvidia');
  assert.equal(makerOf('qwen/qwen3-coder'), undefined);
});

test('buildModel: dates, tier, capabilities, caching minimum, :free routes', () => {
  const m = buildModel(src('anthropic'), dev('claude-3-5-haiku-20241022'), null)!;
  assert.equal(m.added_at, '2025-02-19T00:00:00+00:00');
  assert.equal(m.updated_at, '2025-03-01T00:00:00+00:00');
  assert.equal(m.created, 1739923200);
  assert.equal(m.reliability_tier, 1);
  assert.equal(m.display_name, 'CLAUDE-3-5-HAIKU-20241022');
  assert.deepEqual(m.modalities.input, ['text', 'image']);
  assert.equal(m.capabilities.vision, true);
  assert.equal(m.cache_min_tokens, 2048);
  assert.equal(buildModel(src('anthropic'), dev('claude-3-7-sonnet-preview'), null)!.reliability_tier, 2);
  assert.equal(buildModel(src('openrouter'), dev('anthropic/claude-3.7-sonnet'), null)!.reliability_tier, 2);
  const free = buildModel(src('openrouter'), dev('x/y:free', { cost: { input: 0, output: 0 } }), { input_mtok: 1, output_mtok: 2 })!;
  assert.equal(free.pricing.prompt, '0');
  assert.equal(free.capabilities.prompt_caching, false);
  assert.equal(free.cache_min_tokens, undefined);
  assert.equal(buildModel(src('deepinfra'), dev('nothing', { cost: null }), null), null);
  assert.equal(buildModel(src('nvidia'), dev('deepseek-r1'), null)!.upstream, 'deepseek-ai/deepseek-r1');
});

test('genai-prices conditions: dated changes as of PRICES_AS_OF, peak of time-of-day windows, base tier', () => {
  assert.equal(PRICES_AS_OF, '2026-11-21');
  // Off-peak 0.135 unconstrained, peak 0.27 from 00:30 to 16:30 UTC: the peak price is kept.
  assert.deepEqual(priceSheet('deepseek', 'deepseek-chat')?.sheet, { input_mtok: 0.27, cache_read_mtok: 0.07, output_mtok: 1.1 });
  // Price rise dated 2026-06-16 is in effect; the one dated 2027-01-01 is not yet.
  assert.equal(priceSheet('mistral', 'mistral-medium-latest')?.sheet.input_mtok, 1.5);
  assert.equal(priceSheet('google', 'gemini-3.6-flash')?.sheet.input_mtok, 0.75);
  // Tiered (long-context) prices contribute their base tier.
  assert.equal(priceSheet('google', 'gemini-2.5-pro')?.sheet.input_mtok, 1.25);
  assert.equal(priceSheet('cohere', 'no-such-model-anywhere'), null);
});
