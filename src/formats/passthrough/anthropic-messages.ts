// Same-format relay for Anthropic messages: model rewritten, the gateway's id stamped on the message,
// usage observed from message_start and message_delta; every other event passes through unchanged.
import type { Usage } from '../canonical.ts';
import type { Observed, PassthroughCodec } from '../codec.ts';
import { sseFrame } from '../sse.ts';
import { GATEWAY_ONLY_FIELDS } from './openai-chat.ts';

type Rec = Record<string, unknown>;
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** Anthropic usage (partial, as message_delta sends it) merged into the canonical usage. */
export function mergeAnthropicUsage(into: Usage | null, raw: unknown): Usage {
  const u = (raw ?? {}) as Rec;
  const cc = (u.cache_creation ?? {}) as Rec;
  const base: Usage = into ?? {
    input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0,
    cache_creation_5m: 0, cache_creation_1h: 0, reasoning_tokens: 0,
  };
  if (u.input_tokens !== undefined) base.input_tokens = num(u.input_tokens);
  if (u.output_tokens !== undefined) base.output_tokens = num(u.output_tokens);
  if (u.cache_read_input_tokens !== undefined) base.cache_read_input_tokens = num(u.cache_read_input_tokens);
  if (u.cache_creation_input_tokens !== undefined) base.cache_creation_input_tokens = num(u.cache_creation_input_tokens);
  if (cc.ephemeral_5m_input_tokens !== undefined) base.cache_creation_5m = num(cc.ephemeral_5m_input_tokens);
  if (cc.ephemeral_1h_input_tokens !== undefined) base.cache_creation_1h = num(cc.ephemeral_1h_input_tokens);
  if (typeof u.service_tier === 'string') base.service_tier = u.service_tier;
  return base;
}

export const anthropicMessagesPassthrough: PassthroughCodec = {
  prepareRequest(body, { upstreamModel, modelInBody }) {
    const out: Rec = { ...body };
    for (const f of GATEWAY_ONLY_FIELDS) delete out[f];
    if (modelInBody) out.model = upstreamModel; else delete out.model;
    return out;
  },

  rewriteResponse(json, ctx) {
    json.id = ctx.id;
    json.model = ctx.model;
    return { usage: json.usage ? mergeAnthropicUsage(null, json.usage) : null, finishReason: (json.stop_reason as string | null | undefined) ?? null };
  },

  newStream(ctx) {
    const seen: Observed = { usage: null, finishReason: null };
    return {
      frame(f) {
        if (f.event === 'message_start' || f.event === 'message_delta') {
          let ev: Rec;
          try { ev = JSON.parse(f.data) as Rec; } catch { return sseFrame(f.data, f.event); }
          if (f.event === 'message_start') {
            const msg = (ev.message ?? {}) as Rec;
            msg.id = ctx.id;
            msg.model = ctx.model;
            seen.usage = mergeAnthropicUsage(seen.usage, msg.usage);
          } else {
            seen.usage = mergeAnthropicUsage(seen.usage, ev.usage);
            const d = ev.delta as Rec | undefined;
            if (typeof d?.stop_reason === 'string') seen.finishReason = d.stop_reason;
          }
          return sseFrame(JSON.stringify(ev), f.event);
        }
        return sseFrame(f.data, f.event);
      },
      end: () => '',
      observed: () => seen,
    };
  },
};
