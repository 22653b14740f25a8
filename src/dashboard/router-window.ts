// The recorded decisions of a time window as plain columns, for the router overview's aggregates: the
// fields each query needs read out of the stored decision JSON (src/router/explain.ts recordedDecision)
// in the database, in either dialect, so no decision crosses to JavaScript. Windows go by
// router_decisions.created_at (its index); members are limited to their keys by the decision's key_id.
import type { SqlRunner } from '../store/sql-runner.ts';
import { inList } from './access.ts';

/** A window [from, to) of decisions (ISO times, as stored) within the caller's keys (null: every key). */
export type DecisionWindow = { from: string; to: string; keys: readonly string[] | null };

/** `d`'s conditions for the window and the scope, with their parameters. */
export function windowWhere(w: DecisionWindow): { sql: string; params: unknown[] } {
  const out = ['d.created_at >= ?', 'd.created_at < ?'];
  const params: unknown[] = [w.from, w.to];
  if (w.keys) { const l = inList('d.key_id', w.keys); out.push(l.sql); params.push(...l.params); }
  return { sql: out.join(' AND '), params };
}

/**
 * A subquery of the window's decisions, one row each: id, at, chosen, quality (the chosen model's expected
 * quality), predicted (its expected cost in USD), explored (1/0), affinity, attempts (count), version
 * (the learned state), and with `excluded` also ex (the excluded_by object, for jsonEntries). Each
 * decision's text is parsed once per query: PostgreSQL reads the fields with one json_to_record (a
 * third of the cost of building a jsonb), SQLite's json_extract reuses its parse within a row.
 */
export function decisionColumns(sql: SqlRunner, w: DecisionWindow, excluded = false): { sql: string; params: unknown[] } {
  const where = windowWhere(w);
  if (sql.dialect === 'postgres') {
    return {
      sql: `SELECT d.inference_id AS id, d.created_at AS at, r.chosen AS chosen, r.chosen_quality AS quality, r.chosen_cost_usd AS predicted,
        CASE WHEN r.explored THEN 1 ELSE 0 END AS explored, r.affinity AS affinity,
        CASE WHEN json_typeof(r.attempts) = 'array' THEN json_array_length(r.attempts) ELSE 0 END AS attempts, r.state_version AS version
        ${excluded ? ", CASE WHEN json_typeof(r.excluded_by) = 'object' THEN r.excluded_by ELSE '{}'::json END AS ex" : ''}
      FROM router_decisions d CROSS JOIN LATERAL json_to_record(d.decision::json) AS r(chosen TEXT, chosen_quality DOUBLE PRECISION,
        chosen_cost_usd DOUBLE PRECISION, explored BOOLEAN, affinity TEXT, state_version DOUBLE PRECISION, attempts JSON, excluded_by JSON)
      WHERE ${where.sql}`,
      params: where.params,
    };
  }
  const get = (k: string): string => `json_extract(d.decision, '$.${k}')`;
  return {
    sql: `SELECT d.inference_id AS id, d.created_at AS at, ${get('chosen')} AS chosen, ${get('chosen_quality')} AS quality, ${get('chosen_cost_usd')} AS predicted,
      CASE WHEN ${get('explored')} = 1 THEN 1 ELSE 0 END AS explored, ${get('affinity')} AS affinity,
      COALESCE(json_array_length(d.decision, '$.attempts'), 0) AS attempts, ${get('state_version')} AS version
      ${excluded ? `, CASE WHEN json_type(d.decision, '$.excluded_by') = 'object' THEN ${get('excluded_by')} ELSE '{}' END AS ex` : ''}
    FROM router_decisions d WHERE ${where.sql}`,
    params: where.params,
  };
}

/** The chosen model of decision `d` (one field; for queries that read few decisions). */
export const chosenOf = (sql: SqlRunner): string =>
  (sql.dialect === 'postgres' ? "(d.decision::json->>'chosen')" : "json_extract(d.decision, '$.chosen')");

/**
 * `WITH b AS (...)` over decisionColumns. SQLite would inline the subquery and run a json_extract for
 * every reference to a column (a dozen per row in the overview's read); MATERIALIZED runs each once per
 * row. PostgreSQL's json_to_record already runs once per row, and materialising would only copy the rows.
 */
export const withDecisions = (sql: SqlRunner, b: { sql: string }): string =>
  `WITH b AS ${sql.dialect === 'postgres' ? '' : 'MATERIALIZED '}(${b.sql})`;

/**
 * `b`'s inference record (as `i`: id, status, cost_usd), one primary-key lookup per decision. On
 * PostgreSQL a LATERAL kept from being flattened (OFFSET 0): without statistics the planner otherwise
 * hash-joined a sequential scan of every inference record.
 */
export const recordOf = (sql: SqlRunner): string => (sql.dialect === 'postgres'
  ? 'LEFT JOIN LATERAL (SELECT r.id, r.status, r.cost_usd FROM inferences r WHERE r.id = b.id OFFSET 0) i ON true'
  : 'LEFT JOIN inferences i ON i.id = b.id');

/** FROM-clause items joining each row of `b` to the entries (key, value) of its `ex` object. */
export const jsonEntries = (sql: SqlRunner): string =>
  (sql.dialect === 'postgres' ? 'b CROSS JOIN LATERAL json_each_text(b.ex) e' : 'b, json_each(b.ex) e');

/** The float type for CAST in this dialect. */
export const floatType = (sql: SqlRunner): string => (sql.dialect === 'postgres' ? 'DOUBLE PRECISION' : 'REAL');

/** The exact sum of a money column as text (SQLite: the dec_sum aggregate). */
export const moneySum = (sql: SqlRunner, col: string): string => (sql.dialect === 'postgres' ? `COALESCE(SUM(${col}), 0)::text` : `dec_sum(${col})`);
