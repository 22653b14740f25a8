// Which price sheet applies to one call: the dated change in force when it starts (Pricing.schedule)
// and the long-context tier its whole input reaches (Pricing.tiers). Views are cached per sheet, so
// the request path pays a comparison or two, and effectivePrices stays cached per object.
import type { Pricing, PriceTier } from './types.ts';

type Schedule = { from: number[]; sheets: Pricing[] };
const schedules = new WeakMap<Pricing, Schedule>();
const tierViews = new WeakMap<Pricing, Pricing[]>();

/** The sheet in force at `at` (ms since the epoch; default now): the last schedule entry from on or before it, else `p`. */
export function pricingAt(p: Pricing, at?: number): Pricing {
  if (!p.schedule || p.schedule.length === 0) return p;
  const when = at ?? Date.now();
  let s = schedules.get(p);
  if (!s) {
    const entries = [...p.schedule].sort((a, b) => Date.parse(a.from) - Date.parse(b.from));
    s = { from: entries.map((e) => Date.parse(e.from)), sheets: entries.map((e) => e.pricing as Pricing) };
    schedules.set(p, s);
  }
  let chosen = p;
  for (let i = 0; i < s.from.length; i++) if (when >= s.from[i]!) chosen = s.sheets[i]!;
  return chosen;
}

/** Index of the last tier whose threshold the input is above, or -1 (base prices). */
export function tierFor(tiers: readonly PriceTier[] | undefined, totalInputTokens: number): number {
  if (!tiers) return -1;
  let found = -1;
  for (let i = 0; i < tiers.length; i++) if (totalInputTokens > tiers[i]!.above_input_tokens) found = i;
  return found;
}

/**
 * The sheet for a call with this many input tokens in all (uncached + cache reads + cache writes)
 * starting at `at`: a tier replaces the base prices it names for the whole call (how Anthropic and
 * Google bill prompts above 200k tokens); fields it leaves out keep the base price.
 */
export function pricingFor(p: Pricing, totalInputTokens: number, at?: number): Pricing {
  const sheet = pricingAt(p, at);
  const i = tierFor(sheet.tiers, totalInputTokens);
  if (i < 0) return sheet;
  let views = tierViews.get(sheet);
  if (!views) { views = []; tierViews.set(sheet, views); }
  let view = views[i];
  if (!view) {
    const { above_input_tokens: _threshold, ...prices } = sheet.tiers![i]!;
    const { tiers: _tiers, schedule: _schedule, ...base } = sheet;
    view = { ...base, ...prices };
    views[i] = view;
  }
  return view;
}
