// Gemini streamGenerateContent?alt=sse -> canonical stream events. Every SSE chunk is a whole
// GenerateContentResponse holding only the new parts; text and thoughts arrive in pieces,
// function calls arrive whole, and a chunk carries finishReason. The final usage usually rides on
// that chunk, but may come in a later one (a usage-only chunk), so the closing message_delta waits
// for the end of the stream, as the OpenAI decoder waits for [DONE].
import type { ErrorKind, StopReason, StreamEvent } from '../canonical.ts';
import type { StreamDecoder } from '../codec.ts';
import { createSseParser } from '../sse.ts';
import { readEvent, UnreadableFrame } from '../stream-frames.ts';
import { uuidv7 } from '../../util/uuid.ts';
import { decodeGeminiError, generatedCallId, geminiStopReason, geminiUsage } from './decode.ts';
import type { GeminiPart, GeminiResponse, GeminiUsage } from './types.ts';
import { parseGeminiResponse } from './types.ts';

type OpenKind = 'text' | 'thinking';

/** Usage counts are running totals: the largest of each seen so far (a later chunk may carry fewer fields). */
function latestUsage(held: GeminiUsage | undefined, next: GeminiUsage): GeminiUsage {
  if (!held) return next;
  const out: GeminiUsage = { ...held };
  for (const k of Object.keys(next) as Array<keyof GeminiUsage>) out[k] = Math.max(out[k] ?? 0, next[k]!);
  return out;
}

export function newGeminiStreamDecoder(): StreamDecoder {
  const sse = createSseParser();
  let started = false;
  let finished = false;
  let id = '';
  let nextIndex = 0;
  let open: { index: number; kind: OpenKind } | null = null;
  let calls = 0;
  let usage: GeminiUsage | undefined;
  /** The stop reason of the finish chunk once it came (the message ends when the stream does). */
  let stop: StopReason | null | undefined;
  /** Whether the finish's message_delta carried `usage`: until then the relay bills it from heldUsage. */
  let reported = false;

  const close = (out: StreamEvent[]): void => {
    if (open) out.push({ type: 'block_stop', index: open.index });
    open = null;
  };
  const ensureOpen = (kind: OpenKind, out: StreamEvent[]): number => {
    if (open?.kind === kind) return open.index;
    close(out);
    open = { index: nextIndex++, kind };
    out.push({
      type: 'block_start', index: open.index,
      block: kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' },
    });
    return open.index;
  };
  const signatureBlock = (signature: string, out: StreamEvent[]): void => {
    const index = ensureOpen('thinking', out);
    out.push({ type: 'block_delta', index, delta: { type: 'signature_delta', signature } });
    close(out); // a signature ends its thought run; later thoughts start a new block
  };

  const part = (p: GeminiPart, out: StreamEvent[]): void => {
    if (p.thought === true) {
      if (p.text !== undefined && p.text !== '') {
        out.push({ type: 'block_delta', index: ensureOpen('thinking', out), delta: { type: 'thinking_delta', thinking: p.text } });
      }
      if (p.thoughtSignature !== undefined) signatureBlock(p.thoughtSignature, out);
      return;
    }
    if (p.thoughtSignature !== undefined) {
      close(out); // the signature belongs to this part, not to an earlier thought run
      signatureBlock(p.thoughtSignature, out);
    }
    if (p.functionCall) {
      close(out);
      const index = nextIndex++;
      const callId = p.functionCall.id ?? generatedCallId(id, calls);
      calls++;
      out.push({ type: 'block_start', index, block: { type: 'tool_use', id: callId, name: p.functionCall.name, input: {} } });
      out.push({ type: 'block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(p.functionCall.args) } });
      out.push({ type: 'block_stop', index });
    } else if (p.inlineData && p.inlineData.mimeType.startsWith('image/')) {
      close(out);
      const index = nextIndex++;
      out.push({ type: 'block_start', index, block: { type: 'image', source: { type: 'base64', media_type: p.inlineData.mimeType, data: p.inlineData.data } } });
      out.push({ type: 'block_stop', index });
    } else if (p.text !== undefined && p.text !== '') {
      out.push({ type: 'block_delta', index: ensureOpen('text', out), delta: { type: 'text_delta', text: p.text } });
    }
  };

  const fail = (out: StreamEvent[], err: { type: ErrorKind; message: string }): void => {
    close(out);
    out.push({ type: 'error', error: err });
    finished = true;
  };

  const chunk = (r: GeminiResponse, out: StreamEvent[]): void => {
    if (r.error) {
      const e = decodeGeminiError(r.error.code ?? 500, JSON.stringify({ error: r.error }));
      return fail(out, { type: e.kind, message: e.message });
    }
    if (!started) {
      started = true;
      id = r.responseId ?? uuidv7();
      const u = r.usage ? geminiUsage(r.usage) : undefined;
      out.push({
        type: 'message_start', id, model: r.modelVersion ?? '',
        usage: u ? { input_tokens: u.input_tokens, cache_read_input_tokens: u.cache_read_input_tokens } : {},
      });
    }
    for (const p of r.parts) part(p, out);
    if (r.usage) usage = latestUsage(usage, r.usage);
    const blocked = r.blockReason !== undefined && r.parts.length === 0 && r.finishReason === undefined;
    if (stop === undefined && (r.finishReason !== undefined || blocked)) {
      close(out);
      stop = blocked ? 'refusal' : geminiStopReason(r.finishReason, calls > 0);
    }
  };

  /** The stream ended after its finish: the message closes with the usage last reported. */
  const finish = (out: StreamEvent[]): void => {
    close(out);
    out.push({ type: 'message_delta', stop_reason: stop ?? null, stop_sequence: null, usage: geminiUsage(usage) });
    out.push({ type: 'message_stop' });
    finished = true;
    reported = true;
  };

  const frames = (list: Array<{ data: string }>): StreamEvent[] => {
    const out: StreamEvent[] = [];
    for (const f of list) {
      if (finished) break;
      const body = readEvent(f.data);
      if (body === null) continue;
      if (body instanceof UnreadableFrame) { fail(out, body.error); break; }
      chunk(parseGeminiResponse(body), out);
    }
    return out;
  };

  return {
    push: (bytes) => (finished ? [] : frames(sse.push(bytes))),
    // Every chunk may carry the usage so far; only the closing message_delta's reaches an event. A stream
    // that failed (an error chunk, a close without a finish reason, a cut after it) still holds it.
    heldUsage: () => (reported || usage === undefined ? null : geminiUsage(usage)),
    end() {
      if (finished) return [];
      const out = frames(sse.end());
      if (finished) return out;
      if (stop !== undefined) finish(out);
      else fail(out, { type: 'api_error', message: 'Gemini stream ended before a finish reason' });
      return out;
    },
  };
}
