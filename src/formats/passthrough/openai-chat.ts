// Same-format relay for OpenAI chat completions: model rewritten, the gateway's id stamped on every
// chunk, usage always requested upstream and its extra chunk hidden from clients that did not ask.
import type { Observed, PassthroughCodec, StreamProgress } from '../codec.ts';
import type { SseFrame } from '../sse.ts';
import { sseFrame } from '../sse.ts';
import { isRecord } from '../errors.ts';
import { openAIErrorOf } from '../openai-chat/errors.ts';
import { canonicalUsage } from '../openai-chat/response.ts';
import { createChatStreamEncoder } from '../openai-chat/stream-encoder.ts';
import { relayCallSignatures } from '../openai-chat/thought-signatures.ts';
import { isJsonObject, readEvent, relayUnreadable, UnreadableFrame, type StreamError } from '../stream-frames.ts';

type Rec = Record<string, unknown>;

/**
 * JSON markers, each split as [head, tail] where the tail starts with a rare character: indexOf
 * on a pattern starting with `"` stops at every quote of the chunk (several times slower).
 */
type Marker = readonly [head: string, tail: string];
const USAGE_OBJECT: Marker = ['"u', 'sage":{'];
const ERROR_KEY: Marker = ['"e', 'rror"'];
const FINISH: Marker = ['"finish', '_reason":"'];
const FINISH_LEN = FINISH[0].length + FINISH[1].length;
const USAGE_NULL: Marker = [',"u', 'sage":null'];
const USAGE_NULL_LEN = USAGE_NULL[0].length + USAGE_NULL[1].length;

/** Nesting depth just before `end` (1 = inside the top-level object), or -1 when `end` is inside a string. */
function depthAt(s: string, end: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return inString ? -1 : depth;
}

/** The value of the first top-level member `"key":"value"` written without escapes, else null. */
function topLevelString(s: string, key: string): string | null {
  const head = `"${key}":"`;
  for (let i = s.indexOf(head); i >= 0; i = s.indexOf(head, i + 1)) {
    if (depthAt(s, i) !== 1) continue;
    const start = i + head.length;
    const end = s.indexOf('"', start);
    if (end < 0) return null;
    const v = s.slice(start, end);
    return v.includes('\\') ? null : v;
  }
  return null;
}

/** Index of the whole marker (head + tail) in `s`, or -1. */
function find(s: string, [head, tail]: Marker): number {
  for (let i = s.indexOf(tail); i >= 0; i = s.indexOf(tail, i + 1)) {
    if (i >= head.length && s.startsWith(head, i - head.length)) return i - head.length;
  }
  return -1;
}

// A key's raw form cannot occur inside a JSON string (its quotes would be escaped there).
const DELTA = '"delta":{';
const ROLE = '"role":';

/**
 * The chunk with `"role":"assistant"` first in its first delta. Some compatible servers start a stream
 * without the role chunk, and the OpenAI format has the role in a choice's first delta: the openai SDK's
 * stream helper fails the whole answer without it ("missing role for choice 0").
 */
function withRole(s: string): string {
  const i = s.indexOf(DELTA) + DELTA.length;
  return `${s.slice(0, i)}"role":"assistant"${s.charCodeAt(i) === 0x7d ? '' : ','}${s.slice(i)}`;
}

/** Fields the gateway consumes itself and never forwards. */
export const GATEWAY_ONLY_FIELDS = ['extra', 'models', 'max_cost', 'max_cost_per_million_tokens', 'willingness_to_pay'] as const;

