// The router's rollups (migration 21), read by the dashboard's Router page instead of the recorded
// decisions: per UTC hour, key ('' for none) and chosen model ('' for no route) the decisions, errors
// (status >= 400), exact cost, the router's own estimates, fallbacks, exploration and cache affinity; per
// hour, key and learned state version the decisions and when they were made; per hour, key and
// constraint the decisions where it excluded a candidate and the candidates it excluded: hour rows only.
// Per hour and per UTC day (span 'h' / 'd'), key, prompt kind and chosen model (migration 22) the
// decisions, errors and exact cost.
// They are maintained by insertDecisions (src/router/store.ts) in the transaction that inserts the
// decisions, from the rows it really inserted, and pruned with the dashboard's hour rollups
// (dashboard.retention.hour_rollups_days, src/store/rollup-retention.ts).
import { DecimalSum } from '../catalog/decimal.ts';
import type { Dialect } from './migrations.ts';
import { dayOf, hourIsoOf } from './rollup-cells.ts';
import type { SqlRunner } from './sql-runner.ts';

export function routerRollupDdl(d: Dialect): string[] {
  const ts = d === 'postgres' ? 'TIMESTAMPTZ' : 'TEXT';
  const money = d === 'postgres' ? 'NUMERIC' : 'TEXT';
  const float = d === 'postgres' ? 'DOUBLE PRECISION' : 'REAL';
  const big = d === 'postgres' ? 'BIGINT' : 'INTEGER';
  return [
    `CREATE TABLE router_rollup (
      t ${ts} NOT NULL,
      key_id TEXT NOT NULL,
      chosen TEXT NOT NULL,
      n ${big} NOT NULL,
      errors ${big} NOT NULL,
      cost ${money} NOT NULL,
      predicted_sum ${float} NOT NULL,
      predicted_n ${big} NOT NULL,
      quality_sum ${float} NOT NULL,
      quality_n ${big} NOT NULL,
      fallbacks ${big} NOT NULL,
      explored ${big} NOT NULL,
      affinity_known ${big} NOT NULL,
      affinity_chosen ${big} NOT NULL,
      PRIMARY KEY (t, key_id, chosen)
    )`,
    `CREATE TABLE router_rollup_version (
      t ${ts} NOT NULL,
      key_id TEXT NOT NULL,
      state_version ${big} NOT NULL,
      n ${big} NOT NULL,
      first_at ${ts} NOT NULL,
      last_at ${ts} NOT NULL,
      PRIMARY KEY (t, key_id, state_version)
    )`,
    `CREATE TABLE router_rollup_excl (
      t ${ts} NOT NULL,
      key_id TEXT NOT NULL,
      constraint_name TEXT NOT NULL,
      decisions ${big} NOT NULL,
      candidates ${big} NOT NULL,
      PRIMARY KEY (t, key_id, constraint_name)
    )`,
    ...cleanDecisions(d),
    ...backfill(d),
  ];
}

/**
 * Migration 22: router_rollup_kind per (grain, span, t, key, the prompt's detected kind, chosen model) with
 * the decisions, errors and exact cost, the Router page's breakdown by kind. A table of its own rather than
 * `kind` in router_rollup's key: router_rollup keeps its rows (the overview's other figures read no more
 * cells than before) and no released table is rebuilt. Kinds times models times keys makes many cells an
 * hour (336 at 7 keys, 8 kinds, 6 models), so, as usage_rollup does: hour rows and UTC day rows (span 'h' /
 * 'd'; a range reads its whole days from day rows and only the hours at its edges from hour rows), and
 * rows per key (grain 'key', for members) beside rows of all keys (grain 'total', key_id '', for admins:
 * kinds times models an hour, whatever the number of keys). Backfilled from the stored decisions (the kind
 * column, the chosen model from the JSON) joined to their records, as migration 21 filled router_rollup.
 */
