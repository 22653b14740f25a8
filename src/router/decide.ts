// The routing decision: candidates -> hard constraints (capabilities, policies, max_cost,
// max_cost_per_million_tokens) -> predicted quality and expected cost -> utility
// 10 * W * q - expected_cost (W absent: best q, ties to the cheaper) -> the attempt plan.
// Pure over its inputs (no I/O) and on the request path: what depends only on the config version,
// the key or the learned state is computed once elsewhere (candidates.ts, rule-cache.ts,
// predictions.ts); per candidate a decision reads typed arrays and does arithmetic (figures.ts), and
// objects are made only for what it shows (ranked.ts). Types and codes: decision.ts.
import { PromptTokens } from '../tokens/index.ts';
import { CAP, candidateSet, resolveIndices } from './candidates.ts';
import {
  C_COST, C_PER_MILLION, POLICY, RANK_EXACT_CHARS, SHOWN,
  type DecideInput, type Decision, type PlanTarget, type Ranked,
} from './decision.ts';
import { constraintName, countOf, figures, figuresFor, policyCode, tighten, type Run } from './figures.ts';
import { planTarget, selectTop } from './plan-targets.ts';
import { screen } from './screen.ts';
import { anyLearned, estimatesFor, expectedOutputs, refine } from './predictions.ts';
import { materialize } from './ranked.ts';
import { allowedBy, fixedRuleHits, fixedVerdicts } from './rule-cache.ts';
import { ruleWords } from './rule-words.ts';
import { learnsFrom } from './settings.ts';

export { fmt, RANK_EXACT_CHARS, SHOWN, type DecideInput, type Decision, type Exclusion, type HealthView, type PlanTarget, type Ranked } from './decision.ts';
export { noRouteError } from './no-route.ts';

const EPS = 1e-12;

/**
 * A W at and past which cost cannot change the order (10 * W times any difference in q dwarfs any
 * request's cost): ranked as W absent, quality first and ties to the cheaper, which is that order.
 * Computed, 10 * W * q overflowed to Infinity from about W = 1.8e307 (a finite W the request may send),
 * and candidates tied at Infinity went to the cheapest: the opposite of what such a W asks for.
 */
const QUALITY_FIRST_W = 1e200;

/**
 * The candidates still in the running, healthy providers' first, then ejected ones', in one array
 * reused from decision to decision with explicit lengths (decide is synchronous and its result never
 * holds it; emptying an array by its length frees its storage, which the pushes then grow again):
 * as fresh arrays grown by push they were a third of a routed request's allocation.
 */
let RUNNING: number[] = [];

/** Candidates per exclusion code (index = code; 0 counts the included), reused like RUNNING. */
let PER_CODE = new Int32Array(64);

function codeCounts(code: Int16Array, n: number, codes: number): Int32Array {
  if (PER_CODE.length < codes) PER_CODE = new Int32Array(codes);
  PER_CODE.fill(0, 0, codes);
  for (let j = 0; j < n; j++) PER_CODE[code[j]!]!++;
  return PER_CODE;
}

