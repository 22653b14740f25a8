// The local correction: a bounded sample of the prompts seen, each with the models' outcomes on it
// and what the additive model (additive.ts) got wrong there (the residual). predict moves a model's
// q by its similarity-weighted mean residual over the prompt's nearest stored prompts, shrunk by
// evidence: a kNN over residuals rather than over scores, so near neighbours add what is local and
// far ones (a new kind of prompt) add nearly nothing, leaving the additive model's generalisation.
import type { Vec } from './clusters.ts';
import { FEATURE_DIM } from './hashing.ts';
import { TUNING } from './tuning.ts';
import type { TaskKind } from './types.ts';

/** One stored prompt: its strongest coordinates and, per model, weight, score sum and residual. */
export type Exemplar = {
  /** Content hash of the prompt's features (outcomes of one prompt share an exemplar). */
  key: number;
  /** Its task kind (the additive model's residual is taken at it). */
  kind: TaskKind;
  idx: number[];
  val: number[];
  /** Models answered here, with their (decayed) weight, weighted score sum and residual (train sets it). */
  m: string[];
  n: number[];
  s: number[];
  r: number[];
};

export type PromptOutcomes = { key: number; kind: TaskKind; vec: Vec; outs: Array<{ model: string; w: number; score: number }> };

/** Sampling rank of a key: the sample keeps the smallest ranks (uniform, independent of order). */
function rank(key: number): number {
  let h = Math.imul(key ^ 0x5bd1e995, 0x85ebca6b);
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The `keep` largest coordinates of a vector, ascending by index. */
function strongest(v: Vec, keep: number): Vec {
  if (v.idx.length <= keep) return { idx: v.idx.slice(), val: v.val.slice() };
  const order = v.idx.map((_, j) => j).sort((a, b) => Math.abs(v.val[b]!) - Math.abs(v.val[a]!) || a - b).slice(0, keep).sort((a, b) => v.idx[a]! - v.idx[b]!);
  return { idx: order.map((j) => v.idx[j]!), val: order.map((j) => v.val[j]!) };
}

/**
 * Returns the sample with `prompts` folded in (the input is not modified; its vectors are shared): outcomes of a stored
 * prompt add to it; new prompts join; prompts whose evidence decayed below `minWeight` leave; past
 * TUNING.exemplars the smallest sampling ranks stay, and each prompt past the bound gives its
 * outcomes to the stored prompt most like it (at least TUNING.mergeSimilarity alike; less alike,
 * they are dropped), so the sample stays bounded while its evidence keeps growing with the history.
 * Residuals of changed entries are stale until setResiduals runs.
 */
export function foldExemplars(items: readonly Exemplar[], prompts: readonly PromptOutcomes[]): Exemplar[] {
  const out = new Map<number, Exemplar>();
  for (const e of items) out.set(e.key, { ...e, m: e.m.slice(), n: e.n.slice(), s: e.s.slice(), r: e.r.slice() });
  for (const p of prompts) {
    let e = out.get(p.key);
    if (!e) { const v = strongest(p.vec, TUNING.exemplarCoords); e = { key: p.key, kind: p.kind, idx: v.idx, val: v.val, m: [], n: [], s: [], r: [] }; out.set(p.key, e); }
    for (const o of p.outs) addOutcome(e, o.model, o.w, o.w * o.score);
  }
  const all = [...out.values()].filter((e) => e.n.some((n) => n >= TUNING.exemplarMinWeight));
  all.sort((a, b) => rank(a.key) - rank(b.key) || a.key - b.key);
  if (all.length <= TUNING.exemplars) { for (const e of all) trimModels(e); return all; }
  const kept = all.slice(0, TUNING.exemplars);
  if (TUNING.mergeSimilarity > 1) return kept;
  const ix = indexExemplars(kept, new Map());
  for (let x = TUNING.exemplars; x < all.length; x++) {
    const e = all[x]!;
    const near = nearestExemplar(ix, e);
    if (near.at < 0 || near.sim < TUNING.mergeSimilarity) continue;
    const to = kept[near.at]!;
    for (let j = 0; j < e.m.length; j++) addOutcome(to, e.m[j]!, e.n[j]!, e.s[j]!);
  }
  for (const e of kept) trimModels(e);
  return kept;
}

/**
 * Bounds a stored prompt's models: an entry whose (decayed) weight fell below
 * TUNING.exemplarMinWeight leaves, as a whole prompt does; past TUNING.exemplarModels the heaviest
 * stay (ties to the earlier entry). Live traffic answers a prompt with one model, so a merged group
 * gathers an entry per model its prompts went to; without this the sample's size grew with the
 * models in use as well as with the bound.
 */
function trimModels(e: Exemplar): void {
  let light = false;
  for (const n of e.n) if (n < TUNING.exemplarMinWeight) { light = true; break; }
  if (!light && e.m.length <= TUNING.exemplarModels) return;
  let keep = e.m.map((_, j) => j).filter((j) => e.n[j]! >= TUNING.exemplarMinWeight);
  if (keep.length > TUNING.exemplarModels) keep = keep.sort((a, b) => e.n[b]! - e.n[a]! || a - b).slice(0, TUNING.exemplarModels).sort((a, b) => a - b);
  e.m = keep.map((j) => e.m[j]!); e.n = keep.map((j) => e.n[j]!); e.s = keep.map((j) => e.s[j]!); e.r = keep.map((j) => e.r[j]!);
}

function addOutcome(e: Exemplar, model: string, n: number, s: number): void {
  let j = e.m.indexOf(model);
  if (j < 0) { j = e.m.length; e.m.push(model); e.n.push(0); e.s.push(0); e.r.push(0); }
  e.n[j] += n; e.s[j] += s;
}

/** A score `from` folded into a stored prompt with weight w, now `to` (a correction). */
export type ScoreCorrection = { key: number; model: string; w: number; from: number; to: number };

/**
 * Moves the score sums of the stored prompts the corrections name, in place (a prompt or model no
 * longer kept is left alone). Residuals are stale until setResiduals runs.
 */
export function correctExemplars(items: Exemplar[], corrections: readonly ScoreCorrection[]): void {
  if (corrections.length === 0) return;
  const byKey = new Map(items.map((e) => [e.key, e]));
  for (const c of corrections) {
    const e = byKey.get(c.key);
    const j = e ? e.m.indexOf(c.model) : -1;
    if (!e || j < 0 || !(e.n[j]! > 0)) continue;
    e.s[j] = Math.min(e.n[j]!, Math.max(0, e.s[j]! + c.w * (c.to - c.from)));
  }
}

/** Sets each entry's residual: its mean score minus `base` (the additive model's q there; undefined: 0). */
export function setResiduals(items: Exemplar[], base: (e: Exemplar, model: string) => number | undefined): void {
  for (const e of items) {
    for (let j = 0; j < e.m.length; j++) {
      const q = e.n[j]! > 0 ? base(e, e.m[j]!) : undefined;
      e.r[j] = q === undefined ? 0 : Math.round((e.s[j]! / e.n[j]! - q) * 1e4) / 1e4;
    }
  }
}

/**
 * Exemplars compiled for predict: postings of IDF-weighted unit vectors by feature index, in flat
 * typed arrays addressed directly by the index (the hashed space is FEATURE_DIM wide: no table
 * probing), and flat outcome arrays.
 */
export type LocalIndex = {
  n: number; start: Int32Array; end: Int32Array; post: Int32Array; weight: Float64Array;
  /** IDF per feature index; 0 for a feature no stored prompt has (the query then counts maxIdf in its norm). */
  idf: Float64Array; maxIdf: number;
  /** Outcomes of exemplar x: outModel/outN/outR[outStart[x] .. outStart[x + 1]). */
  outStart: Int32Array; outModel: Int32Array; outN: Float64Array; outR: Float64Array;
};

/** Builds the index (typed arrays only, a few ms for 2,048 prompts); `modelIndex` numbers the models (outcomes of others are left out). */
export function indexExemplars(items: readonly Exemplar[], modelIndex: ReadonlyMap<string, number>): LocalIndex {
  const D = FEATURE_DIM;
  const df = new Int32Array(D);
  for (const e of items) for (const i of e.idx) if (i >= 0 && i < D) df[i]++;
  const N = items.length;
  // A feature in more than TUNING.commonShare of the prompts gets no postings (it still counts in
  // every norm): such words weigh little after IDF but would make most of the similarity work.
  const common = Math.max(8, Math.floor(N * TUNING.commonShare));
  const start = new Int32Array(D), end = new Int32Array(D), idf = new Float64Array(D);
  let total = 0;
  for (let f = 0; f < D; f++) {
    const d = df[f]!;
    start[f] = total; end[f] = total;
    if (d === 0) continue;
    idf[f] = Math.log((N + 1) / (d + 1)) + 1;
    if (d <= common) total += d;
  }
  const post = new Int32Array(total), weight = new Float64Array(total);
  let outs = 0;
  for (let x = 0; x < N; x++) {
    const e = items[x]!;
    let norm = 0;
    for (let j = 0; j < e.idx.length; j++) { const f = e.idx[j]!; if (f >= 0 && f < D) norm += (e.val[j]! * idf[f]!) ** 2; }
    const sc = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let j = 0; j < e.idx.length; j++) {
      const f = e.idx[j]!;
      if (f < 0 || f >= D || df[f]! > common) continue;
      const t = end[f]!++;
      post[t] = x; weight[t] = e.val[j]! * idf[f]! * sc;
    }
    for (const m of e.m) if (modelIndex.has(m)) outs++;
  }
  const outStart = new Int32Array(N + 1), outModel = new Int32Array(outs), outN = new Float64Array(outs), outR = new Float64Array(outs);
  let o = 0;
  for (let x = 0; x < N; x++) {
    const e = items[x]!;
    outStart[x] = o;
    for (let j = 0; j < e.m.length; j++) {
      const m = modelIndex.get(e.m[j]!);
      if (m === undefined) continue;
      outModel[o] = m; outN[o] = e.n[j]!; outR[o] = e.r[j]!; o++;
    }
  }
  outStart[N] = o;
  return { n: N, start, end, post, weight, idf, maxIdf: Math.log(N + 1) + 1, outStart, outModel, outN, outR };
}

