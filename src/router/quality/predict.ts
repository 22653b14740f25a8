// predict(state, features, models) -> one QualityEstimate per model: the additive model fitted to
// the state (additive.ts) at the prompt's kind and clusters for models with outcomes, the cold-start
// prior for the rest. Everything per state (and priors table) is compiled once (WeakMap).
import { assign, indexCentroids, similarities, type CentroidIndex, type Vec } from './clusters.ts';
import { expectedCost, fitCost, type CostFit } from './cost-model.ts';
import { indexExemplars, localCorrection, type LocalIndex } from './exemplars.ts';
import { localFromPacked, packedLocal, type PackedLocal } from './portable.ts';
import { builtinPriors, priorFor, type CompiledPriors, type Prior } from './prior.ts';
import { KIND_INDEX, KINDS } from './model-fit.ts';
import type { Learned } from './train.ts';
import { TUNING } from './tuning.ts';
import { FEATURE_SCHEMA, STATE_SCHEMA, TASK_KINDS, type ModelRef, type PromptFeatures, type QualityEstimate, type QualityState, type TaskKind } from './types.ts';

export type PredictOptions = {
  /** Benchmark priors: default the shipped priors.json; null for none (the offline bench). */
  priors?: CompiledPriors | null;
};


/** One model's learned terms: its offset, per kind, per (cluster, kind) with the evidence there; `ix` numbers it. */
type ModelTable = { ix: number; n: number; beta: number; eps: Float64Array; phi: Map<number, number>; count: Map<number, number>; kindCount: Float64Array; fit: CostFit | undefined };
/** What predict derives from a state once (states are never modified after train). */
type Compiled = {
  models: Map<string, ModelTable>; index: CentroidIndex; floor: Float64Array;
  a0: number; alpha: Float64Array; gamma: Map<number, number>;
  /** Typical size of a model's own deviation on a kind and cluster (weighted RMS of eps + phi). */
  spread: number;
  /** The stored prompts for the local correction, indexed on first use (train sets their residuals after compiling the additive part). */
  local: LocalIndex | null | undefined;
  exemplars: Learned['exemplars'];
  /** The index built in the training worker (portable.ts), in place of the stored prompts. */
  packed: PackedLocal | undefined;
};
const compiled = new WeakMap<QualityState, Compiled>();
const EMPTY: Compiled = { models: new Map(), index: indexCentroids([]), floor: new Float64Array(), a0: 0.5, alpha: new Float64Array(KINDS), gamma: new Map(), spread: 0, local: null, exemplars: undefined, packed: undefined };
const cellKey = (key: string): number => { const [c, k] = key.split(':').map(Number); return c! * KINDS + k!; };

function compile(state: QualityState): Compiled {
  if (state.schema !== STATE_SCHEMA) return EMPTY;
  let c = compiled.get(state);
  if (c) return c;
  const L = state.learned as Learned;
  const cl = L.clusters ?? [];
  const floor = Float64Array.from(cl, (k) => {
    const [n, s, ss] = k.sim;
    if (!(n > 0)) return 1;
    const mean = s / n;
    return mean - 2 * Math.max(TUNING.sdMin, Math.sqrt(Math.max(0, ss / n - mean * mean)));
  });
  const fit = L.fit;
  const models = new Map<string, ModelTable>();
  for (const [id, t] of Object.entries(L.model)) {
    const mc = L.cost[id];
    const eps = Float64Array.from({ length: KINDS }, (_, k) => fit?.eps[id]?.[k] ?? 0);
    const phi = new Map(Object.entries(fit?.phi[id] ?? {}).map(([key, v]) => [cellKey(key), v]));
    const kindCount = Float64Array.from(TASK_KINDS, (k) => L.kind[id]?.[k]?.[0] ?? 0);
    models.set(id, { ix: models.size, n: t[0], beta: fit?.beta[id] ?? 0, eps, phi, count: new Map(), kindCount, fit: mc ? fitCost(mc) : undefined });
  }
  cl.forEach((k, ci) => {
    for (const [id, byKind] of Object.entries(k.models)) {
      const m = models.get(id);
      if (!m) continue;
      for (const [kind, t] of Object.entries(byKind)) {
        const ki = KIND_INDEX[kind as TaskKind];
        if (ki !== undefined && t) m.count.set(ci * KINDS + ki, t[0]);
      }
    }
  });
  let w = 0, sq = 0;
  for (const m of models.values()) {
    for (const [key, n] of m.count) { const d = m.eps[key % KINDS]! + (m.phi.get(key) ?? 0); w += n; sq += n * d * d; }
  }
  c = {
    models, index: indexCentroids(cl), floor, a0: fit?.a0 ?? 0.5, spread: w > 0 ? Math.sqrt(sq / w) : 0, local: undefined, exemplars: L.exemplars, packed: packedLocal(state),
    alpha: Float64Array.from({ length: KINDS }, (_, k) => fit?.alpha[k] ?? 0),
    gamma: new Map(Object.entries(fit?.gamma ?? {}).map(([key, v]) => [cellKey(key), v])),
  };
  compiled.set(state, c);
  return c;
}

