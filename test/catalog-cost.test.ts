// Cost arithmetic against hand-computed bills: one test per price kind, the missing-price rules,
// and the upper bound used for budget reservation. All expectations are exact decimal strings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { emptyUsage } from '../src/formats/canonical.ts';
import type { Usage } from '../src/formats/canonical.ts';
import { blendedPerMillion, costOf, estimateMaxCost, maxAffordableOutputTokens, perMillion } from '../src/catalog/cost.ts';
import type { CatalogFile, Pricing } from '../src/catalog/types.ts';
import { zeroPricing } from '../src/catalog/types.ts';

// Claude-Sonnet-like sheet ($3 / $15 per million, reads $0.30, writes $3.75 / $6) plus made-up
// reasoning, image and search prices so every kind has a distinct, non-zero price. No request fee.
const P: Pricing = {
  prompt: '0.000003', completion: '0.000015', internal_reasoning: '0.00002',
  input_cache_read: '0.0000003', input_cache_write: '0.00000375', input_cache_write_1h: '0.000006',
  image: '0.001', request: '0', web_search: '0.01',
};
const use = (u: Partial<Usage>): Usage => ({ ...emptyUsage(), ...u });

test('uncached input: 1000 x $0.000003 = $0.003', () => {
  assert.equal(costOf(P, use({ input_tokens: 1000 })), '0.003');
});

test('output: 500 x $0.000015 = $0.0075', () => {
  assert.equal(costOf(P, use({ output_tokens: 500 })), '0.0075');
});

test('cache read: 2000 x $0.0000003 = $0.0006', () => {
  assert.equal(costOf(P, use({ cache_read_input_tokens: 2000 })), '0.0006');
});

test('5-minute cache write: 1000 x $0.00000375 = $0.00375', () => {
  assert.equal(costOf(P, use({ cache_creation_input_tokens: 1000, cache_creation_5m: 1000 })), '0.00375');
});

test('1-hour cache write: 1000 x $0.000006 = $0.006', () => {
  assert.equal(costOf(P, use({ cache_creation_input_tokens: 1000, cache_creation_1h: 1000 })), '0.006');
});

test('unsplit cache writes bill the remainder at the 5-minute price', () => {
  // 1300 at 5m (1000 declared + 300 remainder) = 0.004875; 200 at 1h = 0.0012.
  assert.equal(costOf(P, use({ cache_creation_input_tokens: 1500, cache_creation_5m: 1000, cache_creation_1h: 200 })), '0.006075');
  // A provider reporting only the total: all of it is a 5-minute write.
  assert.equal(costOf(P, use({ cache_creation_input_tokens: 1000 })), '0.00375');
});

test('reasoning tokens bill at internal_reasoning, the rest of output at completion', () => {
  // 200 x 0.00002 = 0.004; 300 x 0.000015 = 0.0045.
  assert.equal(costOf(P, use({ output_tokens: 500, reasoning_tokens: 200 })), '0.0085');
  // Without a reasoning price, reasoning is ordinary output.
  assert.equal(costOf({ ...P, internal_reasoning: '0' }, use({ output_tokens: 500, reasoning_tokens: 200 })), '0.0075');
});

test('request price: one request by default, or as many as declared', () => {
  const withFee = { ...P, request: '0.005' };
  assert.equal(costOf(withFee, use({})), '0.005');
  assert.equal(costOf(withFee, use({}), { requests: 3 }), '0.015');
  assert.equal(costOf(withFee, use({}), { requests: 0 }), '0');
});

test('images: 4 x $0.001 = $0.004', () => {
  assert.equal(costOf(P, use({}), { images: 4 }), '0.004');
});

test('web searches: 3 x $0.01 = $0.03', () => {
  assert.equal(costOf(P, use({}), { webSearches: 3 }), '0.03');
});

