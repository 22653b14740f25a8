// A logarithmic axis for values that span decades (a cost per request from $0.0000004 to $1,234 on one
// chart: on a linear axis every cheap model sat on $0 and one dear model set the scale), with a place of
// its own for zero (a free model), which no logarithm can place: at the axis's start, before a gap.

export type LogTick = { value: number; at: number; label: boolean };
export type LogAxis = { pos: (value: number) => number; ticks: LogTick[] };

/** The gap between zero's place and the first decade, in chart units. */
export const ZERO_GAP = 40;

/**
 * An axis from `start` to `end` (chart units) over `values`, or null when none is above zero (a linear
 * axis serves). Ticks at each power of ten from the decade below the smallest value to the one above
 * the largest (and at 2 and 5 times them when that spans at most two decades, labelled too where they fit), plus 0 when a value is 0
 * or below (drawn at `start`). Labels are shown on every n-th decade counted down from the top one, the
 * smallest n at which no two shown labels (`width` wide, centred on their tick, with 8 units between)
 * meet; the other ticks keep their grid line only.
 */
export function logAxis(values: number[], start: number, end: number, width: (value: number) => number): LogAxis | null {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  if (positive.length === 0) return null;
  const zero = values.some((v) => v <= 0);
  const lo = Math.floor(Math.log10(Math.min(...positive)));
  let hi = Math.ceil(Math.log10(Math.max(...positive)));
  if (hi === lo) hi = lo + 1;
  const from = start + (zero ? ZERO_GAP : 0);
  const pos = (v: number): number => (v <= 0 ? start : from + ((Math.log10(v) - lo) / (hi - lo)) * (end - from));
  const decades: number[] = [];
  for (let k = lo; k <= hi; k++) decades.push(Number(`1e${k}`));
  const minor = hi - lo <= 2 ? decades.slice(0, -1).flatMap((d) => [Number((2 * d).toPrecision(1)), Number((5 * d).toPrecision(1))]) : [];
  const fits = (shown: number[]): boolean => shown.every((v, i) => i === 0 || pos(shown[i - 1]!) + width(shown[i - 1]!) / 2 + 8 <= pos(v) - width(v) / 2);
  let every = 1;
  const labelled = (n: number): number[] => [...(zero ? [0] : []), ...decades.filter((_, i) => (decades.length - 1 - i) % n === 0)];
  while (every < decades.length && !fits(labelled(every))) every++;
  let shown = labelled(every);
  const withMinor = [...shown, ...minor].sort((a, b) => a - b);
  if (every === 1 && minor.length && fits(withMinor)) shown = withMinor;
  // Zero's label gives way to the first decade's when even one decade label cannot sit beside it.
  if (!fits(shown)) shown = shown.filter((v) => v !== 0);
  const ticks = [...(zero ? [0] : []), ...[...decades, ...minor].sort((a, b) => a - b)]
    .map((value) => ({ value, at: pos(value), label: shown.includes(value) }));
  return { pos, ticks };
}
