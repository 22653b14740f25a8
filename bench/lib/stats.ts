// Small statistics helpers shared by the load generator and the report: percentiles, medians.

export type Percentiles = { n: number; p50: number; p90: number; p99: number; max: number; mean: number };

/** Nearest-rank percentile of an ascending-sorted array (q in 0..1); NaN when empty. */
export function percentileSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

/** Summarises samples (milliseconds) into the percentiles the report prints. */
export function summarise(samples: ArrayLike<number>): Percentiles {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    n: sorted.length,
    p50: percentileSorted(sorted, 0.5),
    p90: percentileSorted(sorted, 0.9),
    p99: percentileSorted(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** Median of a list of numbers (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** a / b, NaN when either side is missing or b is zero. */
export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN;
  return a / b;
}

/** Fixed-width number for tables; '-' for NaN. */
export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}
