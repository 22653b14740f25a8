// Same-format relay for OpenAI chat completions: model rewritten, the gateway's id stamped on every
// chunk, usage always requested upstream and its extra chunk hidden from clients that did not ask.
import type { Observed, PassthroughCodec } from '../codec.ts';
import type { SseFrame } from '../sse.ts';
import { sseFrame } from '../sse.ts';
import { canonicalUsage } from '../openai-chat/response.ts';

type Rec = Record<string, unknown>;

const USAGE_NULL = ',"usage":null';

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
        if (idNeedle && !d.includes('"usage":{') && !d.includes('"finish_reason":"') && !d.includes('"error"')) {
          const i = d.indexOf(idNeedle);
          const m = d.indexOf(modelNeedle);
          if (i >= 0 && m >= 0) {
            // Spliced from slices (cheap string views) rather than replace(), which copies each time.
            let out = i < m
              ? d.slice(0, i) + ourId + d.slice(i + idNeedle.length, m) + ourModel + d.slice(m + modelNeedle.length)
              : d.slice(0, m) + ourModel + d.slice(m + modelNeedle.length, i) + ourId + d.slice(i + idNeedle.length);
            if (!ctx.includeUsage) {
              const u = out.indexOf(USAGE_NULL);
              if (u >= 0) out = out.slice(0, u) + out.slice(u + USAGE_NULL.length);
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
