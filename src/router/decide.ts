// The routing decision: candidates -> hard constraints (capabilities, policies, max_cost,
// max_cost_per_million_tokens) -> predicted quality and expected cost -> utility
// 10 * W * q - expected_cost (W absent: best q, ties to the cheaper) -> the attempt plan.
// Pure over its inputs (no I/O) and on the request path: what depends only on the config version,
// the key or the learned state is computed once elsewhere (candidates.ts, rule-cache.ts,
// predictions.ts); per candidate a decision reads typed arrays and does arithmetic, and objects are
// made only for what it shows.
import type { Config } from '../config/types.ts';
import { maxAffordableOutputTokens } from '../catalog/cost.ts';
import { decimalFromNumber } from '../catalog/decimal.ts';
import { GatewayError } from '../gateway-error.ts';
import type { KeyRecord } from '../store/types.ts';
import { PromptTokens, type TokenCount } from '../tokens/index.ts';
import { CAP, candidateSet, pricesFor, resolveIndices, type Candidate, type CandidateSet } from './candidates.ts';
import type { RouterParams } from './params.ts';
import type { CompiledPolicy } from './policy.ts';
import { estimatesFor, expectedOutputs, refine, type Estimates } from './predictions.ts';
import type { QualityState } from './quality/index.ts';
import type { RequestView } from './request-view.ts';
import { allowedBy, fixedRuleHits, fixedVerdicts } from './rule-cache.ts';
import type { RouterSettings } from './settings.ts';
import type { OutputTable } from './output-stats.ts';

/** Why a candidate was left out; `constraint` is what the 400 and the headers group by. */
export type Exclusion = { constraint: string; reason: string };

export type Ranked = {
  id: string; provider: string; canonical: string;
  q: number; qSource: string; evidence: number;
  inputTokens: number; inputTokensCeiling: number; tokensExact: boolean; tokenMethod: string;
  outputTokens: number; cachedTokens: number;
  expectedCostUsd: number; minCostUsd: number; blendedPerMillion: number;
  utility: number; preferred: string[]; ejected: boolean;
  excluded: Exclusion | null;
  /** The candidate itself (not serialised). */
  cand: Candidate;
};

export type PlanTarget = { candidate: Candidate; maxOutputTokens: number | undefined };

export type Decision = {
  w: number | null;
  policy: string | null;
  stateVersion: number;
  kind: string;
  /** Candidates considered. */
  candidates: number;
  /**
   * Included first (plan order, then the rest), then excluded. With fullRanking: every candidate,
   * included ones sorted. Otherwise the first SHOWN included and SHOWN per exclusion (excludedBy
   * has every count): routing builds only what it shows.
   */
  ranked: Ranked[];
  excludedBy: Record<string, number>;
  chosen: Ranked | null;
  explored: boolean;
  affinity: string | null;
  plan: PlanTarget[];
};

export type HealthView = {
  isEjected(provider: string): boolean;
  latencyMs(provider: string): number | null;
  errorRate(provider: string): number;
};

export type DecideInput = {
  cfg: Config;
  settings: RouterSettings;
  params: RouterParams;
  view: RequestView;
  policy: CompiledPolicy | null;
  quality: QualityState;
  output: OutputTable;
  health: HealthView;
  /** Candidate id holding this conversation's prompt cache, and how many prompt tokens it holds. */
  affinity: { id: string; cachedTokens: number } | null;
  maxAttempts: number;
  /**
   * Sort every included candidate (the dry run and explanations). Routing needs only the best few:
   * without it, the included list past the plan keeps catalog order (each entry carries its utility).
   */
  fullRanking?: boolean;
  /** The caller's key: its allowed_models exclude other candidates; policies read it as `key.*`. */
  key?: KeyRecord | null;
  random?: () => number;
};

const EPS = 1e-12;

/** Candidates shown per group (included; each exclusion) when the ranking is not full. */
export const SHOWN = 10;

