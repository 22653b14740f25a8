// Per-candidate figures of one decision (expected output, cost, minimum cost, blended price, the
// prompt's token ceiling) in typed arrays reused across decisions, the max_cost tightening of token
// ceilings, and per-request policy rules: the arithmetic decide.ts runs per candidate.
import type { PromptTokens, TokenCount } from '../tokens/index.ts';
import { ageDays, CAP, pricesFor, type CandidateSet } from './candidates.ts';
import { FIXED, POLICY, type DecideInput } from './decision.ts';
import type { Estimates } from './predictions.ts';
import type { RuleWords } from './rule-words.ts';

/** Per-candidate figures of one decision (index = position in the decision's candidate list). Reused across decisions. */
export type Figures = {
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

export function figuresFor(n: number, refs: number, providers: number): Figures {
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
export type Run = {
  inp: DecideInput; set: CandidateSet; idx: Int32Array; f: Figures; tokens: PromptTokens;
  counts: Array<TokenCount | undefined>; est: Estimates | null;
  /** Expected output tokens per canonical model (refs index), before the client's and the model's caps. */
  outRef: Float64Array; outCap: number; affIdx: number;
  active: number[]; hits: Array<Uint8Array | null> | null;
  latency: Array<number | null | undefined>; errors: number[];
  /** The policy's constraint names and exclusion reasons (rule-words.ts); null without a policy. */
  words: RuleWords | null;
};

export function countOf(run: Run, ti: number): TokenCount {
  let c = run.counts[ti];
  if (!c) { c = run.tokens.count(run.set.tokenizers[ti]!); run.counts[ti] = c; }
  return c;
}

export const constraintName = (run: Run, code: number): string =>
  (code < POLICY ? FIXED[code]! : run.words!.names[code - POLICY]!);

/**
 * Candidate i's expected prompt tokens: count() takes images at their family's figures (expected and
 * ceiling); the candidate's own image rule (src/tokens/images.ts) sets both.
 */
export function expectedTokens(run: Run, i: number, tc: TokenCount): number {
  return run.tokens.parts.imageSizes.length === 0 ? tc.tokens : tc.tokens + run.tokens.expectedImageDelta(run.set.tokenizers[run.set.table.tok[i]!]!, run.set.all[i]!.imageRule);
}

/** Expected output, cost, minimum cost, blended price and cached tokens of candidate j. */
export function figures(run: Run, j: number): void {
  const { f, set } = run;
  const T = set.table;
  const i = run.idx[j]!;
  const ti = T.tok[i]!;
  const tc = run.counts[ti] ?? countOf(run, ti);
  const images = run.tokens.parts.imageSizes.length !== 0;
  const tokens = images ? expectedTokens(run, i, tc) : tc.tokens;
  let out = run.outRef[T.ref[i]!]!;
  const cap = T.maxOutput[i]! < run.outCap ? T.maxOutput[i]! : run.outCap;
  if (out > cap) out = cap;
  const ct = images ? Math.max(tokens, tc.ceiling + run.tokens.imageCeilingDelta(set.tokenizers[ti]!, set.all[i]!.imageRule)) : tc.ceiling;
  const ceil = ct < T.contextWindow[i]! ? ct : T.contextWindow[i]!;
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
 * Under max_cost the ceiling sets every target's output cap and which candidates can afford one
 * output token: candidates of an exact encoding whose text was estimated (over the ranking's budget)
 * get the exact count, within max_exact_token_chars, and their figures again (a bytes ceiling is
 * about 4x the tokens of English text). Estimate families have nothing tighter than their bytes.
 * Encoding runs at ~17 MB/s on the event loop, so an encoding is tightened only where the bound is
 * near for one of its candidates (boundNear); elsewhere the loose ceiling gives the same plan and
 * caps, and ranking keeps the estimate, as without max_cost.
 */
export function tighten(run: Run, alive: readonly number[]): void {
  const { set } = run;
  const T = set.table;
  const maxCost = run.inp.params.maxCost!;
  const near = new Uint8Array(set.tokenizers.length);
  for (const j of alive) {
    const i = run.idx[j]!;
    const ti = T.tok[i]!;
    if (near[ti] === 0 && set.tokenizers[ti]!.kind === 'exact' && boundNear(run, j, i, maxCost)) near[ti] = 1;
  }
  const redo = new Set<number>();
  for (let ti = 0; ti < near.length; ti++) {
    if (near[ti] === 0) continue;
    const t = set.tokenizers[ti]!;
    const before = countOf(run, ti);
    if (before.exact) continue;
    const after = run.tokens.bound(t);
    if (after !== before) { run.counts[ti] = after; redo.add(ti); }
  }
  if (redo.size > 0) for (const j of alive) if (redo.has(T.tok[run.idx[j]!]!)) figures(run, j);
}

/**
 * Whether candidate j's max_cost outcome may depend on a tighter ceiling: excluded on the loose one
 * (the exact count may let it in), or its affordable output (float arithmetic, the output at its
 * dearer of output and reasoning prices) within 2x of the cap it would get anyway (the model's or the
 * client's limit). The margin covers the float figures; the plan's caps are worked out in exact
 * decimals on whichever ceiling there is, so a loose one is never unsafe, only less generous.
 */
function boundNear(run: Run, j: number, i: number, maxCost: number): boolean {
  const f = run.f;
  if (f.minCost[j]! > maxCost) return true;
  const T = run.set.table;
  const perOut = T.outWorst[i]!;
  if (!(perOut > 0)) return false;
  const client = run.inp.view.clientMaxTokens;
  const limit = client !== null && client < T.maxOutput[i]! ? client : T.maxOutput[i]!;
  // minCost is the prompt at its ceiling plus one output token and the per-request price.
  const afford = (maxCost - f.minCost[j]!) / perOut + 1;
  return afford < 2 * limit;
}

/**
 * The first active policy rule candidate j fails, as a code (0: none); prefer rules that hold add
 * their weight to f.bonus. Fixed rules read their cached result, the others run on the candidate's view.
 */
export function policyCode(run: Run, j: number, i: number): number {
  const rules = run.inp.policy!.rules;
  let viewSet = false;
  for (const k of run.active) {
    const rule = rules[k]!;
    let hit: boolean;
    if (rule.fixed) hit = run.hits![k]![i] === 1;
    else {
      if (!viewSet) { setView(run, j, i); viewSet = true; }
      hit = rule.test(run.inp.view.policyData);
    }
    if ((rule.action === 'exclude' && hit) || (rule.action === 'require' && !hit)) return POLICY + k;
    if (rule.action === 'prefer' && hit) run.f.bonus[j] = run.f.bonus[j]! + rule.weight;
  }
  return 0;
}

/** The candidate's per-request attributes for rules that read them. */
export function setView(run: Run, j: number, i: number): void {
  const c = run.set.all[i]!;
  const v = c.policyView;
  const p = run.set.table.prov[i]!;
  v.expected_cost_usd = run.f.cost[j];
  v.quality = run.est!.q[run.set.table.ref[i]!];
  v.age_days = ageDays(c.addedMs);
  // Measured latency and error rate change between requests, not within one: read once per provider.
  let lat = run.latency[p];
  if (lat === undefined) { const h = run.inp.health; lat = run.latency[p] = h.latencyMs(c.provider); run.errors[p] = h.errorRate(c.provider); }
  v.latency_ms = lat;
  v.error_rate = run.errors[p]!;
  run.inp.view.policyData.candidate = v;
}
