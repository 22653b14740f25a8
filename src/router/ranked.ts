// A candidate of a decision as it is shown (headers, records, the dry run, the 400): its figures
// read out of the decision's typed arrays into a Ranked, with the exclusion reason in words and the
// prefer rules it satisfies. Only shown candidates are materialised.
import type { Candidate } from './candidates.ts';
import { FORMAT_MAX_TOOLS, MANY_TOOLS } from '../formats/tool-count.ts';
import { readsToolChanges } from '../formats/tool-changes.ts';
import { C_COST, C_CONTEXT, C_JSON, C_KEY, C_NATIVE, C_NATIVE_CHAT, C_NATIVE_MESSAGES, C_PER_MILLION, C_REASONING, C_TOOLS, C_VISION, POLICY, fmt, type Ranked } from './decision.ts';
import { constraintName, countOf, expectedTokens, figures, setView, type Run } from './figures.ts';

/** Why an excluded candidate is out, in words, from its constraint and figures. */
function reason(run: Run, code: number, r: Ranked, c: Candidate): string {
  const p = run.inp.params;
  switch (code) {
    case C_KEY: return "the API key's allowed_models do not include it";
    case C_TOOLS:
      if (!c.caps.tools) return 'the request uses tools; the model does not support them';
      return run.inp.view.needs.mcpToolChanges && !readsToolChanges(c.entry.provider.format)
        ? "a tool change names an Anthropic MCP tool or toolset; the model's API has no MCP connector"
        : `the request declares more than ${MANY_TOOLS} tools; the model's API takes at most ${FORMAT_MAX_TOOLS[c.entry.provider.format]}`;
    case C_NATIVE: {
      const held = run.inp.view.nativeOnly;
      return `the request holds ${held.slice(0, 3).join(', ')}${held.length > 3 ? ` and ${held.length - 3} more` : ''}, which only a server of the Responses API runs; the model is reached by translation`;
    }
    case C_NATIVE_CHAT: return `the request asks for ${run.inp.view.nativeOnly.join(', ')}, which only an OpenAI chat-completions server answers; the model is reached by translation`;
    case C_NATIVE_MESSAGES: return `the request asks for ${run.inp.view.nativeOnly.join(', ')}, which only Anthropic's Messages API acts on; the model is reached by translation`;
    case C_VISION: return 'the request has images or a binary document (PDF); the model does not accept images';
    case C_JSON: return 'the request asks for JSON schema output; the model does not support it';
    case C_REASONING: return 'the request asks for reasoning/thinking; the model does not reason';
    case C_CONTEXT: return `the prompt (${r.inputTokens} tokens) does not fit the context window (${c.contextWindow})`;
    case C_PER_MILLION: return `blended price $${fmt(r.blendedPerMillion)}/M for ${r.inputTokens} input and ${r.outputTokens} expected output tokens exceeds $${p.maxCostPerMillion}/M`;
    case C_COST: return `minimum cost $${fmt(r.minCostUsd)} (prompt of up to ${r.inputTokensCeiling} tokens and one output token) exceeds max_cost $${p.maxCost}`;
    default: return run.words!.reasons[code - POLICY]!;
  }
}

/** Ranked.preferred of the many candidates no prefer rule (nor affinity) favours; frozen, as it is shared. */
const NONE: string[] = Object.freeze([]) as unknown as string[];

/** The prefer rules candidate j satisfies (names), then 'affinity' when it holds the conversation, for explanations. */
function preferredBy(run: Run, j: number, i: number): string[] {
  let out: string[] | null = null;
  for (const k of run.active) {
    const rule = run.inp.policy!.rules[k]!;
    if (rule.action !== 'prefer') continue;
    if (rule.fixed ? run.hits![k]![i] === 1 : (setView(run, j, i), rule.test(run.inp.view.policyData))) (out ??= []).push(rule.name);
  }
  if (i === run.affIdx) (out ??= []).push('affinity');
  return out ?? NONE;
}

export function materialize(run: Run, j: number, ejected: boolean): Ranked {
  const { f, set } = run;
  const i = run.idx[j]!;
  const c = set.all[i]!;
  if (f.done[j] === 0) figures(run, j);
  const tc = countOf(run, set.table.tok[i]!);
  const ri = set.table.ref[i]!;
  const est = run.est!;
  const code = f.code[j]!;
  const preferred = code === 0 ? preferredBy(run, j, i) : NONE;
  const r: Ranked = {
    id: c.id, provider: c.provider, canonical: c.canonical, q: est.q[ri]!, qSource: est.source[ri]!, evidence: est.evidence[ri]!,
    inputTokens: expectedTokens(run, i, tc), inputTokensCeiling: f.ceil[j]!, tokensExact: tc.exact, tokenMethod: tc.method,
    outputTokens: f.out[j]!, cachedTokens: f.cached[j]!, expectedCostUsd: f.cost[j]!, minCostUsd: f.minCost[j]!, blendedPerMillion: f.blended[j]!,
    utility: code === 0 ? f.util[j]! : 0, preferred, ejected, excluded: null, cand: c,
  };
  if (code !== 0) r.excluded = { constraint: constraintName(run, code), reason: reason(run, code, r, c) };
  return r;
}