export function routerKindRollupDdl(d: Dialect): string[] {
  const pg = d === 'postgres';
  const ts = pg ? 'TIMESTAMPTZ' : 'TEXT';
  const money = pg ? 'NUMERIC' : 'TEXT';
  const big = pg ? 'BIGINT' : 'INTEGER';
  const key = "COALESCE(d.key_id, '')";
  const chosen = pg ? "COALESCE(d.decision::json->>'chosen', '')" : "COALESCE(json_extract(d.decision, '$.chosen'), '')";
  const t = hourOf(d, 'd.created_at');
  const day = dayOfSql(d, 'r.t');
  const sum = pg ? 'SUM(r.cost)' : 'dec_sum(r.cost)';
  const cols = 'grain, span, t, key_id, kind, chosen, n, errors, cost';
  return [
    `CREATE TABLE router_rollup_kind (
      grain TEXT NOT NULL,
      span TEXT NOT NULL,
      t ${ts} NOT NULL,
      key_id TEXT NOT NULL,
      kind TEXT NOT NULL,
      chosen TEXT NOT NULL,
      n ${big} NOT NULL,
      errors ${big} NOT NULL,
      cost ${money} NOT NULL,
      PRIMARY KEY (grain, span, t, key_id, kind, chosen)
    )`,
    ...cleanDecisions(d),
    `INSERT INTO router_rollup_kind (${cols})
     SELECT 'key', 'h', ${t}, ${key}, d.kind, ${chosen}, COUNT(*), SUM(CASE WHEN i.status >= 400 THEN 1 ELSE 0 END), ${pg ? 'COALESCE(SUM(i.cost_usd), 0)' : 'dec_sum(i.cost_usd)'}
     FROM router_decisions d LEFT JOIN inferences i ON i.id = d.inference_id GROUP BY ${t}, ${key}, d.kind, ${chosen}`,
    // The other rows from those just written: all keys' hours, then both grains' days.
    `INSERT INTO router_rollup_kind (${cols})
     SELECT 'total', 'h', r.t, '', r.kind, r.chosen, SUM(r.n), SUM(r.errors), ${sum}
     FROM router_rollup_kind r WHERE r.grain = 'key' AND r.span = 'h' GROUP BY r.t, r.kind, r.chosen`,
    `INSERT INTO router_rollup_kind (${cols})
     SELECT r.grain, 'd', ${day}, r.key_id, r.kind, r.chosen, SUM(r.n), SUM(r.errors), ${sum}
     FROM router_rollup_kind r WHERE r.span = 'h' GROUP BY r.grain, ${day}, r.key_id, r.kind, r.chosen`,
  ];
}

/** The UTC hour of `col` (an ISO text on SQLite, as the writer stores it; a timestamptz in PostgreSQL, whatever the session's zone). */
const hourOf = (d: Dialect, col: string): string => (d === 'postgres'
  ? `to_timestamp(floor(extract(epoch FROM ${col}) / 3600) * 3600)`
  : `substr(${col}, 1, 13) || ':00:00.000Z'`);

/** The UTC day of `col`, as hourOf. */
const dayOfSql = (d: Dialect, col: string): string => (d === 'postgres'
  ? `to_timestamp(floor(extract(epoch FROM ${col}) / 86400) * 86400)`
  : `substr(${col}, 1, 10) || 'T00:00:00.000Z'`);

/**
 * A subquery of the stored decisions, one row each, with the fields the rollups count read out of the
 * decision JSON (src/router/explain.ts recordedDecision): id, at, key_id, chosen, quality, predicted,
 * explored (1/0), affinity, attempts (count), version and ex (the excluded_by object). Each decision is
 * parsed once: PostgreSQL reads the fields with one json_to_record, SQLite's json_extract reuses its parse
 * within a row.
 */
export function decisionFieldsSql(d: Dialect): string {
  if (d === 'postgres') {
    return `SELECT d.inference_id AS id, d.created_at AS at, d.key_id AS key_id, r.chosen AS chosen, r.chosen_quality AS quality, r.chosen_cost_usd AS predicted,
        CASE WHEN r.explored THEN 1 ELSE 0 END AS explored, r.affinity AS affinity,
        CASE WHEN json_typeof(r.attempts) = 'array' THEN json_array_length(r.attempts) ELSE 0 END AS attempts, r.state_version AS version,
        CASE WHEN json_typeof(r.excluded_by) = 'object' THEN r.excluded_by ELSE '{}'::json END AS ex
      FROM router_decisions d CROSS JOIN LATERAL json_to_record(d.decision::json) AS r(chosen TEXT, chosen_quality DOUBLE PRECISION,
        chosen_cost_usd DOUBLE PRECISION, explored BOOLEAN, affinity TEXT, state_version DOUBLE PRECISION, attempts JSON, excluded_by JSON)`;
  }
  const get = (k: string): string => `json_extract(d.decision, '$.${k}')`;
  return `SELECT d.inference_id AS id, d.created_at AS at, d.key_id AS key_id, ${get('chosen')} AS chosen, ${get('chosen_quality')} AS quality, ${get('chosen_cost_usd')} AS predicted,
      CASE WHEN ${get('explored')} = 1 THEN 1 ELSE 0 END AS explored, ${get('affinity')} AS affinity,
      COALESCE(json_array_length(d.decision, '$.attempts'), 0) AS attempts, ${get('state_version')} AS version,
      CASE WHEN json_type(d.decision, '$.excluded_by') = 'object' THEN ${get('excluded_by')} ELSE '{}' END AS ex
    FROM router_decisions d`;
}