/**
 * Characters of text not counted before that a decision encodes exactly for ranking, shared by the
 * encodings (about 0.12 ms at 17 MB/s); the rest is estimated, and encoded later only where max_cost
 * needs a tight bound. A new turn of a conversation usually fits; a pasted document does not.
 */
export const RANK_EXACT_CHARS = 2048;

/** Exclusion codes: 0 included, then the fixed constraints in the order they apply, then policy rule k as POLICY + k. */
const FIXED = ['', 'key:allowed_models', 'capability:tools', 'capability:vision', 'capability:json_schema', 'capability:reasoning',
  'capability:context_window', 'max_cost_per_million_tokens', 'max_cost'] as const;
const C_KEY = 1, C_TOOLS = 2, C_VISION = 3, C_JSON = 4, C_REASONING = 5, C_CONTEXT = 6, C_PER_MILLION = 7, C_COST = 8, POLICY = 9;

/** Per-candidate figures of one decision (index = position in the decision's candidate list). Reused across decisions. */
type Figures = {
  util: Float64Array; cost: Float64Array; minCost: Float64Array; blended: Float64Array; out: Float64Array; cached: Float64Array;
  /** Input tokens at their strict upper bound, capped at the context window. */
  ceil: Float64Array;
  /** q plus prefer-rule and affinity bonuses (ranking only). */
  bonus: Float64Array;
  code: Int16Array;
  /** 1 once cost etc. are computed. */
  done: Uint8Array;
  /** Per canonical model (refs index): 1 when a candidate of it is still in the running. */
  needed: Uint8Array;
  /** Per provider: -1 not read yet, 0 healthy, 1 ejected. */
  ejected: Int8Array;
};
/**
 * Reused by every decision (decide is synchronous and keeps nothing of them once it returns):
 * allocating a dozen typed arrays per request cost more than the arithmetic done in them.
 */
let scratch: Figures | null = null;

function figuresFor(n: number, refs: number, providers: number): Figures {
  if (!scratch || scratch.code.length < n || scratch.needed.length < refs || scratch.ejected.length < providers) {
    const m = Math.max(n, 64, scratch?.code.length ?? 0);
    const f = () => new Float64Array(m);
    scratch = {
      util: f(), cost: f(), minCost: f(), blended: f(), out: f(), cached: f(), ceil: f(), bonus: f(), code: new Int16Array(m), done: new Uint8Array(m),
      needed: new Uint8Array(Math.max(refs, 64, scratch?.needed.length ?? 0)), ejected: new Int8Array(Math.max(providers, 64, scratch?.ejected.length ?? 0)),
    };
  }
  scratch.code.fill(0, 0, n);
  scratch.done.fill(0, 0, n);
  scratch.bonus.fill(0, 0, n);
  scratch.needed.fill(0, 0, refs);
  scratch.ejected.fill(-1, 0, providers);
  return scratch;
}

/** What one decision knows while it runs. */
type Run = {
  inp: DecideInput; set: CandidateSet; idx: Int32Array; f: Figures; tokens: PromptTokens;
  counts: Array<TokenCount | undefined>; est: Estimates | null;
  /** Expected output tokens per canonical model (refs index), before the client's and the model's caps. */
  outRef: Float64Array; outCap: number; affIdx: number;
  active: number[]; hits: Array<Uint8Array | null> | null; reqData: Record<string, unknown>;
  latency: Array<number | null | undefined>; errors: number[];
  /** Constraint name per exclusion code, made once per decision. */
  names: string[];
};

function countOf(run: Run, ti: number): TokenCount {
  let c = run.counts[ti];
  if (!c) { c = run.tokens.count(run.set.tokenizers[ti]!); run.counts[ti] = c; }
  return c;
}

