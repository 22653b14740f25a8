// The dashboard's charts: a small SVG renderer (line/area series, horizontal bars, scatter with error
// bars) built as plain data (VNode) so it is unit tested without a browser. Colours come from CSS
// classes (series-0..7), so the strict CSP needs no inline style; every chart has a text title.
import { logAxis } from './log-axis.ts';
import { v, type VNode } from './vnode.ts';

export const PALETTE_SIZE = 8;

/**
 * A series' colour class: the palette's eight in turn, and a grey of its own for the rest lumped together
 * ('32 more'), which as the ninth series took the first one's colour and read as the top model.
 */
export const seriesClass = (i: number, other = false): string => (other ? 'series-other' : `series-${i % PALETTE_SIZE}`);

/**
 * About `count` round tick values covering [min, max] (1, 2, 2.5 or 5 times a power of ten apart), at
 * least `minStep` apart (1 for counts: a requests axis had ticks at 0.25 labelled "0.3").
 */
export function niceTicks(min: number, max: number, count = 5, minStep = 0): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0];
  if (max === min) { max = min === 0 ? 1 : min * 2; if (max < min) [min, max] = [max, min]; }
  const raw = (max - min) / Math.max(1, count);
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(minStep, [1, 2, 2.5, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? 10 * pow);
  const first = Math.floor(min / step) * step;
  const out: number[] = [];
  for (let t = first; t <= max + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  if (out[out.length - 1]! < max) out.push(Number((out[out.length - 1]! + step).toPrecision(12)));
  return out;
}

/** `other`: the groups past the top ones, together (drawn in grey). */
/**
 * The width a chart has on the page, in px (set by the shell for each page shown; none: unbounded). A
 * chart's units are its width's: drawn in a 720-unit box on a 390px phone (about 300px for the chart),
 * its 11-unit text was 4.6px, unreadable. A chart is now as wide as its room, between 320 units and its
 * own width, so its text stays near its size; the x labels and bar labels it has room for are shown.
 */
let room = Infinity;
export const setChartRoom = (px: number): void => { room = px > 0 ? px : Infinity; };
const widthFor = (own: number): number => Math.round(Math.min(own, Math.max(320, room)));

export type Series = { name: string; values: Array<number | null>; other?: boolean };
export type LineChartOptions = {
  title: string; labels: string[]; series: Series[]; width?: number; height?: number;
  format?: (n: number) => string; stacked?: boolean;
  /** The y axis's labels (default `format`): round values written as they are ("$0.25", not "$0.2500"; "2.5%", not "3%"). */
  tickFormat?: (n: number) => string;
  /** Whole-number values (counts): ticks a whole number apart. */
  integer?: boolean;
};

const M = { top: 12, right: 16, bottom: 28, left: 84 };

/** Lines (or stacked areas) over shared x labels; null values break a line. */
export function lineChart(o: LineChartOptions): VNode {
  const W = widthFor(o.width ?? 720), H = o.height ?? 220;
  const fmt = o.format ?? ((n: number) => String(n));
  const n = o.labels.length;
  const stack = o.series.map((s) => s.values.map((x) => x ?? 0));
  if (o.stacked) for (let i = 1; i < stack.length; i++) for (let j = 0; j < n; j++) stack[i]![j]! += stack[i - 1]![j]!;
  const all = o.stacked ? stack.flat() : o.series.flatMap((s) => s.values.filter((x): x is number => x !== null));
  const ticks = niceTicks(0, Math.max(0, ...all), 4, o.integer ? 1 : 0);
  const tickFmt = o.tickFormat ?? fmt;
  const yMax = ticks[ticks.length - 1]!;
  const x = (i: number): number => M.left + (n <= 1 ? (W - M.left - M.right) / 2 : (i * (W - M.left - M.right)) / (n - 1));
  const y = (val: number): number => H - M.bottom - (yMax === 0 ? 0 : (val / yMax) * (H - M.top - M.bottom));
  // At most 8 x labels, fewer where the widest would not fit between two shown (with 12 units to spare).
  const widest = Math.max(1, ...o.labels.map((l) => l.length * 6));
  const every = Math.max(1, Math.ceil(n / 8), n <= 1 ? 1 : Math.ceil(((widest + 12) * (n - 1)) / (W - M.left - M.right)));
  const grid = ticks.map((t) => v('g', { class: 'tick' },
    v('line', { x1: M.left, x2: W - M.right, y1: y(t), y2: y(t), class: 'grid' }),
    v('text', { x: M.left - 6, y: y(t) + 4, 'text-anchor': 'end' }, tickFmt(t))));
  // A label centred near the right edge would run past it: it ends at its point instead, or, when that
  // would run into the label before it, is left out. Widths are estimated (11-unit text, ~6 units a character).
  const width = (l: string): number => l.length * 6;
  const xLabels = o.labels.map((l, i) => {
    if (i % every !== 0) return null;
    if (x(i) + width(l) / 2 <= W) return v('text', { x: x(i), y: H - 8, 'text-anchor': 'middle', class: 'xlabel' }, l);
    const prev = i - every;
    if (prev >= 0 && x(i) - width(l) < x(prev) + width(o.labels[prev]!) / 2 + 6) return null;
    return v('text', { x: x(i), y: H - 8, 'text-anchor': 'end', class: 'xlabel' }, l);
  });
  const shapes = o.series.map((s, si) => {
    const cls = seriesClass(si, s.other);
    if (o.stacked) {
      const top = stack[si]!;
      const base = si === 0 ? new Array<number>(n).fill(0) : stack[si - 1]!;
      const pts = top.map((t, i) => `${x(i).toFixed(1)},${y(t).toFixed(1)}`).concat(base.map((b, i) => `${x(i).toFixed(1)},${y(b).toFixed(1)}`).reverse());
      return v('polygon', { points: pts.join(' '), class: `area ${cls}` }, v('title', {}, s.name));
    }
    const segs: string[][] = [[]];
    s.values.forEach((val, i) => { if (val === null) segs.push([]); else segs[segs.length - 1]!.push(`${x(i).toFixed(1)},${y(val).toFixed(1)}`); });
    return v('g', { class: cls },
      ...segs.filter((p) => p.length > 1).map((p) => v('polyline', { points: p.join(' '), class: 'line' })),
      ...s.values.map((val, i) => (val === null ? null : v('circle', { cx: x(i).toFixed(1), cy: y(val).toFixed(1), r: n > 60 ? 1.5 : 3, class: 'dot' },
        v('title', {}, `${s.name} · ${o.labels[i]}: ${fmt(val)}`)))));
  });
  return v('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': o.title, preserveAspectRatio: 'none' },
    v('title', {}, o.title), v('g', { class: 'axis' }, ...grid, ...xLabels), ...shapes);
}