export const openaiChatPassthrough: PassthroughCodec = {
  prepareRequest(body, { upstreamModel, modelInBody, adjustments }) {
    const out: Rec = { ...body };
    for (const f of GATEWAY_ONLY_FIELDS) delete out[f];
    if (modelInBody) out.model = upstreamModel; else delete out.model;
    // Signatures the gateway marked on a translated answer's tool calls go back raw to their model only.
    if (Array.isArray(out.messages)) out.messages = relayCallSignatures(out.messages, upstreamModel, adjustments);
    if (out.stream === true) out.stream_options = { ...(out.stream_options as Rec | undefined), include_usage: true };
    return out;
  },

  rewriteResponse(json, ctx) {
    json.id = ctx.id;
    json.model = ctx.model;
    const choice = Array.isArray(json.choices) && isRecord(json.choices[0]) ? json.choices[0] : null;
    return { usage: isRecord(json.usage) ? canonicalUsage(json.usage, json.service_tier) : null, finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null };
  },

  newStream(ctx) {
    const seen: Observed = { usage: null, finishReason: null };
    const progress = new ChatProgress();
    const count = progress.count;
    const redact = ctx.redact ?? ((s: string) => s);
    // After the first chunk the upstream id and model are known: later content chunks are rewritten
    // by replacing those two exact JSON members, without parsing. Chunks that carry what the gateway
    // observes (usage, a finish reason, an error) or do not match byte for byte take the parsing path.
    let idNeedle = ''; let modelNeedle = '';
    const ourId = `"id":${JSON.stringify(ctx.id)}`;
    const ourModel = `"model":${JSON.stringify(ctx.model)}`;
    let done = false;
    /** Whether a delta went out yet: the first one must name the role (see withRole). */
    let delta = false;
    const finished = (reason: string): void => { seen.finishReason = reason; progress.content = true; progress.complete = progress.error === null; };
    const fail = (error: StreamError): string => createChatStreamEncoder({ includeUsage: false }).encode({ type: 'error', error });
    return {
      progress,
      fail,
      // [DONE] is the stream's last event: cut before it, the client is told with an error event (a finish reason and usage are not the end).
      whole: () => done && progress.complete,
      frame(f: SseFrame): string {
        // An error before any content ends the stream (nothing after it is relayed or counted), as does
        // a frame the relay could not read after content.
        // Nothing after [DONE] belongs to the answer (the translating decoder stops there too).
        if ((progress.error !== null && !progress.content) || progress.ended || done) return '';
        // [DONE] ends the stream as its server meant it: after content it is a complete answer, a finish
        // reason or not (some compatible servers send none), as the translating decoder reads it.
        if (f.data === '[DONE]') { done = true; if (seen.finishReason !== null || progress.content) progress.complete = progress.error === null; return ''; }
        const d = f.data;
        // An `event: error` frame is an error whatever its data's shape (the openai SDK reads it so): a bare
        // error object is relayed as the error chunk clients know, `{error: {...}}`.
        if (f.event === 'error') {
          const e = readEvent(d);
          if (e instanceof UnreadableFrame) return relayUnreadable(e, progress, fail);
          return errorFrame(e === null ? { error: {} } : e.error !== undefined ? e : { error: e }, progress, redact);
        }
        if (!idNeedle) {
          // The first chunk names the upstream id and model: read both in place when they are plain.
          const id = topLevelString(d, 'id');
          const model = id === null ? null : topLevelString(d, 'model');
          if (id !== null && model !== null) { idNeedle = `"id":"${id}"`; modelNeedle = `"model":"${model}"`; }
        }
        if (idNeedle && find(d, USAGE_OBJECT) < 0 && find(d, ERROR_KEY) < 0) {
          const i = d.indexOf(idNeedle);
          const m = d.indexOf(modelNeedle);
          // A finish reason is a plain word: read it in place; anything unusual takes the parsing path.
          const fr = find(d, FINISH);
          const frEnd = fr < 0 ? -1 : d.indexOf('"', fr + FINISH_LEN);
          const finish = frEnd < 0 ? null : d.slice(fr + FINISH_LEN, frEnd);
          // Forwarded unparsed only when it is one whole JSON object: a frame cut short never reaches the client.
          if (i >= 0 && m >= 0 && (fr < 0 || (finish !== null && !finish.includes('\\'))) && isJsonObject(d)) {
            if (finish !== null) finished(finish);
            // Until the stream shows content each chunk is read for it; after, only its size is added
            // (the output is estimated from sizes when needed: see newOutputCount).
            if (!progress.content) countOutput(d, progress, count);
            else { count.bulkChars += d.length; count.bulkFrames++; }
            // Spliced from slices (cheap string views) rather than replace(), which copies each time.
            let out = i < m
              ? d.slice(0, i) + ourId + d.slice(i + idNeedle.length, m) + ourModel + d.slice(m + modelNeedle.length)
              : d.slice(0, m) + ourModel + d.slice(m + modelNeedle.length, i) + ourId + d.slice(i + idNeedle.length);
            if (!ctx.includeUsage) {
              const u = find(out, USAGE_NULL);
              if (u >= 0) out = out.slice(0, u) + out.slice(u + USAGE_NULL_LEN);
            }
            if (!delta && d.includes(DELTA)) { delta = true; if (!d.includes(ROLE)) out = withRole(out); }
            return sseFrame(out);
          }
        }
        const chunk = readEvent(f.data);
        if (chunk === null) return '';
        // A chunk cut short, or `data: null`, a number, a string, an array: the answer lost data.
        if (chunk instanceof UnreadableFrame) return relayUnreadable(chunk, progress, fail);
        if (chunk.error !== undefined) return errorFrame(chunk, progress, redact);
        if (!idNeedle && typeof chunk.id === 'string' && typeof chunk.model === 'string') {
          idNeedle = `"id":${JSON.stringify(chunk.id)}`; modelNeedle = `"model":${JSON.stringify(chunk.model)}`;
        }
        chunk.id = ctx.id;
        chunk.model = ctx.model;
        const choices = Array.isArray(chunk.choices) ? chunk.choices : undefined;
        const choice = choices?.[0];
        if (!delta && isRecord(choice) && isRecord(choice.delta)) {
          delta = true;
          choice.delta.role ??= 'assistant';
        }
        if (isRecord(choice)) {
          if (isRecord(choice.delta)) countDelta(choice.delta, progress, count);
          if (typeof choice.finish_reason === 'string') finished(choice.finish_reason);
        }
        if (isRecord(chunk.usage)) {
          seen.usage = canonicalUsage(chunk.usage, chunk.service_tier);
          progress.content = true;
          if (!ctx.includeUsage) {
            if (!choices || choices.length === 0) return '';
            delete chunk.usage;
          }
        } else if (!ctx.includeUsage) delete chunk.usage;
        return sseFrame(JSON.stringify(chunk));
      },
      end: () => sseFrame('[DONE]'),
      observed: () => seen,
    };
  },
};

