// SQL shared by both stores for the aggregate queries (usage and feedback stats); only the group
// expressions, the float type and the exact money sum differ per dialect.
import type { Dialect } from './migrations.ts';
import { decimal, isMetricType, num, numOrNull, str, type Row } from './rows.ts';
import type { FeedbackStatsRow, UsageQuery, UsageRow } from './types.ts';

/** Usage groups: the served model (else the requested one, so failed requests still show), the key, or the UTC day. */
export function usageGroupExpr(groupBy: UsageQuery['groupBy'], d: Dialect): string {
  switch (groupBy) {
    case 'model': return 'COALESCE(served_model, requested_model)';
    case 'key': return "COALESCE(key_id, '')";
    case 'day': return d === 'postgres' ? "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')" : 'substr(created_at, 1, 10)';
  }
}

/** Requests with a final status of 400 or more count as errors. */
export const USAGE_SELECT = (group: string, costSum: string): string => `SELECT ${group} AS grp,
  COUNT(*) AS requests,
  SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END) AS errors,
  SUM(input_tokens) AS input_tokens,
  SUM(output_tokens) AS output_tokens,
  SUM(cache_read_tokens) AS cache_read_tokens,
  SUM(cache_write_tokens) AS cache_write_tokens,
  ${costSum} AS cost_usd
FROM inferences`;

/** Booleans count as 1/0 in the mean; comments have neither mean nor rate. */
export const FEEDBACK_STATS_SELECT = (floatType: string): string => `SELECT i.served_model AS model, f.metric AS metric, f.type AS type,
  COUNT(*) AS count,
  AVG(CASE WHEN f.type = 'float' THEN CAST(f.value AS ${floatType})
           WHEN f.type = 'boolean' THEN (CASE WHEN f.value = 'true' THEN CAST(1 AS ${floatType}) ELSE CAST(0 AS ${floatType}) END)
      END) AS mean,
  AVG(CASE WHEN f.type = 'boolean' THEN (CASE WHEN f.value = 'true' THEN CAST(1 AS ${floatType}) ELSE CAST(0 AS ${floatType}) END) END) AS rate
FROM feedback f JOIN inferences i ON i.id = f.inference_id`;

/** Sorted in JS by code point so both backends agree regardless of the database collation. */
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function usageRows(rows: Row[]): UsageRow[] {
  return rows.map((r): UsageRow => ({
    group: str(r.grp), requests: num(r.requests), errors: num(r.errors), inputTokens: num(r.input_tokens),
    outputTokens: num(r.output_tokens), cacheReadTokens: num(r.cache_read_tokens), cacheWriteTokens: num(r.cache_write_tokens),
    costUsd: decimal(r.cost_usd),
  })).sort((a, b) => byCodePoint(a.group, b.group));
}

export function statsRows(rows: Row[]): FeedbackStatsRow[] {
  return rows.map((r): FeedbackStatsRow => {
    const t = str(r.type);
    if (!isMetricType(t)) throw new Error(`unknown metric type ${t}`);
    return { model: str(r.model), metric: str(r.metric), type: t, count: num(r.count), mean: numOrNull(r.mean), rate: numOrNull(r.rate) };
  }).sort((a, b) => byCodePoint(a.model, b.model) || byCodePoint(a.metric, b.metric) || byCodePoint(a.type, b.type));
}
