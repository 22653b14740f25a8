// train(outcomes, previous?) -> state: folds outcomes into the learned state. Pure: the result
// depends only on its arguments (it runs in a worker in production and offline in the bench).
import { assign, indexCentroids, refine, similarities, targetClusters, type Cluster, type Vec } from './clusters.ts';
import { correctExemplars, foldExemplars, setResiduals, type Exemplar, type PromptOutcomes } from './exemplars.ts';
import { additiveOf } from './predict.ts';
import { isPacked } from './portable.ts';
import { fitParams, type FitParams } from './model-fit.ts';
import { TUNING } from './tuning.ts';
import { addCost, addOut, type ModelCost } from './cost-model.ts';
import { addTally, correctTally, decay, newTally, scaleDeep, slot, type Tally } from './stats.ts';
import { FEATURE_SCHEMA, STATE_SCHEMA, type Outcome, type PromptFeatures, type QualityState, type TaskKind, type TrainOptions } from './types.ts';

/** The internal shape of QualityState.learned (schema 2). */
export type Learned = {
  /** Per model: score tally over all its outcomes. */
  model: Record<string, Tally>;
  /** Per model, per task kind: score tally. */
  kind: Record<string, Partial<Record<TaskKind, Tally>>>;
  /** Per model: observed costs and output lengths by kind. */
  cost: Record<string, ModelCost>;
  /** Prompt clusters with per-model tallies (the prompt-conditional part of the predictor). */
  clusters: Cluster[];
  /** Distinct prompts folded in (weighted, decayed): sets the target number of clusters. */
  prompts: number;
  /** The additive model fitted to the cluster tallies (model-fit.ts); absent before any outcome. */
  fit?: FitParams;
  /** A bounded sample of prompts with outcomes and the additive model's residuals (exemplars.ts). */
  exemplars?: Exemplar[];
};

export function emptyState(): QualityState {
  const learned: Learned = { model: {}, kind: {}, cost: {}, clusters: [], prompts: 0, exemplars: [] };
  return { schema: STATE_SCHEMA, version: 0, trainedUntil: 0, outcomes: 0, models: {}, learned };
}

/** A usable outcome: current feature schema, a model id, finite score and time, weight > 0, a correction's finite old score. */
export function usable(o: Outcome): boolean {
  return o.features?.schema === FEATURE_SCHEMA && typeof o.model === 'string' && o.model.length > 0
    && Number.isFinite(o.score) && Number.isFinite(o.time) && (o.weight === undefined || o.weight > 0)
    && (o.correction === undefined || Number.isFinite(o.correction.from));
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));

/**
 * Returns a new state: `previous` (not modified; a state of another schema counts as empty) with
 * `outcomes` folded in. With options.halfLifeDays, evidence decays with age relative to
 * options.now (default: the newest time seen). Unusable outcomes (see usable) are skipped; scores
 * are clamped to [0, 1]. A correction (Outcome.correction) moves the score sums of the outcome it
 * corrects; one that changes nothing is skipped. The version goes up by one when anything changed.
 */
export function train(outcomes: readonly Outcome[], previous?: QualityState, options: TrainOptions = {}): QualityState {
  // A packed state (portable.ts) has lost its stored prompts: training on it would drop them for good.
  if (previous && isPacked(previous)) throw new Error('train: the state was packed for the main thread (its stored prompts stayed in the worker); train on the stored state');
  const base = previous && previous.schema === STATE_SCHEMA ? previous : undefined;
  const state: QualityState = base ? structuredClone(base) : emptyState();
  const L = state.learned as Learned;
  L.clusters ??= []; L.prompts ??= 0; L.exemplars ??= [];
  const good = outcomes.filter((o) => usable(o) && (o.correction === undefined || clamp01(o.correction.from) !== clamp01(o.score)));
  const plain = good.filter((o) => o.correction === undefined);
  let newest = state.trainedUntil;
  for (const o of good) if (o.time > newest) newest = o.time;
  const now = options.now ?? newest;
  if (base && base.trainedUntil > 0) {
    const f = decay(now - base.trainedUntil, options.halfLifeDays);
    if (f < 1) { decayLearned(L, f); state.outcomes *= f; }
  }
  // Corrections first, against the state that holds what they correct (before this batch refines the clusters).
  applyCorrections(L, good.filter((o) => o.correction !== undefined), now, options.halfLifeDays);
  const ps = promptsOf(plain, now, options.halfLifeDays);
  foldClusters(L, ps, now, options.halfLifeDays, state.version + 1);
  L.exemplars = foldExemplars(L.exemplars, ps.map((p) => ({ key: p.key, kind: p.vec.kind, vec: p.vec, outs: p.outs.map((o) => ({ model: o.model, w: (o.weight ?? 1) * decay(now - o.time, options.halfLifeDays), score: Math.min(1, Math.max(0, o.score)) })) }) satisfies PromptOutcomes));
  for (const o of plain) {
    const w = (o.weight ?? 1) * decay(now - o.time, options.halfLifeDays);
    if (!(w > 0)) continue;
    const s = Math.min(1, Math.max(0, o.score));
    const kind = o.features.kind;
    addTally(slot(L.model, o.model, newTally), w, s);
    addTally(slot(slot(L.kind, o.model, () => ({})), kind, newTally), w, s);
    const c = slot(L.cost, o.model, (): ModelCost => ({ cost: {}, out: {} }));
    if (o.costUsd !== undefined && Number.isFinite(o.costUsd) && o.costUsd >= 0) addCost(c, kind, w, o.features.stats.tokens, o.costUsd);
    if (o.outputTokens !== undefined && Number.isFinite(o.outputTokens) && o.outputTokens >= 0) addOut(c, kind, w, o.outputTokens);
    state.outcomes += w;
  }
  if (good.length > 0) {
    state.version += 1;
    L.fit = fitParams(L.clusters, Object.keys(L.model), L.fit);
  }
  state.trainedUntil = Math.max(state.trainedUntil, newest);
  state.models = {};
  for (const [m, t] of Object.entries(L.model)) state.models[m] = { n: t[0], mean: t[0] > 0 ? t[1] / t[0] : 0 };
  // Residuals against the new fit (every stored prompt's: the fit moved for all of them).
  if (L.exemplars.length > 0) {
    const q = additiveOf(state);
    setResiduals(L.exemplars, (e, model) => q(e, e.kind, model));
  }
  return state;
}