let sims = new Float64Array(0);
let hit = new Int32Array(0);
/** The query's norm's inverse, set by gather. */
let queryScale = 0;
const HIST = 128;
const hist = new Int32Array(HIST);

/**
 * Accumulates the query's unnormalised similarity to every stored prompt that shares a feature
 * with it into `sims` (listing them in `hit`; the rest stay 0) and sets queryScale. Returns how
 * many were hit; the caller reads them and sets `sims` back to 0.
 */
function gather(ix: LocalIndex, v: Vec): number {
  if (sims.length < ix.n) { sims = new Float64Array(ix.n * 2); hit = new Int32Array(ix.n * 2); }
  let nHit = 0, qn = 0;
  for (let j = 0; j < v.idx.length; j++) {
    const f = v.idx[j]!;
    const idf = f >= 0 && f < FEATURE_DIM ? ix.idf[f]! : 0;
    if (idf === 0) { qn += (v.val[j]! * ix.maxIdf) ** 2; continue; }
    const x = v.val[j]! * idf;
    qn += x * x;
    for (let t = ix.start[f]!, e = ix.end[f]!; t < e; t++) {
      const p = ix.post[t]!, w = ix.weight[t]!;
      if (sims[p] === 0) hit[nHit++] = p;
      sims[p] += x * w === 0 ? 1e-300 : x * w;
    }
  }
  queryScale = qn > 0 ? 1 / Math.sqrt(qn) : 0;
  return nHit;
}

