// Exact bills from a price sheet and a usage record, plus the upper bound used to reserve budget.
// All arithmetic is decimal-string (decimal.ts); token counts must be non-negative safe integers.
import type { Usage } from '../formats/canonical.ts';
import { addDecimal, compareDecimal, divDecimal, mulDecimal, shiftDecimal, subDecimal, sumOfProducts } from './decimal.ts';
import { pricingFor } from './price-tiers.ts';
import type { Pricing } from './types.ts';

export { pricingAt, pricingFor, tierFor } from './price-tiers.ts';

export type CostExtras = {
  images?: number;
  webSearches?: number;
  requests?: number;
  /** Audio tokens inside usage.input_tokens: billed at `input_audio` when the model prices audio apart. */
  audioInputTokens?: number;
  /** Audio tokens inside usage.output_tokens (not reasoning): billed at `output_audio` when priced apart. */
  audioOutputTokens?: number;
  /** When the call started (ms since the epoch; default now): selects the dated price in force. */
  at?: number;
};

const isZero = (price: string | undefined): boolean => price === undefined || compareDecimal(price, '0') === 0;
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
 * - no internal_reasoning price: reasoning tokens bill as ordinary output (completion);
 * - no audio prices: audio tokens bill as text (prompt, completion).
 */
type EffectivePrices = { read: string; write5m: string; write1h: string; reasoning: string; audioIn: string; audioOut: string };
// Pricing objects live as long as their config version (tier views are cached too): resolve once per object.
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
  const audioIn = isZero(p.input_audio) ? p.prompt : p.input_audio!;
  const audioOut = isZero(p.output_audio) ? p.completion : p.output_audio!;
  return { read, write5m, write1h, reasoning, audioIn, audioOut };
}

/**
 * USD cost of one call, exact. `usage.input_tokens` is the uncached input (Anthropic semantics:
 * cache reads and writes are counted separately, never inside input_tokens). Reasoning tokens are
 * inside output_tokens. Cache writes not split into 5m/1h bill the remainder at the 5-minute price.
 * One request is billed unless extra.requests says otherwise. The price sheet is the one in force
 * at `extra.at` (dated changes), at the long-context tier the whole input reaches.
 */
export function costOf(sheet: Pricing, usage: Usage, extra: CostExtras = {}): string {
  const input = count('input_tokens', usage.input_tokens);
  const output = count('output_tokens', usage.output_tokens);
  const reads = count('cache_read_input_tokens', usage.cache_read_input_tokens);
  const writes = count('cache_creation_input_tokens', usage.cache_creation_input_tokens);
  const w1h = count('cache_creation_1h', usage.cache_creation_1h);
  const w5mSplit = count('cache_creation_5m', usage.cache_creation_5m);
  const pricing = pricingFor(sheet, input + reads + writes, extra.at);
  const eff = effectivePrices(pricing);
  // Providers that report only the total put everything in the 5-minute bucket.
  const w5m = w5mSplit + Math.max(0, writes - w5mSplit - w1h);
  const reasoning = Math.min(count('reasoning_tokens', usage.reasoning_tokens), output);
  const audioIn = Math.min(count('audioInputTokens', extra.audioInputTokens), input);
  const audioOut = Math.min(count('audioOutputTokens', extra.audioOutputTokens), output - reasoning);
  // Only the kinds this call used become terms (most calls use three of the eleven).
  const terms: Array<readonly [string, number]> = [];
  const term = (price: string, n: number): void => { if (n !== 0) terms.push([price, n]); };
  term(pricing.prompt, input - audioIn);
  term(eff.audioIn, audioIn);
  term(eff.read, reads);
  term(eff.write5m, w5m);
  term(eff.write1h, w1h);
  term(eff.reasoning, reasoning);
  term(pricing.completion, output - reasoning - audioOut);
  term(eff.audioOut, audioOut);
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
  /** false when the request carries no audio: input then bounds at text prices. Default true (safe). */
  audioInput?: boolean;
  /** false when no audio output was asked for. Default true (safe). */
  audioOutput?: boolean;
  /** When the call starts (ms; default now): the dated price in force then. */
  at?: number;
};

