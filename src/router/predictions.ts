// Quality predictions as a decision reads them, without predicting every model on every request:
// a model with no learned outcomes in the state is predicted from its cold-start prior, which depends
// on the model and the prompt's kind only, so those estimates are computed once per (state, config
// version, kind) and copied; only models with learned outcomes among the candidates still in the
// running are predicted for the prompt (src/router/quality predict(), whose contract says so:
// test/router-predictions.test.ts checks that it stays true).
import { predict, type PromptFeatures, type QualityEstimate, type QualityState } from './quality/index.ts';
import type { CandidateSet } from './candidates.ts';
import { expectedOutput, type OutputTable } from './output-stats.ts';

/** Estimates per canonical model (index = CandidateSet.refs index). outTok is NaN where the model gives none. */
export type Estimates = { q: Float64Array; evidence: Float64Array; outTok: Float64Array; source: string[] };

type PerState = {
  /** 1 where the model has learned outcomes in this state (its prediction depends on the prompt). */
  learned: Uint8Array;
  anyLearned: boolean;
  byKind: Map<string, Estimates>;
  outByKind: Map<string, { table: OutputTable; fallback: number; out: Float64Array }>;
};

const cache = new WeakMap<QualityState, WeakMap<CandidateSet, PerState>>();

function perState(state: QualityState, set: CandidateSet): PerState {
  let bySet = cache.get(state);
  if (!bySet) { bySet = new WeakMap(); cache.set(state, bySet); }
  let s = bySet.get(set);
  if (!s) {
    const learned = Uint8Array.from(set.refs, (r) => ((state.models?.[r.id]?.n ?? 0) > 0 ? 1 : 0));
    s = { learned, anyLearned: learned.includes(1), byKind: new Map(), outByKind: new Map() };
    bySet.set(set, s);
  }
  return s;
}

function fill(e: Estimates, at: number, x: QualityEstimate): void {
  e.q[at] = x.q; e.evidence[at] = x.evidence; e.outTok[at] = x.outputTokens ?? Number.NaN; e.source[at] = x.source;
}

/** Estimates of the whole set for this prompt's kind, from the cold-start prior (learned models' entries are not for use). */
function priorEstimates(state: QualityState, set: CandidateSet, s: PerState, features: PromptFeatures): Estimates {
  let e = s.byKind.get(features.kind);
  if (!e) {
    const n = set.refs.length;
    e = { q: new Float64Array(n), evidence: new Float64Array(n), outTok: new Float64Array(n), source: new Array<string>(n) };
    const xs = predict(state, features, set.refs, { priors: set.priors });
    for (let i = 0; i < n; i++) fill(e, i, xs[i]!);
    s.byKind.set(features.kind, e);
  }
  return e;
}

/**
 * Estimates for one prompt: copies of the per-kind prior estimates, with the learned models whose
 * `needed` flag is set (refs index; entries past the refs are not read) predicted for this prompt.
 * `needed` null: every learned model.
 */
export function estimatesFor(state: QualityState, set: CandidateSet, features: PromptFeatures, needed: Uint8Array | null): Estimates {
  const s = perState(state, set);
  const base = priorEstimates(state, set, s, features);
  // Without learned models nothing is predicted per prompt: the shared estimates are only read.
  if (!s.anyLearned) return base;
  const e: Estimates = { q: base.q.slice(), evidence: base.evidence.slice(), outTok: base.outTok.slice(), source: base.source.slice() };
  const at: number[] = [];
  for (let i = 0; i < s.learned.length; i++) if (s.learned[i] === 1 && (needed === null || needed[i] === 1)) at.push(i);
  refine(e, state, set, features, at);
  return e;
}

/** Whether the state learned any model of the set: without one, every estimate is the per-kind prior and refine() has nothing to do. */
export const anyLearned = (state: QualityState, set: CandidateSet): boolean => perState(state, set).anyLearned;

/** Predicts, into `e`, the learned models among `refs` (refs indices) that estimatesFor skipped. */
export function refine(e: Estimates, state: QualityState, set: CandidateSet, features: PromptFeatures, refs: readonly number[]): void {
  const s = perState(state, set);
  if (!s.anyLearned || refs.length === 0) return;
  const at = refs.filter((i) => s.learned[i] === 1);
  if (at.length === 0) return;
  const xs = predict(state, features, at.map((i) => set.refs[i]!), { priors: set.priors });
  for (let j = 0; j < at.length; j++) fill(e, at[j]!, xs[j]!);
}

/**
 * Expected output tokens per canonical model for this prompt's kind (refs index): the answers the
 * state learned (output-stats.ts), blended with the quality model's figure, which depends on the
 * kind only, or `fallback`. The same for every prompt of the kind: computed once per table and kind.
 */
export function expectedOutputs(state: QualityState, set: CandidateSet, features: PromptFeatures, table: OutputTable, fallback: number): Float64Array {
  const s = perState(state, set);
  const kind = features.kind;
  let slot = s.outByKind.get(kind);
  if (!slot || slot.table !== table || slot.fallback !== fallback) {
    const base = priorEstimates(state, set, s, features);
    const out = Float64Array.from(set.refs, (r, i) => {
      const o = base.outTok[i]!;
      return expectedOutput(table, r.id, kind, Number.isNaN(o) ? undefined : o, fallback);
    });
    slot = { table, fallback, out };
    s.outByKind.set(kind, slot);
  }
  return slot.out;
}
