// Pure arithmetic over rollup rows: summing rows, percentiles from the latency histograms, confidence
// intervals, and the user's time-zone buckets over UTC hours. No I/O, so it is unit tested directly.
import { addDecimal, formatDecimal, subDecimal } from '../catalog/decimal.ts';
import { HISTOGRAM_BUCKETS, LATENCY_BOUNDS_MS } from '../store/dashboard-schema.ts';
import { joinMoney } from '../store/rollup-cells.ts';
import type { Row } from '../store/rows.ts';
import type { Bucket, Percentiles, UsageMetrics } from './ui/api-types.ts';

/** Summed rollup columns of one group and time bucket. */
export type Sums = {
  requests: number; errors: number; input: number; output: number; cacheRead: number; cacheWrite: number; reasoning: number;
  latencySum: number; ttftCount: number; ttftSum: number; lat: number[]; ttft: number[]; cost: string;
};

export const emptySums = (): Sums => ({
  requests: 0, errors: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, latencySum: 0, ttftCount: 0, ttftSum: 0,
  lat: new Array<number>(HISTOGRAM_BUCKETS).fill(0), ttft: new Array<number>(HISTOGRAM_BUCKETS).fill(0), cost: '0',
});

/** A SUM() result row (columns named as in usage_rollup) as Sums. */
export function sumsFromRow(r: Row): Sums {
  const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
  const s = emptySums();
  s.requests = n(r.requests); s.errors = n(r.errors); s.input = n(r.input_tokens); s.output = n(r.output_tokens);
  s.cacheRead = n(r.cache_read_tokens); s.cacheWrite = n(r.cache_write_tokens); s.reasoning = n(r.reasoning_tokens);
  s.latencySum = n(r.latency_ms_sum); s.ttftCount = n(r.ttft_count); s.ttftSum = n(r.ttft_ms_sum);
  for (let i = 0; i < HISTOGRAM_BUCKETS; i++) { s.lat[i] = n(r[`lat_h${i}`]); s.ttft[i] = n(r[`ttft_h${i}`]); }
  // The exact money parts of the rollups (src/store/rollup-cells.ts), summed as integers by the database.
  s.cost = 'cost_hi' in r ? joinMoney(r.cost_hi, r.cost_lo, r.cost_rest) : formatDecimal(r.cost_usd === null || r.cost_usd === undefined ? '0' : String(r.cost_usd));
  return s;
}

/** a += b (sign -1: a -= b), in place. */
export function addSums(a: Sums, b: Sums, sign: 1 | -1 = 1): Sums {
  a.requests += sign * b.requests; a.errors += sign * b.errors; a.input += sign * b.input; a.output += sign * b.output;
  a.cacheRead += sign * b.cacheRead; a.cacheWrite += sign * b.cacheWrite; a.reasoning += sign * b.reasoning;
  a.latencySum += sign * b.latencySum; a.ttftCount += sign * b.ttftCount; a.ttftSum += sign * b.ttftSum;
  for (let i = 0; i < HISTOGRAM_BUCKETS; i++) { a.lat[i]! += sign * b.lat[i]!; a.ttft[i]! += sign * b.ttft[i]!; }
  a.cost = sign === 1 ? addDecimal(a.cost, b.cost) : subDecimal(a.cost, b.cost);
  return a;
}

/**
 * The q-quantile of a histogram, interpolated linearly inside its bucket (the open last bucket reports
 * its lower bound). Exact to the bucket: 25 ms up to 100 ms, then within 20-50% of the value.
 */