export type Bar = { label: string; value: number; text?: string; other?: boolean };

/** Horizontal bars (top-N tables, latency waterfalls use `offsets`). */
/**
 * A bar's label as it fits the label column (about 26 characters of the 12px font in 192 units): a
 * longer one keeps its end, where a `provider/model` id has the model's name (30 characters ran past
 * the chart's left edge).
 */
export const barLabel = (s: string, max = 26): string => (s.length <= max ? s : `…${s.slice(-(max - 1))}`);

export function barChart(o: { title: string; bars: Bar[]; width?: number; format?: (n: number) => string; offsets?: number[] }): VNode {
  // The label column is 200 units, or 40% of a narrower chart (with fewer characters of each label).
  const W = widthFor(o.width ?? 640), row = 26, labelW = Math.min(200, Math.round(W * 0.4));
  const chars = Math.floor((26 * labelW) / 200);
  const H = Math.max(row, o.bars.length * row) + 8;
  const total = Math.max(1e-12, ...o.bars.map((b, i) => b.value + (o.offsets?.[i] ?? 0)));
  const scale = (val: number): number => (val / total) * (W - labelW - 90);
  const fmt = o.format ?? ((n: number) => String(n));
  return v('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart bars', role: 'img', 'aria-label': o.title },
    v('title', {}, o.title),
    ...o.bars.map((b, i) => {
      const off = scale(o.offsets?.[i] ?? 0);
      const w = Math.max(1, scale(b.value));
      return v('g', { class: seriesClass(i, b.other) },
        v('text', { x: labelW - 8, y: i * row + 17, 'text-anchor': 'end', class: 'barlabel' }, barLabel(b.label, chars)),
        v('rect', { x: labelW + off, y: i * row + 5, width: w.toFixed(1), height: row - 10, rx: 3, class: 'bar' }, v('title', {}, `${b.label}: ${b.text ?? fmt(b.value)}`)),
        v('text', { x: labelW + off + w + 6, y: i * row + 17, class: 'barvalue' }, b.text ?? fmt(b.value)));
    }));
}

export type Point = { label: string; x: number; y: number; yLow?: number | null; yHigh?: number | null };

/** A label's box in chart units, estimated as the line chart's are (11-unit text, ~6.2 units a character). */
type Box = { x1: number; x2: number; y1: number; y2: number };
const overlaps = (a: Box, b: Box): boolean => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;

