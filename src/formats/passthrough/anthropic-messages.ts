// Same-format relay for Anthropic messages: model rewritten, the gateway's id stamped on the message,
// usage observed from message_start and message_delta; every other event passes through unchanged.
import { mergeUsage } from '../canonical.ts';
import type { Observed, PassthroughCodec } from '../codec.ts';
import { sseFrame } from '../sse.ts';
import { decodeUsage } from '../anthropic-messages/response.ts';
import { GATEWAY_ONLY_FIELDS } from './openai-chat.ts';

type Rec = Record<string, unknown>;

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
    return { usage: json.usage ? mergeUsage(null, decodeUsage(json.usage)) : null, finishReason: (json.stop_reason as string | null | undefined) ?? null };
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
            seen.usage = mergeUsage(seen.usage, decodeUsage(msg.usage));
          } else {
            seen.usage = mergeUsage(seen.usage, decodeUsage(ev.usage, true));
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