/**
 * Before the backfills of migrations 21 and 22 on PostgreSQL: stored decisions whose text holds a \u0000
 * escape or a lone surrogate's (an upstream's error in an attempt, stored so before the decision writer
 * cleaned them, src/router/decision-row.ts) get U+FFFD there instead. PostgreSQL's json refuses both when
 * it reads the field or parses the text (22P05, 22P02), and one such decision failed the migration: the
 * gateway upgraded from a store that held one did not start. JSON.stringify writes a surrogate escape only
 * for a lone one, so every such escape is one; text that spelled one out after a backslash of its own
 * ("C:\\ud800" in an error) becomes "C:\\ufffd", still valid JSON, a character's difference in old text.
 */
function cleanDecisions(d: Dialect): string[] {
  if (d !== 'postgres') return [];
  const bad = String.raw`'\\u(0000|d[89a-f][0-9a-f]{2})'`;
  return [`UPDATE router_decisions SET decision = regexp_replace(decision, ${bad}, ${String.raw`'\\ufffd'`}, 'gi') WHERE decision ~* ${bad}`];
}

/**
 * Migration 21 fills the rollups from the decisions already stored, with their inference records' status
 * and cost (a decision whose record is gone counts with neither). SQLite: MATERIALIZED so each decision's
 * JSON is read once, not once per reference.
 */
function backfill(d: Dialect): string[] {
  const pg = d === 'postgres';
  const b = `WITH b AS ${pg ? '' : 'MATERIALIZED '}(${decisionFieldsSql(d)})`;
  const t = hourOf(d, 'b.at');
  const key = "COALESCE(b.key_id, '')";
  const cost = pg ? 'COALESCE(SUM(i.cost_usd), 0)' : 'dec_sum(i.cost_usd)';
  const n = `CAST(e.value AS ${pg ? 'DOUBLE PRECISION' : 'REAL'})`;
  const entries = pg ? 'b CROSS JOIN LATERAL json_each_text(b.ex) e' : 'b, json_each(b.ex) e';
  return [
    `${b} INSERT INTO router_rollup (t, key_id, chosen, n, errors, cost, predicted_sum, predicted_n, quality_sum, quality_n, fallbacks, explored, affinity_known, affinity_chosen)
     SELECT ${t}, ${key}, COALESCE(b.chosen, ''), COUNT(*), SUM(CASE WHEN i.status >= 400 THEN 1 ELSE 0 END), ${cost},
       COALESCE(SUM(b.predicted), 0), COUNT(b.predicted), COALESCE(SUM(b.quality), 0), COUNT(b.quality),
       SUM(CASE WHEN b.attempts > 1 THEN 1 ELSE 0 END), SUM(b.explored),
       SUM(CASE WHEN b.affinity IS NOT NULL THEN 1 ELSE 0 END), SUM(CASE WHEN b.affinity = b.chosen THEN 1 ELSE 0 END)
     FROM b LEFT JOIN inferences i ON i.id = b.id GROUP BY ${t}, ${key}, COALESCE(b.chosen, '')`,
    `${b} INSERT INTO router_rollup_version (t, key_id, state_version, n, first_at, last_at)
     SELECT ${t}, ${key}, CAST(b.version AS ${pg ? 'BIGINT' : 'INTEGER'}), COUNT(*), MIN(b.at), MAX(b.at)
     FROM b WHERE b.version IS NOT NULL GROUP BY ${t}, ${key}, CAST(b.version AS ${pg ? 'BIGINT' : 'INTEGER'})`,
    `${b} INSERT INTO router_rollup_excl (t, key_id, constraint_name, decisions, candidates)
     SELECT ${t}, ${key}, e.key, COUNT(*), CAST(SUM(${n}) AS ${pg ? 'BIGINT' : 'INTEGER'})
     FROM ${entries} WHERE ${n} > 0 GROUP BY ${t}, ${key}, e.key`,
  ];
}

