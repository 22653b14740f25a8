// Prompt clusters: spherical k-means over the hashed feature vectors, grown batch by batch
// (k-means++ seeding of new centroids, mini-batch updates of old ones), and a compiled inverted
// index that gives a prompt's similarity to every centroid in a few microseconds.
import { FEATURE_DIM } from './hashing.ts';
import type { Tally } from './stats.ts';
import type { TaskKind } from './types.ts';
import { TUNING } from './tuning.ts';

export type Vec = { idx: number[]; val: number[] };

/** One cluster: its mean vector (top coordinates), mass, member similarity and per-model tallies. */
export type Cluster = {
  idx: number[];
  val: number[];
  /** Prompts assigned (weighted, decayed). */
  n: number;
  /** Tally of members' similarity to the centroid when assigned: tells in- from out-of-distribution. */
  sim: Tally;
  /** Per model, per task kind (a cluster may hold prompts of several kinds while it is young). */
  models: Record<string, Partial<Record<TaskKind, Tally>>>;
};

export const targetClusters = (prompts: number): number =>
  Math.max(1, Math.min(TUNING.clusterMax, Math.round(Math.sqrt(prompts / TUNING.perSqrt))));

/**
 * Inverted index over unit-normalised centroids: feature index -> postings (cluster, weight), in
 * an open-addressing table of typed arrays (a Map of arrays cost 3x more per prompt).
 */
export type CentroidIndex = { k: number; mask: number; keys: Int32Array; start: Int32Array; end: Int32Array; cluster: Int32Array; weight: Float64Array };

export function indexCentroids(cs: readonly Vec[]): CentroidIndex {
  const lists = new Map<number, number[]>();
  let total = 0;
  cs.forEach((v, c) => {
    let n = 0;
    for (const x of v.val) n += x * x;
    const s = n > 0 ? 1 / Math.sqrt(n) : 0;
    for (let j = 0; j < v.idx.length; j++) {
      if (v.val[j] === 0) continue;
      let l = lists.get(v.idx[j]!);
      if (!l) { l = []; lists.set(v.idx[j]!, l); }
      l.push(c, v.val[j]! * s);
      total++;
    }
  });
  let size = 16;
  while (size < lists.size * 2) size <<= 1;
  const ix: CentroidIndex = {
    k: cs.length, mask: size - 1, keys: new Int32Array(size).fill(-1), start: new Int32Array(size), end: new Int32Array(size),
    cluster: new Int32Array(total), weight: new Float64Array(total),
  };
  let at = 0;
  for (const [key, l] of lists) {
    let h = Math.imul(key, 0x9e3779b1) & ix.mask;
    while (ix.keys[h] !== -1) h = (h + 1) & ix.mask;
    ix.keys[h] = key; ix.start[h] = at;
    for (let t = 0; t < l.length; t += 2) { ix.cluster[at] = l[t]!; ix.weight[at] = l[t + 1]!; at++; }
    ix.end[h] = at;
  }
  return ix;
}

/** Cosine similarity of a unit vector to every centroid, written into out (length >= k). */
export function similarities(ix: CentroidIndex, v: Vec, out: Float64Array): Float64Array {
  out.fill(0, 0, ix.k);
  const { keys, mask } = ix;
  for (let j = 0; j < v.idx.length; j++) {
    const key = v.idx[j]!;
    let h = Math.imul(key, 0x9e3779b1) & mask;
    let k = keys[h]!;
    while (k !== key && k !== -1) { h = (h + 1) & mask; k = keys[h]!; }
    if (k === -1) continue;
    const x = v.val[j]!;
    for (let t = ix.start[h]!, e = ix.end[h]!; t < e; t++) out[ix.cluster[t]!] += x * ix.weight[t]!;
  }
  return out;
}

/** Index of the largest of the first k similarities (-1 if k = 0). */
export function nearest(s: Float64Array, k: number): number {
  let b = -1, bs = -Infinity;
  for (let c = 0; c < k; c++) if (s[c]! > bs) { bs = s[c]!; b = c; }
  return b;
}

const scratch = new Float64Array(FEATURE_DIM);

