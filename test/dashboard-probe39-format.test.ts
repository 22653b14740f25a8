// The Models chart's cost axis on a log scale (costs per request span ten decades in a month's traffic)
// with zero in a place of its own, its round tick labels, and a budget forecast read in the unit that fits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lineChart, scatterChart } from '../src/dashboard/ui/charts.ts';
import { logAxis, ZERO_GAP } from '../src/dashboard/ui/log-axis.ts';
import { bucketLabel, compact, pctTick, timeUntil, usdTick } from '../src/dashboard/ui/format.ts';
import type { VNode } from '../src/dashboard/ui/vnode.ts';

const all = (n: VNode, tag: string): VNode[] => [...(n.tag === tag ? [n] : []), ...n.children.flatMap((c) => (typeof c === 'string' ? [] : all(c, tag)))];
const text = (n: VNode): string => n.children.map((c) => (typeof c === 'string' ? c : text(c))).join('');

test('usdTick: round amounts as written, never an exponent or trailing zeros', () => {
  assert.deepEqual([0, 1e-7, 1e-6, 0.00002, 0.05, 0.1, 1, 2, 10, 1000, 10000].map(usdTick),
    ['$0', '$0.0000001', '$0.000001', '$0.00002', '$0.05', '$0.1', '$1', '$2', '$10', '$1,000', '$10,000']);
});

test('logAxis: one decade takes the same width wherever it is; zero is placed before the first decade', () => {
  const a = logAxis([0, 0.0000004, 0.0089, 1234.56], 84, 624, (v) => usdTick(v).length * 6.2)!;
  const step = a.pos(0.01) - a.pos(0.001);
  assert.ok(step > 0);
  assert.ok(Math.abs(a.pos(1000) - a.pos(100) - step) < 1e-9, 'every decade as wide');
  assert.equal(a.pos(0), 84, 'zero at the axis start');
  assert.equal(a.ticks[0]!.value, 0);
  assert.equal(a.ticks[1]!.value, 1e-7, 'the first decade at or below the smallest cost');
  assert.equal(a.ticks[1]!.at, 84 + ZERO_GAP);
  assert.equal(a.ticks.at(-1)!.value, 1e4, 'the last decade at or above the largest cost');
  assert.equal(a.pos(1e4), 624);
  const shown = a.ticks.filter((t) => t.label);
  assert.ok(shown.some((t) => t.value === 1e4), 'the top decade is labelled');
  for (let i = 1; i < shown.length; i++) {
    const w = (v: number): number => usdTick(v).length * 6.2;
    assert.ok(shown[i - 1]!.at + w(shown[i - 1]!.value) / 2 + 8 <= shown[i]!.at - w(shown[i]!.value) / 2, `${usdTick(shown[i - 1]!.value)} and ${usdTick(shown[i]!.value)} apart`);
  }
  // Within two decades the 2s and 5s are ticks as well; no value above zero: no log axis at all.
  assert.deepEqual(logAxis([0.002, 0.03], 0, 500, () => 10)!.ticks.map((t) => t.value), [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]);
  assert.equal(logAxis([0, 0], 0, 500, () => 10), null);
});

test('the cost-against-quality scatter on a log axis: cheap models spread out, labels are round amounts', () => {
  const costs = [0, 0.0000004, 0.000456, 0.0089, 0.0451, 0.3, 1234.56];
  const points = costs.map((x, i) => ({ label: `m${i}`, x, y: 0.5 + i / 20 }));
  const c = scatterChart({ title: 't', points, xTitle: 'cost', yTitle: 'q', xLog: true, xFormat: String, xTickFormat: usdTick, width: 640 });
  const cx = all(c, 'circle').map((n) => Number(n.attrs.cx));
  for (let i = 1; i < cx.length; i++) assert.ok(cx[i]! > cx[i - 1]! + 10, `m${i} (${costs[i]}) right of m${i - 1}, apart: ${cx.join(', ')}`);
  // On the old linear axis ($0 to $2,000) the six cheap models were within 0.1 units of each other.
  const plot = 640 - 84 - 16;
  assert.ok(cx[5]! - cx[1]! > plot / 3, 'the cheap models spread over a third of the plot');
  const labels = all(c, 'text').filter((n) => n.attrs.class === 'xtick').map(text);
  assert.equal(labels[0], '$0');
  assert.ok(labels.includes('$10,000') && labels.every((l) => /^\$(0|0\.0*1|1(0|,000)*)$/.test(l)), labels.join(' '));
  // Without xLog the axis is linear, as before.
  const lin = scatterChart({ title: 't', points, xTitle: 'cost', yTitle: 'q', xFormat: String, width: 640 });
  assert.ok(all(lin, 'circle').map((n) => Number(n.attrs.cx))[5]! - 84 < 1);
});

