// Same-format relay for Anthropic messages: model rewritten, the gateway's id stamped on the message,
// usage observed from message_start and message_delta; every other event passes through unchanged.
import { mergeUsage } from '../canonical.ts';
import { claudeThinkingConflict } from '../reasoning.ts';
import { readSignature, reportDropped, signatureFor, signerOf } from '../signatures.ts';
import { newProgress, type Observed, type PassthroughCodec, type StreamProgress } from '../codec.ts';
import { sseFrame } from '../sse.ts';
import { isRecord } from '../errors.ts';
import { decodeUsage } from '../anthropic-messages/response.ts';
import { kindFromAnthropicType } from '../anthropic-messages/errors.ts';
import { createMessagesStreamEncoder } from '../anthropic-messages/stream-encoder.ts';
import { jsonStringEnd, readEvent, relayUnreadable, UnreadableFrame, type StreamError } from '../stream-frames.ts';
import { GATEWAY_ONLY_FIELDS } from './openai-chat.ts';

type Rec = Record<string, unknown>;

/**
 * A text, thinking or tool-input delta as Anthropic writes it, up to where its value starts. Such a frame
 * is forwarded unparsed when the value is a whole JSON string followed by exactly `"}}`: that is the whole
 * grammar of the frame, so a frame cut short or damaged anywhere never reaches the client. Any other
 * shape (spaces, another key order, other delta types) takes the parsed path.
 */
