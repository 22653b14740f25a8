// The router as a whole over a time window (GET /router): how many requests it routed and their share of
// all requests, which models it chose (share, real cost, its own estimates, feedback on its quality
// signals), how often each constraint excluded candidates, fallbacks, exploration and cache affinity, and
// the learned state versions it used. SQL over router_decisions (src/dashboard/router-window.ts) joined to
// the inference records and feedback, on both backends. Bounded: a window's newest MAX_DECISIONS are
// read at most (the answer says where it stopped), and every list is a top N.
import { divDecimal, formatDecimal, subDecimal } from '../catalog/decimal.ts';
import { decimal, iso, num, numOrNull, str, type Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { inList, keyScope, type Access } from './access.ts';
import { idAt } from './history.ts';
import { decisionColumns, floatType, jsonEntries, moneySum, windowWhere, type DecisionWindow } from './router-window.ts';
import type { RouterFeedbackStat, RouterModelShare, RouterOverview } from './ui/api-types.ts';

/** Decisions one overview reads at most: a busier window is counted from its newest this many. */
export const MAX_DECISIONS = 50_000;

export type RouterOverviewQuery = {
  from: number; to: number; top: number; qualitySignals: readonly string[];
  /** Decisions read at most (MAX_DECISIONS unless a test sets it). */
  maxDecisions?: number;
};

const share = (n: number, of: number): number | null => (of > 0 ? n / of : null);
const perRequest = (cost: string, n: number): string | null => (n > 0 ? formatDecimal(divDecimal(cost, String(n), 12)) : null);

/**
 * Where the window's counting starts: `from`, or just after the decision `max` + 1 back from `to` (one
 * walk down the created_at index), so at most `max` are read.
 */
async function coveredFrom(sql: SqlRunner, w: DecisionWindow, max: number): Promise<number | null> {
  const where = windowWhere(w);
  const rows = await sql.all(`SELECT d.created_at AS at FROM router_decisions d WHERE ${where.sql} ORDER BY d.created_at DESC, d.inference_id DESC LIMIT 1 OFFSET ?`, [...where.params, max]);
  return rows[0] ? Date.parse(iso(rows[0].at)) + 1 : null;
}

async function totals(sql: SqlRunner, w: DecisionWindow): Promise<Row> {
  const b = decisionColumns(sql, w);
  const rows = await sql.all(`WITH b AS (${b.sql})
    SELECT COUNT(*) AS routed, SUM(CASE WHEN b.chosen IS NULL THEN 1 ELSE 0 END) AS no_route, COUNT(i.id) AS recorded,
      SUM(CASE WHEN i.status >= 400 THEN 1 ELSE 0 END) AS errors, ${moneySum(sql, 'i.cost_usd')} AS cost_usd,
      SUM(CASE WHEN b.attempts > 1 THEN 1 ELSE 0 END) AS fallbacks, SUM(b.explored) AS explored,
      SUM(CASE WHEN b.affinity IS NOT NULL THEN 1 ELSE 0 END) AS affinity_known, SUM(CASE WHEN b.affinity = b.chosen THEN 1 ELSE 0 END) AS affinity_chosen,
      COUNT(DISTINCT b.chosen) AS models, COUNT(DISTINCT b.version) AS versions
    FROM b LEFT JOIN inferences i ON i.id = b.id`, b.params);
  return rows[0] ?? {};
}

async function models(sql: SqlRunner, w: DecisionWindow, top: number): Promise<Row[]> {
  const b = decisionColumns(sql, w);
  return sql.all(`WITH b AS (${b.sql})
    SELECT b.chosen AS model, COUNT(*) AS requests, COUNT(i.id) AS recorded, ${moneySum(sql, 'i.cost_usd')} AS cost_usd,
      AVG(b.predicted) AS predicted_cost, AVG(b.quality) AS predicted_quality, SUM(CASE WHEN i.status >= 400 THEN 1 ELSE 0 END) AS errors,
      SUM(CASE WHEN b.attempts > 1 THEN 1 ELSE 0 END) AS fallbacks, SUM(b.explored) AS explored
    FROM b LEFT JOIN inferences i ON i.id = b.id WHERE b.chosen IS NOT NULL
    GROUP BY b.chosen ORDER BY COUNT(*) DESC, b.chosen LIMIT ?`, [...b.params, top]);
}

/** Booleans count as 1/0 in the mean; comments have neither mean nor rate (as the feedback stats elsewhere). */
async function feedback(sql: SqlRunner, w: DecisionWindow, chosen: readonly string[], metrics: readonly string[]): Promise<Row[]> {
  if (chosen.length === 0 || metrics.length === 0) return [];
  const b = decisionColumns(sql, w);
  const f = floatType(sql);
  const inModels = inList('b.chosen', chosen);
  const inMetrics = inList('fb.metric', metrics);
  const bool = `CASE WHEN fb.value = 'true' THEN CAST(1 AS ${f}) ELSE CAST(0 AS ${f}) END`;
  return sql.all(`WITH b AS (${b.sql})
    SELECT b.chosen AS model, fb.metric AS metric, fb.type AS type, COUNT(*) AS n,
      AVG(CASE WHEN fb.type = 'float' THEN CAST(fb.value AS ${f}) WHEN fb.type = 'boolean' THEN ${bool} END) AS mean,
      AVG(CASE WHEN fb.type = 'boolean' THEN ${bool} END) AS rate
    FROM b JOIN feedback fb ON fb.inference_id = b.id WHERE ${inModels.sql} AND ${inMetrics.sql}
    GROUP BY b.chosen, fb.metric, fb.type`, [...b.params, ...inModels.params, ...inMetrics.params]);
}

async function constraints(sql: SqlRunner, w: DecisionWindow, top: number): Promise<Row[]> {
  const b = decisionColumns(sql, w, true);
  const n = `CAST(e.value AS ${floatType(sql)})`;
  return sql.all(`WITH b AS (${b.sql})
    SELECT e.key AS name, COUNT(*) AS decisions, SUM(${n}) AS candidates
    FROM ${jsonEntries(sql)} WHERE ${n} > 0
    GROUP BY e.key ORDER BY COUNT(*) DESC, e.key LIMIT ?`, [...b.params, top]);
}

async function versions(sql: SqlRunner, w: DecisionWindow, top: number): Promise<Row[]> {
  const b = decisionColumns(sql, w);
  return sql.all(`WITH b AS (${b.sql})
    SELECT b.version AS version, COUNT(*) AS decisions, MIN(b.at) AS first_at, MAX(b.at) AS last_at
    FROM b WHERE b.version IS NOT NULL GROUP BY b.version ORDER BY b.version DESC LIMIT ?`, [...b.params, top]);
}

/** Every request started in [from, to) within the keys: ids are UUIDv7, so the window is a primary-key range. */
async function allRequests(sql: SqlRunner, from: number, to: number, keys: readonly string[] | null): Promise<number> {
  const scope = keys ? inList('key_id', keys) : null;
  const rows = await sql.all(`SELECT COUNT(*) AS n FROM inferences WHERE id >= ? AND id < ?${scope ? ` AND ${scope.sql}` : ''}`, [idAt(from), idAt(to), ...(scope?.params ?? [])]);
  return num(rows[0]?.n ?? 0);
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

export async function routerOverview(sql: SqlRunner, q: RouterOverviewQuery, access: Access): Promise<RouterOverview> {
  const keys = keyScope(access);
  const whole: DecisionWindow = { from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), keys };
  const cut = await coveredFrom(sql, whole, q.maxDecisions ?? MAX_DECISIONS);
  const start = cut ?? q.from;
  const w: DecisionWindow = { ...whole, from: new Date(start).toISOString() };
  // Independent reads: on PostgreSQL they run at once on the pool's connections.
  const [t, top, excl, vers, requests] = await Promise.all([
    totals(sql, w), models(sql, w, q.top), constraints(sql, w, q.top), versions(sql, w, q.top), allRequests(sql, start, q.to, keys),
  ]);
  const fb = feedbackStats(await feedback(sql, w, top.map((r) => str(r.model)), q.qualitySignals));
  const routed = num(t.routed ?? 0);
  const cost = decimal(t.cost_usd);
  const shares: RouterModelShare[] = top.map((r) => {
    const model = str(r.model);
    const modelCost = decimal(r.cost_usd);
    return {
      model, requests: num(r.requests), share: share(num(r.requests), routed), cost_usd: modelCost, cost_per_request_usd: perRequest(modelCost, num(r.recorded)),
      predicted_cost_usd: numOrNull(r.predicted_cost), predicted_quality: numOrNull(r.predicted_quality),
      errors: num(r.errors ?? 0), fallbacks: num(r.fallbacks ?? 0), explored: num(r.explored ?? 0), feedback: fb.get(model) ?? [],
    };
  });
  const chosenTotal = routed - num(t.no_route ?? 0);
  const inTop = shares.reduce((a, m) => a + m.requests, 0);
  const modelCount = num(t.models ?? 0);
  const rest = modelCount > shares.length
    ? { models: modelCount - shares.length, requests: chosenTotal - inTop, cost_usd: formatDecimal(shares.reduce((a, m) => subDecimal(a, m.cost_usd), cost)) }
    : null;
  return {
    from: whole.from, to: whole.to, covered_from: w.from, truncated: cut !== null,
    requests, routed, routed_share: share(routed, requests), no_route: num(t.no_route ?? 0),
    recorded: num(t.recorded ?? 0), errors: num(t.errors ?? 0), cost_usd: cost, cost_per_request_usd: perRequest(cost, num(t.recorded ?? 0)),
    fallbacks: num(t.fallbacks ?? 0), explored: num(t.explored ?? 0), affinity_known: num(t.affinity_known ?? 0), affinity_chosen: num(t.affinity_chosen ?? 0),
    models: shares, other: rest,
    constraints: excl.map((r) => ({ constraint: str(r.name), decisions: num(r.decisions), share: share(num(r.decisions), routed), candidates: num(r.candidates) })),
    state_versions: vers.map((r) => ({ version: num(r.version), decisions: num(r.decisions), first_at: iso(r.first_at), last_at: iso(r.last_at) })),
    state_version_count: num(t.versions ?? 0),
    quality_signals: [...q.qualitySignals],
  };
}
