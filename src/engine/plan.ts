// Resolves the client's `model` into an ordered attempt plan: the named model first, then its
// configured fallbacks; ejected providers go last (still tried when nothing else is left).
import type { Config, ModelEntry } from '../config/types.ts';
import type { UpstreamHealth } from './health.ts';
import type { UsageBound } from './usage.ts';

/** Model resolution (ids, aliases, retired and unpriced models) lives with the catalog. */
export { resolveModel } from '../catalog/resolve.ts';

/**
 * One attempt of an explicit plan (router mode): the target and, under the caller's max_cost, the
 * output cap that keeps this attempt's worst-case bill within it (applied to the upstream request)
 * and the counts it was worked out with (`bound`: what the attempt is billed at most, whatever the
 * upstream reports).
 */
export type AttemptTarget = { entry: ModelEntry; maxOutputTokens?: number; bound?: UsageBound };

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
