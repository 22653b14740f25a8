// The additive quality model fitted from the state's tallies: quality of model m on a prompt of
// kind k in cluster c = a0 + alpha[k] + gamma[c,k] (how hard such prompts are for every model)
// + beta[m] + eps[m,k] + phi[m,c,k] (how much better this model does overall, on the kind, here).
// Every term but a0 is shrunk toward 0 by its own strength, so a model seen on one kind of prompt
// is predicted on others by its offset against the models seen there, not by its raw mean on what
// it happened to answer. Fitted by backfitting to convergence, warm-started from the last fit.

/** One observed cell: model, kind, cluster (indices), weighted count and sum of scores. */
export type Cell = { m: number; k: number; c: number; n: number; s: number };

/** Shrinkage strengths (pseudo-outcomes) of each term. */
export type Strengths = { alpha: number; gamma: number; beta: number; eps: number; phi: number };

/** Fitted terms in index form: gamma by c * kinds + k, eps by m * kinds + k, phi per cell. */
export type AdditiveFit = { a0: number; alpha: Float64Array; gamma: Map<number, number>; beta: Float64Array; eps: Map<number, number>; phi: Float64Array; sweeps: number };

/** Stop when no term moves more than this in a sweep (or after MAX_SWEEPS). */
const TOLERANCE = 1e-6;
const MAX_SWEEPS = 2000;

/**
 * Fits the model to `cells` (pure). `init` warm-starts it (same indices; missing entries 0):
 * successive train calls change the tallies a little, so a few sweeps reach the new optimum.
 */
export function fitAdditive(cells: readonly Cell[], models: number, kinds: number, st: Strengths, init?: Partial<AdditiveFit>): AdditiveFit {
  const N = cells.length;
  let n = 0, s = 0;
  for (const x of cells) { n += x.n; s += x.s; }
  // Each term's groups get compact indices; values live in typed arrays while fitting.
  const compact = (key: (x: Cell) => number) => {
    const ids = new Map<number, number>();
    const of = Int32Array.from(cells, (x) => { const k = key(x); let g = ids.get(k); if (g === undefined) { g = ids.size; ids.set(k, g); } return g; });
    return { ids, of };
  };
  const G = compact((x) => x.c * kinds + x.k), E = compact((x) => x.m * kinds + x.k);
  const a0 = new Float64Array([init?.a0 ?? (n > 0 ? s / n : 0.5)]);
  const alpha = Float64Array.from({ length: kinds }, (_, k) => init?.alpha?.[k] ?? 0);
  const beta = Float64Array.from({ length: models }, (_, m) => init?.beta?.[m] ?? 0);
  const gamma = new Float64Array(G.ids.size), eps = new Float64Array(E.ids.size);
  for (const [key, g] of G.ids) gamma[g] = init?.gamma?.get(key) ?? 0;
  for (const [key, e] of E.ids) eps[e] = init?.eps?.get(key) ?? 0;
  const phi = Float64Array.from({ length: N }, (_, i) => init?.phi?.[i] ?? 0);
  const zeroOf = new Int32Array(N);
  const kOf = Int32Array.from(cells, (x) => x.k), mOf = Int32Array.from(cells, (x) => x.m), iOf = Int32Array.from({ length: N }, (_, i) => i);
  const w = Float64Array.from(cells, (x) => (x.n > 0 ? x.n : 0));
  const y = Float64Array.from(cells, (x) => (x.n > 0 ? x.s / x.n : 0));
  const pred = new Float64Array(N);
  const refresh = () => { for (let i = 0; i < N; i++) pred[i] = a0[0]! + alpha[kOf[i]!]! + gamma[G.of[i]!]! + beta[mOf[i]!]! + eps[E.of[i]!]! + phi[i]!; };
  const scratchW = new Float64Array(Math.max(N, kinds, models, 1)), scratchR = new Float64Array(scratchW.length), delta = new Float64Array(scratchW.length);
  let moved = 0;
  // One term: each group's value = shrunk weighted mean of the residual without the term.
  const update = (val: Float64Array, of: Int32Array, lambda: number) => {
    const groups = val.length;
    scratchW.fill(0, 0, groups); scratchR.fill(0, 0, groups);
    for (let i = 0; i < N; i++) {
      const wi = w[i]!;
      if (wi === 0) continue;
      const g = of[i]!;
      scratchW[g] += wi;
      scratchR[g] += wi * (y[i]! - pred[i]! + val[g]!);
    }
    for (let g = 0; g < groups; g++) {
      if (scratchW[g] === 0) { delta[g] = 0; continue; }
      const v = scratchR[g]! / (scratchW[g]! + lambda);
      delta[g] = v - val[g]!;
      val[g] = v;
      const d = Math.abs(delta[g]!);
      if (d > moved) moved = d;
    }
    for (let i = 0; i < N; i++) pred[i] += delta[of[i]!]!;
  };
  // Coarse to fine: the kind-level model first (with the cluster terms held at 0), so it stands on
  // its own for prompts far from every cluster; then the cluster terms on what it leaves.
  const gammaInit = gamma.slice(), phiInit = phi.slice();
  gamma.fill(0); phi.fill(0);
  refresh();
  let sweeps = 0;
  const run = (stage: () => void) => {
    for (let it = 0; it < MAX_SWEEPS; it++) { moved = 0; stage(); sweeps++; if (moved < TOLERANCE) break; }
  };
  run(() => { update(a0, zeroOf, 0); update(alpha, kOf, st.alpha); update(beta, mOf, st.beta); update(eps, E.of, st.eps); });
  gamma.set(gammaInit); phi.set(phiInit);
  refresh();
  run(() => { update(gamma, G.of, st.gamma); update(phi, iOf, st.phi); });
  const gm = new Map<number, number>(), em = new Map<number, number>();
  for (const [key, g] of G.ids) gm.set(key, gamma[g]!);
  for (const [key, e] of E.ids) em.set(key, eps[e]!);
  return { a0: a0[0]!, alpha, gamma: gm, beta, eps: em, phi, sweeps };
}
