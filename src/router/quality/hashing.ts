// Signed feature hashing into one sparse vector: a dense, cache-sized table of small signed counts
// (one array access per n-gram, slots in use listed) turned into the stored vector at the end.
// Module-level scratch, so extracting a prompt allocates only its result.

/** Bits of the hashed index space: indices are in [0, 2^HASH_BITS). */
export const HASH_BITS = 16;
export const FEATURE_DIM = 1 << HASH_BITS;
const MASK = FEATURE_DIM - 1;

/** Namespaces of the vector: each has its own hash seed and weight (features.ts sets the weights). */
export const NAMESPACES = 2;
const SEED = [0x1b873593, 0x2c1b3c6d] as const;

// Per index, its position among the touched ones + 1 (0: untouched); per touched position, the
// index, the namespace that touched it first and the signed count (sequential, for finishVector).
const slot = new Int32Array(FEATURE_DIM);
const touched = new Int32Array(FEATURE_DIM);
const touchedNs = new Uint8Array(FEATURE_DIM);
const counts = new Int32Array(FEATURE_DIM);
let nTouched = 0;

/** murmur3's finaliser: spreads the bits of an FNV hash so low bits make a good index. */
function fmix(h: number): number {
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Counts a hashed n-gram `h` w times in namespace `ns`: index from the low bits, sign from the top bit. */
export function bump(h: number, ns: number, w: number): void {
  const m = fmix(h ^ SEED[ns as 0 | 1]);
  const i = m & MASK;
  let t = slot[i]! - 1;
  if (t < 0) { t = nTouched++; slot[i] = t + 1; touched[t] = i; touchedNs[t] = ns; counts[t] = 0; }
  counts[t] += m < 0 ? -w : w;
}

/** log1p of small whole counts, the usual case (most n-grams occur once or a few times). */
const LOG1P = Float64Array.from({ length: 64 }, (_, i) => Math.log1p(i));
const vals = new Float64Array(FEATURE_DIM);
const norms = new Float64Array(NAMESPACES);
const HIST = 256;
const hist = new Int32Array(HIST);

/**
 * The vector of everything counted since the last call, which it clears: per namespace sublinear
 * counts (sign x log1p |count|) at unit length times weight[ns], summed; about the `keep` largest
 * weights (a magnitude histogram, then a sort of one bin), unit length, rounded to 1e-4; unique indices.
 */
export function finishVector(weight: ArrayLike<number>, keep: number): { idx: number[]; val: number[] } {
  norms.fill(0);
  let wmax = 0;
  for (let k = 0; k < NAMESPACES; k++) wmax = Math.max(wmax, weight[k]!);
  for (let t = 0; t < nTouched; t++) {
    const c = counts[t]!, a = c < 0 ? -c : c;
    slot[touched[t]!] = 0;
    const l = a < 64 ? LOG1P[a]! : Math.log1p(a);
    vals[t] = c < 0 ? -l : l;
    norms[touchedNs[t]!] += l * l;
  }
  for (let k = 0; k < NAMESPACES; k++) norms[k] = norms[k]! > 0 ? weight[k]! / Math.sqrt(norms[k]!) : 0;
  for (let t = 0; t < nTouched; t++) vals[t] = vals[t]! * norms[touchedNs[t]!]!;
  // Over `keep` weights: the bin holding the keep-th largest magnitude; within it, the exact keep-th
  // (ties keep a few more). A short prompt has fewer: all are kept, with no histogram to fill and scan.
  let above = 0, limit = 1e-9;
  if (nTouched > keep) {
    // Every weight is at most wmax (a namespace has unit length before its weight): bins need no max pass.
    const scale = wmax > 0 ? (HIST - 1) / wmax : 0;
    hist.fill(0);
    for (let t = 0; t < nTouched; t++) { const v = vals[t]!; hist[Math.min(HIST - 1, Math.floor((v < 0 ? -v : v) * scale))]!++; }
    let b = HIST - 1;
    for (; b > 0; b--) { if (above + hist[b]! >= keep) break; above += hist[b]!; }
    const inBin: number[] = [];
    for (let t = 0; t < nTouched; t++) { const a = Math.abs(vals[t]!); if (Math.min(HIST - 1, Math.floor(a * scale)) === b) inBin.push(a); }
    inBin.sort((x, y) => y - x);
    limit = Math.max(limit, inBin[Math.min(inBin.length, keep - above) - 1] ?? 0);
    // Magnitudes above the limit are all kept: count them, so only the rest go to ties.
    above = 0;
    for (let t = 0; t < nTouched; t++) if (Math.abs(vals[t]!) > limit) above++;
  }
  const n = Math.min(nTouched, keep);
  const idx: number[] = new Array(n);
  const val: number[] = new Array(n);
  // Magnitudes tie often (every n-gram seen once in a namespace weighs the same): at the limit,
  // the first seen are kept, up to `keep` in all.
  let k = 0, norm = 0, ties = keep - above;
  for (let t = 0; t < nTouched; t++) {
    const v = vals[t]!, a = v < 0 ? -v : v;
    if (a < limit) continue;
    if (a === limit && nTouched > keep && ties-- <= 0) continue;
    idx[k] = touched[t]!; val[k] = v; k++; norm += v * v;
  }
  nTouched = 0;
  if (k < n) { idx.length = k; val.length = k; }
  const s = norm > 0 ? 1e4 / Math.sqrt(norm) : 0;
  for (let j = 0; j < k; j++) val[j] = Math.round(val[j]! * s) / 1e4;
  return { idx, val };
}
