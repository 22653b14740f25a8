// The router as a whole over a time window (GET /router): how many requests it routed and their share of
// all requests, which models it chose (share, real cost, its own estimates, feedback on its quality
// signals), how often each constraint excluded candidates, fallbacks, exploration and cache affinity, and
// the learned state versions it used. SQL over router_decisions (src/dashboard/router-window.ts) joined to
// the inference records and feedback, on both backends, reading each decision once. Bounded: a window's newest MAX_DECISIONS are read at most (the
// answer says where it started), and every list is a top N.
import { addDecimal, divDecimal, formatDecimal } from '../catalog/decimal.ts';
import { decimal, iso, num, numOrNull, str, type Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { inList, keyScope, type Access } from './access.ts';
import { walkingTheKey } from './history.ts';
import { grainFor, readRollup, segments } from './rollup-query.ts';
import { foldBeforeRead } from '../store/rollup-fold.ts';
import { chosenOf, decisionColumns, floatType, jsonEntries, moneySum, windowWhere, recordOf, withDecisions, type DecisionWindow } from './router-window.ts';
import type { RouterFeedbackStat, RouterModelShare, RouterOverview } from './ui/api-types.ts';

/** Decisions one overview reads at most: a busier window is counted from its newest this many. */
export const MAX_DECISIONS = 20_000;

export type RouterOverviewQuery = {
  from: number; to: number; top: number; qualitySignals: readonly string[];
  /** Decisions read at most (MAX_DECISIONS unless a test sets it). */
  maxDecisions?: number;
};

/** Feedback older than the window's start by more than this cannot be on one of its decisions. */
const FEEDBACK_SKEW_MS = 3_600_000;

const share = (n: number, of: number): number | null => (of > 0 ? n / of : null);
const perRequest = (cost: string, n: number): string | null => (n > 0 ? formatDecimal(divDecimal(cost, String(n), 12)) : null);

/**
 * Where the window's counting starts: `from`, or just after the decision `max` + 1 back from `to` (one
 * walk down the created_at index), so at most `max` are read.
 */
async function coveredFrom(sql: SqlRunner, w: DecisionWindow, max: number): Promise<number | null> {
  const where = windowWhere(w);
  // Down the index from `to`, whatever PostgreSQL's statistics say (else a bitmap scan sorted the whole window).
  const rows = await walkingTheKey(sql, (q) => q.all(`SELECT d.created_at AS at FROM router_decisions d WHERE ${where.sql} ORDER BY d.created_at DESC, d.inference_id DESC LIMIT 1 OFFSET ?`, [...where.params, max]));
  return rows[0] ? Date.parse(iso(rows[0].at)) + 1 : null;
}

/**
 * One read of the window's decisions, as rows of two kinds. `cell`: per (chosen model, state version),
 * with the inference records' status and cost, which give the totals, the models and the versions
 * (folded in JS; the groups are at most the decisions read, in practice models x versions). `excl`: per
 * constraint (in `model`), the decisions where it excluded a candidate (`n`) and the candidates it
 * excluded (`predicted_sum`), top N. One statement, so each decision is read and parsed once: SQLite
 * materialises `b` as asked, PostgreSQL because it is referenced twice.
 */
async function decisionRows(sql: SqlRunner, w: DecisionWindow, top: number): Promise<Row[]> {
  const b = decisionColumns(sql, w, true);
  const n = `CAST(e.value AS ${floatType(sql)})`;
  const cells = `SELECT 'cell' AS kind, b.chosen AS model, b.version AS version, COUNT(*) AS n, COUNT(i.id) AS recorded,
      SUM(CASE WHEN i.status >= 400 THEN 1 ELSE 0 END) AS errors, ${moneySum(sql, 'i.cost_usd')} AS cost_usd,
      SUM(b.predicted) AS predicted_sum, COUNT(b.predicted) AS predicted_n, SUM(b.quality) AS quality_sum, COUNT(b.quality) AS quality_n,
      SUM(CASE WHEN b.attempts > 1 THEN 1 ELSE 0 END) AS fallbacks, SUM(b.explored) AS explored,
      SUM(CASE WHEN b.affinity IS NOT NULL THEN 1 ELSE 0 END) AS affinity_known, SUM(CASE WHEN b.affinity = b.chosen THEN 1 ELSE 0 END) AS affinity_chosen,
      MIN(b.at) AS first_at, MAX(b.at) AS last_at
    FROM b ${recordOf(sql)} GROUP BY b.chosen, b.version`;
  // Typed NULLs: PostgreSQL types a subquery's bare NULL as text, which the union cannot match with a number.
  const none = (type: string, ...cols: string[]): string => cols.map((c) => `CAST(NULL AS ${type}) AS ${c}`).join(', ');
  const excl = `SELECT * FROM (SELECT 'excl' AS kind, e.key AS model, ${none(floatType(sql), 'version')}, COUNT(*) AS n, ${none('BIGINT', 'recorded', 'errors')},
      ${none('TEXT', 'cost_usd')}, SUM(${n}) AS predicted_sum, ${none('BIGINT', 'predicted_n')}, ${none(floatType(sql), 'quality_sum')},
      ${none('BIGINT', 'quality_n', 'fallbacks', 'explored', 'affinity_known', 'affinity_chosen')}, ${none(sql.dialect === 'postgres' ? 'TIMESTAMPTZ' : 'TEXT', 'first_at', 'last_at')}
    FROM ${jsonEntries(sql)} WHERE ${n} > 0 GROUP BY e.key ORDER BY COUNT(*) DESC, e.key LIMIT ?) x`;
  return sql.all(`${withDecisions(sql, b)} ${cells} UNION ALL ${excl}`, [...b.params, top]);
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

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

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

type Cell = { n: number; recorded: number; errors: number; cost: string; predicted: number; predictedN: number; quality: number; qualityN: number;
  fallbacks: number; explored: number; affinityKnown: number; affinityChosen: number; firstAt: string; lastAt: string };

const cellOf = (r: Row): Cell => ({
  n: num(r.n), recorded: num(r.recorded), errors: num(r.errors ?? 0), cost: decimal(r.cost_usd), predicted: num(r.predicted_sum ?? 0), predictedN: num(r.predicted_n),
  quality: num(r.quality_sum ?? 0), qualityN: num(r.quality_n), fallbacks: num(r.fallbacks ?? 0), explored: num(r.explored ?? 0),
  affinityKnown: num(r.affinity_known ?? 0), affinityChosen: num(r.affinity_chosen ?? 0), firstAt: iso(r.first_at), lastAt: iso(r.last_at),
});

function addCell(a: Cell | undefined, c: Cell): Cell {
  if (!a) return { ...c };
  return {
    n: a.n + c.n, recorded: a.recorded + c.recorded, errors: a.errors + c.errors, cost: addDecimal(a.cost, c.cost), predicted: a.predicted + c.predicted,
    predictedN: a.predictedN + c.predictedN, quality: a.quality + c.quality, qualityN: a.qualityN + c.qualityN, fallbacks: a.fallbacks + c.fallbacks,
    explored: a.explored + c.explored, affinityKnown: a.affinityKnown + c.affinityKnown, affinityChosen: a.affinityChosen + c.affinityChosen,
    firstAt: a.firstAt < c.firstAt ? a.firstAt : c.firstAt, lastAt: a.lastAt > c.lastAt ? a.lastAt : c.lastAt,
  };
}

const EMPTY: Cell = { n: 0, recorded: 0, errors: 0, cost: '0', predicted: 0, predictedN: 0, quality: 0, qualityN: 0, fallbacks: 0, explored: 0, affinityKnown: 0, affinityChosen: 0, firstAt: '', lastAt: '' };

export async function routerOverview(sql: SqlRunner, q: RouterOverviewQuery, access: Access): Promise<RouterOverview> {
  const keys = keyScope(access);
  const whole: DecisionWindow = { from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), keys };
  const cut = await coveredFrom(sql, whole, q.maxDecisions ?? MAX_DECISIONS);
  const start = cut ?? q.from;
  const w: DecisionWindow = { ...whole, from: new Date(start).toISOString() };
  // Independent reads: on PostgreSQL they run at once on the pool's connections.
  const [all, fbRows, requests] = await Promise.all([decisionRows(sql, w, q.top), feedback(sql, w, q.qualitySignals), allRequests(sql, start, q.to, keys)]);
  const rows = all.filter((r) => r.kind === 'cell');
  const excl = all.filter((r) => r.kind === 'excl').sort((a, b) => num(b.n) - num(a.n) || byCodePoint(str(a.model), str(b.model)));
  let sum: Cell | undefined;
  let noRoute = 0;
  const byModel = new Map<string, Cell>();
  const byVersion = new Map<number, Cell>();
  for (const r of rows) {
    const c = cellOf(r);
    sum = addCell(sum, c);
    if (r.model === null || r.model === undefined) noRoute += c.n;
    else byModel.set(str(r.model), addCell(byModel.get(str(r.model)), c));
    if (r.version !== null && r.version !== undefined) byVersion.set(num(r.version), addCell(byVersion.get(num(r.version)), c));
  }
  const total = sum ?? EMPTY;
  const routed = total.n;
  const fb = feedbackStats(fbRows);
  const ranked = [...byModel].sort((a, b) => b[1].n - a[1].n || byCodePoint(a[0], b[0]));
  const shares: RouterModelShare[] = ranked.slice(0, q.top).map(([model, c]) => ({
    model, requests: c.n, share: share(c.n, routed), cost_usd: c.cost, cost_per_request_usd: perRequest(c.cost, c.recorded),
    predicted_cost_usd: c.predictedN ? c.predicted / c.predictedN : null, predicted_quality: c.qualityN ? c.quality / c.qualityN : null,
    errors: c.errors, fallbacks: c.fallbacks, explored: c.explored, feedback: fb.get(model) ?? [],
  }));
  const rest = ranked.slice(q.top);
  const versions = [...byVersion].sort((a, b) => b[0] - a[0]);
  return {
    from: whole.from, to: whole.to, covered_from: w.from, truncated: cut !== null,
    requests, routed, routed_share: share(routed, requests), no_route: noRoute,
    recorded: total.recorded, errors: total.errors, cost_usd: formatDecimal(total.cost), cost_per_request_usd: perRequest(total.cost, total.recorded),
    fallbacks: total.fallbacks, explored: total.explored, affinity_known: total.affinityKnown, affinity_chosen: total.affinityChosen,
    models: shares,
    other: rest.length ? { models: rest.length, requests: rest.reduce((a, [, c]) => a + c.n, 0), cost_usd: formatDecimal(rest.reduce((a, [, c]) => addDecimal(a, c.cost), '0')) } : null,
    constraints: excl.map((r) => ({ constraint: str(r.model), decisions: num(r.n), share: share(num(r.n), routed), candidates: num(r.predicted_sum) })),
    state_versions: versions.slice(0, q.top).map(([version, c]) => ({ version, decisions: c.n, first_at: c.firstAt, last_at: c.lastAt })),
    state_version_count: versions.length,
    quality_signals: [...q.qualitySignals],
  };
}
