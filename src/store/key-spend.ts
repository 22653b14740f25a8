// A key's spend in [since, until) as the store holds it, for the limiters' seeds and re-seeds. The raw
// records are exact while they are all kept, but dashboard.retention.records_days deletes the oldest
// (every key's, by id: time order) and the per-key rollups keep their cost by the hour and day: before
// 2026-11-29 a month or total budget read the records alone, so a restart (the in-process limiter) or a
// Redis counter lost forgot every cost retention had deleted and the key could spend its budget again.
// Now, once the rollups begin before the oldest record kept, the hours before it are read from the
// rollups, the hour it falls in from whichever holds more (records not folded into the rollups yet, or
// rollups whose records are gone), and the rest from the records.
import { costOf, HOUR, floorTo, readRollup, segments, sumsOf } from '../dashboard/rollup-query.ts';
import { addDecimal, compareDecimal } from '../catalog/decimal.ts';
import { decimal, iso } from './rows.ts';
import type { SqlRunner } from './sql-runner.ts';

const DAY = 86_400_000;
const SUM = { postgres: 'COALESCE(SUM(cost_usd), 0)::text', sqlite: 'dec_sum(cost_usd)' };

/** The raw records' cost of `keyId` in [since, until) (ISO times; until absent: up to now and on). */
async function recordsSpend(sql: SqlRunner, keyId: string, since: string, until?: string): Promise<string> {
  const rows = await sql.all(`SELECT ${SUM[sql.dialect]} AS s FROM inferences WHERE key_id = ? AND created_at >= ?${until ? ' AND created_at < ?' : ''}`, until ? [keyId, since, until] : [keyId, since]);
  return decimal(rows[0]?.s);
}

/** The per-key rollups' cost of `keyId` in [lo, hi) (whole hours). */
async function rollupSpend(sql: SqlRunner, keyId: string, lo: number, hi: number): Promise<string> {
  if (lo >= hi) return '0';
  const rows = await readRollup(sql, { table: 'usage_rollup', grain: 'key', segs: segments(lo, hi), filter: { keys: [keyId] }, noBucket: true, select: sumsOf(sql, []) });
  return rows[0] ? costOf(rows[0]) : '0';
}

const firstRollup = (span: 'h' | 'd'): string => `(SELECT MIN(t) FROM usage_rollup WHERE span = '${span}' AND grain = 'total')`;
const timeOf = (v: unknown): number | null => (v == null ? null : Date.parse(iso(v)));

/**
 * `keyId`'s spend in [since, until) as an exact decimal (ISO times; until absent: up to now). One read
 * (the records' sum, the oldest record kept and where the rollups begin) unless rollups begin before
 * the oldest record's hour (or day): retention deleted records (every key's, by age), and the hours
 * before the oldest record kept are read from the rollups.
 */
export async function storedSpend(sql: SqlRunner, keyId: string, since: string, until?: string): Promise<string> {
  const rows = await sql.all(`SELECT (SELECT MIN(created_at) FROM inferences) AS oldest, ${firstRollup('h')} AS first_h, ${firstRollup('d')} AS first_d,
    ${SUM[sql.dialect]} AS s FROM inferences WHERE key_id = ? AND created_at >= ?${until ? ' AND created_at < ?' : ''}`, until ? [keyId, since, until] : [keyId, since]);
  const r = rows[0];
  const from = Date.parse(since);
  const oldest = timeOf(r?.oldest);
  const h = oldest === null ? null : floorTo(oldest, HOUR);
  const firstH = timeOf(r?.first_h), firstD = timeOf(r?.first_d);
  const deleted = h !== null && ((firstH !== null && firstH < h) || (firstD !== null && firstD < floorTo(h, DAY)));
  if (h === null || h <= from || !deleted) return decimal(r?.s);
  const to = until === undefined ? Infinity : Date.parse(until);
  let total = await rollupSpend(sql, keyId, floorTo(from, HOUR), Math.min(h, floorTo(to, HOUR)));
  if (to > h) {
    const end = Math.min(h + HOUR, to);
    const hourEnd = new Date(end).toISOString();
    const [inRecords, inRollup] = await Promise.all([recordsSpend(sql, keyId, new Date(h).toISOString(), hourEnd), rollupSpend(sql, keyId, h, h + HOUR)]);
    total = addDecimal(total, end === h + HOUR && compareDecimal(inRollup, inRecords) > 0 ? inRollup : inRecords);
    if (to > end) total = addDecimal(total, await recordsSpend(sql, keyId, hourEnd, until));
  }
  return total;
}