/**
 * What the rollups count of a stored decision: its time, key, answer (HTTP status, exact cost) and the
 * recorded decision's fields (src/router/explain.ts recordedDecision, figures rounded as stored).
 */
export type RollupSource = {
  createdAt: string; keyId: string | null; kind: string; status: number; costUsd: string;
  chosen: string | null; quality: number | null; predicted: number | null; explored: boolean; affinity: string | null;
  /** How many attempts the request made (a fallback: more than 1). */
  attempts: number;
  version: number | null;
  /** excluded_by's entries, [constraint, candidates excluded]. */
  excludedBy: ReadonlyArray<readonly [string, number]>;
};

export type DecisionFields = Pick<RollupSource, 'chosen' | 'quality' | 'predicted' | 'explored' | 'affinity' | 'attempts' | 'version' | 'excludedBy'>;

type Fields = {
  chosen?: string | null; chosen_quality?: number | null; chosen_cost_usd?: number | null; explored?: boolean; affinity?: string | null;
  attempts?: unknown; state_version?: number | null; excluded_by?: Record<string, number> | null;
};

const NONE: ReadonlyArray<readonly [string, number]> = [];

/** The fields the rollups count, read from a decision object of any shape (what is missing or not of its type is not counted). */
export function decisionFields(decision: unknown): DecisionFields {
  const d = (decision ?? {}) as Fields;
  const by = d.excluded_by;
  return {
    chosen: d.chosen ?? null,
    quality: typeof d.chosen_quality === 'number' ? d.chosen_quality : null,
    predicted: typeof d.chosen_cost_usd === 'number' ? d.chosen_cost_usd : null,
    explored: d.explored === true,
    affinity: d.affinity ?? null,
    attempts: Array.isArray(d.attempts) ? d.attempts.length : 0,
    version: typeof d.state_version === 'number' ? d.state_version : null,
    excludedBy: by && typeof by === 'object' ? Object.entries(by) : NONE,
  };
}

export type ModelCell = {
  t: string; keyId: string; chosen: string; n: number; errors: number; cost: string; predictedSum: number; predictedN: number;
  qualitySum: number; qualityN: number; fallbacks: number; explored: number; affinityKnown: number; affinityChosen: number;
};
export type VersionCell = { t: string; keyId: string; version: number; n: number; firstAt: string; lastAt: string };
export type ExclCell = { t: string; keyId: string; constraint: string; decisions: number; candidates: number };
export type KindCell = { grain: 'key' | 'total'; span: 'h' | 'd'; t: string; keyId: string; kind: string; chosen: string; n: number; errors: number; cost: string };
export type RouterCells = { models: ModelCell[]; versions: VersionCell[]; excl: ExclCell[]; kinds: KindCell[] };

const canonicalIso = (iso: string): string => (iso.length === 24 && iso[23] === 'Z' ? iso : new Date(iso).toISOString());

const byKey = <T>(m: Map<string, T>): T[] => [...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, v]) => v);

/** Rows of one hour, key, prompt kind and chosen model: their model cell, and what their kind cells add up. */
type Group = { t: string; day: string; keyId: string; kind: string; chosen: string; model: ModelCell; n: number; errors: number; cost: DecimalSum | null };

/**
 * The rollup cells a set of inserted decisions adds up to: one per cell, in key order (so concurrent
 * writers lock rows in one order). Each row is looked up once, in its group (hour, key, kind, chosen
 * model), which holds its model cell (whose float sums add up row by row, in row order); the four kind
 * cells and the model cells' counts and exact costs are then added up from the groups (exact: the same
 * whatever the order).
 */
