// Upstream side streaming: Messages API SSE bytes -> canonical stream events.
import type { StreamEvent } from '../canonical.ts';
import type { StreamDecoder } from '../codec.ts';
import { createSseParser } from '../sse.ts';
import { readEvent, UnreadableFrame } from '../stream-frames.ts';
import { isRecord } from '../errors.ts';
import { decodeBlock } from './blocks.ts';
import { kindFromAnthropicType } from './errors.ts';
import { decodeUsage, stopReasonOf } from './response.ts';

type Rec = Record<string, unknown>;

const DELTA_TYPES = new Set(['text_delta', 'input_json_delta', 'thinking_delta', 'signature_delta']);

/**
 * The event type is read from the JSON `type` (always present) rather than the SSE event name.
 * Blocks the canonical model cannot hold (server tool use and results) are skipped with their
 * deltas, and the remaining blocks are renumbered so canonical indexes stay contiguous.
 */
export function createMessagesStreamDecoder(): StreamDecoder {
  const sse = createSseParser();
  const indexMap = new Map<number, number | null>(); // upstream index -> canonical index (null: skipped)
  let nextIndex = 0;
  let done = false;
  let started = false;

  /** A protocol error: the stream ends here, blocks already relayed stay (the answer is partial). */
  const fail = (out: StreamEvent[], message: string): void => {
    done = true;
    out.push({ type: 'error', error: { type: 'api_error', message } });
  };

  const mapped = (raw: unknown): number | null => (typeof raw === 'number' ? indexMap.get(raw) ?? null : null);

  const onEvent = (e: Rec, out: StreamEvent[]): void => {
    switch (e.type) {
      case 'message_start': {
        // The message object is the stream's envelope: without it the stream is unusable, as in the relay.
        if (!isRecord(e.message)) return fail(out, 'the upstream sent a message_start without a message object');
        const m = e.message;
        started = true;
        out.push({ type: 'message_start', id: String(m.id ?? ''), model: String(m.model ?? ''), usage: decodeUsage(m.usage) });
        return;
      }
      case 'content_block_start': {
        const block = isRecord(e.content_block) ? decodeBlock(e.content_block, 'content_block', true) : null;
        const index = block ? nextIndex++ : null;
        if (typeof e.index === 'number') indexMap.set(e.index, index);
        if (block && index !== null) out.push({ type: 'block_start', index, block });
        return;
      }
      case 'content_block_delta': {
        const index = mapped(e.index);
        const d = isRecord(e.delta) ? e.delta : {};
        if (index === null || typeof d.type !== 'string' || !DELTA_TYPES.has(d.type)) return; // e.g. citations_delta
        if (d.type === 'text_delta') out.push({ type: 'block_delta', index, delta: { type: 'text_delta', text: String(d.text ?? '') } });
        else if (d.type === 'input_json_delta') out.push({ type: 'block_delta', index, delta: { type: 'input_json_delta', partial_json: String(d.partial_json ?? '') } });
        else if (d.type === 'thinking_delta') out.push({ type: 'block_delta', index, delta: { type: 'thinking_delta', thinking: String(d.thinking ?? '') } });
        else out.push({ type: 'block_delta', index, delta: { type: 'signature_delta', signature: String(d.signature ?? '') } });
        return;
      }
      case 'content_block_stop': {
        const index = mapped(e.index);
        if (index !== null) out.push({ type: 'block_stop', index });
        return;
      }
      case 'message_delta': {
        const d = isRecord(e.delta) ? e.delta : {};
        out.push({
          type: 'message_delta', stop_reason: stopReasonOf(d.stop_reason),
          stop_sequence: typeof d.stop_sequence === 'string' ? d.stop_sequence : null, usage: decodeUsage(e.usage, true),
        });
        return;
      }
      case 'message_stop':
        done = true;
        out.push({ type: 'message_stop' });
        return;
      case 'ping':
        out.push({ type: 'ping' });
        return;
      case 'error': {
        const err = isRecord(e.error) ? e.error : {};
        done = true;
        out.push({ type: 'error', error: { type: kindFromAnthropicType(err.type, 500), message: String(err.message ?? 'upstream stream error') } });
        return;
      }
      default:
        return; // unknown event types are allowed by Anthropic's versioning policy and ignored
    }
  };

  const onFrames = (frames: { data: string }[]): StreamEvent[] => {
    const out: StreamEvent[] = [];
    for (const f of frames) {
      if (done) break;
      const ev = readEvent(f.data);
      if (ev === null) continue;
      if (ev instanceof UnreadableFrame) { fail(out, ev.message); break; }
      onEvent(ev, out);
    }
    return out;
  };

  return {
    push: (chunk) => onFrames(sse.push(chunk)),
    end() {
      const out = onFrames(sse.end());
      if (!done) {
        done = true;
        const message = started ? 'upstream stream ended before message_stop' : 'upstream stream ended without any event';
        out.push({ type: 'error', error: { type: 'api_error', message } });
      }
      return out;
    },
  };
}
