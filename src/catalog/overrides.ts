// Operator-written models: a provider's own `models:` list (local servers) and `model_overrides`,
// which add, hide, rename, re-price or correct any model and win over every source (files, refresh).
import type { Capabilities, CatalogModel, ModelStatus, Pricing, Sampling } from './types.ts';
import { PRICE_FIELDS } from './types.ts';

/** One `model_overrides.<name>` entry (schema/provider.schema.json); every field optional. */
export type ModelOverride = {
  /** false: the model is removed (not callable, not listed). */
  enabled?: boolean;
  /** true: callable by id, but not listed and never chosen by the router. */
  hidden?: boolean;
  /** Serve the model under this name instead (the old name no longer resolves unless listed in `aliases`). */
  rename?: string;
  /** true: the name is not in any source: add it, with the documented defaults for what is left out. */
  add?: boolean;
  upstream?: string;
  display_name?: string;
  pricing?: Partial<Pricing>;
  context_window?: number;
  max_completion_tokens?: number;
  reliability_tier?: 1 | 2;
  added_at?: string;
  updated_at?: string;
  modalities?: { input?: string[]; output?: string[] };
  capabilities?: Partial<Capabilities>;
  cache_min_tokens?: number;
  sampling?: Sampling;
  status?: ModelStatus;
  retires_at?: string;
  successor?: string;
  aliases?: string[];
};

const EPOCH = '1970-01-01T00:00:00+00:00';
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? v as Obj : {});
const pick = <T>(o: Obj, key: string, fallback: T): T => (o[key] as T | undefined) ?? fallback;

/**
 * A model written by hand (provider `models:` or an added override). Documented defaults: no date
 * (the epoch), tier 1, 8192-token context, 4096 output, text in and out, no capabilities, and every
 * price "0": hand-written models are free unless priced (local servers), or `unpriced` when marked so.
 */
export function modelFromPartial(m: Obj): CatalogModel {
  const prices = obj(m.pricing);
  const caps = obj(m.capabilities);
  const mods = obj(m.modalities);
  const added = pick(m, 'added_at', EPOCH);
  const pricing = Object.fromEntries(PRICE_FIELDS.map((k) => [k, (prices[k] as string | undefined) ?? '0'])) as unknown as Pricing;
  for (const k of ['input_audio', 'output_audio', 'tiers', 'schedule'] as const) if (prices[k] !== undefined) (pricing as Obj)[k] = prices[k];
  const context = pick(m, 'context_window', 8192);
  const model: CatalogModel = {
    name: m.name as string,
    ...(m.upstream ? { upstream: m.upstream as string } : {}),
    ...(m.display_name ? { display_name: m.display_name as string } : {}),
    created: Math.floor(Date.parse(added) / 1000),
    added_at: added,
    updated_at: pick(m, 'updated_at', added),
    reliability_tier: pick(m, 'reliability_tier', 1),
    context_window: context,
    max_completion_tokens: pick(m, 'max_completion_tokens', Math.min(4096, context)),
    modalities: { input: pick(mods, 'input', ['text']), output: pick(mods, 'output', ['text']) },
    capabilities: {
      tools: pick(caps, 'tools', false), vision: pick(caps, 'vision', false),
      reasoning: pick(caps, 'reasoning', false), structured_output: pick(caps, 'structured_output', false),
      prompt_caching: pick(caps, 'prompt_caching', false),
    },
    pricing,
  };
  if (m.cache_min_tokens !== undefined) model.cache_min_tokens = m.cache_min_tokens as number;
  if (m.sampling !== undefined) model.sampling = m.sampling as Sampling;
  for (const k of ['status', 'retires_at', 'successor', 'aliases'] as const) if (m[k] !== undefined) (model as Obj)[k] = m[k];
  if (m.unpriced === true) model.unpriced = true;
  return model;
}

/** `o` applied to `m` (a copy): named fields replace, pricing field by field, capabilities field by field. */
function overrideModel(m: CatalogModel, o: ModelOverride): CatalogModel {
  // A retired record keeps only its name and lifecycle: reviving it starts from the defaults (unpriced unless priced).
  const base = m.pricing ? m : { ...modelFromPartial({ name: m.name, unpriced: true }), ...m };
  const out: CatalogModel = { ...base, pricing: { ...base.pricing }, capabilities: { ...base.capabilities }, modalities: { ...base.modalities } };
  if (o.pricing) {
    Object.assign(out.pricing, o.pricing);
    delete out.unpriced; // the operator has priced it
  }
  if (o.capabilities) Object.assign(out.capabilities, o.capabilities);
  if (o.modalities?.input) out.modalities.input = o.modalities.input;
  if (o.modalities?.output) out.modalities.output = o.modalities.output;
  for (const k of ['upstream', 'display_name', 'context_window', 'max_completion_tokens', 'reliability_tier', 'updated_at', 'cache_min_tokens', 'sampling', 'status', 'retires_at', 'successor', 'aliases'] as const) {
    if (o[k] !== undefined) (out as Obj)[k] = o[k];
  }
  if (o.added_at !== undefined) { out.added_at = o.added_at; out.created = Math.floor(Date.parse(o.added_at) / 1000); }
  if (o.hidden === true) out.hidden = true;
  else if (o.hidden === false) delete out.hidden;
  if (o.rename !== undefined) { if (out.upstream === undefined) out.upstream = m.name; out.name = o.rename; }
  return out;
}

/**
 * The provider's models after its overrides, in input order (renamed models keep their place,
 * added ones come last). `notes` receives one line per override naming no model without `add`.
 */
export function applyOverrides(models: ReadonlyMap<string, CatalogModel>, overrides: Readonly<Record<string, ModelOverride>>, notes: string[] = []): Map<string, CatalogModel> {
  const out = new Map<string, CatalogModel>();
  for (const [name, m] of models) {
    const o = overrides[name];
    if (!o) { if (!out.has(name)) out.set(name, m); continue; }
    if (o.enabled === false) continue;
    const next = overrideModel(m, o);
    out.set(next.name, next);
  }
  for (const [name, o] of Object.entries(overrides)) {
    if (models.has(name) || o.enabled === false) continue;
    if (o.add !== true) { notes.push(`model_overrides.${name}: no such model in the catalog (set add: true to add it)`); continue; }
    // An added model the operator did not price is unpriced, not free: it must not slip past budgets.
    const next = overrideModel({ ...modelFromPartial({ name, ...o, unpriced: o.pricing === undefined }), hand_written: true }, { ...o, pricing: undefined });
    out.set(next.name, next);
  }
  return out;
}
