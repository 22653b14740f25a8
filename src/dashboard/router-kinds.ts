// The Router page's breakdown by prompt kind, from router_rollup_kind (src/store/router-rollup.ts): its day
// rows for the window's whole UTC days, its hour rows for the hours at the edges; its rows of all keys for
// admins, of their keys for members. No decision is read.
import { addDecimal, divDecimal, formatDecimal } from '../catalog/decimal.ts';
import { decimal, num, str } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { readRouterRollup, segments } from './rollup-query.ts';
import { byCodePoint, costSum, keysWhere, share, type DecisionWindow } from './router-window.ts';
import type { RouterKind } from './ui/api-types.ts';

/** Models listed per kind; the rest are summed. */
export const KIND_MODELS = 3;


type KindSum = { n: number; errors: number; cost: string; noRoute: number; models: Map<string, number> };

/**
 * Every prompt kind with routed requests in the window, most requests first: counts, errors, exact cost
 * and the top models chosen for it. A kind's share is of the kinds' total (every decision has one kind).
 */
export async function routerKinds(sql: SqlRunner, w: DecisionWindow): Promise<RouterKind[]> {
  // Whole UTC days from day rows, the hours at the window's edges from hour rows; all keys' rows (grain
  // 'total') for a caller who sees every key, else the caller's keys' rows.
  const keys = keysWhere(w);
  const grain = w.keys ? { where: `r.grain = 'key' AND ${keys.where!}`, whereParams: keys.whereParams } : { where: "r.grain = 'total'" };
  const rows = await readRouterRollup(sql, {
    table: 'router_rollup_kind', spans: true, segs: segments(Date.parse(w.from), Date.parse(w.to)), ...grain, groupBy: ['r.kind', 'r.chosen'],
    select: `r.kind AS kind, r.chosen AS chosen, SUM(r.n) AS n, SUM(r.errors) AS errors, ${costSum(sql)} AS cost_usd`,
  });
  const kinds = new Map<string, KindSum>();
  for (const r of rows) {
    const kind = str(r.kind);
    let k = kinds.get(kind);
    if (!k) { k = { n: 0, errors: 0, cost: '0', noRoute: 0, models: new Map() }; kinds.set(kind, k); }
    const n = num(r.n);
    k.n += n; k.errors += num(r.errors); k.cost = addDecimal(k.cost, decimal(r.cost_usd));
    if (str(r.chosen) === '') k.noRoute += n; else k.models.set(str(r.chosen), n);
  }
  const routed = [...kinds.values()].reduce((a, k) => a + k.n, 0);
  return [...kinds].sort((a, b) => b[1].n - a[1].n || byCodePoint(a[0], b[0])).map(([kind, k]) => {
    const ranked = [...k.models].sort((a, b) => b[1] - a[1] || byCodePoint(a[0], b[0]));
    const rest = ranked.slice(KIND_MODELS);
    const restN = rest.reduce((a, [, n]) => a + n, 0);
    return {
      kind, requests: k.n, share: share(k.n, routed), errors: k.errors, error_rate: share(k.errors, k.n),
      cost_usd: formatDecimal(k.cost), cost_per_request_usd: k.n > 0 ? formatDecimal(divDecimal(k.cost, String(k.n), 12)) : null, no_route: k.noRoute,
      models: ranked.slice(0, KIND_MODELS).map(([model, n]) => ({ model, requests: n, share: share(n, k.n) })),
      other: rest.length ? { models: rest.length, requests: restN, share: share(restN, k.n) } : null,
    };
  });
}
