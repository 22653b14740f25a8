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
  const sonnet = file.models.find((m) => m.name === 'claude-sonnet-4-5-20250929');
  assert.ok(sonnet);
  // 100k in + 100k out at $3 / $15 per million; 300k in reaches the long-context tier ($6 / $22.50).
  assert.equal(costOf(sonnet.pricing, use({ input_tokens: 100_000, output_tokens: 100_000 })), '1.8');
  assert.equal(costOf(sonnet.pricing, use({ input_tokens: 300_000, output_tokens: 100_000 })), '4.05');
  assert.equal(costOf(sonnet.pricing, use({ cache_read_input_tokens: 100_000, cache_creation_input_tokens: 50_000, cache_creation_1h: 50_000 })), '0.33');
});

// Claude Sonnet 4.5's long-context sheet (genai-prices 0.1.8): above 200k input tokens every token
// of the call bills at the higher tier ($6 / $22.50, reads $0.60, writes $7.50 / $12).
const TIERED: Pricing = {
  ...zeroPricing(), prompt: '0.000003', completion: '0.000015', input_cache_read: '0.0000003',
  input_cache_write: '0.00000375', input_cache_write_1h: '0.000006', web_search: '0.01',
  tiers: [{ above_input_tokens: 200_000, prompt: '0.000006', completion: '0.0000225', input_cache_read: '0.0000006', input_cache_write: '0.0000075', input_cache_write_1h: '0.000012' }],
};

test('long-context tier: the whole input decides, and every token of the call reprices', () => {
  // 200,000 is not above the threshold: base prices. 200,000 x 3e-6 + 1000 x 15e-6 = 0.6 + 0.015.
  assert.equal(costOf(TIERED, use({ input_tokens: 200_000, output_tokens: 1000 })), '0.615');
  // 200,001: 200,001 x 6e-6 + 1000 x 22.5e-6 = 1.200006 + 0.0225.
  assert.equal(costOf(TIERED, use({ input_tokens: 200_001, output_tokens: 1000 })), '1.222506');
  // Cache reads count toward the threshold: 1000 uncached + 199,001 read = 200,001 in all.
  // 1000 x 6e-6 + 199,001 x 0.6e-6 + 100 x 22.5e-6 = 0.006 + 0.1194006 + 0.00225.
  assert.equal(costOf(TIERED, use({ input_tokens: 1000, cache_read_input_tokens: 199_001, output_tokens: 100 })), '0.1276506');
  // A field the tier leaves out keeps its base price (web search stays $0.01).
  assert.equal(costOf(TIERED, use({ input_tokens: 300_000 }), { webSearches: 1 }), '1.81');
});

test('long-context tier: estimateMaxCost stays an upper bound and picks the tier its input reaches', () => {
  // 100k in, 1000 out, no cache_control: base tier.
  assert.equal(estimateMaxCost(TIERED, 100_000, 1000, { cacheWrite: 'none' }), '0.315');
  // 250k in: 250,000 x 6e-6 + 1000 x 22.5e-6.
  assert.equal(estimateMaxCost(TIERED, 250_000, 1000, { cacheWrite: 'none' }), '1.5225');
  for (const [input, reads, out] of [[199_000, 0, 4000], [150_000, 60_000, 8000], [1000, 250_000, 100]] as const) {
    const bill = costOf(TIERED, use({ input_tokens: input, cache_read_input_tokens: reads, output_tokens: out }));
    const bound = estimateMaxCost(TIERED, input + reads, out, { cacheWrite: 'none' });
    assert.ok(Number(bill) <= Number(bound), `${input}+${reads}: ${bill} > ${bound}`);
  }
  // max_cost $1: 250k input alone costs $1.50 at the upper tier; 100k input costs $0.30 at the
  // base tier, leaving $0.70 for output at $15/M: 46,666 tokens.
  assert.equal(maxAffordableOutputTokens(TIERED, 250_000, '1', { cacheWrite: 'none' }), null);
  assert.equal(maxAffordableOutputTokens(TIERED, 100_000, '1', { cacheWrite: 'none' }), 46_666);
});

test('dated price change: the sheet in force when the call starts', () => {
  const dated: Pricing = { ...zeroPricing(), prompt: '0.0000005', completion: '0.000003', schedule: [
    { from: '2027-01-01T00:00:00+00:00', pricing: { ...zeroPricing(), prompt: '0.00000075', completion: '0.0000045' } },
  ] };
  const u = use({ input_tokens: 1_000_000, output_tokens: 100_000 });
  assert.equal(costOf(dated, u, { at: Date.parse('2026-12-31T23:59:59.999Z') }), '0.8');
  assert.equal(costOf(dated, u, { at: Date.parse('2027-01-01T00:00:00Z') }), '1.2');
  assert.equal(estimateMaxCost(dated, 1_000_000, 100_000, { at: Date.parse('2027-02-01T00:00:00Z') }), '1.2');
  assert.equal(blendedPerMillion(dated, 3, 1, Date.parse('2027-02-01T00:00:00Z')), '1.6875');
});

test('audio tokens bill at the audio prices; absent audio prices bill them as text', () => {
  // gpt-4o-audio-preview-like: text $2.50/$10, audio $40/$80 per million.
  const audio: Pricing = { ...zeroPricing(), prompt: '0.0000025', completion: '0.00001', input_audio: '0.00004', output_audio: '0.00008' };
  // 1000 in (400 audio) + 500 out (200 audio): 600 x 2.5e-6 + 400 x 40e-6 + 300 x 10e-6 + 200 x 80e-6.
  assert.equal(costOf(audio, use({ input_tokens: 1000, output_tokens: 500 }), { audioInputTokens: 400, audioOutputTokens: 200 }), '0.0365');
  assert.equal(costOf({ ...audio, input_audio: undefined, output_audio: undefined }, use({ input_tokens: 1000, output_tokens: 500 }), { audioInputTokens: 400, audioOutputTokens: 200 }), '0.0075');
  // Audio counts cannot exceed the tokens they are part of.
  assert.equal(costOf(audio, use({ input_tokens: 10 }), { audioInputTokens: 400 }), '0.0004');
  // The bound assumes audio unless told there is none.
  assert.equal(estimateMaxCost(audio, 1000, 0), '0.04');
  assert.equal(estimateMaxCost(audio, 1000, 0, { audioInput: false }), '0.0025');
});
