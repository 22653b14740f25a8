// Token counts at the engine's boundary: what an upstream reports is normalised to non-negative safe
// integers (an upstream can send anything), and what a stream cut short consumed is estimated from
// what it reported, the prompt (counted by src/tokens) and what was relayed, so it is billed rather than given away.
import type { CostExtras } from '../catalog/cost.ts';
import type { Pricing } from '../catalog/types.ts';
import type { ModelEntry } from '../config/types.ts';
import { emptyUsage, type Usage } from '../formats/canonical.ts';
import { clientCodecFor } from '../formats/registry.ts';
import { countPromptTokens } from '../tokens/index.ts';
import type { InferenceRequest } from './context.ts';

/** Characters per token used to estimate tokens from text (the usual figure for English and code). */
export const CHARS_PER_TOKEN = 4;

const NUMERIC = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens', 'cache_creation_5m', 'cache_creation_1h', 'reasoning_tokens'] as const;
const OPTIONAL_NUMERIC = ['web_search_requests', 'audio_input_tokens', 'audio_output_tokens'] as const;

/**
 * The largest count one call can report: what a record's token columns hold (2^31-1, PostgreSQL int4;
 * the record's boundary in src/records/boundary.ts clamps to the same), so the bill, the reservation
 * and the stored record always agree. No real call comes near it.
 */
export const MAX_COUNT = 2_147_483_647;

const clean = (v: unknown): number => (typeof v === 'number' && v > 0 ? (v < MAX_COUNT ? Math.round(v) : MAX_COUNT) : 0);
const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_COUNT;

/** Every count already one a record can hold: the usual case, checked per request (indexed loops, no iterator). */
function isClean(u: Usage): boolean {
  for (let i = 0; i < NUMERIC.length; i++) if (!isCount(u[NUMERIC[i]!])) return false;
  for (let i = 0; i < OPTIONAL_NUMERIC.length; i++) {
    const v = u[OPTIONAL_NUMERIC[i]!];
    if (v !== undefined && !isCount(v)) return false;
  }
  return true;
}

/**
 * `u` with every count a non-negative integer a record can hold: negatives, NaN and non-numbers
 * become 0, fractions are rounded, anything past 2^31-1 is capped. Returns `u` itself when it is
 * already clean (the usual case: no copy).
 */
export function normalizeUsage(u: Usage): Usage {
  if (isClean(u)) return u;
  const out: Usage = { ...u };
  for (const k of NUMERIC) out[k] = clean(u[k]);
  for (const k of OPTIONAL_NUMERIC) if (u[k] !== undefined) out[k] = clean(u[k]);
  return out;
}

export const tokensOfChars = (chars: number): number => Math.ceil(Math.max(0, chars) / CHARS_PER_TOKEN);

/**
 * What a request that did not finish normally consumed: the input the upstream reported (its
 * message_start) or else the request's estimate (a function: worked out only when needed), and the
 * larger of the output it reported and the output counted from the text relayed.
 */
export function consumedUsage(reported: Usage | null, inputEstimate: number | (() => number), outputChars: number): Usage {
  const u = reported ? { ...normalizeUsage(reported) } : emptyUsage();
  if (u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens === 0) u.input_tokens = clean(typeof inputEstimate === 'number' ? inputEstimate : inputEstimate());
  u.output_tokens = Math.max(u.output_tokens, tokensOfChars(outputChars));
  return u;
}

/** What a routed attempt under max_cost may bill: the output cap it was sent and the prompt ceiling that cap was worked out with. */
export type UsageBound = { outputTokens: number; inputTokens: number };

/**
 * `u` held to `b` (null when it is within it): the planner sent the output cap so that no bill within
 * these counts exceeds max_cost, so an upstream that reports more (garbage, or output past the limit
 * it was sent) is billed at the bound. Input is cut from the uncached part first, then cache writes,
 * then cache reads (any split within the ceiling was priced at its dearest); the counts included in
 * others (reasoning, audio, the cache write's 5m/1h parts) are kept within what holds them.
 */