/**
 * An error chunk (OpenAI-compatible servers send `{error: {message, type, code}}` mid-stream):
 * relayed with its message redacted; before any content it is what the upstream answered instead.
 */
function errorFrame(chunk: Rec, progress: StreamProgress, redact: (s: string) => string): string {
  const e = isRecord(chunk.error) ? chunk.error : { message: String(chunk.error) };
  const message = redact(typeof e.message === 'string' && e.message !== '' ? e.message : 'upstream stream error');
  e.message = message;
  chunk.error = e;
  // The format's one error decoder: a numeric code is a status, else the code or type names the kind.
  const up = openAIErrorOf(typeof e.code === 'number' ? e.code : Number(e.code) || 200, e, () => message);
  progress.error ??= { kind: up.kind, message };
  progress.complete = false;
  return sseFrame(JSON.stringify(chunk));
}

/** Output characters of a parsed delta: text, reasoning, refusal and tool-call arguments. */
function countDelta(delta: Rec, progress: StreamProgress, out: OutputCount): void {
  let n = 0;
  for (const k of ['content', 'reasoning_content', 'reasoning', 'refusal'] as const) {
    const v = delta[k];
    if (typeof v === 'string') n += v.length;
  }
  if (Array.isArray(delta.tool_calls)) {
    progress.content = true;
    for (const tc of delta.tool_calls) {
      const fn = isRecord(tc) && isRecord(tc.function) ? tc.function : null;
      if (fn && typeof fn.arguments === 'string') n += fn.arguments.length;
    }
  }
  if (n > 0) { progress.content = true; out.exact += n; }
}

// Tails chosen so that indexOf stops only at the member itself (`t":"` would stop at `"object":"` too).
const CONTENT: Marker = ['"co', 'ntent":"'];
const ARGUMENTS: Marker = ['"a', 'rguments":"'];
const REASONING: Marker = ['"r', 'easoning'];
const TOOL_CALLS: Marker = ['"t', 'ool_calls":['];

/** Length of the JSON string value that starts at `from` (escapes counted as written), or 0. */
function stringLength(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i - from;
  }
  return 0;
}

/**
 * Output characters of a chunk read without parsing it: the text delta, else tool-call arguments or
 * reasoning (rarer, so looked for only when there is no text). A tool call's start is content too.
 */
/**
 * Output characters relayed without parsing: the chunks read before content exactly; later chunks only
 * by their size, less the size of a chunk's envelope (everything but its text, measured on the first
 * text chunk). Chunks of one stream share their envelope, so this is exact for text and close for
 * tool calls, and costs two additions per chunk instead of a search (0.5 us per chunk measured).
 */
type OutputCount = { exact: number; envelope: number; bulkChars: number; bulkFrames: number };

/** StreamProgress whose output count is worked out when read (a class: an object literal with a getter costs microseconds to create). */
class ChatProgress implements StreamProgress {
  content = false;
  error: StreamProgress['error'] = null;
  complete = false;
  ended = false;
  readonly count: OutputCount = { exact: 0, envelope: -1, bulkChars: 0, bulkFrames: 0 };
  get outputChars(): number {
    const c = this.count;
    return c.exact + (c.envelope < 0 ? 0 : Math.max(0, c.bulkChars - c.bulkFrames * c.envelope));
  }
}

function countOutput(d: string, progress: StreamProgress, out: OutputCount): void {
  const c = find(d, CONTENT);
  let n = c < 0 ? 0 : stringLength(d, c + CONTENT[0].length + CONTENT[1].length);
  if (n > 0 && out.envelope < 0) out.envelope = d.length - n;
  if (n === 0) {
    const a = find(d, ARGUMENTS);
    if (a >= 0) n = stringLength(d, a + ARGUMENTS[0].length + ARGUMENTS[1].length);
    if (find(d, TOOL_CALLS) >= 0) progress.content = true;
    if (n === 0 && find(d, REASONING) >= 0) {
      const r = d.indexOf('":"', find(d, REASONING));
      if (r >= 0) n = stringLength(d, r + 3);
    }
  }
  if (n > 0) { progress.content = true; out.exact += n; }
}