export function routerCells(rows: readonly RollupSource[]): RouterCells {
  const groups = new Map<string, Group>();
  const models = new Map<string, ModelCell>();
  const versions = new Map<string, VersionCell>();
  const excl = new Map<string, ExclCell>();
  let lastHour = '';
  let day = '';
  for (const r of rows) {
    const t = hourIsoOf(r.createdAt);
    // The day is worked out when the hour changes, not per row (a chunk is mostly one hour).
    if (t !== lastHour) { lastHour = t; day = dayOf(t); }
    const keyId = r.keyId ?? '';
    const chosen = r.chosen ?? '';
    const gk = `${t}\u0000${keyId}\u0000${r.kind}\u0000${chosen}`;
    let g = groups.get(gk);
    if (!g) {
      const mk = `${t}\u0000${keyId}\u0000${chosen}`;
      let model = models.get(mk);
      if (!model) {
        model = { t, keyId, chosen, n: 0, errors: 0, cost: '0', predictedSum: 0, predictedN: 0, qualitySum: 0, qualityN: 0, fallbacks: 0, explored: 0, affinityKnown: 0, affinityChosen: 0 };
        models.set(mk, model);
      }
      g = { t, day, keyId, kind: r.kind, chosen, model, n: 0, errors: 0, cost: null };
      groups.set(gk, g);
    }
    g.n++;
    if (r.status >= 400) g.errors++;
    if (r.costUsd !== '0') (g.cost ??= new DecimalSum()).add(r.costUsd);
    const c = g.model;
    if (r.predicted !== null) { c.predictedSum += r.predicted; c.predictedN++; }
    if (r.quality !== null) { c.qualitySum += r.quality; c.qualityN++; }
    if (r.attempts > 1) c.fallbacks++;
    if (r.explored) c.explored++;
    if (r.affinity !== null) { c.affinityKnown++; if (r.affinity === r.chosen) c.affinityChosen++; }
    if (r.version !== null) {
      const version = Math.trunc(r.version);
      const at = canonicalIso(r.createdAt);
      const vk = `${t}\u0000${keyId}\u0000${version}`;
      const v = versions.get(vk);
      if (!v) versions.set(vk, { t, keyId, version, n: 1, firstAt: at, lastAt: at });
      else { v.n++; if (at < v.firstAt) v.firstAt = at; if (at > v.lastAt) v.lastAt = at; }
    }
    for (const [constraint, k] of r.excludedBy) {
      if (!(typeof k === 'number' && k > 0)) continue;
      const ek = `${t}\u0000${keyId}\u0000${constraint}`;
      const e = excl.get(ek);
      if (!e) excl.set(ek, { t, keyId, constraint, decisions: 1, candidates: k });
      else { e.decisions++; e.candidates += k; }
    }
  }
  // Costs are summed exactly but rendered once per cell.
  const kinds = new Map<string, KindCell>();
  const sums = new Map<ModelCell | KindCell, DecimalSum>();
  const addTo = (cell: ModelCell | KindCell, g: Group, cost: string | null): void => {
    cell.n += g.n;
    cell.errors += g.errors;
    if (cost === null) return;
    let s = sums.get(cell);
    if (!s) { s = new DecimalSum(); sums.set(cell, s); }
    s.add(cost);
  };
  const kindCell = (grain: KindCell['grain'], span: KindCell['span'], at: string, key: string, g: Group, cost: string | null): void => {
    const kk = `${grain}\u0000${span}\u0000${at}\u0000${key}\u0000${g.kind}\u0000${g.chosen}`;
    let k = kinds.get(kk);
    if (!k) { k = { grain, span, t: at, keyId: key, kind: g.kind, chosen: g.chosen, n: 0, errors: 0, cost: '0' }; kinds.set(kk, k); }
    addTo(k, g, cost);
  };
  for (const g of groups.values()) {
    const cost = g.cost === null ? null : g.cost.toString();
    addTo(g.model, g, cost);
    kindCell('key', 'h', g.t, g.keyId, g, cost);
    kindCell('key', 'd', g.day, g.keyId, g, cost);
    kindCell('total', 'h', g.t, '', g, cost);
    kindCell('total', 'd', g.day, '', g, cost);
  }
  for (const [cell, sum] of sums) cell.cost = sum.toString();
  return { models: byKey(models), versions: byKey(versions), excl: byKey(excl), kinds: byKey(kinds) };
}

/** Rows per upsert statement (PostgreSQL takes at most 65 535 parameters; at most 14 per row). */
const UPSERT_ROWS = 500;

