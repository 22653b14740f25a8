// Metric definitions per scope (the API key that sent the feedback; '' on a gateway without keys): a
// metric's type and, for booleans and floats, its optimize direction are fixed by its first value in
// that scope. Queries are written once against store.sql; `claimMetricTypes` writes, so the gateway runs
// it on the store's write thread (src/workers/store-writer.ts), never on the event loop.
import type { SqlRunner } from '../store/sql-runner.ts';
import type { MetricType } from '../store/types.ts';
import type { Optimize } from './flatten.ts';

/** What a metric is in its scope; `optimize` is null for comments (a direction means nothing there). */
export type MetricDef = { type: MetricType; optimize: Optimize | null };
export type MetricClaim = { metric: string } & MetricDef;

/** Names per query: far below SQLite's bound-parameter limit, and one round trip for any real event. */
const CHUNK = 500;

const isType = (s: unknown): s is MetricType => s === 'boolean' || s === 'float' || s === 'comment';
const asOptimize = (s: unknown): Optimize | null => (s === 'max' || s === 'min' ? s : null);

/** The definitions of `names` in `scope` that exist (a read: fine on the main connection). */
export async function loadMetricDefs(sql: SqlRunner, scope: string, names: readonly string[]): Promise<Map<string, MetricDef>> {
  const out = new Map<string, MetricDef>();
  for (let i = 0; i < names.length; i += CHUNK) {
    const part = names.slice(i, i + CHUNK);
    const rows = await sql.all(`SELECT name, type, optimize FROM metric_types WHERE scope = ? AND name IN (${part.map(() => '?').join(', ')})`, [scope, ...part]);
    for (const r of rows) if (isType(r.type)) out.set(String(r.name), { type: r.type, optimize: asOptimize(r.optimize) });
  }
  return out;
}

/**
 * Fixes the definitions of new metrics (first writer wins, atomic in the database: concurrent first
 * uses on several replicas agree on one) and returns the definition each metric has now.
 */
export async function claimMetricDefs(sql: SqlRunner, scope: string, wanted: readonly MetricClaim[], now = new Date().toISOString()): Promise<Map<string, MetricDef>> {
  if (wanted.length === 0) return new Map();
  return sql.tx(async (q) => {
    for (const w of wanted) {
      await q.run('INSERT INTO metric_types (scope, name, type, optimize, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, name) DO NOTHING',
        [scope, w.metric, w.type, w.type === 'comment' ? null : w.optimize, now]);
    }
    return loadMetricDefs(q, scope, wanted.map((w) => w.metric));
  });
}
