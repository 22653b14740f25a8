// Resolves the client's `model` into an ordered attempt plan: the named model first, then its
// configured fallbacks; ejected providers go last (still tried when nothing else is left).
import type { Config, ModelEntry } from '../config/types.ts';
import { GatewayError } from '../http/errors.ts';
import type { UpstreamHealth } from './health.ts';

/** Looks up a provider/model id, answering the errors the spec asks for. */
export function resolveModel(cfg: Config, model: string): ModelEntry {
  const entry = cfg.models.get(model);
  if (entry) return entry;
  const slash = model.indexOf('/');
  if (slash < 0) {
    const matches = cfg.byName.get(model) ?? [];
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

export function planAttempts(cfg: Config, primary: ModelEntry, health: UpstreamHealth): ModelEntry[] {
  const chain = [primary];
  for (const id of cfg.fallbacks.get(primary.id) ?? []) {
    const e = cfg.models.get(id);
    if (e && !chain.includes(e)) chain.push(e);
  }
  if (chain.length === 1) return chain;
  const now = Date.now();
  const healthy = chain.filter((e) => !health.isEjected(e.provider.id, now));
  return healthy.length === chain.length ? chain : [...healthy, ...chain.filter((e) => !healthy.includes(e))];
}
