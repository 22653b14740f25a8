// The usage report from the rollups: totals and a time series in the user's zone and buckets, and the
// top groups (key, model, provider, route or user) with the rest summed as "other"; three bounded reads
// (src/dashboard/rollup-query.ts) whatever the number of records. Also a streamed export of every group per bucket.
import { compareDecimal } from '../catalog/decimal.ts';
import { USAGE_SUM_COLUMNS } from '../store/dashboard-schema.ts';
import { foldBeforeRead } from '../store/rollup-fold.ts';
import { str, type Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { scopedKeys, type Access } from './access.ts';
import { addSums, bucketStarts, emptySums, metricsOf, sumsFromRow, type Sums } from './rollup-math.ts';
import { grainFor, readRollup, segments, sumsOf, type Dim, type DimFilter, type Segment } from './rollup-query.ts';
import type { Bucket, UsageGroup, UsageMetrics, UsageReport, UsageSeries } from './ui/api-types.ts';

export type UsageFilter = { keys?: string[]; models?: string[]; providers?: string[]; routes?: string[]; users?: string[] };
export type UsageQuery = { from: number; to: number; bucket: Bucket; tz: string; group: UsageGroup; top: number; filter: UsageFilter };

/** Resolves what the rollup does not hold: key owners (for user filters and grouping) and display labels. */
export type UsageContext = { owners: Map<string, string>; label: (group: UsageGroup, value: string) => string };

const GROUP_DIM: Record<Exclude<UsageGroup, 'none'>, Dim> = { key: 'key_id', model: 'model', provider: 'provider', route: 'route', user: 'key_id' };

/** Counts, tokens and cost without the histograms: the per-group series chart cost and requests only. */
const LIGHT_COLUMNS = ['requests', 'errors', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens'];

/** The report's dimension filters with users resolved to their keys and the caller's scope applied. */
export function dimFilter(f: UsageFilter, access: Access, owners: Map<string, string>): DimFilter {
  return { keys: scopedKeys(f, access, owners), models: f.models, providers: f.providers, routes: f.routes };
}

/** Maps an SQL group value to the report's group (user grouping folds keys into their owner; '' = none). */
const folder = (group: UsageGroup, ctx: UsageContext) => (v: string): string => (group === 'user' ? ctx.owners.get(v) ?? '' : v);

const byCostThenRequests = (a: [string, Sums], b: [string, Sums]): number =>
  compareDecimal(b[1].cost, a[1].cost) || b[1].requests - a[1].requests || (a[0] < b[0] ? -1 : 1);

/** Per bucket (and group) sums of `columns` over the segments. */
async function perBucket(sql: SqlRunner, segs: readonly Segment[], filter: DimFilter, dim: Dim | null, columns: readonly string[], groups?: readonly string[]): Promise<Row[]> {
  const inGroups = dim && groups ? { where: `r.${dim} IN (${groups.map(() => '?').join(', ')})`, whereParams: groups } : {};
  return readRollup(sql, {
    table: 'usage_rollup', grain: grainFor(dim, filter), segs, filter, ...inGroups,
    select: `${dim ? `r.${dim} AS g, ` : ''}${sumsOf(sql, columns)}`, groupBy: dim ? [`r.${dim}`] : [],
  });
}

export async function usageReport(sql: SqlRunner, q: UsageQuery, access: Access, ctx: UsageContext): Promise<UsageReport> {
  const starts = bucketStarts(q.bucket, q.tz, q.from, q.to);
  if (starts === null) throw new RangeError('too many buckets');
  await foldBeforeRead(sql);
  const filter = dimFilter(q.filter, access, ctx.owners);
  const fold = folder(q.group, ctx);
  const series = (): Sums[] => starts.map(() => emptySums());
  const bucketSegs = segments(q.from, q.to, starts);

  const dim = q.group === 'none' ? null : GROUP_DIM[q.group];
  // The total series and the group totals are independent: on PostgreSQL they run at once on two connections.
  const [totalRows, groupRows] = await Promise.all([
    perBucket(sql, bucketSegs, filter, null, USAGE_SUM_COLUMNS),
    dim ? perBucket(sql, segments(q.from, q.to), filter, dim, USAGE_SUM_COLUMNS) : Promise.resolve([]),
  ]);
  const total = series();
  for (const r of totalRows) addSums(total[Number(r.b)]!, sumsFromRow(r));
  const totals = total.reduce((a, s) => addSums(a, s), emptySums());
  const report: UsageReport = {
    from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), bucket: q.bucket, tz: q.tz, group: q.group,
    buckets: starts.map((t) => new Date(t).toISOString()), totals: metricsOf(totals), total_series: total.map(metricsOf), groups: [], other: null,
  };
  if (dim === null) return report;

  // Group totals over the whole range: its days from day rows whatever the buckets.
  const byGroup = new Map<string, Sums>();
  for (const r of groupRows) {
    const g = fold(str(r.g));
    byGroup.set(g, addSums(byGroup.get(g) ?? emptySums(), sumsFromRow(r)));
  }
  const ranked = [...byGroup].sort(byCostThenRequests);
  const top = ranked.slice(0, q.top);
  const perGroup = new Map<string, Sums[]>(top.map(([g]) => [g, series()]));
  if (top.length > 0) {
    // User grouping folds keys into owners ("no owner" is every key no one owns): read every key and fold.
    const only = q.group === 'user' ? undefined : top.map(([g]) => g);
    for (const r of await perBucket(sql, bucketSegs, filter, dim, LIGHT_COLUMNS, only)) {
      const s = perGroup.get(fold(str(r.g)));
      if (s) addSums(s[Number(r.b)]!, sumsFromRow(r));
    }
  }
  const mk = (g: string, t: Sums, pts: Sums[]): UsageSeries => ({ group: g, label: ctx.label(q.group, g), totals: metricsOf(t), points: pts.map(metricsOf) });
  report.groups = top.map(([g, t]) => mk(g, t, perGroup.get(g)!));
  if (ranked.length > top.length) {
    const rest = total.map((s, i) => { const o = addSums(emptySums(), s); for (const p of perGroup.values()) addSums(o, p[i]!, -1); return o; });
    const restTotal = ranked.slice(top.length).reduce((a, [, s]) => addSums(a, s), emptySums());
    report.other = { group: '(other)', label: `${ranked.length - top.length} more`, totals: metricsOf(restTotal), points: rest.map(metricsOf) };
  }
  return report;
}

export type ExportRow = { bucket: string; group: string; label: string } & UsageMetrics;

/**
 * Every (bucket, group) of the view, oldest first, produced a few buckets at a time so an export of any
 * range holds one slice in memory, never the whole result.
 */
export async function* usageExport(sql: SqlRunner, q: UsageQuery, access: Access, ctx: UsageContext): AsyncGenerator<ExportRow> {
  const starts = bucketStarts(q.bucket, q.tz, q.from, q.to, 1_000_000);
  if (starts === null) return;
  await foldBeforeRead(sql);
  const filter = dimFilter(q.filter, access, ctx.owners);
  const fold = folder(q.group, ctx);
  const dim = q.group === 'none' ? null : GROUP_DIM[q.group];
  const SLICE = q.bucket === 'hour' ? 168 : q.bucket === 'day' ? 31 : 8;
  for (let i = 0; i < starts.length; i += SLICE) {
    const sliceStarts = starts.slice(i, i + SLICE);
    const segs = segments(Math.max(q.from, sliceStarts[0]!), starts[i + SLICE] ?? q.to, sliceStarts);
    const cells = new Map<string, Sums>();
    for (const r of await perBucket(sql, segs, filter, dim, USAGE_SUM_COLUMNS)) {
      const k = `${Number(r.b)}\u0000${dim ? fold(str(r.g)) : ''}`;
      cells.set(k, addSums(cells.get(k) ?? emptySums(), sumsFromRow(r)));
    }
    const keys = [...cells.keys()].sort((a, b) => { const [ba, ga] = a.split('\u0000'); const [bb, gb] = b.split('\u0000'); return Number(ba) - Number(bb) || (ga! < gb! ? -1 : ga! > gb! ? 1 : 0); });
    for (const k of keys) {
      const [b, g] = k.split('\u0000') as [string, string];
      yield { bucket: new Date(sliceStarts[Number(b)]!).toISOString(), group: g, label: q.group === 'none' ? '' : ctx.label(q.group, g), ...metricsOf(cells.get(k)!) };
    }
  }
}
