// Upstream side streaming: chat.completion.chunk SSE bytes -> canonical stream events.
import type { ErrorKind, StopReason, StreamEvent, Usage } from '../canonical.ts';
import type { StreamDecoder } from '../codec.ts';
import { createSseParser } from '../sse.ts';
import { readEvent, UnreadableFrame } from '../stream-frames.ts';
import { isRecord } from '../errors.ts';
import { openAIErrorOf } from './errors.ts';
import { receivedArguments } from '../tool-arguments.ts';
import { canonicalUsage, stopReasonOf } from './response.ts';

type Rec = Record<string, unknown>;

/**
 * Text and reasoning arrive as runs, so a new kind of delta closes the open text/thinking block.
 * Canonical blocks never overlap (an Anthropic client's SDK tracks one open block at a time), but
 * parallel tool calls are keyed by their `index` and may interleave: the first call streams live,
 * and calls that start while it is open are collected and emitted whole, in order, when it closes
 * at the finish. A `refusal` delta makes the stop reason `refusal`, as in the non-streamed
 * answer. The closing message_delta waits for `[DONE]` (or the end of the bytes) because the
 * usage chunk comes after the finish_reason chunk.
 */
export function createChatStreamDecoder(): StreamDecoder {
  const sse = createSseParser();
  let started = false;
  let done = false;
  let finishSeen = false;
  let nextIndex = 0;
  let run: { kind: 'text' | 'thinking'; index: number } | null = null;
  let tool: { key: number; index: number } | null = null; // the call streaming live
  const seen = new Set<number>(); // OpenAI tool indexes met so far
  const pending = new Map<number, { id: string; name: string; args: string }>(); // calls waiting for theirs
  let refused = false;
  let stop: StopReason | null = null;
  let usage: Usage | null = null;
  /** Whether the closing message_delta carried `usage`: until then the relay bills it from heldUsage. */
  let reported = false;

  const closeRun = (out: StreamEvent[]): void => {
    if (!run) return;
    out.push({ type: 'block_stop', index: run.index });
    run = null;
  };
  const startBlock = (out: StreamEvent[], block: Extract<StreamEvent, { type: 'block_start' }>['block']): number => {
    const index = nextIndex++;
    out.push({ type: 'block_start', index, block });
    return index;
  };
  const closeTool = (out: StreamEvent[]): void => {
    if (tool) out.push({ type: 'block_stop', index: tool.index });
    tool = null;
  };
  /** Ends every block: the open one, then the collected calls, each whole. */
  const closeAll = (out: StreamEvent[]): void => {
    closeRun(out);
    closeTool(out);
    for (const c of pending.values()) {
      const index = startBlock(out, { type: 'tool_use', id: c.id, name: c.name, input: {} });
      if (c.args !== '') out.push({ type: 'block_delta', index, delta: { type: 'input_json_delta', partial_json: c.args } });
      out.push({ type: 'block_stop', index });
    }
    pending.clear();
  };
  const textual = (out: StreamEvent[], kind: 'text' | 'thinking', text: string): void => {
    if (run?.kind !== kind) {
      closeRun(out);
      closeTool(out);
      const index = startBlock(out, kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' });
      run = { kind, index };
    }
    out.push({ type: 'block_delta', index: run.index, delta: kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text } });
  };
  const toolDelta = (out: StreamEvent[], tc: Rec): void => {
    const key = typeof tc.index === 'number' ? tc.index : seen.size;
    const fn = isRecord(tc.function) ? tc.function : {};
    // Some compatible servers send the arguments as an object: its JSON, not a call without arguments.
    const args = receivedArguments(fn.arguments);
    if (!seen.has(key)) {
      seen.add(key);
      const call = { id: String(tc.id ?? `call_${key}`), name: String(fn.name ?? ''), args: '' };
      if (tool === null && pending.size === 0) {
        closeRun(out);
        tool = { key, index: startBlock(out, { type: 'tool_use', id: call.id, name: call.name, input: {} }) };
      } else pending.set(key, call);
    }
    if (args === '') return;
    if (tool?.key === key) out.push({ type: 'block_delta', index: tool.index, delta: { type: 'input_json_delta', partial_json: args } });
    else { const c = pending.get(key); if (c) c.args += args; }
  };
  const finish = (out: StreamEvent[]): void => {
    if (done) return;
    done = true;
    reported = true;
    closeAll(out);
    out.push({ type: 'message_delta', stop_reason: stop, stop_sequence: null, usage: usage ?? {} });
    out.push({ type: 'message_stop' });
  };

  /** Ends the stream with an error: blocks already relayed stay as they are (the answer is partial). */
  const fail = (out: StreamEvent[], error: { type: ErrorKind; message: string }): void => {
    done = true;
    out.push({ type: 'error', error });
  };

  /**
   * An error object sent in the stream (as a chunk's `error`, or as the data of an `event: error`), read
   * by the format's one error decoder: a numeric `code` is a status, else its string code or type names
   * the kind (the stream itself was answered 200, which says nothing).
   */
  const streamError = (out: StreamEvent[], e: Rec): void => {
    const up = openAIErrorOf(typeof e.code === 'number' ? e.code : 200, e, () => 'upstream stream error');
    fail(out, { type: up.kind, message: up.message });
  };

  const onChunk = (c: Rec, out: StreamEvent[]): void => {
    if (isRecord(c.error)) return streamError(out, c.error);
    const choices = Array.isArray(c.choices) ? c.choices : [];
    // Azure sends a prompt-filter chunk first, with no choices and an empty id and model.
    if (!started && choices.length === 0 && !isRecord(c.usage)) return;
    if (!started) {
      started = true;
      out.push({ type: 'message_start', id: String(c.id ?? ''), model: String(c.model ?? ''), usage: {} });
    }
    const choice = isRecord(choices[0]) ? choices[0] : null;
    const delta = choice && isRecord(choice.delta) ? choice.delta : {};
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') textual(out, 'thinking', reasoning);
    if (typeof delta.content === 'string' && delta.content !== '') textual(out, 'text', delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') { refused = true; textual(out, 'text', delta.refusal); }
    if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls) if (isRecord(tc)) toolDelta(out, tc);
    if (choice && choice.finish_reason != null) {
      finishSeen = true;
      stop = refused ? 'refusal' : stopReasonOf(choice.finish_reason);
      closeAll(out);
    }
    if (isRecord(c.usage)) usage = canonicalUsage(c.usage, c.service_tier);
  };

  const onFrames = (frames: { data: string; event?: string }[], out: StreamEvent[]): StreamEvent[] => {
    for (const f of frames) {
      if (done) break;
      // [DONE] after content is a whole answer, a finish reason or not (some compatible servers send none);
      // with neither it is a stream that said nothing, failed as the same-format relay fails it.
      if (f.data === '[DONE]') {
        if (finishSeen || nextIndex > 0) finish(out);
        else fail(out, { type: 'api_error', message: 'upstream stream ended before completion' });
        break;
      }
      const chunk = readEvent(f.data);
      if (chunk === null) continue;
      if (chunk instanceof UnreadableFrame) { fail(out, chunk.error); break; }
      // The openai SDK reads an `event: error` frame as an error whatever its data's shape; so does the gateway.
      if (f.event === 'error' && !isRecord(chunk.error)) { streamError(out, chunk); break; }
      onChunk(chunk, out);
    }
    return out;
  };

  return {
    push: (chunk) => onFrames(sse.push(chunk), []),
    // A stream that failed after the usage chunk (an error chunk or a bad frame before [DONE]) is done
    // too, and still holds it.
    heldUsage: () => (reported ? null : usage),
    end() {
      const out = onFrames(sse.end(), []);
      if (done) return out;
      // Some compatible servers omit [DONE]; a stream without a finish_reason was cut short.
      if (finishSeen) finish(out);
      else fail(out, { type: 'api_error', message: 'upstream stream ended before completion' });
      return out;
    },
  };
}