export function decide(inp: DecideInput): Decision {
  const { cfg, params, view, settings } = inp;
  const set = candidateSet(cfg);
  const T = set.table;
  const idx = params.models ? resolveIndices(cfg, set, params.models) : set.allIdx;
  const n = idx.length;
  const policy = inp.policy;
  const run: Run = {
    inp, set, idx, f: figuresFor(n, set.refs.length, set.providers.length), counts: new Array(set.tokenizers.length), est: null,
    tokens: new PromptTokens(view.parts, { exactChars: RANK_EXACT_CHARS, boundChars: settings.maxExactChars, deferChars: inp.deferChars }),
    outRef: expectedOutputs(inp.quality, set, view.features, inp.output, settings.defaultOutputTokens), outCap: view.clientMaxTokens ?? Infinity,
    affIdx: inp.affinity ? set.byId.get(inp.affinity.id)?.index ?? -1 : -1,
    active: [], hits: null, latency: [], errors: [], words: policy ? ruleWords(policy) : null,
  };
  const f = run.f;
  // request.input_tokens (the largest count among the candidates' tokenizers) only when a rule reads it.
  if (policy?.readsInputTokens) {
    let max = 0;
    for (let j = 0; j < n; j++) max = Math.max(max, countOf(run, T.tok[idx[j]!]!).tokens);
    (view.policyData.request as Record<string, unknown>).input_tokens = max;
  }
  let perRequestRules = false;
  if (policy) {
    for (let k = 0; k < policy.rules.length; k++) {
      const r = policy.rules[k]!;
      if (r.when === null || r.when(view.policyData)) { run.active.push(k); if (!r.fixed) perRequestRules = true; }
    }
    if (run.active.length > 0) run.hits = fixedRuleHits(set, policy, inp.key ?? null);
  }
  const allowed = allowedBy(set, inp.key ?? null);
  const nd = view.needs;
  const need = (nd.tools ? CAP.tools : 0) | (nd.manyTools ? CAP.manyTools : 0) | (nd.mcpToolChanges ? CAP.mcpToolChanges : 0) | (nd.vision ? CAP.vision : 0) | (nd.jsonSchema ? CAP.jsonSchema : 0) | (nd.reasoning ? CAP.reasoning : 0)
    | (nd.responsesApi ? CAP.responsesApi : 0) | (nd.chatApi ? CAP.chatApi : 0) | (nd.messagesApi ? CAP.messagesApi : 0);

  // Pass 1: the constraints that need neither quality nor cost (and fixed policy rules when no rule needs them).
  // Only fixed rules active: their verdicts per candidate were worked out once for this (version, policy, key).
  const verdicts = run.active.length > 0 && !perRequestRules ? fixedVerdicts(set, policy!, inp.key ?? null, run.active) : null;
  const alive = screen(run, need, allowed, verdicts);
  const neededRefs = f.needed;

  // Quality only for the models still in the running (all of them for the dry run).
  const est = run.est = estimatesFor(inp.quality, set, view.features, inp.fullRanking ? null : neededRefs);

  // Pass 2: figures, then (with max_cost) a tight token bound where an exact encoding can give one.
  for (const j of alive) figures(run, j);
  if (params.maxCost !== null) {
    tighten(run, alive);
    // Texts left to count later (inp.deferChars): the caller decides again once they are counted.
    if (run.tokens.deferred.size > 0) return deferredDecision(run, n);
  }
  const w = params.wtp;
  const wRank = w === null || w >= QUALITY_FIRST_W ? null : w;
  // healthy = RUNNING[0, hc), ejected = RUNNING[n, n + ec) (at most n each).
  if (RUNNING.length < 2 * n) RUNNING = new Array<number>(2 * n).fill(0);
  const running = RUNNING;
  let hc = 0, ec = 0;
  const ejectedAt = f.ejected;
  for (const j of alive) {
    const i = idx[j]!;
    let code = perRequestRules ? policyCode(run, j, i) : 0;
    if (code === 0 && params.maxCostPerMillion !== null && f.blended[j]! > params.maxCostPerMillion) code = C_PER_MILLION;
    if (code === 0 && params.maxCost !== null && f.minCost[j]! > params.maxCost) code = C_COST;
    if (code !== 0) { f.code[j] = code; continue; }
    let qRank = est.q[T.ref[i]!]! + f.bonus[j]!;
    if (i === run.affIdx) qRank += settings.affinity.bonus;
    f.util[j] = wRank === null ? qRank : 10 * wRank * qRank - f.cost[j]!;
    const p = T.prov[i]!;
    let ej = ejectedAt[p]!;
    if (ej < 0) ej = ejectedAt[p] = inp.health.isEjected(set.providers[p]!) ? 1 : 0;
    if (ej === 1) running[n + ec++] = j; else running[hc++] = j;
  }
  // Healthy providers first; an ejected one stays in the plan behind them (tried when nothing else is left).
  const better = (a: number, b: number): number => {
    const d = f.util[b]! - f.util[a]!;
    return d > EPS || d < -EPS ? d : f.cost[a]! - f.cost[b]!;
  };
  // The plan takes the best few, and the decision shows the best SHOWN (headers, the record) in order.
  const k = Math.max(inp.maxAttempts + 2, SHOWN);
  // The dry run ranks everything; routing needs the best few.
  const order = (from: number, to: number): void => {
    if (!inp.fullRanking) { selectTop(running, k, better, from, to); return; }
    const sorted = running.slice(from, to).sort(better);
    for (let x = 0; x < sorted.length; x++) running[from + x] = sorted[x]!;
  };
  order(0, hc);
  order(n, n + ec);
  /** The t-th candidate of the order tried: healthy ones, then ejected ones. */
  const nth = (t: number): number => running[t < hc ? t : n + t - hc]!;
  let explored = false;
  const rnd = inp.random ?? Math.random;
  // A follow-up of a conversation whose prompt cache a qualifying model holds is not explored: that
  // would re-send the whole conversation uncached to a model it has not seen. Exploration happens
  // where a conversation starts (its follow-ups then prefer the model explored, through affinity).
  let held = false;
  if (run.affIdx >= 0) for (let t = 0; t < hc; t++) if (idx[running[t]!] === run.affIdx) { held = true; break; }
  // Only where the request's feedback can teach (a quality signal takes its key's): without one,
  // exploring gathers no evidence, and the shipped config names no signal.
  if (!held && hc > 1 && settings.explorationShare > 0 && rnd() < settings.explorationShare && learnsFrom(settings, inp.key ?? null)) {
    // Exploration: a low-evidence model that meets every constraint takes the first place; with W,
    // only one that the utility could choose were its quality perfect (a model dearer than W can
    // ever pay for would learn nothing this caller could use: exploring it only costs them).
    const fresh: number[] = [];
    const top = f.util[running[0]!]!;
    for (let x = 1; x < hc; x++) {
      const j = running[x]!;
      if (est.evidence[T.ref[idx[j]!]!]! >= settings.explorationEvidence) continue;
      if (wRank === null || 10 * wRank * (1 + f.bonus[j]!) - f.cost[j]! >= top) fresh.push(x);
    }
    if (fresh.length > 0) {
      const at = fresh[Math.floor(rnd() * fresh.length)]!;
      const pick = running[at]!;
      for (let x = at; x > 0; x--) running[x] = running[x - 1]!;
      running[0] = pick;
      explored = true;
    }
  }
  // Counts per constraint (in code order, as the headers list them), and the excluded candidates to
  // show: the first SHOWN of each constraint in candidate order, or all.
  const limit = inp.fullRanking ? Infinity : SHOWN;
  const codes = POLICY + (policy?.rules.length ?? 0);
  const perCode = codeCounts(f.code, n, codes);
  const excludedBy: Record<string, number> = {};
  const excluded: number[] = [];
  for (let code = 1; code < codes; code++) {
    const count = perCode[code]!;
    if (count === 0) continue;
    const name = constraintName(run, code);
    excludedBy[name] = (excludedBy[name] ?? 0) + count;
    for (let j = 0, left = Math.min(count, limit); left > 0; j++) if (f.code[j] === code) { excluded.push(j); left--; }
  }
  // Learned models among the shown excluded ones were not predicted yet.
  if (!inp.fullRanking && anyLearned(inp.quality, set)) {
    const more: number[] = [];
    for (const j of excluded) { const r = T.ref[idx[j]!]!; if (neededRefs[r] === 0) { neededRefs[r] = 1; more.push(r); } }
    refine(est, inp.quality, set, view.features, more);
  }
  const shown = (j: number): Ranked => materialize(run, j, ejectedAt[T.prov[idx[j]!]!] === 1);
  // Shown in order: the plan, the rest of the order (up to the limit), those planTarget dropped, the excluded.
  const ranked: Ranked[] = [];
  const plan: PlanTarget[] = [];
  const dropped: Ranked[] = [];
  const total = hc + ec;
  let t = 0;
  for (; t < total && plan.length < inp.maxAttempts + 1; t++) {
    const r = shown(nth(t));
    const target = planTarget(r, inp);
    if (target) { plan.push(target); ranked.push(r); } else { dropped.push(r); excludedBy.max_cost = (excludedBy.max_cost ?? 0) + 1; }
  }
  const chosen = plan.length > 0 ? ranked[0]! : null;
  // The order goes on from t: every candidate before it was planned or dropped.
  for (; t < total && ranked.length < limit; t++) ranked.push(shown(nth(t)));
  for (const r of dropped) ranked.push(r);
  for (const j of excluded) ranked.push(shown(j));
  return {
    w, policy: policy?.name ?? null, stateVersion: inp.quality.version, kind: view.features.kind, candidates: n,
    ranked, excludedBy, chosen, explored, affinity: inp.affinity?.id ?? null, plan,
  };
}

/** A decision stopped at the max_cost bound: only `deferred` is meant to be read (no plan, nothing ranked). */
function deferredDecision(run: Run, n: number): Decision {
  const { inp } = run;
  return {
    w: inp.params.wtp, policy: inp.policy?.name ?? null, stateVersion: inp.quality.version, kind: inp.view.features.kind, candidates: n,
    ranked: [], excludedBy: {}, chosen: null, explored: false, affinity: inp.affinity?.id ?? null, plan: [], deferred: run.tokens.deferred,
  };
}
