// The router's compiled settings (gateway.yaml `router:`): exploration, quality signals, learning,
// affinity and named json-logic policies. Compiled once per config load (src/config/compile.ts).
import type { QualitySignal } from './quality/index.ts';
import { withOperatorPriors, type CompiledPriors, type PriorTable } from './quality/prior.ts';
import { compilePolicies, type CompiledPolicy } from './policy.ts';
import type { RouterDefaults } from './params.ts';
import { globToRegExp } from '../util/glob.ts';
import { headerText } from '../util/header-text.ts';

/** Candidates stored per group by default (router.record_candidates: "top"); "all" keeps every one (ALL), a number that many. */
export const RECORDED = 10;
export const ALL = Number.POSITIVE_INFINITY;

export type RouterSettings = {
  /** Cold-start priors: the shipped table, with router.priors_file's models over it. */
  priors: CompiledPriors;
  /** Share of routed requests (0..1) that try a low-evidence model in place of the best one. */
  explorationShare: number;
  /** A candidate with less learned evidence than this (weighted outcomes) counts as unexplored. */
  explorationEvidence: number;
  /**
   * Whose routed requests can teach, so exploring them can earn a model evidence: every key's (a
   * quality signal without `keys`), else the keys named by the signals' `keys` globs. No signal: none.
   */
  learnsFrom: { all: boolean; keys: RegExp[] };
  /** Feedback metrics that train the quality model, with their direction and range. */
  qualitySignals: QualitySignal[];
  /** Expected output tokens for a model and prompt kind with no observed answer yet. */
  defaultOutputTokens: number;
  /** Learning: how often a replica looks for new feedback to train on, and for a newer stored state. */
  trainIntervalMs: number;
  statePollMs: number;
  halfLifeDays: number | null;
  /** Feedback is learned once its first value is this old, with the value standing then. */
  feedbackSettleMs: number;
  affinity: { enabled: boolean; ttlMs: number; maxEntries: number; bonus: number };
  /** Candidates of a decision stored with the inference per group (included; each exclusion): 10 ("top"), ALL, or the number configured; the counts are always whole. */
  recordCandidates: number;
  /** Characters of new text encoded exactly, at most, to tighten a max_cost bound (src/tokens PromptTokens.bound). */
  maxExactChars: number;
  /** Recorded decisions older than this are deleted (null: kept); learned states but the newest `states` are deleted. */
  retention: { decisionsDays: number | null; states: number; dailyStates: number };
  policies: Map<string, CompiledPolicy>;
  defaultPolicy: string | null;
  /** Key-name glob -> policy name, first match wins. */
  keyPolicies: Array<{ pattern: RegExp; glob: string; policy: string }>;
  /** Router fields for requests that do not set them: for every request, and per key-name glob (first match, field by field over `defaults`). */
  defaults: RouterDefaults | null;
  keyDefaults: Array<{ pattern: RegExp; glob: string; defaults: RouterDefaults }>;
};

/** A header-safe name for where defaults were configured (`defaults`, or `key_defaults[<glob>]`). */
const sourceName = (glob: string | null): string => (glob === null ? 'defaults' : `key_defaults[${headerText(glob)}]`);

function compileDefaults(raw: unknown, glob: string | null): RouterDefaults {
  const d = obj(raw);
  const src = sourceName(glob);
  const from: RouterDefaults['from'] = {};
  for (const k of ['models', 'max_cost', 'max_cost_per_million_tokens', 'willingness_to_pay'] as const) if (d[k] !== undefined) from[k] = src;
  return {
    ...(Array.isArray(d.models) ? { models: d.models as string[] } : {}),
    ...(typeof d.max_cost === 'number' ? { maxCost: d.max_cost } : {}),
    ...(typeof d.max_cost_per_million_tokens === 'number' ? { maxCostPerMillion: d.max_cost_per_million_tokens } : {}),
    ...(typeof d.willingness_to_pay === 'number' ? { wtp: d.willingness_to_pay } : {}),
    from,
  };
}

