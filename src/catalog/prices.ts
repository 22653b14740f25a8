// Turns the sources' prices into catalog Pricing: genai-prices sheets (per-million numbers, tiered
// values, dated and time-of-day variants) and models.dev costs, merged field by field by the sync's rule.
import type { ModelInfo, ModelPrice } from '@pydantic/genai-prices';
import { compareDecimal, decimalFromNumber, formatDecimal, shiftDecimal } from './decimal.ts';
import { PRICES_AS_OF, type DevModel } from './sources.ts';
import type { PriceChange, PriceField, PriceTier, Pricing } from './types.ts';
import { zeroPricing } from './types.ts';

/** genai-prices key -> catalog field, with the power of ten that makes it per unit. */
const SHEET_FIELDS: ReadonlyArray<[string, PriceField, number]> = [
  ['input_mtok', 'prompt', -6], ['output_mtok', 'completion', -6], ['output_reasoning_mtok', 'internal_reasoning', -6],
  ['cache_read_mtok', 'input_cache_read', -6], ['cache_write_mtok', 'input_cache_write', -6], ['cache_write_1h_mtok', 'input_cache_write_1h', -6],
  ['input_audio_mtok', 'input_audio', -6], ['output_audio_mtok', 'output_audio', -6],
  ['web_searches_kcount', 'web_search', -3], ['requests_kcount', 'request', -3],
];
/** models.dev cost key -> catalog field (all per million tokens). */
const DEV_FIELDS: ReadonlyArray<[keyof NonNullable<DevModel['cost']>, PriceField]> = [
  ['input', 'prompt'], ['output', 'completion'], ['reasoning', 'internal_reasoning'], ['cache_read', 'input_cache_read'],
  ['cache_write', 'input_cache_write'], ['input_audio', 'input_audio'], ['output_audio', 'output_audio'],
];

const scaled = (n: number, power: number): string => formatDecimal(shiftDecimal(decimalFromNumber(n), power));
type Fields = Partial<Record<PriceField, string>> & { tiers?: PriceTier[] };

/** One genai-prices ModelPrice as catalog fields and tiers (tiered values: base price plus one tier per threshold). */
function fromSheet(sheet: ModelPrice): Fields {
  const out: Fields = {};
  const tiers = new Map<number, PriceTier>();
  for (const [key, field, power] of SHEET_FIELDS) {
    const v = sheet[key];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[field] = scaled(v, power);
    else if (v && typeof v === 'object' && Number.isFinite(v.base)) {
      out[field] = scaled(v.base, power);
      for (const t of v.tiers) {
        let tier = tiers.get(t.start);
        if (!tier) { tier = { above_input_tokens: t.start }; tiers.set(t.start, tier); }
        if (field !== 'request') tier[field] = scaled(t.price, power);
      }
    }
  }
  if (tiers.size > 0) out.tiers = [...tiers.values()].sort((a, b) => a.above_input_tokens - b.above_input_tokens);
  return out;
}

const baseOf = (v: ModelPrice[string]): number => (typeof v === 'number' ? v : v && typeof v === 'object' ? v.base : -1);

/**
 * The sheet in force on PRICES_AS_OF and the dated changes after it. Time-of-day windows (DeepSeek's
 * off-peak discount) cannot be honoured by one sheet: the dearer price per field is kept, so the
 * catalog never under-bills.
 */
function resolveConditional(model: ModelInfo): { now: ModelPrice; later: Array<{ from: string; prices: ModelPrice }> } {
  if (!Array.isArray(model.prices)) return { now: model.prices, later: [] };
  let chosen: ModelPrice = model.prices[0]?.prices ?? {};
  const windows: ModelPrice[] = [];
  const later: Array<{ from: string; prices: ModelPrice }> = [];
  for (const entry of model.prices) {
    const c = entry.constraint;
    if (c === undefined) chosen = entry.prices;
    else if (c.type === 'start_date' && c.start_date <= PRICES_AS_OF) chosen = entry.prices;
    else if (c.type === 'start_date') later.push({ from: c.start_date, prices: entry.prices });
    else if (c.type === 'time_of_date') windows.push(entry.prices);
  }
  const merged: ModelPrice = { ...chosen };
  for (const w of windows) {
    for (const [key, value] of Object.entries(w)) if (typeof value === 'number' && value > baseOf(merged[key])) merged[key] = value;
  }
  return { now: merged, later: later.sort((a, b) => (a.from < b.from ? -1 : 1)) };
}