function inputCeiling(pricing: Pricing, opts: MaxCostOptions): string {
  const eff = effectivePrices(pricing);
  const text = opts.audioInput === false ? pricing.prompt : maxPrice(pricing.prompt, eff.audioIn);
  if (opts.cacheWrite === 'none') return text;
  if (opts.cacheWrite === '5m') return maxPrice(text, eff.write5m);
  if (opts.cacheWrite === '1h') return maxPrice(text, eff.write1h);
  return maxPrice(text, eff.write5m, eff.write1h);
}

function outputCeiling(pricing: Pricing, opts: MaxCostOptions): string {
  const eff = effectivePrices(pricing);
  return opts.audioOutput === false ? maxPrice(pricing.completion, eff.reasoning) : maxPrice(pricing.completion, eff.reasoning, eff.audioOut);
}

/**
 * Upper bound on the cost of a call with at most `inputTokens` of input (all kinds: the tier is the
 * one this many tokens reach, so pass an upper bound) and at most maxOutputTokens of output: every
 * input token at the dearest input price the call can incur, every output token at the dearest
 * output price, one request, plus any declared images and searches.
 */
export function estimateMaxCost(sheet: Pricing, inputTokens: number, maxOutputTokens: number, opts: MaxCostOptions = {}): string {
  const input = count('inputTokens', inputTokens);
  const pricing = pricingFor(sheet, input, opts.at);
  return sumOfProducts([
    [inputCeiling(pricing, opts), input],
    [outputCeiling(pricing, opts), count('maxOutputTokens', maxOutputTokens)],
    [pricing.request, 1],
    [pricing.image, count('images', opts.images)],
    [pricing.web_search, count('webSearches', opts.webSearches)],
  ]);
}

/**
 * The dearest estimateMaxCost over the attempts a request may make (each with its own prices and
 * output bound): what a budget must cover, since a fallback to a pricier model bills at its prices.
 */
export function estimateWorstCost(attempts: Iterable<{ pricing: Pricing; maxOutputTokens: number }>, inputTokens: number, opts: MaxCostOptions = {}): string {
  let worst = '0';
  for (const a of attempts) {
    const c = estimateMaxCost(a.pricing, inputTokens, a.maxOutputTokens, opts);
    if (compareDecimal(c, worst) > 0) worst = c;
  }
  return worst;
}

/**
 * The largest max_tokens that keeps estimateMaxCost within budget (USD decimal string), or null
 * when the input alone already exceeds it. Infinity when output is free. Used to enforce max_cost.
 */
export function maxAffordableOutputTokens(sheet: Pricing, inputTokens: number, budget: string, opts: MaxCostOptions = {}): number | null {
  const fixed = estimateMaxCost(sheet, inputTokens, 0, opts);
  const left = subDecimal(budget, fixed);
  if (compareDecimal(left, '0') < 0) return null;
  const perToken = outputCeiling(pricingFor(sheet, count('inputTokens', inputTokens), opts.at), opts);
  if (isZero(perToken)) return Number.POSITIVE_INFINITY;
  const tokens = BigInt(divDecimal(left, perToken, 0));
  return tokens > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(tokens);
}

/** Price per million tokens, for display and for max_cost_per_million_tokens comparisons. */
export function perMillion(pricePerToken: string): string {
  return shiftDecimal(pricePerToken, 6);
}

/** Blended per-million price for an expected input/output mix (router's max_cost_per_million_tokens), at the tier that input reaches, truncated to 12 places. */
export function blendedPerMillion(sheet: Pricing, inputTokens: number, outputTokens: number, at?: number): string {
  const total = count('inputTokens', inputTokens) + count('outputTokens', outputTokens);
  if (total === 0) return '0';
  const pricing = pricingFor(sheet, inputTokens, at);
  const cost = addDecimal(mulDecimal(pricing.prompt, inputTokens), mulDecimal(pricing.completion, outputTokens));
  return divDecimal(perMillion(cost), String(total), 12);
}
