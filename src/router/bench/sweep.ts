// The willingness-to-pay sweep: every test prompt routed at every W by the production choice rule
// (maximise 10 * W * q - expected cost, ties to the cheaper), scored with the test file's outcomes.
import type { BenchRow } from './data.ts';
import type { Point } from './hull.ts';

/** Per test row: the candidates (models of the row that the router can estimate) with q and cost. */
export type Estimates = { models: string[]; q: Float64Array; cost: Float64Array };

/** `n` log-spaced values of W from `lo` to `hi` inclusive (default 10 a decade: the router's operating points change within a decade). */
export function wtpGrid(lo = 1e-6, hi = 1e3, n = 91): number[] {
  const a = Math.log10(lo), b = Math.log10(hi);
  return Array.from({ length: n }, (_, i) => Number((10 ** (a + ((b - a) * i) / (n - 1))).toPrecision(6)));
}

/** Index of the chosen candidate: argmax 10 W q - cost; ties go to the cheaper. -1 if none. */
export function choose(e: Estimates, w: number): number {
  let best = -1, bu = -Infinity;
  for (let i = 0; i < e.models.length; i++) {
    const u = 10 * w * e.q[i]! - e.cost[i]!;
    if (u > bu || (u === bu && best >= 0 && e.cost[i]! < e.cost[best]!)) { bu = u; best = i; }
  }
  return best;
}

export type SweepPoint = Point & { wtp: number };

/**
 * Mean measured score and cost per prompt at each W. A row with no estimable candidate is routed
 * to nothing and scores 0 at cost 0 (it never happens when the train file covers the test models).
 * onChoice sees each (row, W, model) in order, for --choices.
 */
export function sweep(rows: readonly BenchRow[], est: readonly Estimates[], grid: readonly number[],
  onChoice?: (row: BenchRow, wtp: number, model: string | null) => void): SweepPoint[] {
  const out: SweepPoint[] = [];
  for (const w of grid) {
    let s = 0, c = 0;
    for (let r = 0; r < rows.length; r++) {
      const e = est[r]!;
      const i = choose(e, w);
      const model = i >= 0 ? e.models[i]! : null;
      if (model !== null) { const o = rows[r]!.outcomes.get(model)!; s += o.score; c += o.cost; }
      onChoice?.(rows[r]!, w, model);
    }
    out.push({ wtp: w, score: s / rows.length, cost: c / rows.length });
  }
  return out;
}

/** Each model alone: mean score and cost over the rows it answered (`answered` of them). */
export function singleModels(rows: readonly BenchRow[], models: readonly string[]): Array<Point & { model: string; answered: number }> {
  return models.map((m) => {
    let s = 0, c = 0, n = 0;
    for (const r of rows) { const o = r.outcomes.get(m); if (o) { s += o.score; c += o.cost; n++; } }
    return { model: m, score: n > 0 ? s / n : 0, cost: n > 0 ? c / n : 0, answered: n };
  });
}

/** The oracle: per prompt the best score, the cheapest model among those reaching it. */
export function oracle(rows: readonly BenchRow[]): Point {
  let s = 0, c = 0;
  for (const r of rows) {
    let bs = -1, bc = Infinity;
    for (const o of r.outcomes.values()) if (o.score > bs || (o.score === bs && o.cost < bc)) { bs = o.score; bc = o.cost; }
    s += bs; c += bc;
  }
  return { score: s / rows.length, cost: c / rows.length };
}
