// How a decision is shown: response headers, the dry-run answer of POST /v1/router/rank, and the
// compact JSON stored with the inference (every candidate with its estimates or exclusion reason).
import type { AttemptRecord } from '../store/types.ts';
import { fmt, type Decision, type Ranked } from './decide.ts';
import { storableAttempts } from './decision-row.ts';
import { priorWithBasis, type CompiledPriors } from './quality/prior.ts';
import type { TaskKind } from './quality/index.ts';
import { round } from './round.ts';
import { RECORDED } from './settings.ts';
// Policy and rule names (`policy:<name>` in x-router-excluded) and model ids come from config files.
import { headerText } from '../util/header-text.ts';


/** Headers on routed responses (and on the router's 400s). */
export function decisionHeaders(id: string, d: Decision): Record<string, string> {
  const h: Record<string, string> = {
    'x-router-decision-id': id,
    'x-router-candidates': String(d.candidates),
    'x-router-state-version': String(d.stateVersion),
  };
  let excluded = '';
  for (const k in d.excludedBy) excluded += `${excluded ? ', ' : ''}${k}=${d.excludedBy[k]}`;
  if (excluded) h['x-router-excluded'] = headerText(excluded);
  if (d.chosen) {
    h['x-router-model'] = headerText(d.chosen.id);
    h['x-router-quality'] = d.chosen.q.toFixed(4);
    h['x-router-cost'] = fmt(d.chosen.expectedCostUsd);
    if (d.explored) h['x-router-explored'] = 'true';
    if (d.affinity === d.chosen.id) h['x-router-affinity'] = 'true';
  }
  const cap = d.plan[0]?.maxOutputTokens;
  if (cap !== undefined) h['x-router-max-output-tokens'] = String(cap);
  return h;
}

function candidateJson(r: Ranked, capOf: Map<string, number | undefined>, prior: Record<string, unknown>): Record<string, unknown> {
  return {
    id: r.id, provider: r.provider, canonical: r.canonical,
    quality: round(r.q, 4), quality_source: r.qSource, evidence: round(r.evidence, 4), prior,
    input_tokens: r.inputTokens, input_tokens_exact: r.tokensExact, token_method: r.tokenMethod,
    expected_output_tokens: r.outputTokens, cached_tokens: r.cachedTokens,
    expected_cost_usd: round(r.expectedCostUsd), min_cost_usd: round(r.minCostUsd), blended_per_million_usd: round(r.blendedPerMillion),
    ...(r.excluded ? { excluded: r.excluded } : { utility: round(r.utility), ...(capOf.has(r.id) ? { max_output_tokens: capOf.get(r.id) ?? null } : {}) }),
    ...(r.preferred.length > 0 ? { preferred_by: r.preferred } : {}),
    ...(r.ejected ? { provider_ejected: true } : {}),
  };
}

/**
 * The dry-run body: the choice, the plan, and every candidate (included by rank, then excluded), each
 * with its cold-start prior and where it came from (what a learned estimate starts from, too).
 */
export function rankBody(id: string, d: Decision, priors: CompiledPriors): Record<string, unknown> {
  const capOf = new Map(d.plan.map((t) => [t.candidate.id, t.maxOutputTokens]));
  const prior = (r: Ranked) => {
    const p = priorWithBasis(r.cand.ref, d.kind as TaskKind, priors);
    return { q: round(p.q, 4), source: p.source, ...p.basis };
  };
  return {
    object: 'router.ranking',
    id,
    model: d.chosen?.id ?? null,
    willingness_to_pay: d.w,
    policy: d.policy,
    prompt_kind: d.kind,
    state_version: d.stateVersion,
    explored: d.explored,
    affinity: d.affinity,
    plan: d.plan.map((t) => ({ id: t.candidate.id, max_output_tokens: t.maxOutputTokens ?? null })),
    excluded_by: d.excludedBy,
    candidates: d.ranked.map((r) => candidateJson(r, capOf, prior(r))),
  };
}

/** The decision as stored with the inference (see recordedDecision); figures rounded by roundRecorded. */
export type RecordedDecision = {
  w: number | null; policy: string | null; state_version: number; kind: string; explored: boolean; affinity: string | null;
  chosen: string | null; chosen_quality: number | null; chosen_cost_usd: number | null;
  input_tokens: number | null; token_method: string | null; expected_output_tokens: number | null;
  plan: Array<[string, number | null]>; candidates: number; excluded_by: Record<string, number>;
  /** [id, q, expected cost, utility] */
  included: Array<[string, number, number, number]>;
  /** constraint -> [id, expected cost, min cost] */
  excluded: Record<string, Array<[string, number, number]>>;
  attempts: readonly AttemptRecord[];
  /** The plan's targets the key's budget could not cover, left out of the attempts (src/limits/affordable.ts); absent when none. */
  budget_dropped?: string[];
};

/**
 * The decision as stored with the inference: included candidates as [id, q, expected cost, utility]
 * (plan order first), excluded ones per constraint as [id, expected cost, min cost] (the reason is
 * the constraint with those figures), plus counts, tokens, plan, attempts and the state version.
 * `keep` candidates of each group are listed (the counts stay whole): 10 by default, since a full
 * catalog decision (ALL) is ~40 KB, which would cost more than the decision itself to write and grow
 * the table fast; 0 lists none (the chosen model's figures, the plan and the counts stay).
 * Figures are left unrounded: roundRecorded runs where the row is written (the router's worker).
 */
export function recordedDecision(d: Decision, attempts: readonly AttemptRecord[], keep = RECORDED, budgetDropped: readonly string[] = []): RecordedDecision {
  const included: RecordedDecision['included'] = [];
  const excluded: RecordedDecision['excluded'] = {};
  for (const r of d.ranked) {
    if (r.excluded) {
      if (keep === 0) continue;
      const list = (excluded[r.excluded.constraint] ??= []);
      if (list.length < keep) list.push([r.id, r.expectedCostUsd, r.minCostUsd]);
    } else if (included.length < keep) included.push([r.id, r.q, r.expectedCostUsd, r.utility]);
  }
  const c = d.chosen;
  return {
    w: d.w, policy: d.policy, state_version: d.stateVersion, kind: d.kind, explored: d.explored, affinity: d.affinity,
    chosen: c?.id ?? null, chosen_quality: c ? c.q : null, chosen_cost_usd: c ? c.expectedCostUsd : null,
    input_tokens: c?.inputTokens ?? null, token_method: c?.tokenMethod ?? null, expected_output_tokens: c?.outputTokens ?? null,
    plan: d.plan.map((t) => [t.candidate.id, t.maxOutputTokens ?? null]),
    candidates: d.candidates, excluded_by: d.excludedBy, included, excluded, attempts: storableAttempts(attempts),
    ...(budgetDropped.length > 0 ? { budget_dropped: [...budgetDropped] } : {}),
  };
}

/** Rounds a recorded decision's figures as stored: q 3 digits (chosen 4), costs 3 (chosen 6), utility 4. */
export function roundRecorded(r: RecordedDecision): RecordedDecision {
  const excluded: RecordedDecision['excluded'] = {};
  for (const [k, list] of Object.entries(r.excluded)) excluded[k] = list.map(([id, cost, min]) => [id, round(cost, 3), round(min, 3)]);
  return {
    ...r,
    chosen_quality: r.chosen_quality === null ? null : round(r.chosen_quality, 4),
    chosen_cost_usd: r.chosen_cost_usd === null ? null : round(r.chosen_cost_usd),
    included: r.included.map(([id, q, cost, u]) => [id, round(q, 3), round(cost, 3), round(u, 4)]),
    excluded,
  };
}
