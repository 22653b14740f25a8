// Usage of the OpenAI-style answers the pass-through routes relay without translating, in every shape
// they come in: chat and legacy completions (JSON and streamed chunks), the Responses API (its
// `usage`, and the `response.completed` event of its stream), embeddings. Also counts server-side
// web searches and the output relayed, so a stream cut short is billed for what it consumed.
import { emptyUsage, type Usage } from '../canonical.ts';
import { isRecord } from '../errors.ts';
import { canonicalUsage } from '../openai-chat/response.ts';
import type { SseFrame } from '../sse.ts';
import { readEvent, UnreadableFrame } from '../stream-frames.ts';

type Rec = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/**
 * Responses API usage (`input_tokens` including cached ones, `output_tokens` including reasoning)
 * to canonical: cached tokens split out of the input, as canonical input counts uncached only.
 */
export function responsesUsage(raw: Rec): Usage {
  const u = emptyUsage();
  const cached = isRecord(raw.input_tokens_details) ? num(raw.input_tokens_details.cached_tokens) : 0;
  u.cache_read_input_tokens = cached;
  u.input_tokens = Math.max(0, num(raw.input_tokens) - cached);
  u.output_tokens = num(raw.output_tokens);
  u.reasoning_tokens = isRecord(raw.output_tokens_details) ? num(raw.output_tokens_details.reasoning_tokens) : 0;
  return u;
}

/** Any OpenAI-style usage object: the Responses shape (`input_tokens`) or the chat/completions/embeddings one (`prompt_tokens`). */
export function usageOf(raw: unknown, serviceTier?: unknown): Usage | null {
  if (!isRecord(raw)) return null;
  if (raw.input_tokens !== undefined || raw.output_tokens !== undefined) return responsesUsage(raw);
  if (raw.prompt_tokens !== undefined || raw.completion_tokens !== undefined || raw.total_tokens !== undefined) return canonicalUsage(raw, serviceTier);
  return null;
}

/** Web searches an answer ran: Responses `web_search_call` output items (each one search, billed per call). */
function webSearchesIn(output: unknown): number {
  if (!Array.isArray(output)) return 0;
  let n = 0;
  for (const item of output) if (isRecord(item) && item.type === 'web_search_call') n++;
  return n;
}

/** The usage of a whole JSON answer (chat or legacy completion, Responses object, embeddings list). */
export function usageOfAnswer(json: unknown): Usage | null {
  if (!isRecord(json)) return null;
  const u = usageOf(json.usage, json.service_tier);
  const searches = webSearchesIn(json.output);
  if (u && searches > 0) u.web_search_requests = searches;
  return u;
}

/** Responses stream events that end a response and carry it whole, usage included. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** Responses stream events whose `delta` is output text (or tool-call arguments). */
const DELTA_EVENTS = new Set([
  'response.output_text.delta', 'response.refusal.delta', 'response.function_call_arguments.delta',
  'response.reasoning_text.delta', 'response.reasoning_summary_text.delta', 'response.custom_tool_call_input.delta',
]);

/** What to do with a frame: relay it; `usage`, the usage-only chunk (relayed only to a client that asked for usage); `drop` it. */
export type TapVerdict = 'relay' | 'usage' | 'drop';

export type StreamTap = {
  /** Reads one frame. Blank data is dropped; after a frame that is not a JSON object every frame is (see `failure`). */
  frame(f: SseFrame): TapVerdict;
  /** Why the stream cannot be relayed on: a frame cut short or not a JSON object (data lost), else null. */
  readonly failure: string | null;
  usage(): Usage | null;
  /** Output characters relayed (text deltas, tool arguments). */
  readonly outputChars: number;
  /** A normal end was seen (`[DONE]`, a finish reason with usage, `response.completed`). */
  readonly complete: boolean;
};

/** Watches a relayed stream of chat/completion chunks or Responses events. Never throws. */
export function createStreamTap(): StreamTap {
  let usage: Usage | null = null;
  let outputChars = 0;
  let complete = false;
  let finished = false;
  let failure: string | null = null;
  return {
    get outputChars() { return outputChars; },
    get complete() { return complete; },
    get failure() { return failure; },
    usage: () => usage,
    frame(f) {
      if (failure !== null) return 'drop';
      if (f.data === '[DONE]') { complete = finished || usage !== null; return 'relay'; }
      const ev = readEvent(f.data);
      if (ev === null) return 'drop';
      if (ev instanceof UnreadableFrame) { failure = ev.message; complete = false; return 'drop'; }
      const type = typeof ev.type === 'string' ? ev.type : f.event;
      if (type !== undefined && type.startsWith('response.')) {
        if (DELTA_EVENTS.has(type) && typeof ev.delta === 'string') outputChars += ev.delta.length;
        else if (FINAL_EVENTS.has(type) && isRecord(ev.response)) {
          usage = usageOfAnswer(ev.response) ?? usage;
          complete = type === 'response.completed';
        }
        return 'relay';
      }
      // Chat or legacy completion chunk.
      const choices = Array.isArray(ev.choices) ? ev.choices : [];
      for (const c of choices) {
        if (!isRecord(c)) continue;
        const d = isRecord(c.delta) ? c.delta : null;
        if (d) {
          for (const k of ['content', 'reasoning_content', 'reasoning', 'refusal']) { const v = d[k]; if (typeof v === 'string') outputChars += v.length; }
          if (Array.isArray(d.tool_calls)) for (const tc of d.tool_calls) if (isRecord(tc) && isRecord(tc.function) && typeof tc.function.arguments === 'string') outputChars += tc.function.arguments.length;
        }
        if (typeof c.text === 'string') outputChars += c.text.length;
        if (typeof c.finish_reason === 'string') finished = true;
      }
      const u = usageOf(ev.usage, ev.service_tier);
      if (u) {
        usage = u;
        if (finished) complete = true;
        return choices.length > 0 ? 'relay' : 'usage';
      }
      return 'relay';
    },
  };
}

/**
 * The usage object of a JSON answer too large to keep whole, from its tail (usage comes last in
 * OpenAI-style answers): the balanced object after the last `"usage":`, or null.
 */
export function usageFromTail(tail: string): Usage | null {
  const at = tail.lastIndexOf('"usage"');
  if (at < 0) return null;
  const start = tail.indexOf('{', at);
  if (start < 0) return null;
  let depth = 0; let inString = false;
  for (let i = start; i < tail.length; i++) {
    const c = tail.charCodeAt(i);
    if (inString) { if (c === 0x5c) i++; else if (c === 0x22) inString = false; continue; }
    if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) {
      try { return usageOf(JSON.parse(tail.slice(start, i + 1)) as Rec); } catch { return null; }
    }
  }
  return null;
}