test('a full bill is the exact sum of its parts', () => {
  const u = use({
    input_tokens: 1000, output_tokens: 500, reasoning_tokens: 200, cache_read_input_tokens: 2000,
    cache_creation_input_tokens: 2000, cache_creation_5m: 1000, cache_creation_1h: 1000,
  });
  // 0.003 + 0.0085 + 0.0006 + 0.00375 + 0.006 + 0.005 (request) + 0.004 + 0.03
  assert.equal(costOf({ ...P, request: '0.005' }, u, { images: 4, webSearches: 3 }), '0.06085');
});

test('missing prices: reads and writes fall back as documented', () => {
  // No read price: reads cost as much as uncached input.
  assert.equal(costOf({ ...P, input_cache_read: '0' }, use({ cache_read_input_tokens: 2000 })), '0.006');
  // No 1h price: 1h writes bill at the 5m write price.
  assert.equal(costOf({ ...P, input_cache_write_1h: '0' }, use({ cache_creation_input_tokens: 1000, cache_creation_1h: 1000 })), '0.00375');
  // No write prices at all: writes are ordinary input.
  const noWrites = { ...P, input_cache_write: '0', input_cache_write_1h: '0' };
  assert.equal(costOf(noWrites, use({ cache_creation_input_tokens: 1000, cache_creation_1h: 1000 })), '0.003');
  // A free model stays free whatever the usage.
  assert.equal(costOf(zeroPricing(), use({ input_tokens: 10_000, output_tokens: 10_000, cache_read_input_tokens: 5 }), { webSearches: 2 }), '0');
});

test('invalid counts are refused, not coerced', () => {
  assert.throws(() => costOf(P, use({ input_tokens: -1 })), RangeError);
  assert.throws(() => costOf(P, use({ output_tokens: 1.5 })), RangeError);
  assert.throws(() => costOf(P, use({}), { images: -2 }), RangeError);
});

test('estimateMaxCost is an upper bound at the dearest applicable prices', () => {
  const withFee = { ...P, request: '0.005' };
  // 1000 x 0.000006 (1h write) + 500 x 0.00002 (reasoning) + 0.005
  assert.equal(estimateMaxCost(withFee, 1000, 500), '0.021');
  // No cache_control: input at the prompt price.
  assert.equal(estimateMaxCost(withFee, 1000, 500, { cacheWrite: 'none' }), '0.018');
  assert.equal(estimateMaxCost(withFee, 1000, 500, { cacheWrite: '5m', webSearches: 1 }), '0.02875');
  const u = use({ input_tokens: 400, cache_creation_input_tokens: 600, cache_creation_1h: 600, output_tokens: 500, reasoning_tokens: 500 });
  assert.ok(Number(costOf(withFee, u)) <= Number(estimateMaxCost(withFee, 1000, 500)));
});

test('maxAffordableOutputTokens caps max_tokens to a budget', () => {
  // 0.013 - 0.003 input = 0.01 left; 0.01 / 0.00002 = 500 tokens.
  assert.equal(maxAffordableOutputTokens(P, 1000, '0.013', { cacheWrite: 'none' }), 500);
  assert.equal(maxAffordableOutputTokens(P, 1000, '0.002', { cacheWrite: 'none' }), null);
  assert.equal(maxAffordableOutputTokens(zeroPricing(), 1000, '0'), Number.POSITIVE_INFINITY);
});

test('per-million views', () => {
  assert.equal(perMillion('0.000003'), '3');
  // 3000 in at $3/M and 1000 out at $15/M: (0.009 + 0.015) / 4000 tokens = $6 per million.
  assert.equal(blendedPerMillion(P, 3000, 1000), '6');
});

test('committed catalog prices bill real models exactly', () => {
  const file = parse(readFileSync(new URL('../providers/catalog/anthropic.yaml', import.meta.url), 'utf8')) as CatalogFile;
  const sonnet = file.models.find((m) => m.name === 'claude-sonnet-4-20250514');
  assert.ok(sonnet);
  assert.equal(costOf(sonnet.pricing, use({ input_tokens: 1_000_000, output_tokens: 1_000_000 })), '18');
  assert.equal(costOf(sonnet.pricing, use({ cache_read_input_tokens: 1_000_000, cache_creation_input_tokens: 1_000_000, cache_creation_1h: 1_000_000 })), '6.3');
});