/**
 * Whether feedback on a request made with this key trains the quality model (a signal takes its
 * key's feedback): only then can exploring it earn a model evidence.
 */
export function learnsFrom(s: RouterSettings, key: { name: string } | null): boolean {
  if (s.learnsFrom.all) return true;
  if (key === null) return false;
  for (const k of s.learnsFrom.keys) if (k.test(key.name)) return true;
  return false;
}

/** The defaults a key's routed requests get: the first matching key_defaults entry over `defaults`; null when none apply. */
export function defaultsFor(s: RouterSettings, key: { name: string } | null): RouterDefaults | null {
  const own = key ? s.keyDefaults.find((k) => k.pattern.test(key.name))?.defaults ?? null : null;
  if (own === null) return s.defaults;
  return s.defaults === null ? own : { ...s.defaults, ...own, from: { ...s.defaults.from, ...own.from } };
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? v as Obj : {});
const pick = <T>(o: Obj, key: string, fallback: T): T => (o[key] as T | undefined) ?? fallback;

/** `raw` has passed the schema and checkRouterConfig (src/router/policy-check.ts). */
export function compileRouterSettings(raw: unknown, priors: PriorTable | null = null): RouterSettings {
  const r = obj(raw);
  const ex = obj(r.exploration);
  const learn = obj(r.learning);
  const aff = obj(r.affinity);
  const ret = obj(r.retention);
  const qualitySignals: QualitySignal[] = ((r.quality_signals ?? []) as Obj[]).map((s) => ({
    metric: s.metric as string, optimize: pick(s, 'optimize', 'max'),
    ...(s.min !== undefined ? { min: s.min as number } : {}), ...(s.max !== undefined ? { max: s.max as number } : {}),
    ...(s.keys !== undefined ? { keys: s.keys as string[] } : {}),
  }));
  return {
    priors: withOperatorPriors(priors),
    explorationShare: pick(ex, 'share', 0.05),
    explorationEvidence: pick(ex, 'min_evidence', 10),
    learnsFrom: { all: qualitySignals.some((q) => !q.keys), keys: qualitySignals.flatMap((q) => (q.keys ?? []).map(globToRegExp)) },
    qualitySignals,
    defaultOutputTokens: pick(r, 'default_output_tokens', 400),
    trainIntervalMs: pick(learn, 'train_interval_ms', 30_000),
    statePollMs: pick(learn, 'state_poll_ms', 5_000),
    halfLifeDays: pick<number | null>(learn, 'half_life_days', null),
    feedbackSettleMs: pick(learn, 'feedback_settle_ms', 30_000),
    affinity: {
      enabled: pick(aff, 'enabled', true), ttlMs: pick(aff, 'ttl_ms', 300_000),
      maxEntries: pick(aff, 'max_entries', 10_000), bonus: pick(aff, 'quality_bonus', 0.02),
    },
    maxExactChars: pick(r, 'max_exact_token_chars', 32_768),
    retention: { decisionsDays: pick<number | null>(ret, 'decisions_days', 30), states: pick(ret, 'states', 50), dailyStates: pick(ret, 'daily_states', 14) },
    recordCandidates: r.record_candidates === 'all' ? ALL : typeof r.record_candidates === 'number' ? r.record_candidates : RECORDED,
    policies: compilePolicies(obj(r.policies)),
    defaultPolicy: (r.default_policy as string | undefined) ?? null,
    keyPolicies: Object.entries(obj(r.key_policies)).map(([glob, policy]) => ({ glob, pattern: globToRegExp(glob), policy: policy as string })),
    defaults: r.defaults === undefined ? null : compileDefaults(r.defaults, null),
    keyDefaults: Object.entries(obj(r.key_defaults)).map(([glob, d]) => ({ glob, pattern: globToRegExp(glob), defaults: compileDefaults(d, glob) })),
  };
}