export function decide(inp: DecideInput): Decision {
  const { cfg, params, view, settings } = inp;
  const set = candidateSet(cfg);
  const T = set.table;
  const idx = params.models ? resolveIndices(cfg, set, params.models) : set.allIdx;
  const n = idx.length;
  const policy = inp.policy;
  const reqData = view.policyData;
  const run: Run = {
    inp, set, idx, f: figuresFor(n, set.refs.length, set.providers.length), counts: new Array(set.tokenizers.length), est: null,
    tokens: new PromptTokens(view.parts, { exactChars: RANK_EXACT_CHARS, boundChars: settings.maxExactChars }),
    outRef: expectedOutputs(inp.quality, set, view.features, inp.output, settings.defaultOutputTokens), outCap: view.clientMaxTokens ?? Infinity,
    affIdx: inp.affinity ? set.byId.get(inp.affinity.id)?.index ?? -1 : -1,
    active: [], hits: null, reqData, latency: [], errors: [], names: [],
  };
  const f = run.f;
  // request.input_tokens (the largest count among the candidates' tokenizers) only when a rule reads it.
  if (policy?.readsInputTokens) {
    let max = 0;
    for (let j = 0; j < n; j++) max = Math.max(max, countOf(run, T.tok[idx[j]!]!).tokens);
    (reqData.request as Record<string, unknown>).input_tokens = max;
  }
  let perRequestRules = false;
  if (policy) {
    policy.rules.forEach((r, k) => { if (r.when === null || r.when(reqData)) { run.active.push(k); if (!r.fixed) perRequestRules = true; } });
    if (run.active.length > 0) run.hits = fixedRuleHits(set, policy, inp.key ?? null);
  }
  const allowed = allowedBy(set, inp.key ?? null);
  const nd = view.needs;
  const need = (nd.tools ? CAP.tools : 0) | (nd.vision ? CAP.vision : 0) | (nd.jsonSchema ? CAP.jsonSchema : 0) | (nd.reasoning ? CAP.reasoning : 0);

  // Pass 1: the constraints that need neither quality nor cost (and fixed policy rules when no rule needs them).
  const upper = run.tokens.upper;
  // Only fixed rules active: their verdicts per candidate were worked out once for this (version, policy, key).
  const verdicts = run.active.length > 0 && !perRequestRules ? fixedVerdicts(set, policy!, inp.key ?? null, run.active) : null;
  const alive: number[] = [];
  const neededRefs = f.needed;
  for (let j = 0; j < n; j++) {
    const i = idx[j]!;
    let code = 0;
    const miss = need & ~T.caps[i]!;
    if (allowed !== null && allowed[i] === 0) code = C_KEY;
    else if (miss !== 0) code = miss & CAP.tools ? C_TOOLS : miss & CAP.vision ? C_VISION : miss & CAP.jsonSchema ? C_JSON : C_REASONING;
    // The prompt's cheap upper bound spares counting every tokenizer just to know it fits.
    else if (upper + 1 > T.contextWindow[i]! && countOf(run, T.tok[i]!).tokens + 1 > T.contextWindow[i]!) code = C_CONTEXT;
    else if (verdicts !== null && verdicts.fail[i] !== 0) code = POLICY + verdicts.fail[i]! - 1;
    if (verdicts !== null && code === 0) f.bonus[j] = verdicts.bonus[i]!;
    f.code[j] = code;
    if (code === 0) { alive.push(j); neededRefs[T.ref[i]!] = 1; }
  }

  // Quality only for the models still in the running (all of them for the dry run).
  const est = run.est = estimatesFor(inp.quality, set, view.features, inp.fullRanking ? null : neededRefs.subarray(0, set.refs.length));

  // Pass 2: figures, then (with max_cost) a tight token bound where an exact encoding can give one.
  for (const j of alive) figures(run, j);
  if (params.maxCost !== null) tighten(run, alive);
  const w = params.wtp;
  const healthy: number[] = [];
  const ejected: number[] = [];
  const ejectedAt = f.ejected;
  for (const j of alive) {
    const i = idx[j]!;
    let code = perRequestRules ? policyCode(run, j, i) : 0;
    if (code === 0 && params.maxCostPerMillion !== null && f.blended[j]! > params.maxCostPerMillion) code = C_PER_MILLION;
    if (code === 0 && params.maxCost !== null && f.minCost[j]! > params.maxCost) code = C_COST;
    if (code !== 0) { f.code[j] = code; continue; }
    let qRank = est.q[T.ref[i]!]! + f.bonus[j]!;
    if (i === run.affIdx) qRank += settings.affinity.bonus;
    f.util[j] = w === null ? qRank : 10 * w * qRank - f.cost[j]!;
    const p = T.prov[i]!;
    let ej = ejectedAt[p]!;
    if (ej < 0) ej = ejectedAt[p] = inp.health.isEjected(set.providers[p]!) ? 1 : 0;
    (ej === 1 ? ejected : healthy).push(j);
  }
  // Healthy providers first; an ejected one stays in the plan behind them (tried when nothing else is left).
  const better = (a: number, b: number): number => {
    const d = f.util[b]! - f.util[a]!;
    return d > EPS || d < -EPS ? d : f.cost[a]! - f.cost[b]!;
  };
  const k = inp.maxAttempts + 2;
  for (const list of [healthy, ejected]) if (inp.fullRanking) list.sort(better); else selectTop(list, k, better);
  let explored = false;
  const rnd = inp.random ?? Math.random;
  if (healthy.length > 1 && settings.explorationShare > 0 && rnd() < settings.explorationShare) {
    // Exploration: a low-evidence model that meets every constraint takes the first place.
    const fresh: number[] = [];
    for (let x = 1; x < healthy.length; x++) if (est.evidence[T.ref[idx[healthy[x]!]!]!]! < settings.explorationEvidence) fresh.push(x);
    if (fresh.length > 0) {
      const [pick] = healthy.splice(fresh[Math.floor(rnd() * fresh.length)]!, 1);
      healthy.unshift(pick!);
      explored = true;
    }
  }
  // Counts per constraint, and the excluded candidates to show (the first SHOWN of each, or all).
  const limit = inp.fullRanking ? Infinity : SHOWN;
  const byCode: Array<number[] | undefined> = new Array(POLICY + (policy?.rules.length ?? 0));
  const perCode: number[] = new Array(byCode.length).fill(0);
  for (let j = 0; j < n; j++) {
    const code = f.code[j]!;
    if (code === 0) continue;
    const list = byCode[code];
    if (!list) byCode[code] = [j]; else if (list.length < limit) list.push(j);
    perCode[code]++;
  }
  const excludedBy: Record<string, number> = {};
  for (let code = 1; code < byCode.length; code++) if (byCode[code]) { const name = constraintName(run, code); excludedBy[name] = (excludedBy[name] ?? 0) + perCode[code]!; }
  // Learned models among the shown excluded ones were not predicted yet.
  if (!inp.fullRanking) {
    const more: number[] = [];
    for (const list of byCode) if (list) for (const j of list) { const r = T.ref[idx[j]!]!; if (neededRefs[r] === 0) { neededRefs[r] = 1; more.push(r); } }
    refine(est, inp.quality, set, view.features, more);
  }
  const made = new Map<number, Ranked>();
  const make = (j: number): Ranked => {
    let r = made.get(j);
    if (!r) { r = materialize(run, j, ejectedAt[T.prov[idx[j]!]!] === 1); made.set(j, r); }
    return r;
  };
  const ordered = ejected.length === 0 ? healthy : healthy.concat(ejected);
  const plan: PlanTarget[] = [];
  const planned: Ranked[] = [];
  const dropped: Ranked[] = [];
  for (const j of ordered) {
    if (plan.length >= inp.maxAttempts + 1) break;
    const r = make(j);
    const t = planTarget(r, inp);
    if (t) { plan.push(t); planned.push(r); } else { dropped.push(r); excludedBy.max_cost = (excludedBy.max_cost ?? 0) + 1; }
  }
  const shown: Ranked[] = [...planned];
  for (const j of ordered) {
    if (shown.length >= limit) break;
    const r = make(j);
    if (!planned.includes(r) && !dropped.includes(r)) shown.push(r);
  }
  const out: Ranked[] = shown.concat(dropped);
  for (const list of byCode) if (list) for (const j of list) out.push(make(j));
  return {
    w, policy: policy?.name ?? null, stateVersion: inp.quality.version, kind: view.features.kind, candidates: n,
    ranked: out, excludedBy, chosen: planned[0] ?? null, explored, affinity: inp.affinity?.id ?? null, plan,
  };
}

