// Candidate quality predictors compared by cross-validation (bench/router-quality.ts chooses the
// production one from these figures): each turns train rows into q estimates for test rows; costs
// always come from the production state so only the quality model differs.
//   node bench/router-quality-methods.ts [--data FILE] [--splits prompts,tasks] [--seeds 1,2,3] [--batch N]
//     [--variants '[{"method":"production"},{"tuning":{"temperature":0.05}},{"shape":{"keep":128}}]']
//     (methods: the names in METHODS, "resid:k:s:p:gate", "irt:k:s:p", "gated:k:lambda:lo:hi")
// Each variant's per-fold AIQ gain over the single-model hull is paired with variant #0's.
import { benchArgs } from './lib/args.ts';
import { readFileSync } from 'node:fs';
import { parseBench, type BenchRow } from '../src/router/bench/data.ts';
import { TUNING } from '../src/router/quality/tuning.ts';
import { evaluate } from '../src/router/bench/evaluate.ts';
import { KnnIndex } from '../src/router/bench/knn.ts';
import type { Estimates } from '../src/router/bench/sweep.ts';
import type { QualityState } from '../src/router/quality/types.ts';
import { predict } from '../src/router/quality/predict.ts';
import { SHAPE } from '../src/router/quality/features.ts';
import { folds } from './router-quality.ts';
import { median } from './lib/stats.ts';

export type Method = (train: readonly BenchRow[], test: readonly BenchRow[], state: QualityState) => (row: BenchRow, model: string) => number;

/** Wraps a q function into Estimates with the production state's costs. */
function withCosts(state: QualityState, test: readonly BenchRow[], q: (row: BenchRow, model: string) => number): Estimates[] {
  return test.map((r) => {
    const cands = [...r.outcomes.keys()].filter((m) => (state.models[m]?.n ?? 0) > 0);
    const est = predict(state, r.features, cands, { priors: null }).filter((e) => e.costUsd !== undefined);
    return { models: est.map((e) => e.model), q: Float64Array.from(est, (e) => q(r, e.model)), cost: Float64Array.from(est, (e) => e.costUsd!) };
  });
}

function tally(rows: readonly BenchRow[], key: (r: BenchRow) => string): Map<string, Map<string, [number, number]>> {
  const t = new Map<string, Map<string, [number, number]>>();
  for (const r of rows) {
    const k = key(r);
    let m = t.get(k); if (!m) { m = new Map(); t.set(k, m); }
    for (const [model, o] of r.outcomes) { const x = m.get(model) ?? [0, 0]; x[0]++; x[1] += o.score; m.set(model, x); }
  }
  return t;
}

const DIM = 1 << 16;

const logit = (p: number) => Math.log(Math.max(1e-4, Math.min(1 - 1e-4, p)) / (1 - Math.max(1e-4, Math.min(1 - 1e-4, p))));
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/**
 * Per-model logistic regression over the hashed features (folded to DIM) with an offset: `base`
 * gives the offset per (row, model) (0.5 = none); AdaGrad, L2, a few epochs, rows in a fixed order.
 */
function logistic(base: (row: BenchRow, m: string) => number, l2: number, lr: number, epochs: number): Method {
  return (train, _test, state) => {
    const off = (r: BenchRow, m: string) => logit(base(r, m));
    const W = new Map<string, { w: Float64Array; g: Float64Array; b: number; gb: number }>();
    const offs = new Map<BenchRow, Map<string, number>>();
    for (const r of train) offs.set(r, new Map([...r.outcomes.keys()].map((m) => [m, off(r, m)])));
    for (let e = 0; e < epochs; e++) {
      for (const r of train) {
        const x = r.features;
        for (const [m, o] of r.outcomes) {
          let p = W.get(m);
          if (!p) { p = { w: new Float64Array(DIM), g: new Float64Array(DIM).fill(1e-6), b: 0, gb: 1e-6 }; W.set(m, p); }
          let z = offs.get(r)!.get(m)! + p.b;
          for (let k = 0; k < x.idx.length; k++) z += p.w[x.idx[k]! & (DIM - 1)]! * x.val[k]!;
          const gr = sigmoid(z) - o.score;
          p.gb += gr * gr; p.b -= (lr * gr) / Math.sqrt(p.gb);
          for (let k = 0; k < x.idx.length; k++) {
            const i = x.idx[k]! & (DIM - 1);
            const g = gr * x.val[k]! + l2 * p.w[i]!;
            p.g[i]! += g * g; p.w[i]! -= (lr * g) / Math.sqrt(p.g[i]!);
          }
        }
      }
    }
    void state;
    return (row, m) => {
      const p = W.get(m);
      let z = off(row, m);
      if (p) { z += p.b; for (let k = 0; k < row.features.idx.length; k++) z += p.w[row.features.idx[k]! & (DIM - 1)]! * row.features.val[k]!; }
      return sigmoid(z);
    };
  };
}

