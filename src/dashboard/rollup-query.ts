// How every dashboard report reads the rollups: a time range (and its buckets in the viewer's zone) is
// cut into segments, whole UTC days read from the day rows and the hours around them from the hour rows,
// and the grain is the narrowest that holds the report's dimensions (a report by model with no filter
// reads one row per model and day, not every key x model x provider x route cell). One query per report
// part: a VALUES list of segments joined to the rollup's primary key, so each segment is one index range.
// Hours older than the oldest hour row kept (dashboard.retention.hour_rollups_days) come from day rows.
import type { Grain } from '../store/rollup-cells.ts';
import { joinMoney } from '../store/rollup-cells.ts';
import { dayRowsBefore, readsFromDayRows } from '../store/rollup-retention.ts';
import type { Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { inList } from './access.ts';

export const HOUR = 3_600_000;
const DAY = 86_400_000;
export const floorTo = (ms: number, unit: number): number => Math.floor(ms / unit) * unit;
export const ceilTo = (ms: number, unit: number): number => Math.ceil(ms / unit) * unit;

/** Rows of one span in [lo, hi) that count in bucket b. */
export type Segment = { span: 'h' | 'd'; lo: number; hi: number; b: number };

/**
 * Segments covering [from, to) rounded out to whole hours. With bucket `starts`, bucket i holds the
 * hours from the hour its start falls in (rounded up) to the next bucket's: zones whose offset is not a
 * whole number of hours see their buckets start on the hour. Within a bucket, the whole UTC days are one
 * day segment and the hours before and after it are hour segments.
 */
export function segments(from: number, to: number, starts?: readonly number[]): Segment[] {
  const lo = floorTo(from, HOUR);
  const hi = ceilTo(to, HOUR);
  const bounds = starts && starts.length > 0 ? starts.map((s, i) => (i === 0 ? lo : ceilTo(s, HOUR))) : [lo];
  const out: Segment[] = [];
  for (let b = 0; b < bounds.length; b++) {
    const a = Math.max(bounds[b]!, lo);
    const z = Math.min(bounds[b + 1] ?? hi, hi);
    if (a >= z) continue;
    const d0 = ceilTo(a, DAY);
    const d1 = floorTo(z, DAY);
    if (d0 >= d1) { out.push({ span: 'h', lo: a, hi: z, b }); continue; }
    if (a < d0) out.push({ span: 'h', lo: a, hi: d0, b });
    out.push({ span: 'd', lo: d0, hi: d1, b });
    if (d1 < z) out.push({ span: 'h', lo: d1, hi: z, b });
  }
  return out;
}

/** Dimension filters of a report; `keys` already holds the caller's scope and the user filter resolved to keys. */
export type DimFilter = { keys?: readonly string[] | null; models?: readonly string[]; providers?: readonly string[]; routes?: readonly string[] };
export type Dim = 'key_id' | 'model' | 'provider' | 'route';
const GRAIN_OF: Record<Dim, Grain> = { key_id: 'key', model: 'model', provider: 'provider', route: 'route' };

const filtered = (f: DimFilter): Dim[] => [
  ...(f.keys ? ['key_id' as const] : []), ...(f.models?.length ? ['model' as const] : []),
  ...(f.providers?.length ? ['provider' as const] : []), ...(f.routes?.length ? ['route' as const] : []),
];

/** The narrowest grain holding the grouping dimension and every filtered one. */
export function grainFor(group: Dim | null, f: DimFilter): Grain {
  const dims = new Set<Dim>(filtered(f));
  if (group) dims.add(group);
  if (dims.size === 0) return 'total';
  if (dims.size === 1) return GRAIN_OF[[...dims][0]!];
  return 'cell';
}

function filterSql(f: DimFilter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (col: string, v: readonly string[] | null | undefined): void => {
    if (v === undefined || v === null || (col !== 'r.key_id' && v.length === 0)) return;
    const l = inList(col, v);
    parts.push(l.sql); params.push(...l.params);
  };
  add('r.key_id', f.keys); add('r.model', f.models); add('r.provider', f.providers); add('r.route', f.routes);
  return { sql: parts.map((p) => ` AND ${p}`).join(''), params };
}

/** Sum expressions (aliased as the column) plus the exact money parts, over rollup alias r. */
export function sumsOf(sql: SqlRunner, columns: readonly string[]): string {
  const money = sql.dialect === 'postgres'
    ? 'SUM(r.cost_hi)::text AS cost_hi, SUM(r.cost_lo)::text AS cost_lo, SUM(r.cost_rest)::text AS cost_rest'
    : 'CAST(SUM(r.cost_hi) AS TEXT) AS cost_hi, CAST(SUM(r.cost_lo) AS TEXT) AS cost_lo, dec_sum(r.cost_rest) FILTER (WHERE r.cost_rest IS NOT NULL) AS cost_rest';
  return [...columns.map((c) => `SUM(r.${c}) AS ${c}`), money].join(', ');
}

/** The exact cost of a row selected with sumsOf. */
export const costOf = (r: Row): string => joinMoney(r.cost_hi, r.cost_lo, r.cost_rest);

/** The segments as a VALUES list the rollup joins on (typed for PostgreSQL; ISO text compares as time in SQLite). */
function segmentValues(sql: SqlRunner, segs: readonly Segment[]): { sql: string; params: unknown[] } {
  const one = sql.dialect === 'postgres' ? '(CAST(? AS TEXT), CAST(? AS TIMESTAMPTZ), CAST(? AS TIMESTAMPTZ), CAST(? AS INTEGER))' : '(?, ?, ?, ?)';
  const params: unknown[] = [];
  for (const s of segs) params.push(s.span, new Date(s.lo).toISOString(), new Date(s.hi).toISOString(), s.b);
  return { sql: `WITH seg(sp, lo, hi, b) AS (VALUES ${segs.map(() => one).join(', ')})`, params };
}

export type RollupRead = {
  table: 'usage_rollup' | 'feedback_rollup'; grain: Grain; segs: readonly Segment[]; filter: DimFilter;
  /** Selected expressions (over alias r); `b` (the segment's bucket) is always selected. */
  select: string;
  /** Grouping expressions besides the bucket, each selected under its own name by the caller. */
  groupBy?: readonly string[];
  /** Extra conditions (over alias r) and their parameters. */
  where?: string; whereParams?: readonly unknown[];
  /** Group over the whole range instead of per bucket. */
  noBucket?: boolean;
};

/**
 * Per-bucket rows of a router rollup (src/store/router-rollup.ts; no grains): the same segment join as
 * readRollup. Without `spans` the table has hour rows only and every segment, day segments included, is a
 * range of its hour rows; with `spans` it has a span column and day segments read its day rows. `select`,
 * `where` and `groupBy` are over alias r; `b` (the segment's bucket) is always selected.
 */
export async function readRouterRollup(sql: SqlRunner, q: {
  table: string; segs: readonly Segment[]; select: string; spans?: boolean; where?: string; whereParams?: readonly unknown[]; groupBy?: readonly string[];
}): Promise<Row[]> {
  if (q.segs.length === 0) return [];
  const v = segmentValues(sql, q.segs);
  return sql.all(`${v.sql} SELECT seg.b AS b, ${q.select}
    FROM seg JOIN ${q.table} r ON ${q.spans ? 'r.span = seg.sp AND ' : ''}r.t >= seg.lo AND r.t < seg.hi${q.where ? ` WHERE ${q.where}` : ''}
    GROUP BY ${['seg.b', ...(q.groupBy ?? [])].join(', ')}`, [...v.params, ...(q.whereParams ?? [])]);
}

/** Rows of a rollup read: one per bucket (and group), summed in the database. */
export async function readRollup(sql: SqlRunner, q: RollupRead): Promise<Row[]> {
  if (q.segs.length === 0) return [];
  // Hours past the rollups' hour retention are read from day rows (src/store/rollup-retention.ts).
  const segs = q.segs.some((s) => s.span === 'h') ? readsFromDayRows(q.segs, await dayRowsBefore(sql, q.table, q.grain)) : q.segs;
  if (segs.length === 0) return [];
  const v = segmentValues(sql, segs);
  const f = filterSql(q.filter);
  const groups = [...(q.noBucket ? [] : ['seg.b']), ...(q.groupBy ?? [])];
  const text = `${v.sql} SELECT ${q.noBucket ? '0' : 'seg.b'} AS b, ${q.select}
    FROM seg JOIN ${q.table} r ON r.span = seg.sp AND r.grain = ? AND r.t >= seg.lo AND r.t < seg.hi
    WHERE 1 = 1${f.sql}${q.where ? ` AND ${q.where}` : ''}${groups.length ? ` GROUP BY ${groups.join(', ')}` : ''}`;
  return sql.all(text, [...v.params, q.grain, ...f.params, ...(q.whereParams ?? [])]);
}
