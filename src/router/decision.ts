// The routing decision's vocabulary: what a decision returns (Decision, Ranked, PlanTarget), what
// it reads (DecideInput, HealthView), and the exclusion codes shared by the files that build it
// (decide.ts runs it; figures.ts, ranked.ts and plan-targets.ts do its parts).
import type { Config } from '../config/types.ts';
import type { KeyRecord } from '../store/types.ts';
import type { Encoding } from '../tokens/families.ts';
import type { Candidate } from './candidates.ts';
import type { RouterParams } from './params.ts';
import type { CompiledPolicy } from './policy.ts';
import type { QualityState } from './quality/index.ts';
import type { RequestView } from './request-view.ts';
import type { RouterSettings } from './settings.ts';
import type { OutputTable } from './output-stats.ts';
import type { UsageBound } from '../engine/usage.ts';

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

/** `bound`: under max_cost, the counts the output cap was worked out with (an attempt bills at most these: src/engine/usage.ts boundedUsage). */
export type PlanTarget = { candidate: Candidate; maxOutputTokens: number | undefined; bound?: UsageBound };

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
  /** Per exact encoding, the new texts a tight max_cost bound needs counted (only with deferChars, over it): the decision stopped there. */
  deferred?: ReadonlyMap<Encoding, readonly string[]>;
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
  /**
   * Under max_cost: new text longer than this that a tight bound would encode is left to the caller:
   * the decision stops there (no plan) with Decision.deferred set. The HTTP route counts the texts in
   * slices between turns of the event loop and decides again (RouterService.routeSliced).
   */
  deferChars?: number;
};

/** Candidates shown per group (included; each exclusion) when the ranking is not full. */
export const SHOWN = 10;

/**
 * Characters of text not counted before that a decision encodes exactly for ranking, shared by the
 * encodings (about 0.12 ms at 17 MB/s); the rest is estimated, and encoded later only where max_cost
 * needs a tight bound. A new turn of a conversation usually fits; a pasted document does not.
 */
export const RANK_EXACT_CHARS = 2048;

/** Exclusion codes: 0 included, then the fixed constraints in the order they apply, then policy rule k as POLICY + k. */
export const FIXED = ['', 'key:allowed_models', 'capability:tools', 'capability:native_responses', 'capability:native_chat', 'capability:native_messages',
  'capability:vision', 'capability:json_schema', 'capability:reasoning', 'capability:context_window', 'max_cost_per_million_tokens', 'max_cost'] as const;
export const C_KEY = 1, C_TOOLS = 2, C_NATIVE = 3, C_NATIVE_CHAT = 4, C_NATIVE_MESSAGES = 5, C_VISION = 6, C_JSON = 7, C_REASONING = 8, C_CONTEXT = 9, C_PER_MILLION = 10, C_COST = 11, POLICY = 12;

export const fmt = (x: number): string => (x === 0 ? '0' : x >= 0.01 ? x.toFixed(4) : x.toPrecision(3));