/**
 * Moves the score sums an outcome added, from its old score to its new one, with the weight it has
 * now: the model and kind tallies, the tallies of the clusters its prompt is softly assigned to,
 * and its stored prompt. Weights, costs, output lengths, the clusters' shapes and counts stay.
 */
function applyCorrections(L: Learned, fixes: readonly Outcome[], now: number, halfLife: number | undefined): void {
  if (fixes.length === 0) return;
  const ix = L.clusters.length > 0 ? indexCentroids(L.clusters.map((c) => ({ idx: c.idx, val: c.val }))) : undefined;
  const sims = new Float64Array(TUNING.clusterMax + 1), cs = new Int32Array(8), as = new Float64Array(8);
  const stored = [];
  for (const o of fixes) {
    const w = (o.weight ?? 1) * decay(now - o.time, halfLife);
    if (!(w > 0)) continue;
    const from = clamp01(o.correction!.from), to = clamp01(o.score), kind = o.features.kind;
    const m = L.model[o.model];
    if (m) correctTally(m, w, from, to);
    const k = L.kind[o.model]?.[kind];
    if (k) correctTally(k, w, from, to);
    const n = ix ? assign(similarities(ix, o.features, sims), ix.k, cs, as) : 0;
    for (let t = 0; t < n; t++) {
      const c = L.clusters[cs[t]!]!.models[o.model]?.[kind];
      if (c) correctTally(c, w * as[t]!, from, to);
    }
    stored.push({ key: promptKey(o.features), model: o.model, w, from, to });
  }
  correctExemplars(L.exemplars ?? [], stored);
}

/** Multiplies every count and sum of the learned state by f (older evidence counts less). */
function decayLearned(L: Learned, f: number): void {
  scaleDeep(L.model, f); scaleDeep(L.kind, f); scaleDeep(L.cost, f);
  for (const c of L.clusters) { c.n *= f; scaleDeep(c.sim, f); scaleDeep(c.models, f); }
  L.prompts *= f;
  for (const e of L.exemplars ?? []) for (let j = 0; j < e.n.length; j++) { e.n[j] *= f; e.s[j] *= f; }
}

/** Content hash of a feature vector: the outcomes of one prompt share a cluster assignment. */
function promptKey(v: Vec): number {
  let h = 2166136261 ^ v.idx.length;
  for (let j = 0; j < v.idx.length; j++) {
    h = Math.imul(h ^ v.idx[j]!, 16777619);
    h = Math.imul(h ^ Math.round(v.val[j]! * 1e4), 16777619);
  }
  return h >>> 0;
}

/**
 * Refines the clusters with this batch's distinct prompts, then adds every outcome to the
 * per-model tallies of the clusters its prompt is softly assigned to (and the similarity tally of
 * the nearest, for out-of-distribution detection in predict).
 */
type Prompt = { key: number; vec: PromptFeatures; w: number; outs: Outcome[] };

/** The distinct prompts of a batch (by content hash) with their outcomes and newest decay weight. */
function promptsOf(good: readonly Outcome[], now: number, halfLife: number | undefined): Prompt[] {
  const byKey = new Map<number, Prompt>();
  for (const o of good) {
    const key = promptKey(o.features);
    const w = decay(now - o.time, halfLife);
    const p = byKey.get(key);
    if (p) { p.outs.push(o); p.w = Math.max(p.w, w); } else byKey.set(key, { key, vec: o.features, w, outs: [o] });
  }
  return [...byKey.values()];
}

function foldClusters(L: Learned, ps: readonly Prompt[], now: number, halfLife: number | undefined, seed: number): void {
  if (ps.length === 0) return;
  const target = targetClusters(L.prompts + ps.reduce((s, p) => s + p.w, 0));
  const old = L.clusters.map((c) => ({ vec: { idx: c.idx, val: c.val }, n: c.n }));
  const next = refine(old, ps.map((p) => p.vec), ps.map((p) => p.w), target, seed);
  L.clusters = next.map((c, i) => ({ idx: c.vec.idx, val: c.vec.val, n: c.n, sim: L.clusters[i]?.sim ?? newTally(), models: L.clusters[i]?.models ?? {} }));
  const ix = indexCentroids(next.map((c) => c.vec));
  const sims = new Float64Array(TUNING.clusterMax + 1), cs = new Int32Array(8), as = new Float64Array(8);
  for (const p of ps) {
    const n = assign(similarities(ix, p.vec, sims), ix.k, cs, as);
    if (n === 0) continue;
    addTally(L.clusters[cs[0]!]!.sim, p.w, sims[cs[0]!]!);
    L.prompts += p.w;
    for (const o of p.outs) {
      const w = (o.weight ?? 1) * decay(now - o.time, halfLife);
      if (!(w > 0)) continue;
      const s = Math.min(1, Math.max(0, o.score));
      for (let t = 0; t < n; t++) addTally(slot(slot(L.clusters[cs[t]!]!.models, o.model, () => ({})), o.features.kind, newTally), w * as[t]!, s);
    }
  }
}
