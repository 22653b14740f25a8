// Same-format relay for OpenAI chat completions: model rewritten, the gateway's id stamped on every
// chunk, usage always requested upstream and its extra chunk hidden from clients that did not ask.
import type { Observed, PassthroughCodec } from '../codec.ts';
import type { SseFrame } from '../sse.ts';
import { sseFrame } from '../sse.ts';
import { canonicalUsage } from '../openai-chat/response.ts';

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

/** Fields the gateway consumes itself and never forwards. */
export const GATEWAY_ONLY_FIELDS = ['extra', 'models', 'max_cost', 'max_cost_per_million_tokens', 'willingness_to_pay'] as const;

export const openaiChatPassthrough: PassthroughCodec = {
  prepareRequest(body, { upstreamModel, modelInBody }) {
    const out: Rec = { ...body };
    for (const f of GATEWAY_ONLY_FIELDS) delete out[f];
    if (modelInBody) out.model = upstreamModel; else delete out.model;
    if (out.stream === true) out.stream_options = { ...(out.stream_options as Rec | undefined), include_usage: true };
    return out;
  },

  rewriteResponse(json, ctx) {
    json.id = ctx.id;
    json.model = ctx.model;
    const choice = (json.choices as Rec[] | undefined)?.[0];
    return { usage: json.usage ? canonicalUsage(json.usage, json.service_tier) : null, finishReason: (choice?.finish_reason as string | undefined) ?? null };
  },

  newStream(ctx) {
    const seen: Observed = { usage: null, finishReason: null };
    // After the first chunk the upstream id and model are known: later content chunks are rewritten
    // by replacing those two exact JSON members, without parsing. Chunks that carry what the gateway
    // observes (usage, a finish reason, an error) or do not match byte for byte take the parsing path.
    let idNeedle = ''; let modelNeedle = '';
    const ourId = `"id":${JSON.stringify(ctx.id)}`;
    const ourModel = `"model":${JSON.stringify(ctx.model)}`;
    return {
      frame(f: SseFrame): string {
        if (f.data === '[DONE]') return '';
        const d = f.data;
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
          if (i >= 0 && m >= 0 && (fr < 0 || (finish !== null && !finish.includes('\\')))) {
            if (finish !== null) seen.finishReason = finish;
            // Spliced from slices (cheap string views) rather than replace(), which copies each time.
            let out = i < m
              ? d.slice(0, i) + ourId + d.slice(i + idNeedle.length, m) + ourModel + d.slice(m + modelNeedle.length)
              : d.slice(0, m) + ourModel + d.slice(m + modelNeedle.length, i) + ourId + d.slice(i + idNeedle.length);
            if (!ctx.includeUsage) {
              const u = find(out, USAGE_NULL);
              if (u >= 0) out = out.slice(0, u) + out.slice(u + USAGE_NULL_LEN);
            }
            return sseFrame(out);
          }
        }
        let chunk: Rec;
        try { chunk = JSON.parse(f.data) as Rec; } catch { return ''; }
        if (chunk.error !== undefined) return sseFrame(f.data);
        if (!idNeedle && typeof chunk.id === 'string' && typeof chunk.model === 'string') {
          idNeedle = `"id":${JSON.stringify(chunk.id)}`; modelNeedle = `"model":${JSON.stringify(chunk.model)}`;
        }
        chunk.id = ctx.id;
        chunk.model = ctx.model;
        const choices = chunk.choices as Rec[] | undefined;
        const finish = choices?.[0]?.finish_reason;
        if (typeof finish === 'string') seen.finishReason = finish;
        if (chunk.usage) {
          seen.usage = canonicalUsage(chunk.usage, chunk.service_tier);
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