/**
 * Cost (x) against quality (y) per model, with the quality's 95% interval as a vertical bar. The y axis's
 * title has a row of its own above the plot (beside the top tick's label it overlapped it); the last x
 * tick's label ends at its tick instead of past the chart's right edge; a point's label goes left of the
 * point where it would run past the right edge, and is left out where it would cover a label already
 * placed (forty models crowd near zero cost): every point keeps its title, and the table names them all.
 */
export function scatterChart(o: {
  title: string; points: Point[]; xTitle: string; yTitle: string; width?: number; height?: number; xFormat?: (n: number) => string; yFormat?: (n: number) => string;
  /** A logarithmic x axis (values spanning decades; zero keeps a place of its own: log-axis.ts), its tick labels by `xTickFormat`. */
  xLog?: boolean; xTickFormat?: (n: number) => string;
}): VNode {
  const W = widthFor(o.width ?? 640), H = o.height ?? 320;
  const top = M.top + 16;
  const xs = o.points.map((p) => p.x);
  const ys = o.points.flatMap((p) => [p.y, p.yLow ?? p.y, p.yHigh ?? p.y]);
  const xtf = o.xTickFormat ?? o.xFormat ?? String;
  const log = o.xLog ? logAxis(xs, M.left, W - M.right, (t) => xtf(t).length * 6.2) : null;
  const linear = niceTicks(0, Math.max(0, ...xs), 4);
  const xt = log ? log.ticks : linear.map((value) => ({ value, at: M.left + ((value - linear[0]!) / (linear[linear.length - 1]! - linear[0]! || 1)) * (W - M.left - M.right), label: true }));
  const yt = niceTicks(Math.min(0, ...ys), Math.max(0, ...ys), 4);
  const sx = (val: number): number => (log ? log.pos(val) : M.left + ((val - linear[0]!) / (linear[linear.length - 1]! - linear[0]! || 1)) * (W - M.left - M.right));
  const sy = (val: number): number => H - M.bottom - 14 - ((val - yt[0]!) / (yt[yt.length - 1]! - yt[0]! || 1)) * (H - top - M.bottom - 14);
  const xf = o.xFormat ?? String, yf = o.yFormat ?? String;
  const width = (s: string): number => s.length * 6.2;
  const placed: Box[] = [];
  const pointLabel = (p: Point): VNode | null => {
    const px = sx(p.x), py = sy(p.y) - 6;
    const right = px + 8 + width(p.label) <= W;
    const box: Box = right ? { x1: px + 8, x2: px + 8 + width(p.label), y1: py - 10, y2: py + 2 } : { x1: px - 8 - width(p.label), x2: px - 8, y1: py - 10, y2: py + 2 };
    if (placed.some((b) => overlaps(b, box))) return null;
    placed.push(box);
    return v('text', { x: right ? px + 8 : px - 8, y: py, 'text-anchor': right ? 'start' : 'end', class: 'pointlabel' }, p.label);
  };
  return v('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart scatter', role: 'img', 'aria-label': o.title },
    v('title', {}, o.title),
    v('g', { class: 'axis' },
      ...yt.map((t) => v('g', {}, v('line', { x1: M.left, x2: W - M.right, y1: sy(t), y2: sy(t), class: 'grid' }), v('text', { x: M.left - 6, y: sy(t) + 4, 'text-anchor': 'end' }, yf(t)))),
      ...(log ? xt.map((t) => v('line', { x1: t.at, x2: t.at, y1: top, y2: H - M.bottom - 14, class: 'grid' })) : []),
      ...xt.filter((t) => t.label).map((t) => v('text', { x: t.at, y: H - 22, 'text-anchor': t.at + width(xtf(t.value)) / 2 > W ? 'end' : 'middle', class: 'xtick' }, xtf(t.value))),
      v('text', { x: (W + M.left) / 2, y: H - 4, 'text-anchor': 'middle', class: 'axis-title' }, o.xTitle),
      v('text', { x: 4, y: M.top, class: 'axis-title' }, o.yTitle)),
    ...o.points.map((p, i) => v('g', { class: `series-${i % PALETTE_SIZE}` },
      p.yLow !== undefined && p.yLow !== null && p.yHigh !== undefined && p.yHigh !== null
        ? v('line', { x1: sx(p.x), x2: sx(p.x), y1: sy(p.yLow), y2: sy(p.yHigh), class: 'errbar' }) : null,
      v('circle', { cx: sx(p.x).toFixed(1), cy: sy(p.y).toFixed(1), r: 5, class: 'dot' }, v('title', {}, `${p.label}: ${xf(p.x)}, ${yf(p.y)}`)),
      pointLabel(p))));
}
