// Bedrock ConverseStream (binary event stream) -> canonical stream events.
// Bedrock sends usage in a `metadata` event after `messageStop`, so message_delta and
// message_stop wait for metadata (or end of stream). Text and reasoning blocks often arrive
// without a contentBlockStart; the first delta for an index opens the block.
import type { ErrorKind, StreamEvent } from '../canonical.ts';
import type { StreamDecoder } from '../codec.ts';
import { uuidv7 } from '../../util/uuid.ts';
import { bedrockErrorKind, bedrockStopReason, bedrockUsage, isRecord, matchedStopSequence } from './decode.ts';
import type { EventMessage } from './eventstream.ts';
import { createEventStreamDecoder, EventStreamError } from './eventstream.ts';
import { readEvent, UnreadableFrame } from '../stream-frames.ts';

type Open = { index: number; kind: 'text' | 'thinking' | 'tool_use' | 'redacted_thinking' };

const json = new TextDecoder('utf-8');
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** HTTP statuses AWS documents for each stream exception, used when the name is unknown. */
const STREAM_EXCEPTION_STATUS: Record<string, number> = {
  throttlingException: 429, validationException: 400, serviceUnavailableException: 503,
  internalServerException: 500, modelStreamErrorException: 424,
};

export function newBedrockStreamDecoder(): StreamDecoder {
  const frames = createEventStreamDecoder();
  const blocks = new Map<number, Open>();
  let nextIndex = 0;
  let started = false;
  let stopReason: unknown;
  let stopSequence: string | null = null;
  let stopped = false;
  let finished = false;

  const start = (out: StreamEvent[]): void => {
    if (started) return;
    started = true;
    out.push({ type: 'message_start', id: uuidv7(), model: '', usage: {} });
  };
  const open = (bedrockIndex: number, kind: Exclude<Open['kind'], 'tool_use'>, out: StreamEvent[], data = ''): number => {
    const existing = blocks.get(bedrockIndex);
    if (existing) return existing.index;
    const index = nextIndex++;
    blocks.set(bedrockIndex, { index, kind });
    const block = kind === 'text' ? { type: 'text' as const, text: '' }
      : kind === 'thinking' ? { type: 'thinking' as const, thinking: '', signature: '' }
      : { type: 'redacted_thinking' as const, data };
    out.push({ type: 'block_start', index, block });
    return index;
  };
  const closeAll = (out: StreamEvent[]): void => {
    for (const b of [...blocks.values()].sort((x, y) => x.index - y.index)) out.push({ type: 'block_stop', index: b.index });
    blocks.clear();
  };
  const fail = (kind: ErrorKind, message: string, out: StreamEvent[]): void => {
    closeAll(out);
    out.push({ type: 'error', error: { type: kind, message } });
    finished = true;
  };
  const finish = (usage: unknown, out: StreamEvent[]): void => {
    closeAll(out);
    out.push({ type: 'message_delta', stop_reason: bedrockStopReason(stopReason), stop_sequence: stopSequence, usage: usage === undefined ? {} : bedrockUsage(usage) });
    out.push({ type: 'message_stop' });
    finished = true;
  };

  const event = (type: string, p: Record<string, unknown>, out: StreamEvent[]): void => {
    const at = typeof p.contentBlockIndex === 'number' ? p.contentBlockIndex : 0;
    switch (type) {
      case 'messageStart': start(out); break;
      case 'contentBlockStart': {
        start(out);
        const tu = isRecord(p.start) && isRecord(p.start.toolUse) ? p.start.toolUse : undefined;
        if (tu && !blocks.has(at)) {
          const index = nextIndex++;
          blocks.set(at, { index, kind: 'tool_use' });
          out.push({ type: 'block_start', index, block: { type: 'tool_use', id: str(tu.toolUseId), name: str(tu.name), input: {} } });
        }
        break;
      }
      case 'contentBlockDelta': {
        start(out);
        const d = isRecord(p.delta) ? p.delta : {};
        if (typeof d.text === 'string') {
          out.push({ type: 'block_delta', index: open(at, 'text', out), delta: { type: 'text_delta', text: d.text } });
        } else if (isRecord(d.toolUse)) {
          const b = blocks.get(at);
          if (b?.kind === 'tool_use') out.push({ type: 'block_delta', index: b.index, delta: { type: 'input_json_delta', partial_json: str(d.toolUse.input) } });
        } else if (isRecord(d.reasoningContent)) {
          const r = d.reasoningContent;
          if (typeof r.redactedContent === 'string') open(at, 'redacted_thinking', out, r.redactedContent);
          if (typeof r.text === 'string') out.push({ type: 'block_delta', index: open(at, 'thinking', out), delta: { type: 'thinking_delta', thinking: r.text } });
          if (typeof r.signature === 'string') out.push({ type: 'block_delta', index: open(at, 'thinking', out), delta: { type: 'signature_delta', signature: r.signature } });
        }
        break;
      }
      case 'contentBlockStop': {
        const b = blocks.get(at);
        if (b) out.push({ type: 'block_stop', index: b.index });
        blocks.delete(at);
        break;
      }
      case 'messageStop': start(out); stopReason = p.stopReason; stopSequence = matchedStopSequence(p); stopped = true; closeAll(out); break;
      case 'metadata': start(out); finish(p.usage, out); break;
      // Unknown event types are newer additions (e.g. citations); skipping them keeps the stream whole.
    }
  };

  const message = (m: EventMessage, out: StreamEvent[]): void => {
    const messageType = m.headers[':message-type'] ?? 'event';
    // An event's payload is one JSON object (empty: an event with no fields); anything else is a protocol
    // error. Exceptions fail the stream in any case, with their own kind.
    const read = m.payload.length === 0 ? null : readEvent(json.decode(m.payload));
    const p = read === null || read instanceof UnreadableFrame ? {} : read;
    if (messageType === 'exception') {
      const name = m.headers[':exception-type'] ?? 'internalServerException';
      return fail(bedrockErrorKind(name, STREAM_EXCEPTION_STATUS[name] ?? 500), str(p.message) || str(p.Message) || name, out);
    }
    if (messageType === 'error') {
      const code = m.headers[':error-code'] ?? 'InternalError';
      return fail(bedrockErrorKind(code, 500), m.headers[':error-message'] ?? code, out);
    }
    if (read instanceof UnreadableFrame) return fail(read.kind, read.message, out);
    event(m.headers[':event-type'] ?? '', p, out);
  };

  return {
    push(chunk) {
      const out: StreamEvent[] = [];
      if (finished) return out;
      let list: EventMessage[];
      try {
        list = frames.push(chunk);
      } catch (e) {
        if (!(e instanceof EventStreamError)) throw e;
        fail('api_error', `corrupt Bedrock event stream: ${e.message}`, out);
        return out;
      }
      for (const m of list) {
        if (finished) break;
        message(m, out);
      }
      return out;
    },
    end() {
      const out: StreamEvent[] = [];
      if (finished) return out;
      if (stopped) finish(undefined, out);
      else fail('api_error', 'Bedrock stream ended before messageStop', out);
      return out;
    },
  };
}
