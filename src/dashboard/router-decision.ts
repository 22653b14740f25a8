// The router's recorded decision (router_decisions, migration 20: the compact JSON src/router/explain.ts
// recordedDecision stores) as the request detail shows it: what was chosen and why, the plan, and the
// candidates with their estimates, included and excluded. Stored JSON is read defensively: a field this
// view does not know stays in `raw`, a field it expects but cannot read becomes null.
import { getDecision } from '../router/store.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import type { RouterDecisionView } from './ui/api-types.ts';

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const rows = (v: unknown): unknown[][] => (Array.isArray(v) ? v.filter((x): x is unknown[] => Array.isArray(x)) : []);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : {});

/** A stored decision as the detail view's typed shape. */
export function decisionView(raw: unknown): RouterDecisionView {
  const d = obj(raw);
  const excludedBy: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj(d.excluded_by))) if (typeof v === 'number') excludedBy[k] = v;
  return {
    chosen: text(d.chosen), willingness_to_pay: num(d.w), policy: text(d.policy), prompt_kind: text(d.kind), state_version: num(d.state_version),
    explored: d.explored === true, affinity: text(d.affinity), chosen_quality: num(d.chosen_quality), chosen_cost_usd: num(d.chosen_cost_usd),
    input_tokens: num(d.input_tokens), token_method: text(d.token_method), expected_output_tokens: num(d.expected_output_tokens),
    candidates: num(d.candidates), excluded_by: excludedBy,
    budget_dropped: Array.isArray(d.budget_dropped) ? d.budget_dropped.map(String) : [],
    plan: rows(d.plan).map(([model, cap]) => ({ model: String(model), max_output_tokens: num(cap) })),
    included: rows(d.included).map(([model, q, cost, utility]) => ({ model: String(model), quality: num(q), expected_cost_usd: num(cost), utility: num(utility) })),
    excluded: Object.entries(obj(d.excluded)).flatMap(([constraint, list]) => rows(list).map(([model, cost, min]) => ({
      constraint, model: String(model), expected_cost_usd: num(cost), min_cost_usd: num(min),
    }))),
    raw,
  };
}

/** The decision recorded for a request, or null (not routed, or the decision writer lost it). */
export async function routerDecisionOf(sql: SqlRunner, inferenceId: string): Promise<RouterDecisionView | null> {
  const d = await getDecision(sql, inferenceId);
  return d ? decisionView(d.decision) : null;
}

/** Which of these request ids have a recorded decision (one indexed lookup for a page of rows). */
export async function routedIds(sql: SqlRunner, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await sql.all(`SELECT inference_id FROM router_decisions WHERE inference_id IN (${ids.map(() => '?').join(', ')})`, ids);
  return new Set(found.map((r) => String(r.inference_id)));
}
