// The refresh overlay: what live discovery learned, as per-model patches over the offline catalog,
// stored versioned in the store so every replica compiles the same catalog (see refresh.ts).
import { validatorFor } from '../config/schemas.ts';
import { modelFromPartial } from './overrides.ts';
import { PRICE_FIELDS, type Capabilities, type CatalogModel, type Pricing } from './types.ts';

/**
 * Facts a live source gave for one model. Fields left out keep the offline value; a patch for a
 * name the offline catalog lacks is a new model (defaults as for hand-written models, unpriced
 * unless it carries prices).
 */
export type ModelPatch = Partial<Omit<CatalogModel, 'pricing' | 'capabilities' | 'modalities'>> & {
  name: string; pricing?: Partial<Pricing>; capabilities?: Partial<Capabilities>; modalities?: Partial<CatalogModel['modalities']>;
};

/** How one source fared in a refresh: shown by `catalog refresh`, /health and /metrics. */
export type SourceReport = {
  /** e.g. "provider:openai", "openrouter", "models.dev". */
  source: string;
  ok: boolean;
  /** Models the source returned. */
  models: number;
  /** Why it failed (no secrets). */
  error?: string;
  /** Pages read (paginated model lists). */
  pages?: number;
  ms?: number;
  /** Not read, and why (a provider without a key): not a failure. */
  skipped?: string;
  /** The source failed and its data from this earlier fetch (ISO time) was kept. */
  kept?: string;
};

export type CatalogOverlay = {
  /** Store version (1, 2, ...): replicas apply a newer version through the reload path. */
  version: number;
  created_at: string;
  /** Provider id -> patches, sorted by name. */
  providers: Record<string, ModelPatch[]>;
  sources: SourceReport[];
};

/**
 * What is wrong with an overlay read from the store (untrusted: another version or a hand edit may
 * have written it), as lines naming provider, patch and field; empty when every patch is model facts.
 */
export function overlayProblems(overlay: CatalogOverlay): string[] {
  const validate = validatorFor('patch');
  const out: string[] = [];
  if (typeof overlay.providers !== 'object' || overlay.providers === null) return ['providers: must be an object of patch lists'];
  for (const [provider, patches] of Object.entries(overlay.providers)) {
    if (!Array.isArray(patches)) { out.push(`${provider}: must be a list of patches`); continue; }
    patches.forEach((p, i) => {
      if (validate(p)) return;
      const name = typeof (p as { name?: unknown } | null)?.name === 'string' ? `${provider}/${(p as { name: string }).name}` : `${provider}[${i}]`;
      for (const e of validate.errors ?? []) out.push(`${name} at ${e.instancePath || '/'}: ${e.message ?? 'invalid'}`);
    });
  }
  return out;
}

/** The config version with an overlay in force: the files' hash plus the overlay version (".c<n>"). */
export function configVersion(hash: string, overlay: CatalogOverlay | null): string {
  return overlay ? `${hash}.c${overlay.version}` : hash;
}

/** `patch` over `base`: scalar facts replace, pricing and capabilities field by field. */
export function patchModel(record: CatalogModel, patch: ModelPatch): CatalogModel {
  // A retired record keeps only its name and lifecycle: a source that lists it again starts from the defaults.
  const base = record.pricing ? record : { ...modelFromPartial({ name: record.name, unpriced: true }), ...record };
  const { pricing, capabilities, modalities, ...facts } = patch;
  // A complete sheet (all nine fields) replaces the price, tiers and schedule included; a partial one patches fields.
  const whole = pricing !== undefined && PRICE_FIELDS.every((f) => pricing[f] !== undefined);
  const out: CatalogModel = {
    ...base, ...facts, pricing: whole ? pricing as Pricing : { ...base.pricing, ...pricing },
    capabilities: { ...base.capabilities, ...capabilities }, modalities: { ...base.modalities, ...modalities },
  };
  if (pricing && Object.keys(pricing).length > 0 && patch.unpriced === undefined) delete out.unpriced;
  if (facts.added_at !== undefined) {
    out.created = Math.floor(Date.parse(facts.added_at) / 1000);
    if (facts.updated_at === undefined && out.updated_at < facts.added_at) out.updated_at = facts.added_at;
  }
  return out;
}

/** The provider's offline models with the overlay's patches applied (new models appended). */
export function applyOverlay(provider: string, offline: readonly CatalogModel[], overlay: CatalogOverlay | null): CatalogModel[] {
  const patches = overlay?.providers[provider];
  if (!patches || patches.length === 0) return [...offline];
  const byName = new Map(patches.map((p) => [p.name, p]));
  const out = offline.map((m) => { const p = byName.get(m.name); return p ? patchModel(m, p) : m; });
  const known = new Set(offline.map((m) => m.name));
  for (const p of patches) {
    if (known.has(p.name)) continue;
    const priced = p.pricing !== undefined && Object.keys(p.pricing).length > 0 && p.unpriced !== true;
    out.push(patchModel(modelFromPartial({ name: p.name, unpriced: !priced }), p));
  }
  return out;
}
