// Fitting the additive model (additive.ts) to a state's cluster tallies in train, and the plain-JSON
// form it is stored in (so predict only looks numbers up and every replica routes the same way).
import { fitAdditive, type AdditiveFit, type Cell } from './additive.ts';
import type { Cluster } from './clusters.ts';
import type { Tally } from './stats.ts';
import { TUNING } from './tuning.ts';
import { TASK_KINDS, type TaskKind } from './types.ts';

export const KINDS = TASK_KINDS.length;
export const KIND_INDEX = Object.fromEntries(TASK_KINDS.map((k, i) => [k, i])) as Record<TaskKind, number>;

/** The fitted terms as stored in the state: kinds by TASK_KINDS index, cells keyed "cluster:kindIndex". */
export type FitParams = {
  a0: number;
  alpha: number[];
  gamma: Record<string, number>;
  beta: Record<string, number>;
  eps: Record<string, number[]>;
  phi: Record<string, Record<string, number>>;
  /** Backfitting sweeps the last fit took (warm starts keep it small). */
  sweeps: number;
};

/** Every (model, kind, cluster) tally with weight, as cells over the given model ids. */
export function cellsOf(clusters: readonly Cluster[], ids: readonly string[]): Cell[] {
  const at = new Map(ids.map((id, i) => [id, i]));
  const cells: Cell[] = [];
  clusters.forEach((cl, c) => {
    for (const [id, byKind] of Object.entries(cl.models)) {
      const m = at.get(id);
      if (m === undefined) continue;
      for (const [kind, t] of Object.entries(byKind) as Array<[TaskKind, Tally | undefined]>) {
        const k = KIND_INDEX[kind];
        if (k !== undefined && t && t[0] > 0) cells.push({ m, k, c, n: t[0], s: t[1] });
      }
    }
  });
  return cells;
}

/** Fits the tallies, warm-started from `previous` (the last state's fit), and returns the JSON form. */
export function fitParams(clusters: readonly Cluster[], ids: readonly string[], previous: FitParams | undefined): FitParams {
  const cells = cellsOf(clusters, ids);
  let init: Partial<AdditiveFit> | undefined;
  if (previous) {
    init = {
      a0: previous.a0,
      alpha: Float64Array.from({ length: KINDS }, (_, k) => previous.alpha[k] ?? 0),
      gamma: new Map(Object.entries(previous.gamma).map(([key, v]) => { const [c, k] = key.split(':').map(Number); return [c! * KINDS + k!, v]; })),
      beta: Float64Array.from(ids, (id) => previous.beta[id] ?? 0),
      eps: new Map(ids.flatMap((id, m) => (previous.eps[id] ?? []).map((v, k) => [m * KINDS + k, v] as [number, number]))),
      phi: Float64Array.from(cells, (x) => previous.phi[ids[x.m]!]?.[`${x.c}:${x.k}`] ?? 0),
    };
  }
  const f = fitAdditive(cells, ids.length, KINDS, {
    alpha: TUNING.alphaStrength, gamma: TUNING.gammaStrength, beta: TUNING.betaStrength, eps: TUNING.kindStrength, phi: TUNING.clusterStrength,
  }, init);
  const out: FitParams = { a0: f.a0, alpha: [...f.alpha], gamma: {}, beta: {}, eps: {}, phi: {}, sweeps: f.sweeps };
  for (const [g, v] of f.gamma) out.gamma[`${Math.floor(g / KINDS)}:${g % KINDS}`] = v;
  ids.forEach((id, m) => {
    out.beta[id] = f.beta[m]!;
    const e = Array.from({ length: KINDS }, (_, k) => f.eps.get(m * KINDS + k) ?? 0);
    if (e.some((v) => v !== 0)) out.eps[id] = e;
  });
  cells.forEach((x, i) => { (out.phi[ids[x.m]!] ??= {})[`${x.c}:${x.k}`] = f.phi[i]!; });
  return out;
}