async function upsert(q: SqlRunner, head: string, width: number, rows: readonly unknown[][], conflict: string): Promise<void> {
  const one = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  for (let i = 0; i < rows.length; i += UPSERT_ROWS) {
    const part = rows.slice(i, i + UPSERT_ROWS);
    await q.run(`${head} VALUES ${part.map(() => one).join(', ')} ${conflict}`, part.flat());
  }
}

/** Adds the cells to the stored rollups (run inside the transaction that inserted their decisions). */
export async function addRouterCells(q: SqlRunner, c: RouterCells): Promise<void> {
  const pg = q.dialect === 'postgres';
  const plus = (t: string, col: string): string => `${col} = ${t}.${col} + excluded.${col}`;
  if (c.models.length > 0) {
    const sums = ['n', 'errors', 'predicted_sum', 'predicted_n', 'quality_sum', 'quality_n', 'fallbacks', 'explored', 'affinity_known', 'affinity_chosen'];
    await upsert(q, 'INSERT INTO router_rollup (t, key_id, chosen, n, errors, cost, predicted_sum, predicted_n, quality_sum, quality_n, fallbacks, explored, affinity_known, affinity_chosen)', 14,
      c.models.map((m) => [m.t, m.keyId, m.chosen, m.n, m.errors, m.cost, m.predictedSum, m.predictedN, m.qualitySum, m.qualityN, m.fallbacks, m.explored, m.affinityKnown, m.affinityChosen]),
      `ON CONFLICT (t, key_id, chosen) DO UPDATE SET ${sums.map((s) => plus('router_rollup', s)).join(', ')},
        cost = ${pg ? 'router_rollup.cost + excluded.cost' : 'dec_add(router_rollup.cost, excluded.cost)'}`);
  }
  if (c.versions.length > 0) {
    await upsert(q, 'INSERT INTO router_rollup_version (t, key_id, state_version, n, first_at, last_at)', 6,
      c.versions.map((v) => [v.t, v.keyId, v.version, v.n, v.firstAt, v.lastAt]),
      `ON CONFLICT (t, key_id, state_version) DO UPDATE SET ${plus('router_rollup_version', 'n')},
        first_at = ${pg ? 'LEAST' : 'MIN'}(router_rollup_version.first_at, excluded.first_at),
        last_at = ${pg ? 'GREATEST' : 'MAX'}(router_rollup_version.last_at, excluded.last_at)`);
  }
  if (c.excl.length > 0) {
    await upsert(q, 'INSERT INTO router_rollup_excl (t, key_id, constraint_name, decisions, candidates)', 5,
      c.excl.map((e) => [e.t, e.keyId, e.constraint, e.decisions, e.candidates]),
      `ON CONFLICT (t, key_id, constraint_name) DO UPDATE SET ${plus('router_rollup_excl', 'decisions')}, ${plus('router_rollup_excl', 'candidates')}`);
  }
  if (c.kinds.length > 0) {
    await upsert(q, 'INSERT INTO router_rollup_kind (grain, span, t, key_id, kind, chosen, n, errors, cost)', 9,
      c.kinds.map((k) => [k.grain, k.span, k.t, k.keyId, k.kind, k.chosen, k.n, k.errors, k.cost]),
      `ON CONFLICT (grain, span, t, key_id, kind, chosen) DO UPDATE SET ${plus('router_rollup_kind', 'n')}, ${plus('router_rollup_kind', 'errors')},
        cost = ${pg ? 'router_rollup_kind.cost + excluded.cost' : 'dec_add(router_rollup_kind.cost, excluded.cost)'}`);
  }
}

/** The router's rollups, all pruned with the dashboard's hour rows (router_rollup_kind's day rows too: the Router page's history is one length). */
export const ROUTER_ROLLUP_TABLES = ['router_rollup', 'router_rollup_version', 'router_rollup_excl', 'router_rollup_kind'] as const;
/** The (grain, span) parts of those that have them, each pruned in its primary key's order. */
export const ROUTER_ROLLUP_PARTS: Readonly<Record<string, ReadonlyArray<readonly [string, string]>>> = {
  router_rollup_kind: [['key', 'h'], ['key', 'd'], ['total', 'h'], ['total', 'd']],
};
