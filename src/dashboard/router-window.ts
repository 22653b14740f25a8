// The recorded decisions of a time window, for the router overview's feedback per chosen model (the
// overview's other figures come from the router rollups, src/store/router-rollup.ts). Windows go by
// router_decisions.created_at (its index); members are limited to their keys by the decision's key_id.
import type { SqlRunner } from '../store/sql-runner.ts';
import { inList } from './access.ts';

/** A window [from, to) of decisions (ISO times, as stored) within the caller's keys (null: every key). */
export type DecisionWindow = { from: string; to: string; keys: readonly string[] | null };

/**
 * The conditions for the window and the scope on a table's time and key columns (the decisions `d` by
 * default; the router rollups' `r.t` and `r.key_id`), with their parameters.
 */
export function windowWhere(w: DecisionWindow, time = 'd.created_at', key = 'd.key_id'): { sql: string; params: unknown[] } {
  const out = [`${time} >= ?`, `${time} < ?`];
  const params: unknown[] = [w.from, w.to];
  if (w.keys) { const l = inList(key, w.keys); out.push(l.sql); params.push(...l.params); }
  return { sql: out.join(' AND '), params };
}

/** The caller's keys as a condition on a router rollup's r.key_id, for reads whose segments bound the window (rollup-query's readRouterRollup). */
export function keysWhere(w: DecisionWindow): { where?: string; whereParams?: readonly unknown[] } {
  if (!w.keys) return {};
  const l = inList('r.key_id', w.keys);
  return { where: l.sql, whereParams: l.params };
}

/**
 * The chosen model of decision `d` (one field; for queries that read few decisions). PostgreSQL reads
 * only the field's JSON string, not the whole decision: its json operators refuse a \u0000 escape or a
 * lone surrogate anywhere in the text, which decisions stored before the writer cleaned their attempts'
 * upstream errors can hold (src/router/decision-row.ts), and one such decision failed the whole read.
 * The key comes before any client or upstream text in the decision, so its first match is the field.
 */
export const chosenOf = (sql: SqlRunner): string =>
  (sql.dialect === 'postgres' ? `(substring(d.decision FROM '"chosen":("([^"\\\\]|\\\\.)*")')::json #>> '{}')` : "json_extract(d.decision, '$.chosen')");

/** The float type for CAST in this dialect. */
export const floatType = (sql: SqlRunner): string => (sql.dialect === 'postgres' ? 'DOUBLE PRECISION' : 'REAL');

/** The exact sum of a rollup's decimal `cost` column (alias r) as text, in either dialect. */
export const costSum = (sql: SqlRunner): string => (sql.dialect === 'postgres' ? 'COALESCE(SUM(r.cost), 0)::text' : 'dec_sum(r.cost)');
/** n as a share of `of`, null when there is nothing to share. */
export const share = (n: number, of: number): number | null => (of > 0 ? n / of : null);
/** Code-point order: the same on both stores' strings and in every locale. */
export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