test('timeUntil: a budget forecast in minutes, hours, days, months or years, never "1327 d"', () => {
  const now = Date.parse('2026-11-30T00:00:00Z');
  const at = (ms: number): string => timeUntil(new Date(now + ms).toISOString(), now);
  const H = 3_600_000, D = 24 * H;
  assert.equal(at(1327 * D), 'in about 3.6 years');
  assert.equal(at(122 * D), 'in about 4 months');
  assert.equal(at(400 * D), 'in about 13 months');
  assert.equal(at(12 * D), 'in 12 days');
  assert.equal(at(50 * D), 'in 50 days');
  assert.equal(at(30 * H), 'in 30 hours');
  assert.equal(at(1 * H), 'in 1 hour');
  assert.equal(at(20 * 60_000), 'in 20 minutes');
  assert.equal(at(10_000), 'in 1 minute');
  assert.equal(at(5000 * 365 * D), 'in more than 100 years');
  assert.equal(at(-D), 'now');
  assert.equal(timeUntil('not a date', now), 'now');
});

const yLabels = (c: VNode): string[] => all(c, 'g').filter((g) => g.attrs.class === 'tick').map((g) => text(all(g, 'text')[0]!));

test('line charts of counts tick at whole numbers; cost and rate ticks are written with the digits they have', () => {
  // No requests at all, and at most one a bucket: the axis read 0, 0.3, 0.5, 0.8, 1 (ticks at quarters, rounded).
  assert.deepEqual(yLabels(lineChart({ title: 'r', labels: ['a', 'b', 'c'], series: [{ name: 's', values: [0, 0, 0] }], format: compact, integer: true })), ['0', '1']);
  assert.deepEqual(yLabels(lineChart({ title: 'r', labels: ['a', 'b', 'c'], series: [{ name: 's', values: [0, 1, 0] }], format: compact, integer: true })), ['0', '1']);
  assert.deepEqual(yLabels(lineChart({ title: 'r', labels: ['a', 'b'], series: [{ name: 's', values: [3, 7] }], format: compact, integer: true })), ['0', '2', '4', '6', '8']);
  assert.deepEqual(yLabels(lineChart({ title: 'c', labels: ['a', 'b'], series: [{ name: 's', values: [0, 0] }], format: String, tickFormat: usdTick })), ['$0', '$0.25', '$0.5', '$0.75', '$1']);
  assert.deepEqual(yLabels(lineChart({ title: 'e', labels: ['a', 'b'], series: [{ name: 's', values: [0.01, 0.1] }], format: String, tickFormat: pctTick })), ['0%', '2.5%', '5%', '7.5%', '10%']);
});

test('hour labels across the autumn DST change: the hour the clocks go back over is told apart by its offset', () => {
  const ny = ['2026-11-01T04:00:00Z', '2026-11-01T05:00:00Z', '2026-11-01T06:00:00Z', '2026-11-01T07:00:00Z'].map((t) => bucketLabel(t, 'hour', 'America/New_York'));
  assert.deepEqual(ny, ['01 Nov, 00:00', '01 Nov, 01:00 GMT-4', '01 Nov, 01:00 GMT-5', '01 Nov, 02:00']);
  assert.equal(new Set(ny).size, 4, 'four hours, four labels (two read "01 Nov, 01:00" before)');
  // Spring forward skips an hour and repeats none: labels as ever.
  assert.deepEqual(['2026-03-29T00:00:00Z', '2026-03-29T01:00:00Z'].map((t) => bucketLabel(t, 'hour', 'Europe/Berlin')), ['29 Mar, 01:00', '29 Mar, 03:00']);
  assert.equal(bucketLabel('2026-11-01T05:00:00Z', 'day', 'America/New_York'), '01 Nov');
});
