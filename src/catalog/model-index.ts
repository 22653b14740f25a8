// The compiled model index: every servable offer (one provider serving one model), grouped by
// canonical model, with aliases and retirements. Built once per config version (src/config/compile.ts
// calls buildModelIndex); the router, the listing, the dashboard and model resolution read it.
import type { CatalogModel, ModelStatus } from './types.ts';

/**
 * One provider serving one model: what a client names as `<provider>/<name>`, what the router ranks
 * and what the engine calls. `model` holds every fact: `pricing` (with `tiers` and `schedule`, see
 * types.ts; cost.ts applies them), `context_window`, `max_completion_tokens`, `capabilities`,
 * `modalities`, `reliability_tier`, `added_at` / `updated_at`, lifecycle fields.
 */
export type Offer = {
  /** `<provider>/<name>`: the id clients send and the listing shows. */
  id: string;
  /** Provider id (providers/<id>.yaml). */
  providerId: string;
  /** Model name at the provider (after the `<provider>/` prefix). */
  name: string;
  /** Model id sent upstream (model_overrides `upstream`, else the catalog's, else `name`). */
  upstream: string;
  /** Canonical model id shared by every offer of the same model (see canonicalKey); index.canonical's key. */
  canonical: string;
  model: CatalogModel;
  /** Effective lifecycle at compile time: a deprecated model whose retires_at has passed is retired. */
  status: ModelStatus;
  /** ISO retirement date when known (deprecated models), else null. */
  retiresAt: string | null;
  /** `<provider>/<name>` of the recommended replacement, when known. */
  successor: string | null;
  /** False for an unpriced model (no source prices it): never routed, refused for keys with a budget. */
  priced: boolean;
  /** Unpriced offers are callable only when the provider allows them (`allow_unpriced: true`). */
  callable: boolean;
  /** Shown by GET /v1/models: active (deprecated only with ?include=deprecated), not hidden. */
  listed: boolean;
  /** The router may choose it by itself: active, priced, callable and not hidden. */
  routable: boolean;
};

/** One model as the maker defines it, with every provider serving it. */
export type CanonicalModel = {
  /** The maker's own id when a first-party provider serves it (e.g. "claude-sonnet-4-5-20250929"), else the normalised name. */
  id: string;
  /** Offer ids (`<provider>/<name>`), first party (reliability tier 1) first, then by provider id. Retired offers excluded. */
  offers: string[];
  /** Bare alias names that resolve to this model (undated, -latest). */
  aliases: string[];
};

/** A retired offer: requests for it are refused with a message naming the successor. */
export type RetiredModel = { id: string; retiredAt: string | null; successor: string | null };

export type ModelIndex = {
  /** Canonical id -> model and its offers. */
  canonical: Map<string, CanonicalModel>;
  /** `<provider>/<alias>` -> `<provider>/<name>` (e.g. anthropic/claude-sonnet-4-5 -> anthropic/claude-sonnet-4-5-20250929). */
  aliases: Map<string, string>;
  /** `<provider>/<name>` (and its aliases) of retired models. */
  retired: Map<string, RetiredModel>;
  /** Compile notes for `check`: model_overrides naming no model, and the like. */
  notes: string[];
};
