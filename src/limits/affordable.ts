// A reservation for the targets a key's budget can cover: the whole plan when it can (one acquire, as
// always), otherwise the plan without its costliest targets, so a key near its limit is served by the
// targets it can afford instead of being refused for a fallback it may never need.
import { compareDecimal } from '../catalog/decimal.ts';
import type { KeyRecord } from '../store/types.ts';
import { LimitError, type Limiter, type Reservation, type Usage } from './limiter.ts';

/** What was reserved for: `kept` (plan order; the first target always unless router mode) and what the budget `dropped`. */
export type Affordable<T> = { reservation: Reservation; kept: readonly T[]; dropped: readonly T[] };

/**
 * The plans to try, lazily: the whole plan first; after a budget refusal (only then are the targets
 * priced one by one), the plan without the dearest targets, one price level at a time, keeping plan
 * order. With `keepFirst` (a named model: what the client asked for) down to the targets that cost no
 * more than the first, which is never dropped. Without it (router mode: the plan is the router's
 * ranking of what qualifies, and "the best answer the caller can afford" is the point) down to the
 * cheapest targets, so a key that cannot afford the router's first choice is served by the next one
 * it can; the decision headers still name the first choice and `x-gateway-budget-dropped` says why
 * another served, as after a fallback. Targets priced alike stay or go together: dropping one would
 * not lower the reservation. At most plan.length plans.
 */
function* plans<T>(plan: readonly T[], estimateOf: (plan: readonly T[]) => Usage, keepFirst: boolean): Generator<readonly T[]> {
  yield plan;
  if (plan.length < 2) return;
  const costs = plan.map((t) => estimateOf([t]).costUsd);
  const floor = keepFirst ? costs[0]! : costs.reduce((a, b) => (compareDecimal(b, a) < 0 ? b : a));
  const dearer = costs.filter((c) => compareDecimal(c, floor) > 0).sort((a, b) => compareDecimal(b, a));
  const levels = dearer.filter((c, i) => i === 0 || compareDecimal(c, dearer[i - 1]!) !== 0);
  for (let i = 1; i <= levels.length; i++) {
    const ceiling = i < levels.length ? levels[i]! : floor;
    yield plan.filter((_, j) => compareDecimal(costs[j]!, ceiling) <= 0);
  }
}

const refusedForBudget = (e: unknown): e is LimitError => e instanceof LimitError && e.reason === 'budget';

const affordable = <T>(plan: readonly T[], kept: readonly T[], reservation: Reservation): Affordable<T> =>
  ({ reservation, kept, dropped: kept.length === plan.length ? [] : plan.filter((t) => !kept.includes(t)) });

/**
 * Acquires for `plan` (its reservation from `estimateOf`, the costliest attempt's worst case); refused
 * for budget, again for each reduced plan until one is admitted. Every try is its own atomic acquire
 * and a refusal takes nothing, so concurrent requests see one consistent counter either way. Refused
 * down to the last plan: the first refusal is thrown (its message names the whole plan's cost, as
 * before); an rpm or tpm refusal is thrown at once. Synchronous with a limiter that has acquireSync.
 */
export function acquireAffordable<T>(limiter: Limiter, key: KeyRecord, plan: readonly T[], estimateOf: (plan: readonly T[]) => Usage, keepFirst = true): Affordable<T> | Promise<Affordable<T>> {
  const sync = limiter.acquireSync?.bind(limiter);
  if (sync) {
    let first: LimitError | null = null;
    for (const p of plans(plan, estimateOf, keepFirst)) {
      try { return affordable(plan, p, sync(key, estimateOf(p))); } catch (e) {
        if (!refusedForBudget(e)) throw e;
        first ??= e;
      }
    }
    throw first!;
  }
  return (async () => {
    let first: LimitError | null = null;
    for (const p of plans(plan, estimateOf, keepFirst)) {
      try { return affordable(plan, p, await limiter.acquire(key, estimateOf(p))); } catch (e) {
        if (!refusedForBudget(e)) throw e;
        first ??= e;
      }
    }
    throw first!;
  })();
}

/** The header naming the targets a budget dropped from the plan (comma-separated ids), set only when it dropped some. */
export const BUDGET_DROPPED_HEADER = 'x-gateway-budget-dropped';
