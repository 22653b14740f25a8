// The kNN baseline router, as published baselines build it: TF-IDF over cheap text features
// (our hashed n-grams), cosine similarity, each model's score averaged over the k most similar
// training prompts; k tuned by leave-one-out on the train file only.
import type { BenchRow } from './data.ts';
import type { Point } from './hull.ts';
import { aiq } from './hull.ts';
import { sweep, wtpGrid, type Estimates } from './sweep.ts';

export const K_CHOICES = [5, 10, 20, 40, 80, 160] as const;

/** TF-IDF vectors of the train rows in an inverted index, for similarity against any prompt. */
export class KnnIndex {
  readonly rows: readonly BenchRow[];
  readonly #idf = new Map<number, number>();
  readonly #post = new Map<number, { row: number[]; val: number[] }>();

  constructor(rows: readonly BenchRow[]) {
    this.rows = rows;
    const df = new Map<number, number>();
    for (const r of rows) for (const i of r.features.idx) df.set(i, (df.get(i) ?? 0) + 1);
    for (const [i, d] of df) this.#idf.set(i, Math.log((rows.length + 1) / (d + 1)) + 1);
    rows.forEach((r, j) => {
      const v = this.vector(r);
      for (let k = 0; k < v.idx.length; k++) {
        let p = this.#post.get(v.idx[k]!);
        if (!p) { p = { row: [], val: [] }; this.#post.set(v.idx[k]!, p); }
        p.row.push(j); p.val.push(v.val[k]!);
      }
    });
  }

  /** The row's features reweighted by IDF (unknown features: the largest IDF), L2-normalised. */
  vector(r: BenchRow): { idx: number[]; val: number[] } {
    const maxIdf = Math.log(this.rows.length + 1) + 1;
    const val = r.features.val.map((v, k) => v * (this.#idf.get(r.features.idx[k]!) ?? maxIdf));
    const n = Math.hypot(...val) || 1;
    return { idx: r.features.idx, val: val.map((v) => v / n) };
  }

  /** Cosine similarity of a prompt to every train row. */
  similarities(r: BenchRow): Float64Array {
    const s = new Float64Array(this.rows.length);
    const v = this.vector(r);
    for (let k = 0; k < v.idx.length; k++) {
      const p = this.#post.get(v.idx[k]!);
      if (!p) continue;
      const x = v.val[k]!;
      for (let j = 0; j < p.row.length; j++) s[p.row[j]!] += x * p.val[j]!;
    }
    return s;
  }
}

/**
 * Indices of the k largest similarities, skipping `skip` (leave-one-out), ties to the lower index:
 * what a stable sort of every index would put first, kept in a heap of k (the leave-one-out pass
 * runs this once per train row: sorting every row made it O(n^2 log n), 76 s of a 17,736-row file).
 */
export function topK(s: Float64Array, k: number, skip = -1): number[] {
  // A min-heap by rank: its root is the worst index kept. `below(a, b)`: a ranks after b.
  const heap: number[] = [];
  const below = (a: number, b: number): boolean => s[a]! < s[b]! || (s[a] === s[b] && a > b);
  for (let j = 0; j < s.length && k > 0; j++) {
    if (j === skip) continue;
    if (heap.length < k) {
      let i = heap.push(j) - 1;
      while (i > 0) { const p = (i - 1) >> 1; if (!below(heap[i]!, heap[p]!)) break; [heap[i], heap[p]] = [heap[p]!, heap[i]!]; i = p; }
    } else if (below(heap[0]!, j)) {
      heap[0] = j;
      for (let i = 0; ;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < heap.length && below(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && below(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!]; i = m;
      }
    }
  }
  return heap.sort((a, b) => s[b]! - s[a]! || a - b);
}

/** Each model's mean score over the neighbours that it answered (no answer: the model's mean). */
function knnQ(index: KnnIndex, nb: readonly number[], models: readonly string[], fallback: ReadonlyMap<string, number>): Float64Array {
  const q = new Float64Array(models.length);
  models.forEach((m, i) => {
    let s = 0, n = 0;
    for (const j of nb) { const o = index.rows[j]!.outcomes.get(m); if (o) { s += o.score; n++; } }
    q[i] = n > 0 ? s / n : fallback.get(m) ?? 0;
  });
  return q;
}

export type CostOf = (row: BenchRow, model: string) => number | undefined;

function estimatesFor(index: KnnIndex, row: BenchRow, nbs: number[], models: string[], means: Map<string, number>, costOf: CostOf): Estimates {
  const ms = models.filter((m) => row.outcomes.has(m) && costOf(row, m) !== undefined);
  const q = knnQ(index, nbs, ms, means);
  return { models: ms, q, cost: Float64Array.from(ms, (m) => costOf(row, m)!) };
}

/**
 * kNN estimates for the test rows, k chosen by the leave-one-out AIQ on the train rows.
 * `models` are the models the router may pick (those with learned costs); costOf is the shared
 * production-style cost estimate.
 */
export function knnEstimates(train: readonly BenchRow[], test: readonly BenchRow[], models: string[], costOf: CostOf,
  range: { lo: number; hi: number }): { k: number; estimates: Estimates[] } {
  const index = new KnnIndex(train);
  const means = new Map<string, number>();
  for (const m of models) {
    let s = 0, n = 0;
    for (const r of train) { const o = r.outcomes.get(m); if (o) { s += o.score; n++; } }
    means.set(m, n > 0 ? s / n : 0);
  }
  const maxK = Math.min(K_CHOICES[K_CHOICES.length - 1]!, Math.max(1, train.length - 1));
  const trainNbs = train.map((r, j) => topK(index.similarities(r), maxK, j));
  const grid = wtpGrid();
  let bestK: number = K_CHOICES[0], best = -Infinity;
  for (const k of K_CHOICES) {
    if (k > maxK && k !== K_CHOICES[0]) break;
    const est = train.map((r, j) => estimatesFor(index, r, trainNbs[j]!.slice(0, k), models, means, costOf));
    const pts: Point[] = sweep(train, est, grid);
    const a = aiq(pts, range.lo, range.hi);
    if (a > best) { best = a; bestK = k; }
  }
  const estimates = test.map((r) => estimatesFor(index, r, topK(index.similarities(r), bestK), models, means, costOf));
  return { k: bestK, estimates };
}
