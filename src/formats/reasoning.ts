// Reasoning controls the upstream encoders share: effort <-> thinking budget, the output limit to
// ask for, fitting a budget under it, and the thinking rules of Claude models (served by Anthropic
// and by Bedrock alike), so a translated request is never one the target refuses.
import type { CanonicalRequest, ReasoningEffort, ThinkingDisplay } from './canonical.ts';
import type { TargetInfo } from './codec.ts';

export type Effort = Exclude<ReasoningEffort, 'none'>;

/**
 * Thinking budget (tokens) for each effort level, where a target takes a budget. Anthropic's
 * smallest budget is 1024; xhigh and max go past high and are cut to the output limit by fitBudget.
 */
export const BUDGET_BY_EFFORT: Readonly<Record<Effort, number>> = {
  minimal: 1024, low: 2048, medium: 8192, high: 24576, xhigh: 32768, max: 65536,
};

/**
 * A thinking budget -> effort, for targets that take a level: below 4096 tokens is a light think,
 * 4096..16383 a moderate one, 16384 and up a deep one.
 */
export function effortForBudget(budget: number): 'low' | 'medium' | 'high' {
  if (budget < 4096) return 'low';
  if (budget < 16384) return 'medium';
  return 'high';
}

/** Output limit when the model's catalog entry is unknown (hand-written test models). */
export const FALLBACK_MAX_TOKENS = 4096;

export const modelReasons = (t: TargetInfo): boolean => t.model?.capabilities.reasoning === true;

/** The output limit to ask for when the client named none: the model's own limit from the catalog. */
export const catalogMaxTokens = (t: TargetInfo): number => t.model?.max_completion_tokens ?? FALLBACK_MAX_TOKENS;

/**
 * A budget lowered to stay below `maxTokens` (thinking counts toward the output limit), or null
 * when less than `min` tokens would be left for it.
 */
export function fitBudget(budget: number, maxTokens: number, min: number): number | null {
  if (budget < maxTokens) return budget;
  return maxTokens - 1 >= min ? maxTokens - 1 : null;
}

/**
 * What the client asked of reasoning, in one shape: `off` (thinking disabled or effort none),
 * `budget` (a fixed budget, explicit or derived from an effort), `adaptive` (the model decides,
 * optionally steered by an effort), or nothing asked (null).
 */
export type ReasoningAsk =
  | { kind: 'off' }
  | { kind: 'budget'; budget: number; display?: ThinkingDisplay; derived: boolean }
  | { kind: 'adaptive'; effort?: Effort; display?: ThinkingDisplay };

export function reasoningAsk(req: CanonicalRequest): ReasoningAsk | null {
  const t = req.thinking;
  const effort = req.reasoning_effort;
  if (t?.type === 'disabled' || (t === undefined && effort === 'none')) return { kind: 'off' };
  if (t?.type === 'enabled') return { kind: 'budget', budget: t.budget_tokens, ...(t.display ? { display: t.display } : {}), derived: false };
  if (t?.type === 'adaptive') {
    return { kind: 'adaptive', ...(effort && effort !== 'none' ? { effort } : {}), ...(t.display ? { display: t.display } : {}) };
  }
  if (effort !== undefined && effort !== 'none') return { kind: 'budget', budget: BUDGET_BY_EFFORT[effort], derived: true };
  return null;
}

/** How adjustments name the ask: the client's `thinking` when it sent one, else its effort. */
export const askedAs = (req: CanonicalRequest): 'thinking' | 'reasoning_effort' => (req.thinking ? 'thinking' : 'reasoning_effort');

/**
 * The ask a target with its own reasoning control has to honour: null when nothing was asked, or
 * when the model does not reason (the ask is then dropped and reported in `adjustments`).
 */
export function reasoningAskFor(req: CanonicalRequest, target: TargetInfo, adjustments: string[]): ReasoningAsk | null {
  const ask = reasoningAsk(req);
  if (ask === null || modelReasons(target)) return ask;
  adjustments.push(`${askedAs(req)}=dropped(model does not reason)`);
  return null;
}

const FORCED = new Set(['any', 'tool']);

/**
 * Why a Claude model would refuse thinking on this request, or null. Claude refuses thinking with
 * a tool choice that forces tool use, and, in a tool loop (the conversation ends in tool results),
 * when the assistant turn holding those calls does not open with a signed thinking block: an
 * OpenAI client's history never has one, so thinking its reasoning_effort asked for cannot start
 * mid-loop. `sendable` tells which thinking blocks the encoder will actually send. It reads roles and
 * block types only, so a relayed client body's messages serve as they are (content that is not a
 * list of blocks, a plain string, has none).
 */
