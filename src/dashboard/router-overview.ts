// The router as a whole over a time window (GET /router): how many requests it routed and their share of
// all requests, which models it chose (share, real cost, its own estimates, feedback on its quality
// signals), how often each constraint excluded candidates, fallbacks, exploration and cache affinity, and
// the learned state versions it used; routed requests, errors and cost per time bucket in the viewer's
// zone (from the same read as the per-model figures), and per prompt kind (src/dashboard/router-kinds.ts).
// Read from the router's hour rollups (src/store/router-rollup.ts),
// maintained when the decisions are written, over the window rounded out to whole UTC hours (as the Usage
// page counts): no decision is read, whatever the window holds. Feedback per chosen model is read from
// the feedback side (only decisions with such feedback are looked at). Every list is a top N.
import { addDecimal, divDecimal, formatDecimal } from '../catalog/decimal.ts';
import { decimal, iso, num, numOrNull, str, type Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { inList, keyScope, type Access } from './access.ts';
import { ceilTo, floorTo, grainFor, HOUR, readRollup, readRouterRollup, segments } from './rollup-query.ts';
import { foldBeforeRead } from '../store/rollup-fold.ts';
import { byCodePoint, chosenOf, costSum, floatType, keysWhere, share, windowWhere, type DecisionWindow } from './router-window.ts';
import type { Bucket, RouterFeedbackStat, RouterModelShare, RouterOverview, RouterPoint } from './ui/api-types.ts';
import { autoBucket, bucketStarts } from './rollup-math.ts';
import { routerKinds } from './router-kinds.ts';

/** `bucket` and `tz` shape the time series (default: the finest readable bucket for the range, UTC). */
export type RouterOverviewQuery = { from: number; to: number; top: number; qualitySignals: readonly string[]; bucket?: Bucket; tz?: string };

/** Feedback older than the window's start by more than this cannot be on one of its decisions. */
const FEEDBACK_SKEW_MS = 3_600_000;

const perRequest = (cost: string, n: number): string | null => (n > 0 ? formatDecimal(divDecimal(cost, String(n), 12)) : null);

/** The hour rows of [from, to) within the keys: `r`'s conditions and their parameters. */
const hoursWhere = (w: DecisionWindow): { sql: string; params: unknown[] } => windowWhere(w, 'r.t', 'r.key_id');

/**
 * Per time bucket and chosen model ('' for no route): the decisions, their answers' errors and exact cost,
 * and the router's estimates. One read serves the per-model figures (summed over the buckets) and the time
 * series (summed over the models); its rows are buckets times models, whatever the hours in the range.
 */
async function modelRows(sql: SqlRunner, w: DecisionWindow, starts: readonly number[]): Promise<Row[]> {
  return readRouterRollup(sql, {
    table: 'router_rollup', segs: segments(Date.parse(w.from), Date.parse(w.to), starts), ...keysWhere(w), groupBy: ['r.chosen'],
    select: `r.chosen AS model, SUM(r.n) AS n, SUM(r.errors) AS errors, ${costSum(sql)} AS cost_usd,
      SUM(r.predicted_sum) AS predicted_sum, SUM(r.predicted_n) AS predicted_n, SUM(r.quality_sum) AS quality_sum, SUM(r.quality_n) AS quality_n,
      SUM(r.fallbacks) AS fallbacks, SUM(r.explored) AS explored, SUM(r.affinity_known) AS affinity_known, SUM(r.affinity_chosen) AS affinity_chosen`,
  });
}

/** Per learned state version: the decisions made with it and the first and last of them. */
async function versionRows(sql: SqlRunner, w: DecisionWindow): Promise<Row[]> {
  const where = hoursWhere(w);
  return sql.all(`SELECT r.state_version AS version, SUM(r.n) AS n, MIN(r.first_at) AS first_at, MAX(r.last_at) AS last_at
    FROM router_rollup_version r WHERE ${where.sql} GROUP BY r.state_version`, where.params);
}

/** Per constraint, top N: the decisions where it excluded a candidate and the candidates it excluded. */
async function constraintRows(sql: SqlRunner, w: DecisionWindow, top: number): Promise<Row[]> {
  const where = hoursWhere(w);
  return sql.all(`SELECT r.constraint_name AS name, SUM(r.decisions) AS decisions, SUM(r.candidates) AS candidates
    FROM router_rollup_excl r WHERE ${where.sql} GROUP BY r.constraint_name ORDER BY SUM(r.decisions) DESC, r.constraint_name LIMIT ?`, [...where.params, top]);
}

/**
 * Feedback on the quality signals per chosen model, metric and type, read from the feedback side: only
 * decisions with such feedback are parsed. Feedback comes after its answer, so only feedback from the
 * window's start on is looked at (less an hour for clocks that differ between replicas), which keeps the
 * (metric, created_at) index usable. Booleans count as 1/0 in the mean; comments have neither
 * mean nor rate (as the feedback stats elsewhere).
 */
async function feedback(sql: SqlRunner, w: DecisionWindow, metrics: readonly string[]): Promise<Row[]> {
  if (metrics.length === 0) return [];
  const where = windowWhere(w);
  const f = floatType(sql);
  const inMetrics = inList('fb.metric', metrics);
  const bool = `CASE WHEN fb.value = 'true' THEN CAST(1 AS ${f}) ELSE CAST(0 AS ${f}) END`;
  return sql.all(`SELECT ${chosenOf(sql)} AS model, fb.metric AS metric, fb.type AS type, COUNT(*) AS n,
      AVG(CASE WHEN fb.type = 'float' THEN CAST(fb.value AS ${f}) WHEN fb.type = 'boolean' THEN ${bool} END) AS mean,
      AVG(CASE WHEN fb.type = 'boolean' THEN ${bool} END) AS rate
    FROM feedback fb JOIN router_decisions d ON d.inference_id = fb.inference_id WHERE ${where.sql} AND ${inMetrics.sql} AND fb.created_at >= ?
    GROUP BY ${chosenOf(sql)}, fb.metric, fb.type`, [...where.params, ...inMetrics.params, new Date(Date.parse(w.from) - FEEDBACK_SKEW_MS).toISOString()]);
}

/**
 * Every request in [from, to) within the keys, from the usage rollups (hour rows, as the Usage page
 * counts them; what the record writer journaled is folded first): a window's records are never counted one by one.
 */
async function allRequests(sql: SqlRunner, from: number, to: number, keys: readonly string[] | null): Promise<number> {
  await foldBeforeRead(sql);
  const filter = { keys };
  const rows = await readRollup(sql, { table: 'usage_rollup', grain: grainFor(null, filter), segs: segments(from, to), filter, select: 'SUM(r.requests) AS requests', noBucket: true });
  return num(rows[0]?.requests ?? 0);
}


function feedbackStats(rows: readonly Row[]): Map<string, RouterFeedbackStat[]> {
  const out = new Map<string, RouterFeedbackStat[]>();
  for (const r of rows) {
    const list = out.get(str(r.model)) ?? [];
    list.push({ metric: str(r.metric), type: str(r.type) as RouterFeedbackStat['type'], count: num(r.n), mean: numOrNull(r.mean), rate: numOrNull(r.rate) });
    out.set(str(r.model), list);
  }
  for (const list of out.values()) list.sort((a, b) => byCodePoint(a.metric, b.metric) || byCodePoint(a.type, b.type));
  return out;
}

type Cell = { n: number; errors: number; cost: string; predicted: number; predictedN: number; quality: number; qualityN: number;
  fallbacks: number; explored: number; affinityKnown: number; affinityChosen: number };

const cellOf = (r: Row): Cell => ({
  n: num(r.n), errors: num(r.errors ?? 0), cost: decimal(r.cost_usd), predicted: num(r.predicted_sum ?? 0), predictedN: num(r.predicted_n ?? 0),
  quality: num(r.quality_sum ?? 0), qualityN: num(r.quality_n ?? 0), fallbacks: num(r.fallbacks ?? 0), explored: num(r.explored ?? 0),
  affinityKnown: num(r.affinity_known ?? 0), affinityChosen: num(r.affinity_chosen ?? 0),
});

function addCell(a: Cell, c: Cell): Cell {
  return {
    n: a.n + c.n, errors: a.errors + c.errors, cost: addDecimal(a.cost, c.cost), predicted: a.predicted + c.predicted,
    predictedN: a.predictedN + c.predictedN, quality: a.quality + c.quality, qualityN: a.qualityN + c.qualityN, fallbacks: a.fallbacks + c.fallbacks,
    explored: a.explored + c.explored, affinityKnown: a.affinityKnown + c.affinityKnown, affinityChosen: a.affinityChosen + c.affinityChosen,
  };
}

const EMPTY: Cell = { n: 0, errors: 0, cost: '0', predicted: 0, predictedN: 0, quality: 0, qualityN: 0, fallbacks: 0, explored: 0, affinityKnown: 0, affinityChosen: 0 };

export async function routerOverview(sql: SqlRunner, q: RouterOverviewQuery, access: Access): Promise<RouterOverview> {
  const keys = keyScope(access);
  // Whole UTC hours: the rollups' rows.
  const lo = floorTo(q.from, HOUR);
  const hi = ceilTo(q.to, HOUR);
  const w: DecisionWindow = { from: new Date(lo).toISOString(), to: new Date(hi).toISOString(), keys };
  const bucket = q.bucket ?? autoBucket(hi - lo);
  const tz = q.tz ?? 'UTC';
  const starts = bucketStarts(bucket, tz, lo, hi);
  if (starts === null) throw new RangeError('too many buckets');
  // Independent reads: on PostgreSQL they run at once on the pool's connections.
  const [cells, versionList, excl, fbRows, requests, kinds] = await Promise.all([
    modelRows(sql, w, starts), versionRows(sql, w), constraintRows(sql, w, q.top), feedback(sql, w, q.qualitySignals), allRequests(sql, lo, hi, keys),
    routerKinds(sql, w),
  ]);
  let total = EMPTY;
  let noRoute = 0;
  const byModel = new Map<string, Cell>();
  const series: RouterPoint[] = starts.map(() => ({ requests: 0, errors: 0, cost_usd: '0' }));
  for (const r of cells) {
    const c = cellOf(r);
    total = addCell(total, c);
    const p = series[num(r.b)]!;
    p.requests += c.n; p.errors += c.errors; p.cost_usd = addDecimal(p.cost_usd, c.cost);
    if (str(r.model) === '') noRoute += c.n;
    else byModel.set(str(r.model), addCell(byModel.get(str(r.model)) ?? EMPTY, c));
  }
  for (const p of series) p.cost_usd = formatDecimal(p.cost_usd);
  const routed = total.n;
  const fb = feedbackStats(fbRows);
  const ranked = [...byModel].sort((a, b) => b[1].n - a[1].n || byCodePoint(a[0], b[0]));
  const shares: RouterModelShare[] = ranked.slice(0, q.top).map(([model, c]) => ({
    model, requests: c.n, share: share(c.n, routed), cost_usd: formatDecimal(c.cost), cost_per_request_usd: perRequest(c.cost, c.n),
    predicted_cost_usd: c.predictedN ? c.predicted / c.predictedN : null, predicted_quality: c.qualityN ? c.quality / c.qualityN : null,
    errors: c.errors, fallbacks: c.fallbacks, explored: c.explored, feedback: fb.get(model) ?? [],
  }));
  const rest = ranked.slice(q.top);
  const versions = versionList.map((r) => ({ version: num(r.version), decisions: num(r.n), first_at: iso(r.first_at), last_at: iso(r.last_at) }))
    .sort((a, b) => b.version - a.version);
  return {
    from: w.from, to: w.to,
    requests, routed, routed_share: share(routed, requests), no_route: noRoute,
    errors: total.errors, cost_usd: formatDecimal(total.cost), cost_per_request_usd: perRequest(total.cost, routed),
    fallbacks: total.fallbacks, explored: total.explored, affinity_known: total.affinityKnown, affinity_chosen: total.affinityChosen,
    models: shares,
    other: rest.length ? { models: rest.length, requests: rest.reduce((a, [, c]) => a + c.n, 0), cost_usd: formatDecimal(rest.reduce((a, [, c]) => addDecimal(a, c.cost), '0')) } : null,
    constraints: excl.map((r) => ({ constraint: str(r.name), decisions: num(r.decisions), share: share(num(r.decisions), routed), candidates: num(r.candidates) })),
    state_versions: versions.slice(0, q.top),
    state_version_count: versions.length,
    quality_signals: [...q.qualitySignals],
    bucket, tz, buckets: starts.map((t) => new Date(t).toISOString()), series, kinds,
  };
}