export type SheetPricing = { now: Fields; later: Array<{ from: string; prices: Fields }> };

/** A genai-prices model's prices as catalog fields; null when it has neither an input nor an output price. */
export function sheetPricing(model: ModelInfo | null): SheetPricing | null {
  if (!model) return null;
  const { now, later } = resolveConditional(model);
  const p = fromSheet(now);
  if (p.prompt === undefined && p.completion === undefined) return null;
  return { now: p, later: later.map((l) => ({ from: l.from, prices: fromSheet(l.prices) })) };
}

/** A price sheet written in genai-prices' shape (per-million numbers, tiered values), as catalog fields; no dated changes. */
export function sheetFrom(prices: ModelPrice): SheetPricing {
  return { now: fromSheet(prices), later: [] };
}

/** models.dev cost as catalog fields. A cache read price at or above the input price is a data error and dropped. */
export function devPricing(cost: DevModel['cost']): Fields | null {
  if (!cost) return null;
  const out: Fields = {};
  for (const [key, field] of DEV_FIELDS) {
    const v = cost[key];
    if (typeof v === 'number') out[field] = scaled(v, -6);
  }
  if (out.input_cache_read && out.prompt && compareDecimal(out.input_cache_read, out.prompt) >= 0) delete out.input_cache_read;
  if (cost.tiers) {
    out.tiers = cost.tiers.map((t) => {
      const tier: PriceTier = { above_input_tokens: t.above_input_tokens };
      if (t.input !== undefined) tier.prompt = scaled(t.input, -6);
      if (t.output !== undefined) tier.completion = scaled(t.output, -6);
      if (t.cache_read !== undefined) tier.input_cache_read = scaled(t.cache_read, -6);
      if (t.cache_write !== undefined) tier.input_cache_write = scaled(t.cache_write, -6);
      return tier;
    });
  }
  return out;
}

function complete(sheet: Fields, dev: Fields): Pricing {
  const p: Pricing = zeroPricing();
  for (const f of ['prompt', 'completion', 'image', 'request', 'web_search', 'internal_reasoning', 'input_cache_read', 'input_cache_write', 'input_cache_write_1h'] as const) {
    p[f] = sheet[f] ?? dev[f] ?? '0';
  }
  for (const f of ['input_audio', 'output_audio'] as const) { const v = sheet[f] ?? dev[f]; if (v !== undefined && v !== '0') p[f] = v; }
  const tiers = sheet.tiers ?? dev.tiers;
  if (tiers && tiers.length > 0) p.tiers = tiers;
  return p;
}

/**
 * Field by field: the genai-prices value when its sheet has the field, else the models.dev value,
 * else "0"; tiers from whichever source has them (genai-prices first); dated changes from
 * genai-prices only. Null when neither source prices the model at all.
 */
export function mergePricing(dev: DevModel['cost'], sheet: SheetPricing | null): Pricing | null {
  const d = devPricing(dev);
  if (!sheet && !d) return null;
  const s = sheet?.now ?? {};
  const pricing = complete(s, d ?? {});
  const schedule: PriceChange[] = (sheet?.later ?? []).map((l) => {
    const { schedule: _none, ...later } = complete({ ...s, tiers: undefined, ...l.prices }, d ?? {});
    return { from: `${l.from}T00:00:00+00:00`, pricing: later };
  });
  if (schedule.length > 0) pricing.schedule = schedule;
  return pricing;
}