// Priors depend on the model, the kind and the priors table only: computed once per model and
// kind, found by id (a string-keyed Map is cheaper than a WeakMap per candidate) and recomputed
// when the same id comes with another ModelRef object (a reload re-priced it).
const NO_PRIORS = {};
type PriorSlot = { ref: ModelRef | string; per: Prior[]; est: QualityEstimate[] };
const priorCaches = new WeakMap<object, Map<string, PriorSlot>>();

/** The prior cache of a priors table (one per table; NO_PRIORS for none). */
function priorCache(priors: CompiledPriors | null): Map<string, PriorSlot> {
  let cache = priorCaches.get(priors ?? NO_PRIORS);
  if (!cache) { cache = new Map(); priorCaches.set(priors ?? NO_PRIORS, cache); }
  return cache;
}

function slotOf(cache: Map<string, PriorSlot>, ref: ModelRef | string, id: string): PriorSlot {
  let slot = cache.get(id);
  if (!slot || slot.ref !== ref) {
    if (cache.size >= 20_000) cache.clear(); // ids come from config and catalog; bounded anyway
    slot = { ref, per: new Array<Prior>(KINDS), est: new Array<QualityEstimate>(KINDS) };
    cache.set(id, slot);
  }
  return slot;
}

function priorIn(slot: PriorSlot, ki: number, kind: TaskKind, priors: CompiledPriors | null): Prior {
  return (slot.per[ki] ??= priorFor(typeof slot.ref === 'string' ? { id: slot.ref } : slot.ref, kind, priors));
}

/**
 * The estimate of a model without outcomes: its prior alone, the same for every prompt of the kind,
 * so built once and shared (frozen: callers read it, never change it). Most of a catalog is such
 * models: predict over 700 candidates then costs a lookup each instead of an object each.
 */
function priorEstimate(slot: PriorSlot, id: string, ki: number, kind: TaskKind, priors: CompiledPriors | null): QualityEstimate {
  const est = slot.est[ki];
  if (est !== undefined) return est;
  const p = priorIn(slot, ki, kind, priors);
  return (slot.est[ki] = Object.freeze({ model: id, q: clamp01(p.q), evidence: 0, confidence: 0, source: p.source, outputTokens: undefined, costUsd: undefined }));
}

const clamp01 = (q: number) => (q < 0 ? 0 : q > 1 ? 1 : q);

const sims = new Float64Array(TUNING.clusterMax + 1);
const near = new Int32Array(8);
const share = new Float64Array(8);

/** The prompt's clusters and how much each one's evidence counts (soft share x OOD gate). */
function localWeights(c: Compiled, v: Vec): number {
  const n = assign(similarities(c.index, v, sims), c.index.k, near, share);
  for (let t = 0; t < n; t++) {
    const k = near[t]!, s = sims[k]!, f = c.floor[k]!;
    share[t] = share[t]! * (s >= f ? 1 : Math.max(0, 1 - (f - s) / TUNING.gate));
  }
  return n;
}

/** The prompt-level part at a prompt (localWeights ran): how hard it is for every model, and its share inside clusters. */
function promptBase(c: Compiled, ki: number, nLocal: number): { base: number; inside: number } {
  let base = c.a0 + c.alpha[ki]!, inside = 0;
  for (let t = 0; t < nLocal; t++) { base += share[t]! * (c.gamma.get(near[t]! * KINDS + ki) ?? 0); inside += share[t]!; }
  return { base, inside };
}

/** A model's additive estimate (before caution, correction and prior) and its evidence, at the prompt localWeights saw. */
function additive(m: ModelTable, base: number, ki: number, nLocal: number, inside: number): number {
  let learned = base + m.beta + m.eps[ki]!;
  let evidence = 0;
  for (let t = 0; t < nLocal; t++) {
    const key = near[t]! * KINDS + ki;
    learned += share[t]! * (m.phi.get(key) ?? 0);
    evidence += share[t]! * (m.count.get(key) ?? 0);
  }
  // Outside every cluster (the gate), the kind-level terms speak, with the kind's evidence.
  lastEvidence = evidence + (1 - inside) * m.kindCount[ki]!;
  return learned;
}
let lastEvidence = 0;