const constraintName = (run: Run, code: number): string =>
  (code < POLICY ? FIXED[code]! : (run.names[code] ??= `policy:${run.inp.policy!.rules[code - POLICY]!.name}`));

/** Expected output, cost, minimum cost, blended price and cached tokens of candidate j. */
function figures(run: Run, j: number): void {
  const { f, set } = run;
  const T = set.table;
  const i = run.idx[j]!;
  const ti = T.tok[i]!;
  const tc = run.counts[ti] ?? countOf(run, ti);
  const tokens = tc.tokens;
  let out = run.outRef[T.ref[i]!]!;
  const cap = T.maxOutput[i]! < run.outCap ? T.maxOutput[i]! : run.outCap;
  if (out > cap) out = cap;
  const ceil = tc.ceiling < T.contextWindow[i]! ? tc.ceiling : T.contextWindow[i]!;
  let pin = T.input[i]!, pout = T.output[i]!, pread = T.cacheRead[i]!, preq = T.request[i]!;
  let cin = pin, cwrite = T.cacheWrite[i]!, cout = pout, creq = preq;
  if (T.tiered[i] === 1) {
    const c = set.all[i]!;
    const p = pricesFor(c, tokens); pin = p.input; pout = p.output; pread = p.cacheRead; preq = p.request;
    const q = pricesFor(c, ceil); cin = q.input; cwrite = q.cacheWrite; cout = q.output; creq = q.request;
  }
  const aff = run.inp.affinity;
  const cached = i === run.affIdx && (T.caps[i]! & CAP.caching) !== 0 && aff!.cachedTokens >= T.cacheMin[i]! ? Math.min(aff!.cachedTokens, tokens) : 0;
  f.cost[j] = (tokens - cached) * pin + cached * pread + out * pout + preq;
  f.ceil[j] = ceil;
  f.minCost[j] = ceil * (run.inp.view.cacheControl && cwrite > cin ? cwrite : cin) + cout + creq;
  f.blended[j] = (tokens * pin + out * pout) / (tokens + out > 1 ? tokens + out : 1) * 1e6;
  f.out[j] = out;
  f.cached[j] = cached;
  f.done[j] = 1;
}