/** Stacks a residual learner on a base method: the base's q (fitted on train) is the offset. */
function stacked(baseMethod: Method, l2: number, lr: number, epochs: number): Method {
  return (train, test, state) => {
    const q = baseMethod(train, test, state);
    return logistic(q, l2, lr, epochs)(train, test, state);
  };
}

/** Average of two methods' q. */
const blendOf = (a: Method, b: Method, wa = 0.5): Method => (train, test, state) => {
  const qa = a(train, test, state), qb = b(train, test, state);
  return (row, m) => wa * qa(row, m) + (1 - wa) * qb(row, m);
};

/** kNN regression with the bench's tuned-k baseline machinery, k fixed. */
function knnMethod(k: number): Method {
  return (train) => {
    const index = new KnnIndex(train);
    const cache = new Map<BenchRow, number[]>();
    return (row, m) => {
      let nb = cache.get(row);
      if (!nb) { const s = index.similarities(row); nb = Array.from(s.keys()).sort((x, y) => s[y]! - s[x]!).slice(0, k); cache.set(row, nb); }
      let sum = 0, n = 0;
      for (const j of nb) { const o = train[j]!.outcomes.get(m); if (o) { sum += o.score; n++; } }
      return n ? sum / n : 0.5;
    };
  };
}

/** The k train rows most similar to `row` (most similar first), their mean similarity, and every similarity. */
function nearest(index: KnnIndex, row: BenchRow, k: number): { nb: number[]; mean: number; sims: Float64Array } {
  const sims = index.similarities(row);
  const nb = Array.from(sims.keys()).sort((x, y) => sims[y]! - sims[x]!).slice(0, k);
  return { nb, mean: nb.reduce((a, j) => a + sims[j]!, 0) / Math.max(1, nb.length), sims };
}

/**
 * Experiment: the production q blended with kNN scores (k nearest train prompts), the blend weight
 * `lambda` gated by how near the neighbours are: full above a mean top-k similarity of `hi`, none below
 * `lo` (a prompt unlike the training data keeps the production q).
 */
function gatedBlend(k: number, lambda: number, lo: number, hi: number): Method {
  return (train, test, state) => {
    const base = production(train, test, state);
    const index = new KnnIndex(train);
    const cache = new Map<BenchRow, { nb: number[]; g: number }>();
    return (row, m) => {
      let c = cache.get(row);
      if (!c) {
        const { nb, mean } = nearest(index, row, k);
        c = { nb, g: lambda * Math.min(1, Math.max(0, (mean - lo) / Math.max(1e-9, hi - lo))) };
        cache.set(row, c);
      }
      const q = base(row, m);
      if (c.g === 0) return q;
      let sum = 0, n = 0;
      for (const j of c.nb) { const o = train[j]!.outcomes.get(m); if (o) { sum += o.score; n++; } }
      return n ? (1 - c.g) * q + c.g * (sum / n) : q;
    };
  };
}

const production: Method = (_train, _test, state) => {
  const cache = new Map<BenchRow, Map<string, number>>();
  return (row, m) => {
    let c = cache.get(row);
    if (!c) { const ms = [...row.outcomes.keys()]; c = new Map(predict(state, row.features, ms, { priors: null }).map((e) => [e.model, e.q])); cache.set(row, c); }
    return c.get(m)!;
  };
};

/**
 * The production prediction plus a local correction: each model's mean residual (score minus the
 * production q of the train prompt) over the k most similar train prompts (TF-IDF cosine, weights
 * sim^p), shrunk by `s` pseudo-outcomes, and faded out where the neighbours are not similar
 * (mean similarity below `gate`).
 */