/**
 * The additive model of a state as a function (train sets the stored prompts' residuals with it):
 * q of `model` at a prompt (vector and kind), undefined for a model without outcomes.
 */
export function additiveOf(state: QualityState): (v: Vec, kind: TaskKind, model: string) => number | undefined {
  const c = compile(state);
  return (v, kind, model) => {
    const m = c.models.get(model);
    if (!m || !(m.n > 0)) return undefined;
    const ki = KIND_INDEX[kind] ?? KIND_INDEX.chat;
    const nLocal = c.index.k > 0 ? localWeights(c, v) : 0;
    const { base, inside } = promptBase(c, ki, nLocal);
    return additive(m, base, ki, nLocal, inside);
  };
}

let corr = new Float64Array(64), wsum = new Float64Array(64);

/** The local correction's index of a compiled state, built on first use. */
function localIndex(c: Compiled): LocalIndex | null {
  if (c.local !== undefined) return c.local;
  const numbering = () => new Map([...c.models].map(([id, m]) => [id, m.ix]));
  c.local = c.packed ? localFromPacked(c.packed, numbering()) : c.exemplars && c.exemplars.length > 0 ? indexExemplars(c.exemplars, numbering()) : null;
  return c.local;
}

/**
 * Builds now what predict derives from a state once (tables, the centroid and local-correction
 * indexes: about 10 ms of CPU for a state trained on 24,000 outcomes, most of it the index of the
 * stored prompts), so the first routed request after a new state arrives does not pay it. Optional:
 * predict does the same on first use.
 */
export function prepareState(state: QualityState): void {
  localIndex(compile(state));
}

/**
 * Quality, evidence and expected output/cost of each model for this prompt, in the order given.
 * A state of another schema gives the prior alone; features of another schema, the kind-level terms.
 */
export function predict(state: QualityState, features: PromptFeatures, models: ReadonlyArray<string | ModelRef>, options: PredictOptions = {}): QualityEstimate[] {
  const priors = options.priors === undefined ? builtinPriors() : options.priors;
  const c = compile(state);
  const kind = features.kind;
  const ki = KIND_INDEX[kind] ?? KIND_INDEX.chat;
  const current = features.schema === FEATURE_SCHEMA;
  const nLocal = current && c.index.k > 0 ? localWeights(c, features) : 0;
  // How hard this prompt is for every model: its kind, and the clusters it sits in (weights gated).
  const { base, inside } = promptBase(c, ki, nLocal);
  // Each learned model's mean residual over the nearest stored prompts.
  const local = localIndex(c);
  if (corr.length < c.models.size) { corr = new Float64Array(c.models.size * 2); wsum = new Float64Array(c.models.size * 2); }
  const corrected = current && local !== null && localCorrection(local, features, corr, wsum) > 0;
  const strength = TUNING.clusterStrength;
  const cache = priorCache(priors);
  const out: QualityEstimate[] = new Array(models.length);
  for (let i = 0; i < models.length; i++) {
    const ref = models[i]!;
    const id = typeof ref === 'string' ? ref : ref.id;
    const m = c.models.get(id);
    const slot = slotOf(cache, ref, id);
    if (m === undefined) { out[i] = priorEstimate(slot, id, ki, kind, priors); continue; }
    let q: number, evidence = 0;
    let source: QualityEstimate['source'];
    const prior = priorIn(slot, ki, kind, priors);
    if (m.n > 0) {
      let learned = additive(m, base, ki, nLocal, inside);
      evidence = lastEvidence;
      if (corrected) learned += corr[m.ix]!;
      // Conservative where this model has little evidence of its own: its deviation here is unknown,
      // typically `spread` in size, so q is lowered by up to that much (a lower bound, not a guess:
      // a model earns traffic here on evidence or through the router's bounded exploration).
      learned -= TUNING.caution * c.spread * strength / (evidence + strength);
      // The prior still counts while the model's evidence is thin (prior.strength pseudo-outcomes).
      q = (m.n * learned + prior.strength * prior.q) / (m.n + prior.strength);
      source = 'learned';
    } else {
      q = prior.q;
      source = prior.source;
    }
    const fit = m.fit;
    out[i] = {
      model: id,
      q: clamp01(q),
      evidence,
      confidence: evidence / (evidence + strength),
      source,
      outputTokens: fit ? fit.out[kind] ?? fit.outAll : undefined,
      costUsd: fit ? expectedCost(fit, kind, features.stats.tokens) : undefined,
    };
  }
  return out;
}