const TEXT_DELTA = /^\{"type":"content_block_delta","index":\d+,"delta":\{"type":"(?:text_delta|thinking_delta|input_json_delta)","(?:text|thinking|partial_json)":"/;

/** Characters of the delta's value (escapes counted as written) when the frame is whole, else -1. */
function wholeDeltaLength(d: string): number {
  const m = TEXT_DELTA.exec(d);
  if (m === null) return -1;
  const from = m[0].length;
  const end = jsonStringEnd(d, from);
  return end > 0 && d.length === end + 3 && d.charCodeAt(end + 1) === 125 && d.charCodeAt(end + 2) === 125 ? end - from : -1;
}

/**
 * Thinking the upstream would refuse for this history: a tool loop whose assistant turn does not open
 * with signed thinking (the conversation began on another model, or the client sent its history back
 * without them, as Claude Code does in router mode, where the answer names another model), or a
 * forced tool choice. Anthropic answers 400 and says to disable thinking; the converting encoders drop
 * it by the same rule (claudeThinkingConflict), so a relayed body does too, reported.
 */
function thinkingConflict(body: Rec): string | null {
  const t = body.thinking;
  if (!isRecord(t) || (t.type !== 'enabled' && t.type !== 'adaptive') || !Array.isArray(body.messages)) return null;
  // The body is validated: its messages are objects; the rule reads their roles and block types.
  return claudeThinkingConflict(isRecord(body.tool_choice) ? body.tool_choice : undefined, body.messages as Rec[]);
}

const CLAUDE = signerOf('anthropic-messages', '')!;
const marked = (b: unknown): boolean => isRecord(b) && b.type === 'thinking' && typeof b.signature === 'string' && readSignature(b.signature).signer !== null;

/**
 * The history with the thinking blocks the gateway marked on converted answers (another model's
 * answer in this conversation, src/formats/signatures.ts): Claude's own unwrapped, others' left out
 * (Anthropic refuses a signature it did not issue), reported. Messages without one are untouched.
 */
function claudeOwnThinking(messages: unknown[], adjustments?: string[]): unknown[] {
  const hasMarked = (m: unknown): boolean => isRecord(m) && Array.isArray(m.content) && m.content.some(marked);
  // Nearly every relayed conversation has none (Claude's own signatures are raw): no copy then.
  if (!messages.some(hasMarked)) return messages;
  let dropped = 0;
  const out = messages.map((m) => {
    if (!isRecord(m) || !Array.isArray(m.content) || !m.content.some(marked)) return m;
    const content = m.content.flatMap((b) => {
      if (!marked(b)) return [b];
      const raw = signatureFor((b as Rec).signature as string, CLAUDE);
      if (raw === null) dropped++;
      return raw === null ? [] : [{ ...(b as Rec), signature: raw }];
    });
    return { ...m, content };
  });
  reportDropped(dropped, adjustments ?? []);
  return out;
}

export const anthropicMessagesPassthrough: PassthroughCodec = {
  prepareRequest(body, { upstreamModel, modelInBody, adjustments }) {
    const out: Rec = { ...body };
    for (const f of GATEWAY_ONLY_FIELDS) delete out[f];
    if (modelInBody) out.model = upstreamModel; else delete out.model;
    if (Array.isArray(out.messages)) out.messages = claudeOwnThinking(out.messages, adjustments);
    const conflict = thinkingConflict(out);
    if (conflict !== null) {
      delete out.thinking;
      adjustments?.push(`thinking=dropped(${conflict})`);
    }
    return out;
  },

  rewriteResponse(json, ctx) {
    json.id = ctx.id;
    json.model = ctx.model;
    return { usage: isRecord(json.usage) ? mergeUsage(null, decodeUsage(json.usage)) : null, finishReason: typeof json.stop_reason === 'string' ? json.stop_reason : null };
  },

  newStream(ctx) {
    const seen: Observed = { usage: null, finishReason: null };
    const progress = newProgress();
    const redact = ctx.redact ?? ((s: string) => s);
    const fail = (error: StreamError): string => createMessagesStreamEncoder().encode({ type: 'error', error });
    let done = false;
    return {
      progress,
      fail,
      frame(f) {
        // An error before any content ends the stream (nothing after it is relayed or counted), as does
        // a frame the relay could not read after content.
        // Nothing after message_stop belongs to the answer (the translating decoder stops there too).
        if ((progress.error !== null && !progress.content) || progress.ended || done) return '';
        const name = f.event;
        // Text deltas are the bulk of a stream: checked and counted from the raw frame without parsing it.
        if (name === 'content_block_delta') {
          const n = wholeDeltaLength(f.data);
          if (n >= 0) {
            progress.outputChars += n;
            progress.content = true;
            return sseFrame(f.data, name);
          }
        }
        const ev = readEvent(f.data);
        if (ev === null) return '';
        // Cut short, or `null`, a number, an array: an event of the answer is lost.
        if (ev instanceof UnreadableFrame) return relayUnreadable(ev, progress, fail);
        const type = typeof ev.type === 'string' ? ev.type : name;
        if (type === 'message_start') {
          if (!isRecord(ev.message)) return relayUnreadable(new UnreadableFrame('the upstream sent a message_start without a message object'), progress, fail);
          const msg = ev.message;
          msg.id = ctx.id;
          msg.model = ctx.model;
          seen.usage = mergeUsage(seen.usage, decodeUsage(msg.usage));
          return sseFrame(JSON.stringify(ev), name);
        }
        if (type === 'message_delta') {
          progress.content = true;
          seen.usage = mergeUsage(seen.usage, decodeUsage(ev.usage, true));
          const d = isRecord(ev.delta) ? ev.delta : null;
          if (typeof d?.stop_reason === 'string') seen.finishReason = d.stop_reason;
          return sseFrame(f.data, name);
        }
        if (type === 'message_stop') {
          done = true;
          progress.complete = progress.error === null;
          return sseFrame(f.data, name);
        }
        if (type === 'error') return errorEvent(ev, progress, redact);
        if (type === 'content_block_delta') {
          const d = isRecord(ev.delta) ? ev.delta : {};
          const text = d.text ?? d.thinking ?? d.partial_json;
          if (typeof text === 'string') progress.outputChars += text.length;
        }
        if (type === 'content_block_start' || type === 'content_block_delta') progress.content = true;
        return sseFrame(f.data, name);
      },
      end: () => '',
      observed: () => seen,
    };
  },
};

/** An `error` event (e.g. overloaded_error): relayed with its message redacted, and remembered. */
function errorEvent(ev: Rec, progress: StreamProgress, redact: (s: string) => string): string {
  const e: Rec = isRecord(ev.error) ? ev.error : {};
  const message = redact(typeof e.message === 'string' && e.message !== '' ? e.message : 'upstream stream error');
  e.message = message;
  ev.error = e;
  progress.error ??= { kind: kindFromAnthropicType(e.type, 500), message };
  progress.complete = false;
  return sseFrame(JSON.stringify(ev), 'error');
}