function residualKnn(k: number, s: number, p: number, gate: number, keep = 0): Method {
  return (train, test, state) => {
    const base = production(train, test, state);
    // keep > 0: train prompts indexed by their `keep` largest coordinates only (a bounded store).
    const top = (r: BenchRow): BenchRow => {
      if (!keep || r.features.idx.length <= keep) return r;
      const o = r.features.val.map((_, i) => i).sort((a, b) => Math.abs(r.features.val[b]!) - Math.abs(r.features.val[a]!)).slice(0, keep);
      return { ...r, features: { ...r.features, idx: o.map((i) => r.features.idx[i]!), val: o.map((i) => r.features.val[i]!) } };
    };
    const index = new KnnIndex(train.map(top));
    const res = train.map((r) => new Map([...r.outcomes].map(([m, o]) => [m, o.score - base(r, m)])));
    const cache = new Map<BenchRow, { nb: number[]; w: number[]; g: number }>();
    return (row, m) => {
      let c = cache.get(row);
      if (!c) {
        const { nb, mean: ms, sims } = nearest(index, row, k);
        c = { nb, w: nb.map((j) => Math.max(0, sims[j]!) ** p), g: gate > 0 ? Math.min(1, ms / gate) : 1 };
        cache.set(row, c);
      }
      let sw = 0, sr = 0;
      c.nb.forEach((j, t) => { const r = res[j]!.get(m); if (r !== undefined) { sw += c.w[t]!; sr += c.w[t]! * r; } });
      return base(row, m) + c.g * (sr / (sw + s));
    };
  };
}

/**
 * IRT-style local correction: the neighbours' outcomes of every model (pooled: models agree on which
 * prompts are hard) give one logit shift of the prompt's difficulty, applied to each model's
 * production q in logit space (a strong model near 1 moves little); then, with `s2` > 0, each
 * model's own mean residual after that shift, shrunk by s2.
 */
function irtKnn(k: number, s1: number, s2: number): Method {
  return (train, test, state) => {
    const base = production(train, test, state);
    const index = new KnnIndex(train);
    const pb = train.map((r) => new Map([...r.outcomes.keys()].map((m) => [m, Math.min(0.999, Math.max(0.001, base(r, m)))])));
    const cache = new Map<BenchRow, { nb: number[]; w: number[]; delta: number }>();
    return (row, m) => {
      let c = cache.get(row);
      if (!c) {
        const sims = index.similarities(row);
        const nb = Array.from(sims.keys()).sort((x, y) => sims[y]! - sims[x]!).slice(0, k);
        const w = nb.map((j) => Math.max(0, sims[j]!));
        let g = 0, h = 0;
        nb.forEach((j, t) => { for (const [mm, o] of train[j]!.outcomes) { const p = pb[j]!.get(mm)!; g += w[t]! * (o.score - p); h += w[t]! * p * (1 - p); } });
        c = { nb, w, delta: g / (h + s1) };
        cache.set(row, c);
      }
      const q0 = Math.min(0.999, Math.max(0.001, base(row, m)));
      let q = sigmoid(logit(q0) + c.delta);
      if (s2 > 0) {
        let sw = 0, sr = 0;
        c.nb.forEach((j, t) => { const o = train[j]!.outcomes.get(m); if (o) { const p = sigmoid(logit(pb[j]!.get(m)!) + c.delta); sw += c.w[t]!; sr += c.w[t]! * (o.score - p); } });
        q += sr / (sw + s2);
      }
      return q;
    };
  };
}

const globalMean: Method = (train) => {
  const g = tally(train, () => '');
  return (_row, m) => { const y = g.get('')!.get(m) ?? [0, 0]; return y[0] ? y[1] / y[0] : 0.5; };
};

export const METHODS: Record<string, Method> = {
  production,
  /** No prompt conditioning: each model's mean score (routing then picks one model per W). */
  globalMean,
  knn40: knnMethod(40), knn80: knnMethod(80), knn160: knnMethod(160),
  logistic: (train, test, state) => logistic(globalMean(train, test, state), 1e-4, 0.05, 3)(train, test, state),
  logisticStrong: (train, test, state) => logistic(globalMean(train, test, state), 1e-3, 0.05, 3)(train, test, state),
  clusterPlusLogistic: stacked(production, 1e-3, 0.02, 2),
  clusterPlusLogisticWeak: stacked(production, 1e-2, 0.01, 2),
  clusterKnn: blendOf(production, knnMethod(80)),
  /** Upper bound of task-level routing: tables by the true task label (not available in production). */
  taskOracle: (train) => {
    const t = tally(train, (r) => r.task), g = tally(train, () => '');
    return (row, m) => { const x = t.get(row.task)?.get(m); const y = g.get('')!.get(m) ?? [0, 0]; const p = y[0] ? y[1] / y[0] : 0.5; return x ? (x[1] + 8 * p) / (x[0] + 8) : p; };
  },
};