export function quantile(hist: readonly number[], q: number): number | null {
  const total = hist.reduce((a, b) => a + b, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    const c = hist[i]!;
    if (c > 0 && seen + c >= rank) {
      const lo = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const hi = LATENCY_BOUNDS_MS[i];
      if (hi === undefined) return lo;
      return Math.round(lo + ((rank - seen) / c) * (hi - lo));
    }
    seen += c;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}

function percentiles(hist: readonly number[], sum: number, count: number): Percentiles {
  return { p50: quantile(hist, 0.5), p95: quantile(hist, 0.95), p99: quantile(hist, 0.99), mean: count > 0 ? Math.round(sum / count) : null };
}

export function metricsOf(s: Sums): UsageMetrics {
  return {
    requests: s.requests, errors: s.errors, input_tokens: s.input, output_tokens: s.output, cache_read_tokens: s.cacheRead,
    cache_write_tokens: s.cacheWrite, reasoning_tokens: s.reasoning, cost_usd: s.cost,
    error_rate: s.requests > 0 ? s.errors / s.requests : null,
    latency_ms: percentiles(s.lat, s.latencySum, s.requests), ttft_ms: percentiles(s.ttft, s.ttftSum, s.ttftCount),
  };
}

/** Mean and 95% interval: Wilson's score interval for rates (booleans), the normal one for floats. */
export function confidence(type: string, count: number, sum: number, sumsq: number): { mean: number | null; lo: number | null; hi: number | null } {
  if (count <= 0 || type === 'comment') return { mean: null, lo: null, hi: null };
  const mean = sum / count;
  const z = 1.96;
  if (type === 'boolean') {
    const d = 1 + (z * z) / count;
    const centre = (mean + (z * z) / (2 * count)) / d;
    const half = (z * Math.sqrt((mean * (1 - mean)) / count + (z * z) / (4 * count * count))) / d;
    return { mean, lo: Math.max(0, centre - half), hi: Math.min(1, centre + half) };
  }
  if (count < 2) return { mean, lo: null, hi: null };
  const variance = Math.max(0, (sumsq - count * mean * mean) / (count - 1));
  const half = z * Math.sqrt(variance / count);
  return { mean, lo: mean - half, hi: mean + half };
}

// Time zones: buckets start at local midnight (or Monday, or the 1st) in the user's zone, DST included.

const partsCache = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = partsCache.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    partsCache.set(tz, f);
  }
  return f;
}

/** True when `tz` is an IANA zone name this runtime knows. */
export function isTimeZone(tz: string): boolean {
  if (tz.length > 64) return false;
  try { formatter(tz); return true; } catch { return false; }
}

/** The zone's offset from UTC at instant `ms`, in ms. */
function offsetAt(tz: string, ms: number): number {
  const p: Record<string, number> = {};
  for (const x of formatter(tz).formatToParts(new Date(ms))) if (x.type !== 'literal') p[x.type] = Number(x.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) - Math.floor(ms / 1000) * 1000;
}

/** The UTC instant of local wall time y-m-d h:00 in `tz`. */
function zoned(tz: string, y: number, m: number, d: number, h = 0): number {
  const guess = Date.UTC(y, m, d, h);
  const first = guess - offsetAt(tz, guess);
  return guess - offsetAt(tz, first);
}

function localParts(tz: string, ms: number): { y: number; m: number; d: number; h: number; dow: number } {
  const local = new Date(ms + offsetAt(tz, ms));
  return { y: local.getUTCFullYear(), m: local.getUTCMonth(), d: local.getUTCDate(), h: local.getUTCHours(), dow: local.getUTCDay() };
}

/** The start of the bucket holding instant `ms`. */
export function bucketStart(bucket: Bucket, tz: string, ms: number): number {
  const p = localParts(tz, ms);
  switch (bucket) {
    case 'hour': return Math.floor(ms / 3_600_000) * 3_600_000;
    case 'day': return zoned(tz, p.y, p.m, p.d);
    case 'week': return zoned(tz, p.y, p.m, p.d - ((p.dow + 6) % 7)); // weeks start on Monday (ISO 8601)
    case 'month': return zoned(tz, p.y, p.m, 1);
  }
}

function nextBucket(bucket: Bucket, tz: string, start: number): number {
  if (bucket === 'hour') return start + 3_600_000;
  const p = localParts(tz, start + 3_600_000); // an hour in: safe from DST edges at midnight
  switch (bucket) {
    case 'day': return zoned(tz, p.y, p.m, p.d + 1);
    case 'week': return zoned(tz, p.y, p.m, p.d - ((p.dow + 6) % 7) + 7);
    case 'month': return zoned(tz, p.y, p.m + 1, 1);
  }
}

/** The finest bucket that keeps a chart readable for a range of `ms`. */
export function autoBucket(ms: number): Bucket {
  const DAY = 86_400_000;
  return ms <= 2 * DAY ? 'hour' : ms <= 92 * DAY ? 'day' : ms <= 400 * DAY ? 'week' : 'month';
}

/** Bucket starts covering [from, to); at most `max` of them (else null: the caller asks for a larger bucket). */
export function bucketStarts(bucket: Bucket, tz: string, from: number, to: number, max = 2000): number[] | null {
  const out: number[] = [];
  for (let t = bucketStart(bucket, tz, from); t < to; t = nextBucket(bucket, tz, t)) {
    if (out.length >= max) return null;
    out.push(t);
  }
  return out;
}

/** Index of the bucket holding `ms` in sorted `starts` (binary search); -1 before the first. */
export function bucketIndex(starts: readonly number[], ms: number): number {
  let lo = 0, hi = starts.length - 1, found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid]! <= ms) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return found;
}