/**
 * Under max_cost the ceiling sets every target's output cap: candidates of an exact encoding whose
 * text was estimated (over the ranking's budget) get the exact count, within max_exact_token_chars,
 * and their figures again (a bytes ceiling is about 4x the tokens of English text). Estimate families
 * have nothing tighter than their bytes.
 */
function tighten(run: Run, alive: readonly number[]): void {
  const { set } = run;
  const T = set.table;
  const redo = new Set<number>();
  for (const j of alive) {
    const ti = T.tok[run.idx[j]!]!;
    if (redo.has(ti)) continue;
    const t = set.tokenizers[ti]!;
    const before = countOf(run, ti);
    if (t.kind !== 'exact' || before.exact) continue;
    const after = run.tokens.bound(t);
    if (after !== before) { run.counts[ti] = after; redo.add(ti); }
  }
  if (redo.size > 0) for (const j of alive) if (redo.has(T.tok[run.idx[j]!]!)) figures(run, j);
}

/**
 * The first active policy rule candidate j fails, as a code (0: none); prefer rules that hold add
 * their weight to f.bonus. Fixed rules read their cached result, the others run on the candidate's view.
 */
function policyCode(run: Run, j: number, i: number): number {
  const rules = run.inp.policy!.rules;
  let viewSet = false;
  for (const k of run.active) {
    const rule = rules[k]!;
    let hit: boolean;
    if (rule.fixed) hit = run.hits![k]![i] === 1;
    else {
      if (!viewSet) { setView(run, j, i); viewSet = true; }
      hit = rule.test(run.reqData);
    }
    if ((rule.action === 'exclude' && hit) || (rule.action === 'require' && !hit)) return POLICY + k;
    if (rule.action === 'prefer' && hit) run.f.bonus[j] = run.f.bonus[j]! + rule.weight;
  }
  return 0;
}

