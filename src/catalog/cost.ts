// Exact bills from a price sheet and a usage record, plus the upper bound used to reserve budget.
// All arithmetic is decimal-string (decimal.ts); token counts must be non-negative safe integers.
import type { Usage } from '../formats/canonical.ts';
import { addDecimal, compareDecimal, divDecimal, mulDecimal, shiftDecimal, subDecimal, sumOfProducts } from './decimal.ts';
import type { Pricing } from './types.ts';

export type CostExtras = { images?: number; webSearches?: number; requests?: number };

const isZero = (price: string): boolean => compareDecimal(price, '0') === 0;
const maxPrice = (...prices: string[]): string => prices.reduce((a, b) => (compareDecimal(a, b) >= 0 ? a : b));

function count(name: string, n: number | undefined): number {
  const v = n ?? 0;
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${name} must be a non-negative integer, got ${v}`);
  return v;
}

/**
 * Effective per-token prices after the missing-price rules (documented in docs/catalog.md):
 * - no cache read price: reads bill at the prompt price (no discount is known);
 * - no 5-minute write price: writes bill at the prompt price (the provider charges no surcharge);
 * - no 1-hour write price: 1-hour writes bill at the 5-minute write price as resolved above;
 * - no internal_reasoning price: reasoning tokens bill as ordinary output (completion).
 */
type EffectivePrices = { read: string; write5m: string; write1h: string; reasoning: string };
// Pricing objects live as long as their config version: resolve the rules once per object.
const effective = new WeakMap<Pricing, EffectivePrices>();

export function effectivePrices(p: Pricing): EffectivePrices {
  let e = effective.get(p);
  if (!e) { e = resolveEffective(p); effective.set(p, e); }
  return e;
}

function resolveEffective(p: Pricing): EffectivePrices {
  const read = isZero(p.input_cache_read) ? p.prompt : p.input_cache_read;
  const write5m = isZero(p.input_cache_write) ? p.prompt : p.input_cache_write;
  const write1h = isZero(p.input_cache_write_1h) ? write5m : p.input_cache_write_1h;
  const reasoning = isZero(p.internal_reasoning) ? p.completion : p.internal_reasoning;
  return { read, write5m, write1h, reasoning };
}

/**
 * USD cost of one call, exact. `usage.input_tokens` is the uncached input (Anthropic semantics:
 * cache reads and writes are counted separately, never inside input_tokens). Reasoning tokens are
 * inside output_tokens. Cache writes not split into 5m/1h bill the remainder at the 5-minute price.
 * One request is billed unless extra.requests says otherwise.
 */
export function costOf(pricing: Pricing, usage: Usage, extra: CostExtras = {}): string {
  const eff = effectivePrices(pricing);
  const input = count('input_tokens', usage.input_tokens);
  const output = count('output_tokens', usage.output_tokens);
  const reads = count('cache_read_input_tokens', usage.cache_read_input_tokens);
  const writes = count('cache_creation_input_tokens', usage.cache_creation_input_tokens);
  const w1h = count('cache_creation_1h', usage.cache_creation_1h);
  const w5mSplit = count('cache_creation_5m', usage.cache_creation_5m);
  // Providers that report only the total put everything in the 5-minute bucket.
  const w5m = w5mSplit + Math.max(0, writes - w5mSplit - w1h);
  const reasoning = Math.min(count('reasoning_tokens', usage.reasoning_tokens), output);
  // Only the kinds this call used become terms (most calls use three of the nine).
  const terms: Array<readonly [string, number]> = [];
  const term = (price: string, n: number): void => { if (n !== 0) terms.push([price, n]); };
  term(pricing.prompt, input);
  term(eff.read, reads);
  term(eff.write5m, w5m);
  term(eff.write1h, w1h);
  term(eff.reasoning, reasoning);
  term(pricing.completion, output - reasoning);
  term(pricing.request, count('requests', extra.requests ?? 1));
  term(pricing.image, count('images', extra.images));
  term(pricing.web_search, count('webSearches', extra.webSearches));
  return sumOfProducts(terms);
}

export type MaxCostOptions = {
  /** Which cache write the request may cause: 'none' when it carries no cache_control. Default: the dearest. */
  cacheWrite?: 'none' | '5m' | '1h' | 'any';
  images?: number;
  webSearches?: number;
};

function inputCeiling(pricing: Pricing, cacheWrite: MaxCostOptions['cacheWrite']): string {
  const eff = effectivePrices(pricing);
  if (cacheWrite === 'none') return pricing.prompt;
  if (cacheWrite === '5m') return maxPrice(pricing.prompt, eff.write5m);
  if (cacheWrite === '1h') return maxPrice(pricing.prompt, eff.write1h);
  return maxPrice(pricing.prompt, eff.write5m, eff.write1h);
}

/**
 * Upper bound on the cost of a call with this many input tokens and at most maxOutputTokens of
 * output: every input token at the dearest input price the call can incur, every output token at
 * the dearer of completion and reasoning, one request, plus any declared images and searches.
 */
export function estimateMaxCost(pricing: Pricing, inputTokens: number, maxOutputTokens: number, opts: MaxCostOptions = {}): string {
  const eff = effectivePrices(pricing);
  return sumOfProducts([
    [inputCeiling(pricing, opts.cacheWrite), count('inputTokens', inputTokens)],
    [maxPrice(pricing.completion, eff.reasoning), count('maxOutputTokens', maxOutputTokens)],
    [pricing.request, 1],
    [pricing.image, count('images', opts.images)],
    [pricing.web_search, count('webSearches', opts.webSearches)],
  ]);
}

/**
 * The largest max_tokens that keeps estimateMaxCost within budget (USD decimal string), or null
 * when the input alone already exceeds it. Infinity when output is free. Used to enforce max_cost.
 */
export function maxAffordableOutputTokens(pricing: Pricing, inputTokens: number, budget: string, opts: MaxCostOptions = {}): number | null {
  const fixed = estimateMaxCost(pricing, inputTokens, 0, opts);
  const left = subDecimal(budget, fixed);
  if (compareDecimal(left, '0') < 0) return null;
  const eff = effectivePrices(pricing);
  const perToken = maxPrice(pricing.completion, eff.reasoning);
  if (isZero(perToken)) return Number.POSITIVE_INFINITY;
  const tokens = BigInt(divDecimal(left, perToken, 0));
  return tokens > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(tokens);
}

/** Price per million tokens, for display and for max_cost_per_million_tokens comparisons. */
export function perMillion(pricePerToken: string): string {
  return shiftDecimal(pricePerToken, 6);
}

/** Blended per-million price for an expected input/output mix (router's max_cost_per_million_tokens), truncated to 12 places. */
export function blendedPerMillion(pricing: Pricing, inputTokens: number, outputTokens: number): string {
  const total = count('inputTokens', inputTokens) + count('outputTokens', outputTokens);
  if (total === 0) return '0';
  const cost = addDecimal(mulDecimal(pricing.prompt, inputTokens), mulDecimal(pricing.completion, outputTokens));
  return divDecimal(perMillion(cost), String(total), 12);
}