/** The stored prompt most like `v` (cosine over the index's IDF-weighted vectors) and its similarity; at -1 when none shares a feature. */
export function nearestExemplar(ix: LocalIndex, v: Vec): { at: number; sim: number } {
  if (ix.n === 0) return { at: -1, sim: 0 };
  const nHit = gather(ix, v);
  let at = -1, best = 0;
  for (let t = 0; t < nHit; t++) {
    const x = hit[t]!, s = sims[x]! * queryScale;
    sims[x] = 0;
    if (s > best || (s === best && at >= 0 && x < at)) { best = s; at = x; }
  }
  return { at, sim: best };
}

/**
 * Per model (by index), the shrunk similarity-weighted mean residual over the TUNING.neighbours
 * nearest exemplars, written into corr (zeroed first; wsum is scratch of the same length).
 * Returns the number of neighbours used.
 */
export function localCorrection(ix: LocalIndex, v: Vec, corr: Float64Array, wsum: Float64Array): number {
  corr.fill(0); wsum.fill(0);
  if (ix.n === 0 || TUNING.neighbours <= 0) return 0;
  const nHit = gather(ix, v);
  const qs = queryScale;
  // The k nearest: the similarity bin that holds the k-th largest, by a histogram (no sort).
  hist.fill(0);
  for (let t = 0; t < nHit; t++) { const s = sims[hit[t]!]! * qs; if (s > 0) hist[Math.min(HIST - 1, Math.floor(s * HIST))]!++; }
  let above = 0, b = HIST - 1;
  for (; b > 0; b--) { if (above + hist[b]! >= TUNING.neighbours) break; above += hist[b]!; }
  // Within bin b, the (k - above) largest: the smallest of them is the floor (ties may add a few).
  const inBin: number[] = [];
  for (let t = 0; t < nHit; t++) { const s = sims[hit[t]!]! * qs; if (s > 0 && Math.min(HIST - 1, Math.floor(s * HIST)) === b) inBin.push(s); }
  inBin.sort((p, q) => q - p);
  // No bin reached k (fewer than k prompts share a feature with this one, all in bins above 0): all of them count.
  const floor = inBin.length === 0 ? Number.MIN_VALUE : inBin[Math.min(inBin.length, TUNING.neighbours - above) - 1]!;
  let used = 0;
  for (let t = 0; t < nHit; t++) {
    const x = hit[t]!, s = sims[x]! * qs;
    sims[x] = 0;
    if (!(s > 0) || s < floor) continue;
    used++;
    for (let o = ix.outStart[x]!, e = ix.outStart[x + 1]!; o < e; o++) {
      const m = ix.outModel[o]!, w = s * ix.outN[o]!;
      wsum[m] += w; corr[m] += w * ix.outR[o]!;
    }
  }
  for (let m = 0; m < corr.length; m++) if (wsum[m]! > 0) corr[m] = corr[m]! / (wsum[m]! + TUNING.localStrength);
  return used;
}