/** The candidate's per-request attributes for rules that read them. */
function setView(run: Run, j: number, i: number): void {
  const c = run.set.all[i]!;
  const v = c.policyView;
  const p = run.set.table.prov[i]!;
  v.expected_cost_usd = run.f.cost[j];
  v.quality = run.est!.q[run.set.table.ref[i]!];
  // Measured latency and error rate change between requests, not within one: read once per provider.
  let lat = run.latency[p];
  if (lat === undefined) { const h = run.inp.health; lat = run.latency[p] = h.latencyMs(c.provider); run.errors[p] = h.errorRate(c.provider); }
  v.latency_ms = lat;
  v.error_rate = run.errors[p]!;
  run.reqData.candidate = v;
}

/** Why an excluded candidate is out, in words, from its constraint and figures. */
function reason(run: Run, code: number, r: Ranked, c: Candidate): string {
  const p = run.inp.params;
  switch (code) {
    case C_KEY: return "the API key's allowed_models do not include it";
    case C_TOOLS: return 'the request uses tools; the model does not support them';
    case C_VISION: return 'the request has images; the model does not accept them';
    case C_JSON: return 'the request asks for JSON schema output; the model does not support it';
    case C_REASONING: return 'the request asks for reasoning/thinking; the model does not reason';
    case C_CONTEXT: return `the prompt (${r.inputTokens} tokens) does not fit the context window (${c.contextWindow})`;
    case C_PER_MILLION: return `blended price $${fmt(r.blendedPerMillion)}/M for ${r.inputTokens} input and ${r.outputTokens} expected output tokens exceeds $${p.maxCostPerMillion}/M`;
    case C_COST: return `minimum cost $${fmt(r.minCostUsd)} (prompt of up to ${r.inputTokensCeiling} tokens and one output token) exceeds max_cost $${p.maxCost}`;
    default: {
      const rule = run.inp.policy!.rules[code - POLICY]!;
      return rule.action === 'require' ? `fails required policy rule ${rule.name}` : `excluded by policy rule ${rule.name}`;
    }
  }
}

/** The prefer rules candidate j satisfies (names), for explanations. */
function preferredBy(run: Run, j: number, i: number): string[] {
  const out: string[] = [];
  const rules = run.inp.policy?.rules ?? [];
  for (const k of run.active) {
    const rule = rules[k]!;
    if (rule.action !== 'prefer') continue;
    if (rule.fixed ? run.hits![k]![i] === 1 : (setView(run, j, i), rule.test(run.reqData))) out.push(rule.name);
  }
  return out;
}

function materialize(run: Run, j: number, ejected: boolean): Ranked {
  const { f, set } = run;
  const i = run.idx[j]!;
  const c = set.all[i]!;
  if (f.done[j] === 0) figures(run, j);
  const tc = countOf(run, set.table.tok[i]!);
  const ri = set.table.ref[i]!;
  const est = run.est!;
  const code = f.code[j]!;
  const preferred = code === 0 ? preferredBy(run, j, i) : [];
  if (code === 0 && i === run.affIdx) preferred.push('affinity');
  const r: Ranked = {
    id: c.id, provider: c.provider, canonical: c.canonical, q: est.q[ri]!, qSource: est.source[ri]!, evidence: est.evidence[ri]!,
    inputTokens: tc.tokens, inputTokensCeiling: f.ceil[j]!, tokensExact: tc.exact, tokenMethod: tc.method,
    outputTokens: f.out[j]!, cachedTokens: f.cached[j]!, expectedCostUsd: f.cost[j]!, minCostUsd: f.minCost[j]!, blendedPerMillion: f.blended[j]!,
    utility: code === 0 ? f.util[j]! : 0, preferred, ejected, excluded: null, cand: c,
  };
  if (code !== 0) r.excluded = { constraint: constraintName(run, code), reason: reason(run, code, r, c) };
  return r;
}