/** The mean of old (mass n) and new members (weights w, summed in scratch), top coordinates. */
function blend(old: Vec, n: number, members: readonly Vec[], w: readonly number[], m: number): Vec {
  const touched: number[] = [];
  const put = (i: number, x: number) => { if (scratch[i] === 0) touched.push(i); const v = scratch[i]! + x; scratch[i] = v === 0 ? 1e-300 : v; };
  for (let j = 0; j < old.idx.length; j++) put(old.idx[j]!, old.val[j]! * n);
  for (let k = 0; k < members.length; k++) {
    const p = members[k]!, wk = w[k]!;
    for (let j = 0; j < p.idx.length; j++) put(p.idx[j]!, p.val[j]! * wk);
  }
  let keep = touched;
  if (touched.length > TUNING.centroidKeep) keep = touched.slice().sort((x, y) => Math.abs(scratch[y]!) - Math.abs(scratch[x]!)).slice(0, TUNING.centroidKeep);
  keep.sort((x, y) => x - y);
  const t = n + m;
  const vec = { idx: keep, val: keep.map((i) => Math.round((scratch[i]! / t) * 1e5) / 1e5) };
  for (const i of touched) scratch[i] = 0;
  return vec;
}

/** Deterministic PRNG (mulberry32): training must be a pure function of its inputs. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}

/**
 * Grows and refines centroids with a batch of prompts (weights w): new centroids up to `target`
 * are seeded k-means++ style from prompts far from every existing one, then a few Lloyd passes
 * move each centroid to the blend of its old mean (worth its mass) and its members in the batch.
 * Returns the centroids (old ones first, in order, so their tallies stay attached) and masses.
 */
export function refine(old: ReadonlyArray<{ vec: Vec; n: number }>, prompts: readonly Vec[], w: readonly number[], target: number, seed: number): Array<{ vec: Vec; n: number }> {
  const cs = old.map((c) => ({ vec: c.vec, n: c.n }));
  if (prompts.length === 0) return cs;
  const rnd = rng(seed);
  const sims = new Float64Array(TUNING.clusterMax + 1);
  let ix = indexCentroids(cs.map((c) => c.vec));
  const far = prompts.map((p) => (cs.length ? 1 - similarities(ix, p, sims)[nearest(sims, cs.length)]! : 1));
  while (cs.length < target && cs.length < prompts.length + old.length) {
    let tot = 0;
    for (let i = 0; i < far.length; i++) tot += Math.max(0, far[i]!) ** 2 * w[i]!;
    if (!(tot > 1e-12)) break; // every prompt already sits on a centroid
    let r = rnd() * tot, pick = 0;
    for (; pick < far.length - 1; pick++) { r -= Math.max(0, far[pick]!) ** 2 * w[pick]!; if (r <= 0) break; }
    cs.push({ vec: prompts[pick]!, n: 0 });
    ix = indexCentroids([prompts[pick]!]);
    for (let i = 0; i < prompts.length; i++) far[i] = Math.min(far[i]!, 1 - similarities(ix, prompts[i]!, sims)[0]!);
  }
  for (let it = 0; it < TUNING.iterations; it++) {
    ix = indexCentroids(cs.map((c) => c.vec));
    const members = cs.map(() => ({ vecs: [] as Vec[], w: [] as number[], mass: 0 }));
    for (let i = 0; i < prompts.length; i++) {
      const m = members[nearest(similarities(ix, prompts[i]!, sims), cs.length)]!;
      m.vecs.push(prompts[i]!); m.w.push(w[i]!); m.mass += w[i]!;
    }
    let moved = false;
    for (let c = 0; c < cs.length; c++) {
      const m = members[c]!;
      if (m.mass <= 0) continue;
      const base = old[c];
      cs[c] = { vec: blend(base ? base.vec : { idx: [], val: [] }, base ? base.n : 0, m.vecs, m.w, m.mass), n: (base?.n ?? 0) + m.mass };
      moved = true;
    }
    if (!moved) break;
  }
  return cs;
}

/** Soft assignment: writes up to TUNING.top (cluster, share) pairs into cs/as; returns how many. */
export function assign(s: Float64Array, k: number, cs: Int32Array, as: Float64Array): number {
  let n = 0;
  for (let c = 0; c < k; c++) {
    // insertion into a tiny sorted list (top 3 of at most 64)
    let pos = n;
    while (pos > 0 && s[cs[pos - 1]!]! < s[c]!) pos--;
    if (pos >= TUNING.top) continue;
    for (let t = Math.min(n, TUNING.top - 1); t > pos; t--) cs[t] = cs[t - 1]!;
    cs[pos] = c;
    if (n < TUNING.top) n++;
  }
  if (n === 0) return 0;
  const top = s[cs[0]!]!;
  let z = 0;
  for (let t = 0; t < n; t++) { as[t] = Math.exp((s[cs[t]!]! - top) / TUNING.temperature); z += as[t]!; }
  for (let t = 0; t < n; t++) as[t] = as[t]! / z;
  return n;
}
