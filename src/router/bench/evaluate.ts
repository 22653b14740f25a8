// One offline evaluation: train on some rows through the feedback path, route the test rows over
// the W sweep, and compute the curves and figures router-bench prints (and cross-validation pools).
import { feedbackOutcome } from '../quality/feedback.ts';
import { predict } from '../quality/predict.ts';
import { train } from '../quality/train.ts';
import type { Outcome, QualityState } from '../quality/types.ts';
import type { BenchRow } from './data.ts';
import { aiq, costToReach, hull, hullAt, type Point } from './hull.ts';
import { knnEstimates } from './knn.ts';
import { oracle, singleModels, sweep, wtpGrid, type Estimates, type SweepPoint } from './sweep.ts';

/** Outcomes go to train in batches of this size by default, as the background worker folds in feedback. */
export const BATCH = 5000;

/** The bench's quality signal: the data's score, a float in [0, 1] where higher is better. */
const SIGNAL = { metric: 'score', optimize: 'max', min: 0, max: 1 } as const;

/** Trains a state from bench rows exactly as feedback does: value -> feedbackOutcome -> train(batch, previous). */
export function trainFromRows(rows: readonly BenchRow[], keep: (model: string, row: BenchRow) => boolean = () => true, batchSize = BATCH): QualityState {
  let state: QualityState | undefined;
  let batch: Outcome[] = [];
  for (const r of rows) {
    for (const [model, o] of r.outcomes) {
      if (!keep(model, r)) continue;
      const out = feedbackOutcome({ features: r.features, model, value: o.score, signal: SIGNAL, time: 0, costUsd: o.cost });
      if (out) batch.push(out);
      if (batch.length >= batchSize) { state = train(batch, state); batch = []; }
    }
  }
  return train(batch, state);
}

/** The router's estimates: predict over the row's models that the state can put a cost on. */
export function routerEstimates(state: QualityState, rows: readonly BenchRow[]): Estimates[] {
  return rows.map((r) => {
    const cands = [...r.outcomes.keys()].filter((m) => (state.models[m]?.n ?? 0) > 0);
    const est = predict(state, r.features, cands, { priors: null });
    const ok = est.filter((e) => e.costUsd !== undefined);
    return { models: ok.map((e) => e.model), q: Float64Array.from(ok, (e) => e.q), cost: Float64Array.from(ok, (e) => e.costUsd!) };
  });
}

/** Time the last evaluate spent in training, ms (reported by the bench). */
export let trainMs = 0;

export type Curve = { name: string; points: SweepPoint[]; aiq: number };
export type Evaluation = {
  grid: number[];
  singles: Array<Point & { model: string; answered: number }>;
  oracle: Point;
  router: Curve;
  knn: Curve & { k: number };
  bestSingleHull: number;
  range: { lo: number; hi: number };
  best: Point & { model: string };
  cheapest: Point & { model: string };
  /** Cost at which the router's hull reaches the best single model's score (undefined: never). */
  routerCostAtBest: number | undefined;
  /** Router hull's score at the cheapest single model's cost (undefined: not that cheap). */
  routerScoreAtCheapest: number | undefined;
  knnCostAtBest: number | undefined;
};

export type EvaluateOptions = {
  grid?: number[];
  /** Which train outcomes to learn from (held-out-model validation); default all. */
  keep?: (model: string, row: BenchRow) => boolean;
  onChoice?: (row: BenchRow, wtp: number, model: string | null) => void;
  /** Custom estimates in place of the production predictor (method comparison). */
  estimates?: (train: readonly BenchRow[], test: readonly BenchRow[], state: QualityState) => Estimates[];
  /** Outcomes per train call (default BATCH). */
  batch?: number;
  /** Skip the kNN baseline (faster cross-validation of variants). */
  noKnn?: boolean;
};

export function evaluate(trainRows: readonly BenchRow[], testRows: readonly BenchRow[], opts: EvaluateOptions = {}): Evaluation {
  const grid = opts.grid ?? wtpGrid();
  const keep = opts.keep ?? (() => true);
  const t0 = performance.now();
  const state = trainFromRows(trainRows, keep, opts.batch);
  trainMs = performance.now() - t0;
  const testModels = new Set<string>();
  for (const r of testRows) for (const m of r.outcomes.keys()) testModels.add(m);
  const singles = singleModels(testRows, [...testModels].sort());
  const answered = singles.filter((s) => s.answered > 0);
  const lo = Math.min(...answered.map((s) => s.cost)), hi = Math.max(...answered.map((s) => s.cost));
  const best = answered.reduce((a, b) => (b.score > a.score || (b.score === a.score && b.cost < a.cost) ? b : a));
  const cheapest = answered.reduce((a, b) => (b.cost < a.cost ? b : a));
  const est = opts.estimates ? opts.estimates(trainRows, testRows, state) : routerEstimates(state, testRows);
  const points = sweep(testRows, est, grid, opts.onChoice);
  const rh = hull(points);
  const router: Curve = { name: 'router', points, aiq: aiq(points, lo, hi) };
  let knn: Curve & { k: number } = { name: 'knn', points: [], aiq: NaN, k: 0 };
  if (!opts.noKnn) {
    const learned = [...testModels].filter((m) => (state.models[m]?.n ?? 0) > 0);
    const costs = new Map(testRows.map((r, i) => [r, new Map(est[i]!.models.map((m, j) => [m, est[i]!.cost[j]!]))]));
    const trainCosts = routerEstimates(state, trainRows);
    const trainCostMap = new Map(trainRows.map((r, i) => [r.id, new Map(trainCosts[i]!.models.map((m, j) => [m, trainCosts[i]!.cost[j]!]))]));
    const trainSingles = singleModels(trainRows, learned).filter((s) => s.answered > 0);
    const trainRange = { lo: Math.min(...trainSingles.map((s) => s.cost)), hi: Math.max(...trainSingles.map((s) => s.cost)) };
    // The baseline learns from exactly the outcomes the router learned from.
    const seen = opts.keep ? trainRows.map((r) => ({ ...r, outcomes: new Map([...r.outcomes].filter(([m]) => keep(m, r))) })) : trainRows;
    const k = knnEstimates(seen, testRows, learned, (r, m) => (costs.get(r) ?? trainCostMap.get(r.id))?.get(m), trainRange);
    const kp = sweep(testRows, k.estimates, grid);
    knn = { name: 'knn', points: kp, aiq: aiq(kp, lo, hi), k: k.k };
  }
  return {
    grid, singles, oracle: oracle(testRows), router, knn,
    bestSingleHull: aiq(answered, lo, hi), range: { lo, hi }, best, cheapest,
    routerCostAtBest: costToReach(rh, best.score),
    routerScoreAtCheapest: hullAt(rh, cheapest.cost),
    knnCostAtBest: knn.points.length ? costToReach(hull(knn.points), best.score) : undefined,
  };
}