/**
 * One plan entry with its output cap: the client's limit, the model's, and under max_cost the largest
 * output whose worst-case bill (exact decimal, prompt at its ceiling, dearest input price) stays
 * within it. A candidate that cannot afford one output token is marked excluded under max_cost (null).
 */
function planTarget(r: Ranked, inp: DecideInput): PlanTarget | null {
  const c = r.cand;
  let cap: number | undefined = inp.view.clientMaxTokens !== null ? Math.min(inp.view.clientMaxTokens, c.maxOutput) : undefined;
  if (inp.params.maxCost !== null) {
    const afford = affordableOutput(c, r.inputTokensCeiling, inp.params.maxCost, inp.view.cacheControl);
    if (afford === null || afford < 1) {
      r.excluded = { constraint: 'max_cost', reason: `even one output token could exceed max_cost $${inp.params.maxCost} with a prompt of up to ${r.inputTokensCeiling} tokens` };
      return null;
    }
    cap = Math.min(cap ?? c.maxOutput, afford, c.maxOutput);
  }
  return { candidate: c, maxOutputTokens: cap };
}

/**
 * Moves the best `k` to the front in order, the rest after them in their order (one pass keeping the
 * best k in a small sorted list: about one comparison per element, no sort of the whole list).
 */
function selectTop(xs: number[], k: number, better: (a: number, b: number) => number): void {
  if (xs.length <= 1 || k <= 0) return;
  const top: number[] = [];
  for (const x of xs) {
    if (top.length === k && better(x, top[k - 1]!) >= 0) continue;
    let at = top.length < k ? top.length : k - 1;
    while (at > 0 && better(x, top[at - 1]!) < 0) { if (at < top.length) top[at] = top[at - 1]!; else top.push(top[at - 1]!); at--; }
    if (at < top.length) top[at] = x; else top.push(x);
  }
  const chosen = new Set(top);
  let w = top.length;
  const rest = xs.filter((x) => !chosen.has(x));
  for (let i = 0; i < top.length; i++) xs[i] = top[i]!;
  for (const x of rest) xs[w++] = x;
}

export const fmt = (x: number): string => (x === 0 ? '0' : x >= 0.01 ? x.toFixed(4) : x.toPrecision(3));

function affordableOutput(c: Candidate, ceilingTokens: number, maxCost: number, cacheControl: boolean): number | null {
  // decimalFromNumber, not toFixed: toFixed writes 1e21 and above in exponent form, which no decimal parser reads (max_cost 1e308 was a 500).
  const n = maxAffordableOutputTokens(c.entry.model.pricing, ceilingTokens, decimalFromNumber(maxCost), { cacheWrite: cacheControl ? 'any' : 'none' });
  return n === null ? null : Number.isFinite(n) ? n : Number.MAX_SAFE_INTEGER;
}

/** The 400 when nothing qualifies: each constraint, how many it excluded, and (up to 8) which, with their estimates. */
export function noRouteError(d: Decision): GatewayError {
  const groups = new Map<string, Ranked[]>();
  for (const r of d.ranked) if (r.excluded) (groups.get(r.excluded.constraint) ?? groups.set(r.excluded.constraint, []).get(r.excluded.constraint)!).push(r);
  const parts: string[] = [];
  for (const [constraint, rs] of groups) {
    const total = d.excludedBy[constraint] ?? rs.length;
    const shown = rs.slice(0, 8).map((r) => `${r.id} (${r.excluded!.reason}; expected $${fmt(r.expectedCostUsd)}, q ${r.q.toFixed(2)})`);
    parts.push(`${constraint} excluded ${total}: ${shown.join('; ')}${total > shown.length ? `; and ${total - shown.length} more` : ''}`);
  }
  const first = [...groups.keys()][0] ?? 'models';
  const param = first.startsWith('capability:') || first.startsWith('policy:') || first.startsWith('key:') ? 'model' : first;
  return new GatewayError('no_route', `no model satisfies the router's constraints. ${parts.join(' | ') || 'no candidates'}. POST /v1/router/rank with the same body shows every estimate.`, { param });
}
