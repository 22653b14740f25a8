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
 * (the learned state), and with `excluded` also ex (the excluded_by object, for jsonEntries).
 * PostgreSQL parses each decision once (a LATERAL that OFFSET 0 keeps from being inlined into every
 * reference); SQLite's json_extract caches the parsed text within a statement.
 */
export function decisionColumns(sql: SqlRunner, w: DecisionWindow, excluded = false): { sql: string; params: unknown[] } {
  const where = windowWhere(w);
  if (sql.dialect === 'postgres') {
    const num = (k: string): string => `CAST(x.j->>'${k}' AS DOUBLE PRECISION)`;
    return {
      sql: `SELECT d.inference_id AS id, d.created_at AS at, x.j->>'chosen' AS chosen, ${num('chosen_quality')} AS quality, ${num('chosen_cost_usd')} AS predicted,
        CASE WHEN x.j->>'explored' = 'true' THEN 1 ELSE 0 END AS explored, x.j->>'affinity' AS affinity,
        CASE WHEN jsonb_typeof(x.j->'attempts') = 'array' THEN jsonb_array_length(x.j->'attempts') ELSE 0 END AS attempts, ${num('state_version')} AS version
        ${excluded ? ", CASE WHEN jsonb_typeof(x.j->'excluded_by') = 'object' THEN x.j->'excluded_by' ELSE '{}'::jsonb END AS ex" : ''}
      FROM router_decisions d CROSS JOIN LATERAL (SELECT d.decision::jsonb AS j OFFSET 0) x WHERE ${where.sql}`,
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

/** FROM-clause items joining each row of `b` to the entries (key, value) of its `ex` object. */
export const jsonEntries = (sql: SqlRunner): string =>
  (sql.dialect === 'postgres' ? 'b CROSS JOIN LATERAL jsonb_each_text(b.ex) e' : 'b, json_each(b.ex) e');

/** The float type for CAST in this dialect. */
export const floatType = (sql: SqlRunner): string => (sql.dialect === 'postgres' ? 'DOUBLE PRECISION' : 'REAL');

/** The exact sum of a money column as text (SQLite: the dec_sum aggregate). */
export const moneySum = (sql: SqlRunner, col: string): string => (sql.dialect === 'postgres' ? `COALESCE(SUM(${col}), 0)::text` : `dec_sum(${col})`);