export function boundedUsage(u: Usage, b: UsageBound): Usage | null {
  const input = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
  if (u.output_tokens <= b.outputTokens && input <= b.inputTokens) return null;
  const out: Usage = { ...u };
  out.output_tokens = Math.min(u.output_tokens, b.outputTokens);
  let over = input - b.inputTokens;
  for (const k of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
    if (over <= 0) break;
    const cut = Math.min(out[k], over);
    out[k] -= cut;
    over -= cut;
  }
  out.reasoning_tokens = Math.min(out.reasoning_tokens, out.output_tokens);
  out.cache_creation_1h = Math.min(out.cache_creation_1h, out.cache_creation_input_tokens);
  out.cache_creation_5m = Math.min(out.cache_creation_5m, out.cache_creation_input_tokens - out.cache_creation_1h);
  if (out.audio_output_tokens !== undefined) out.audio_output_tokens = Math.min(out.audio_output_tokens, out.output_tokens);
  if (out.audio_input_tokens !== undefined) out.audio_input_tokens = Math.min(out.audio_input_tokens, out.input_tokens + out.cache_read_input_tokens + out.cache_creation_input_tokens);
  return out;
}

/**
 * What a complete answer consumed: its usage as reported, with what the usage leaves out filled in.
 * The codecs read an absent usage as zeros (and normalizeUsage makes garbage zeros), so a count of 0
 * stands for none reported: no input at all (no prompt is 0 tokens) is the request's count, and no
 * output for an answer that has some is counted from its characters. Counts the upstream did report
 * are kept as they are. `outputChars` may be a function: worked out only when the output is missing.
 */
export function completedUsage(reported: Usage | null, inputEstimate: () => number, outputChars: number | (() => number)): Usage {
  const u = reported ? normalizeUsage(reported) : emptyUsage();
  const noInput = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens === 0;
  const chars = u.output_tokens === 0 ? (typeof outputChars === 'number' ? outputChars : outputChars()) : 0;
  if (!noInput && chars === 0) return u;
  const out: Usage = u === reported ? { ...u } : u;
  if (noInput) out.input_tokens = clean(inputEstimate());
  if (chars > 0) out.output_tokens = tokensOfChars(chars);
  return out;
}

/**
 * The input tokens billed for `r` on `entry` when the upstream reported none (an answer cut short, or
 * one without usage): the prompt counted for the served model by src/tokens (exact for OpenAI
 * families, the measured estimate elsewhere), from the canonical request (decoded here if no target
 * needed it yet, and kept). A body the worker pool prepared has no parsed request on this thread:
 * its bytes / 4 stand in (`r.inputEstimate`). Only ever called on those paths, never per request.
 */
export function inputTokensOf(r: InferenceRequest, entry: ModelEntry): number {
  if (r.prepared) return r.inputEstimate;
  try {
    r.canonical ??= clientCodecFor(r.clientFormat).decodeRequest(r.body);
    return countPromptTokens(r.canonical, entry.id).tokens;
  } catch {
    return r.inputEstimate; // a body the codec cannot read again (it was validated: should not happen)
  }
}

/** Input images in a request body (chat `image_url` parts, Messages `image` blocks, Responses `input_image`), tool results' and Responses tool outputs' included. */
export function countInputImages(body: Record<string, unknown>): number {
  let n = 0;
  const parts = (content: unknown): void => {
    if (!Array.isArray(content)) return;
    for (const p of content) {
      if (p === null || typeof p !== 'object') continue;
      const t = (p as { type?: unknown }).type;
      if (t === 'image_url' || t === 'image' || t === 'input_image') n++;
      else if (t === 'tool_result') parts((p as { content?: unknown }).content);
    }
  };
  for (const list of [body.messages, body.input]) {
    if (!Array.isArray(list)) continue;
    for (const m of list) {
      if (m === null || typeof m !== 'object') continue;
      parts((m as { content?: unknown }).content);
      // A Responses tool output may be a list of parts, images among them (function_call_output.output).
      const t = (m as { type?: unknown }).type;
      if (t === 'function_call_output' || t === 'custom_tool_call_output') parts((m as { output?: unknown }).output);
    }
  }
  return n;
}

/**
 * What costOf bills beyond tokens, read from the answer's usage (web searches, audio tokens) and the
 * request (images, counted only when the model prices them), at the time the call started.
 */
export function costExtrasOf(u: Usage, body: Record<string, unknown>, pricing: Pricing, at: number, knownImages?: number): CostExtras {
  const x: CostExtras = { at };
  if (u.web_search_requests) x.webSearches = u.web_search_requests;
  if (u.audio_input_tokens) x.audioInputTokens = u.audio_input_tokens;
  if (u.audio_output_tokens) x.audioOutputTokens = u.audio_output_tokens;
  // `knownImages`: counted where the body was parsed (the worker pool), when this thread holds only its parameters.
  if (!/^[0.]*$/.test(pricing.image)) { const images = knownImages ?? countInputImages(body); if (images > 0) x.images = images; }
  return x;
}
