// Hull and AIQ arithmetic of router-bench against hand-computed cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aiq, costToReach, hull, hullAt } from '../src/router/bench/hull.ts';
import { choose, oracle, sweep, wtpGrid } from '../src/router/bench/sweep.ts';
import type { BenchRow } from '../src/router/bench/data.ts';
import { extractPromptFeatures } from '../src/router/quality/features.ts';

const P = (cost: number, score: number) => ({ cost, score });
const close = (a: number | undefined, b: number, msg?: string) => assert.ok(a !== undefined && Math.abs(a - b) < 1e-9, `${msg ?? ''} ${a} != ${b}`);

test('a point below the chord is not on the hull; the area is the mean of the straight line', () => {
  const pts = [P(1, 0.5), P(3, 0.9), P(2, 0.6)];
  assert.deepEqual(hull(pts), [P(1, 0.5), P(3, 0.9)]);
  close(hullAt(hull(pts), 2), 0.7);
  close(aiq(pts, 1, 3), 0.7);
});

test('a point above the chord is a vertex: two trapezoids', () => {
  const pts = [P(1, 0.5), P(2, 0.8), P(3, 0.9)];
  assert.equal(hull(pts).length, 3);
  close(aiq(pts, 1, 3), (0.65 + 0.85) / 2);
  close(costToReach(hull(pts), 0.85), 2.5);
  close(costToReach(hull(pts), 0.4), 1);
  assert.equal(costToReach(hull(pts), 0.95), undefined);
});

test('non-decreasing: a dearer, worse point is ignored and the curve stays flat after the best', () => {
  const pts = [P(1, 0.5), P(2, 0.9), P(3, 0.7)];
  assert.deepEqual(hull(pts), [P(1, 0.5), P(2, 0.9)]);
  close(hullAt(hull(pts), 3), 0.9);
  close(aiq(pts, 1, 3), (0.7 + 0.9) / 2);
});

test('points outside the normalising range: interpolated at its ends', () => {
  const pts = [P(0.5, 0.6), P(4, 1.0)];
  const at = (c: number) => 0.6 + (0.4 * (c - 0.5)) / 3.5;
  close(aiq(pts, 1, 3), (at(1) + at(3)) / 2);
});

test('budgets below the cheapest point count as score 0', () => {
  close(aiq([P(2, 0.8)], 1, 3), 0.4);
  assert.equal(hullAt(hull([P(2, 0.8)]), 1.5), undefined);
});

test('same cost keeps the better score; an empty range gives the value at its cost', () => {
  assert.deepEqual(hull([P(1, 0.3), P(1, 0.6), P(2, 0.7)]), [P(1, 0.6), P(2, 0.7)]);
  close(aiq([P(1, 0.6), P(2, 0.7)], 2, 2), 0.7);
  assert.equal(aiq([], 0, 1), 0);
  assert.deepEqual(hull([P(NaN, 1), P(1, 0.5)]), [P(1, 0.5)]);
});

test('collinear middle points are dropped', () => {
  assert.deepEqual(hull([P(0, 0), P(1, 0.5), P(2, 1)]), [P(0, 0), P(2, 1)]);
});

test('the W grid is log-spaced from 1e-6 to 1e3 with at least 25 points', () => {
  const g = wtpGrid();
  assert.ok(g.length >= 25);
  close(g[0], 1e-6); close(g.at(-1), 1e3);
  for (let i = 2; i < g.length; i++) assert.ok(Math.abs(Math.log(g[i]! / g[i - 1]!) - Math.log(g[1]! / g[0]!)) < 1e-4);
});

test('the choice maximises 10 W q - cost, ties to the cheaper', () => {
  const e = { models: ['cheap', 'good'], q: Float64Array.of(0.5, 0.9), cost: Float64Array.of(0.001, 0.005) };
  assert.equal(choose(e, 1e-6), 0);
  assert.equal(choose(e, 1), 1);
  assert.equal(choose({ models: ['a', 'b'], q: Float64Array.of(0.5, 0.5), cost: Float64Array.of(0.002, 0.001) }, 1), 1);
  assert.equal(choose({ models: [], q: new Float64Array(), cost: new Float64Array() }, 1), -1);
});

test('sweep and oracle average the measured outcomes of the chosen models', () => {
  const f = extractPromptFeatures({ turns: ['x'] });
  const rows: BenchRow[] = [
    { id: 'a', task: 't', prompt: 'x', features: f, outcomes: new Map([['m1', { score: 1, cost: 1 }], ['m2', { score: 1, cost: 3 }]]) },
    { id: 'b', task: 't', prompt: 'y', features: f, outcomes: new Map([['m1', { score: 0, cost: 1 }], ['m2', { score: 1, cost: 3 }]]) },
  ];
  const est = rows.map(() => ({ models: ['m1', 'm2'], q: Float64Array.of(0.4, 0.9), cost: Float64Array.of(1, 3) }));
  const seen: string[] = [];
  const pts = sweep(rows, est, [1e-3, 10], (r, w, m) => seen.push(`${r.id}@${w}=${m}`));
  assert.deepEqual(pts.map((p) => [p.score, p.cost]), [[0.5, 1], [1, 3]]);
  assert.deepEqual(seen, ['a@0.001=m1', 'b@0.001=m1', 'a@10=m2', 'b@10=m2']);
  assert.deepEqual(oracle(rows), { score: 1, cost: 2 });
});