type Variant = { name?: string; method?: string; shape?: Partial<typeof SHAPE>; tuning?: Partial<typeof TUNING>; idf?: boolean; chars?: { n: number; last: number; weight: number }; stats?: number };

/**
 * Experiment: prompt statistics as pseudo-words at `w` (length bucket of log2 characters, option
 * count, question marks, lines bucket), in otherwise unused indices, then unit length.
 */
function addStats(rows: BenchRow[], w: number): void {
  for (const r of rows) {
    const st = r.features.stats;
    const extra = [65000 + Math.min(20, Math.round(Math.log2(1 + st.chars) * 2)), 65100 + Math.min(8, st.choices), 65200 + Math.min(5, st.questions), 65300 + Math.min(12, Math.round(Math.log2(1 + st.lines) * 2))];
    const idx = [...r.features.idx], val = [...r.features.val];
    for (const i of extra) { const k = idx.indexOf(i); if (k >= 0) val[k] += w / 2; else { idx.push(i); val.push(w / 2); } }
    const n = Math.hypot(...val) || 1;
    r.features = { ...r.features, idx, val: val.map((v) => Math.round((v / n) * 1e4) / 1e4) };
  }
}

/**
 * Experiment: character n-grams of the prompt's last `last` characters added to every row's vector
 * at `weight` (unit length each, summed, the 256 largest kept, unit length): would the schema-1
 * character namespace pay for its extraction cost?
 */
function addCharGrams(rows: BenchRow[], c: { n: number; last: number; weight: number }): void {
  for (const r of rows) {
    const t = r.prompt.slice(-c.last).toLowerCase();
    const m = new Map<number, number>();
    for (let i = 0; i + c.n <= t.length; i++) {
      let h = 0x2c1b3c6d ^ c.n;
      for (let j = i; j < i + c.n; j++) h = Math.imul(h ^ t.charCodeAt(j), 16777619);
      h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13;
      m.set(h & 0xffff, (m.get(h & 0xffff) ?? 0) + (h < 0 ? -1 : 1));
    }
    let n2 = 0;
    for (const v of m.values()) n2 += Math.log1p(Math.abs(v)) ** 2;
    const sc = n2 > 0 ? c.weight / Math.sqrt(n2) : 0;
    const sum = new Map<number, number>();
    r.features.idx.forEach((i, k) => sum.set(i, r.features.val[k]!));
    for (const [i, v] of m) sum.set(i, (sum.get(i) ?? 0) + Math.sign(v) * Math.log1p(Math.abs(v)) * sc);
    const kept = [...sum].filter(([, v]) => v !== 0).sort((x, y) => Math.abs(y[1]) - Math.abs(x[1])).slice(0, 256);
    let norm = 0;
    for (const [, v] of kept) norm += v * v;
    norm = Math.sqrt(norm) || 1;
    r.features = { ...r.features, idx: kept.map(([i]) => i), val: kept.map(([, v]) => Math.round((v / norm) * 1e4) / 1e4) };
  }
}

/** Experiment: every row's features reweighted by IDF over all rows (an upper bound of what a learned IDF could give). */
function idfRows(rows: BenchRow[]): void {
  const df = new Map<number, number>();
  for (const r of rows) for (const i of r.features.idx) df.set(i, (df.get(i) ?? 0) + 1);
  for (const r of rows) {
    const val = r.features.val.map((v, k) => v * Math.log((rows.length + 1) / (df.get(r.features.idx[k]!)! + 1)));
    const n = Math.hypot(...val) || 1;
    r.features = { ...r.features, val: val.map((v) => v / n) };
  }
}

