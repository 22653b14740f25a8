// Resolves a client's `<provider>/<model>` into one offer: exact ids, aliases (undated, -latest, and
// the same name written with dots or dashes), and the errors the spec asks for (prefix required,
// unknown, retired with its successor, unpriced).
import { GatewayError } from '../gateway-error.ts';
import { canonicalKey } from './aliases.ts';
import type { ModelIndex, Offer } from './model-index.ts';

/** What resolution needs from a compiled config (src/config/types.ts Config satisfies it). */
export type ModelLookup<E extends Offer> = {
  models: ReadonlyMap<string, E>;
  byName: ReadonlyMap<string, readonly string[]>;
  catalog: ModelIndex;
  providers: ReadonlyMap<string, unknown>;
};

export type ResolveOptions = {
  /** The caller's key has a budget: unpriced models are refused (they cannot be billed against it). */
  budgeted?: boolean;
};

/** The offer an id or alias names, or undefined; never throws. Retired ids give undefined too. */
export function findOffer<E extends Offer>(cfg: ModelLookup<E>, id: string): E | undefined {
  const direct = cfg.models.get(id) ?? cfg.models.get(cfg.catalog.aliases.get(id) ?? '');
  if (direct) return direct;
  // Same provider, same model written another way ("anthropic/claude-sonnet-4.5"): unique match only.
  const slash = id.indexOf('/');
  if (slash < 0) return undefined;
  const provider = id.slice(0, slash);
  const key = canonicalKey(id.slice(slash + 1));
  let found: E | undefined;
  for (const name of [id.slice(slash + 1), key]) {
    for (const offerId of cfg.byName.get(name) ?? []) {
      const e = cfg.models.get(offerId);
      if (!e || e.providerId !== provider || canonicalKey(e.name) !== key) continue;
      if (found && found !== e) return undefined;
      found = e;
    }
    if (found) return found;
  }
  const alias = [...cfg.catalog.aliases].find(([from]) => from.startsWith(`${provider}/`) && canonicalKey(from.slice(slash + 1)) === key);
  return alias ? cfg.models.get(alias[1]) : undefined;
}

/** The refusal for a retired id (naming its successor when that is servable), or null when the id is not retired. */
export function retiredError<E extends Offer>(cfg: ModelLookup<E>, model: string): GatewayError | null {
  const retired = cfg.catalog.retired.get(model);
  if (!retired) return null;
  const when = retired.retiredAt ? ` on ${retired.retiredAt.slice(0, 10)}` : '';
  const next = retired.successor && cfg.models.has(retired.successor) ? `; use "${retired.successor}" instead` : '; see GET /v1/models for current models';
  return new GatewayError('model_retired', `model "${model}" was retired${when}${next}`, { param: 'model' });
}

/** Looks up a `<provider>/<model>` id (or alias), answering the errors the spec asks for. */
export function resolveModel<E extends Offer>(cfg: ModelLookup<E>, model: string, opts: ResolveOptions = {}): E {
  const entry = findOffer(cfg, model);
  if (entry) {
    if (!entry.priced) {
      if (!entry.callable) {
        throw new GatewayError('model_unpriced', `model "${model}" has no known price, and provider "${entry.providerId}" does not allow unpriced models (allow_unpriced in its YAML, or price it in model_overrides)`, { param: 'model' });
      }
      if (opts.budgeted) {
        throw new GatewayError('model_unpriced', `model "${model}" has no known price, so it cannot be billed against this key's budget; use a priced model or a key without a budget`, { param: 'model' });
      }
    }
    return entry;
  }
  const retired = retiredError(cfg, model);
  if (retired) throw retired;
  const slash = model.indexOf('/');
  if (slash < 0) {
    const matches = cfg.byName.get(model) ?? cfg.byName.get(canonicalKey(model)) ?? [];
    const hint = matches.length > 0
      ? `; use one of: ${matches.slice(0, 20).join(', ')}`
      : '; see GET /v1/models for the ids';
    throw new GatewayError('model_prefix_required', `model "${model}" needs a provider prefix (<provider>/<model-name>)${hint}`, { param: 'model' });
  }
  const provider = model.slice(0, slash);
  if (!cfg.providers.has(provider)) {
    throw new GatewayError('model_not_found', `unknown provider "${provider}" in model "${model}"; known providers: ${[...cfg.providers.keys()].join(', ')}`, { param: 'model' });
  }
  throw new GatewayError('model_not_found', `model "${model}" is not in the catalog; see GET /v1/models`, { param: 'model' });
}