type Turn = { role?: unknown; content?: unknown };
type Typed = { type?: unknown };
const blocksOf = (m: Turn): readonly Typed[] => (Array.isArray(m.content) ? m.content as Typed[] : []);
export function claudeThinkingConflict<M extends Turn>(toolChoice: { type?: unknown } | undefined, messages: readonly M[], sendable: (m: M) => readonly Typed[] = blocksOf): string | null {
  if (toolChoice && FORCED.has(toolChoice.type as string)) return 'tool_choice forces tool use';
  const last = messages.at(-1);
  if (!last || last.role !== 'user' || !blocksOf(last).some((b) => b.type === 'tool_result')) return null;
  for (let i = messages.length - 2; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    if (!blocksOf(m).some((b) => b.type === 'tool_use')) return null;
    const first = sendable(m)[0];
    return first?.type === 'thinking' || first?.type === 'redacted_thinking' ? null : 'history has tool calls without signed thinking';
  }
  return null;
}

/** Claude's smallest thinking budget. */
export const CLAUDE_MIN_BUDGET = 1024;

/** Anthropic's effort levels; OpenAI's `minimal` is nearest to `low`. */
const CLAUDE_EFFORT: Readonly<Record<Effort, string>> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'max' };

export type ClaudeThinkingPlan = {
  /** The `thinking` object to send, if any. */
  thinking?: Record<string, unknown>;
  /** `output_config.effort` to send with adaptive thinking. */
  effort?: string;
  maxTokens: number;
  /** Thinking is on: Claude then refuses temperature other than 1, top_k, and top_p below 0.95. */
  on: boolean;
  adjustments: string[];
};

/**
 * What a Claude model (on Anthropic or on Bedrock) gets for the request's reasoning ask: the ask
 * kept, fitted under the output limit, or dropped (model does not reason, forced tool choice, a
 * tool loop without signed thinking), every change reported. `maxTokens` is the client's limit,
 * else the model's catalog limit (reported as a default).
 */
export function planClaudeThinking(req: CanonicalRequest, target: TargetInfo, conflict: string | null): ClaudeThinkingPlan {
  const adjustments: string[] = [];
  let maxTokens = req.max_tokens;
  if (maxTokens === undefined) {
    maxTokens = catalogMaxTokens(target);
    adjustments.push(`max_tokens=default(${maxTokens})`);
  }
  const ask = reasoningAsk(req);
  const what = askedAs(req);
  const off = (why: string): ClaudeThinkingPlan => ({ maxTokens, on: false, adjustments: [...adjustments, `${what}=dropped(${why})`] });
  if (ask === null) return { maxTokens, on: false, adjustments };
  if (ask.kind === 'off') {
    return req.thinking ? { thinking: { type: 'disabled' }, maxTokens, on: false, adjustments } : off('none asks for no thinking');
  }
  if (!modelReasons(target)) return off('model does not reason');
  if (conflict !== null) return off(conflict);
  if (ask.kind === 'adaptive') {
    const plan: ClaudeThinkingPlan = { thinking: { type: 'adaptive', ...(ask.display ? { display: ask.display } : {}) }, maxTokens, on: true, adjustments };
    if (ask.effort) {
      plan.effort = CLAUDE_EFFORT[ask.effort];
      if (plan.effort !== ask.effort) adjustments.push(`reasoning_effort=${ask.effort}->${plan.effort}`);
    }
    return plan;
  }
  const budget = fitBudget(ask.budget, maxTokens, CLAUDE_MIN_BUDGET);
  if (budget === null) return off(`max_tokens ${maxTokens} leaves no room for thinking`);
  if (ask.derived) adjustments.push(`reasoning_effort=${req.reasoning_effort}->thinking.budget_tokens(${budget})`);
  else if (budget !== ask.budget) adjustments.push(`thinking.budget_tokens=${ask.budget}->${budget}`);
  return { thinking: { type: 'enabled', budget_tokens: budget, ...(ask.display ? { display: ask.display } : {}) }, maxTokens, on: true, adjustments };
}

/**
 * Sampling parameters Claude refuses alongside thinking, each left out and reported: temperature
 * other than 1, top_k, top_p below 0.95.
 */
export function claudeSampling(req: CanonicalRequest, thinkingOn: boolean, adjustments: string[]): { temperature?: number; top_p?: number; top_k?: number } {
  const out: { temperature?: number; top_p?: number; top_k?: number } = {};
  const { temperature, top_p, top_k } = req;
  if (temperature !== undefined) {
    if (!thinkingOn || temperature === 1) out.temperature = temperature; else adjustments.push('temperature=dropped(thinking)');
  }
  if (top_p !== undefined) {
    if (!thinkingOn || top_p >= 0.95) out.top_p = top_p; else adjustments.push('top_p=dropped(thinking)');
  }
  if (top_k !== undefined) {
    if (!thinkingOn) out.top_k = top_k; else adjustments.push('top_k=dropped(thinking)');
  }
  return out;
}