if (import.meta.main) {
  const { values: a } = benchArgs({ options: {
    data: { type: 'string', default: new URL('../../shared/router-bench/routerbench-dev.jsonl', import.meta.url).pathname },
    variants: { type: 'string', default: '[{"method":"production"},{"method":"taskOracle"}]' },
    splits: { type: 'string', default: 'prompts,tasks' },
    seeds: { type: 'string', default: '1' },
    batch: { type: 'string', default: '5000' },
  } });
  const variants = JSON.parse(a.variants!) as Variant[];
  const baseShape = structuredClone(SHAPE), baseTuning = structuredClone(TUNING);
  const text = readFileSync(a.data!, 'utf8');
  const results = new Map<string, Map<string, number[]>>(); // split -> variant -> per-fold (router - single)
  for (const [vi, v] of variants.entries()) {
    const name = v.name ?? `${v.method ?? 'production'}${v.idf ? ' idf' : ''}${v.chars ? ' chars ' + JSON.stringify(v.chars) : ''}${v.stats ? ' stats ' + v.stats : ''}${v.shape ? ' shape ' + JSON.stringify(v.shape) : ''}${v.tuning ? ' ' + JSON.stringify(v.tuning) : ''}`;
    Object.assign(SHAPE, structuredClone(baseShape), v.shape ?? {});
    Object.assign(TUNING, baseTuning, v.tuning ?? {});
    const rows = parseBench(text, a.data!);
    if (v.idf) idfRows(rows);
    if (v.chars) addCharGrams(rows, v.chars);
    if (v.stats) addStats(rows, v.stats);
    // "resid:k:s:p:gate" names a residualKnn variant.
    const rk = /^resid:(\d+):([\d.]+):([\d.]+):([\d.]+)(?::(\d+))?$/.exec(v.method ?? '');
    const ik = /^irt:(\d+):([\d.]+):([\d.]+)$/.exec(v.method ?? '');
    const gk = /^gated:(\d+):([\d.]+):([\d.]+):([\d.]+)$/.exec(v.method ?? '');
    const method = gk ? gatedBlend(Number(gk[1]), Number(gk[2]), Number(gk[3]), Number(gk[4])) : ik ? irtKnn(Number(ik[1]), Number(ik[2]), Number(ik[3])) : rk ? residualKnn(Number(rk[1]), Number(rk[2]), Number(rk[3]), Number(rk[4]), Number(rk[5] ?? 0)) : METHODS[v.method ?? 'production'];
    if (!method) throw new Error(`unknown method ${v.method}`);
    for (const split of a.splits!.split(',')) {
      const fs = split === 'prompts' ? a.seeds!.split(',').flatMap((seed) => folds(rows, split, 5, Number(seed))) : folds(rows, split, 5, 1);
      const t0 = performance.now();
      const d: number[] = [], r: number[] = [], c: number[] = [];
      for (const f of fs) {
        const e = evaluate(f.train, f.test, { ...f.opts, noKnn: true, batch: Number(a.batch), estimates: (tr, te, st) => withCosts(st, te, method(tr, te, st)) });
        r.push(e.router.aiq); d.push(e.router.aiq - e.bestSingleHull); c.push((e.routerCostAtBest ?? NaN) / e.best.cost);
      }
      let bySplit = results.get(split); if (!bySplit) { bySplit = new Map(); results.set(split, bySplit); }
      bySplit.set(name, d);
      const first = [...bySplit.values()][0]!;
      const paired = d.map((x, i) => x - first[i]!);
      console.log(`${split.padEnd(8)} #${vi} ${name.slice(0, 90).padEnd(90)} AIQ ${mean(r).toFixed(4)} ± ${sd(r).toFixed(4)}  vs single ${mean(d).toFixed(4)} ± ${sd(d).toFixed(4)}  vs #0 ${mean(paired) >= 0 ? '+' : ''}${mean(paired).toFixed(4)} ± ${(sd(paired) / Math.sqrt(paired.length)).toFixed(4)}  reached ${c.filter((x) => x < 1).length}/${c.length} half ${c.filter((x) => x < 0.5).length} cost at best single (median, 1 = not reached) ${median(c.map((x) => (x < 1 ? x : 1))).toFixed(2)}  (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
  }
}

function mean(xs: number[]): number { return xs.reduce((s, x) => s + x, 0) / xs.length; }
function sd(xs: number[]): number { const m = mean(xs); return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, xs.length - 1)); }
