// The Router page's routed traffic over time and its breakdown by prompt kind, from the router's hour
// rollups (src/store/router-rollup.ts): the series from router_rollup, bucketed as the Usage page buckets
// (rollup-query's segments over the viewer's zone's bucket starts), the kinds from router_rollup_kind.
// Both read rows per hour and cell in the window, never a decision; members see their keys' rows only.
import { addDecimal, divDecimal, formatDecimal } from '../catalog/decimal.ts';
import { decimal, num, str } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { inList } from './access.ts';
import { readHourRollup, segments } from './rollup-query.ts';
import { windowWhere, type DecisionWindow } from './router-window.ts';
import type { RouterKind, RouterPoint } from './ui/api-types.ts';

/** Models listed per kind; the rest are summed. */
export const KIND_MODELS = 3;

const costSum = (sql: SqlRunner): string => (sql.dialect === 'postgres' ? 'COALESCE(SUM(r.cost), 0)::text' : 'dec_sum(r.cost)');
const share = (n: number, of: number): number | null => (of > 0 ? n / of : null);
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Per bucket of `starts` (bucket starts in ms, as bucketStarts gives them) over the window: routed requests, errors and exact cost. */
export async function routerSeries(sql: SqlRunner, w: DecisionWindow, starts: readonly number[]): Promise<RouterPoint[]> {
  // The segments bound the window; the key scope is the only condition.
  const scope = w.keys ? inList('r.key_id', w.keys) : null;
  const keyOnly = scope ? { where: scope.sql, whereParams: scope.params } : {};
  const rows = await readHourRollup(sql, {
    table: 'router_rollup', segs: segments(Date.parse(w.from), Date.parse(w.to), starts),
    select: `SUM(r.n) AS n, SUM(r.errors) AS errors, ${costSum(sql)} AS cost_usd`, ...keyOnly,
  });
  const out: RouterPoint[] = starts.map(() => ({ requests: 0, errors: 0, cost_usd: '0' }));
  for (const r of rows) {
    const p = out[num(r.b)]!;
    p.requests += num(r.n); p.errors += num(r.errors);
    p.cost_usd = formatDecimal(addDecimal(p.cost_usd, decimal(r.cost_usd)));
  }
  return out;
}

type KindSum = { n: number; errors: number; cost: string; noRoute: number; models: Map<string, number> };

/**
 * Every prompt kind with routed requests in the window, most requests first: counts, errors, exact cost
 * and the top models chosen for it. A kind's share is of the kinds' total (every decision has one kind).
 */
export async function routerKinds(sql: SqlRunner, w: DecisionWindow): Promise<RouterKind[]> {
  const where = windowWhere(w, 'r.t', 'r.key_id');
  const rows = await sql.all(`SELECT r.kind AS kind, r.chosen AS chosen, SUM(r.n) AS n, SUM(r.errors) AS errors, ${costSum(sql)} AS cost_usd
    FROM router_rollup_kind r WHERE ${where.sql} GROUP BY r.kind, r.chosen`, where.params);
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
