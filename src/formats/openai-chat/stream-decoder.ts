// Upstream side streaming: chat.completion.chunk SSE bytes -> canonical stream events.
import type { StopReason, StreamEvent, Usage } from '../canonical.ts';
import type { StreamDecoder } from '../codec.ts';
import { createSseParser } from '../sse.ts';
import { isRecord, kindFromStatus } from '../errors.ts';
import { canonicalUsage, stopReasonOf } from './response.ts';

type Rec = Record<string, unknown>;

/**
 * Text and reasoning arrive as runs, so a new kind of delta closes the open text/thinking block.
 * Tool calls are keyed by their `index` and may interleave (parallel calls), so each tool block
 * stays open until the choice finishes. The closing message_delta waits for `[DONE]` (or the
 * end of the bytes) because the usage chunk comes after the finish_reason chunk.
 */
export function createChatStreamDecoder(): StreamDecoder {
  const sse = createSseParser();
  let started = false;
  let done = false;
  let finishSeen = false;
  let nextIndex = 0;
  let run: { kind: 'text' | 'thinking'; index: number } | null = null;
  const tools = new Map<number, number>(); // OpenAI tool index -> canonical block index
  const open = new Set<number>();
  let stop: StopReason | null = null;
  let usage: Usage | null = null;

  const closeRun = (out: StreamEvent[]): void => {
    if (!run) return;
    out.push({ type: 'block_stop', index: run.index });
    open.delete(run.index);
    run = null;
  };
  const closeAll = (out: StreamEvent[]): void => {
    run = null;
    for (const index of [...open].sort((a, b) => a - b)) out.push({ type: 'block_stop', index });
    open.clear();
  };
  const startBlock = (out: StreamEvent[], block: Extract<StreamEvent, { type: 'block_start' }>['block']): number => {
    const index = nextIndex++;
    open.add(index);
    out.push({ type: 'block_start', index, block });
    return index;
  };
  const textual = (out: StreamEvent[], kind: 'text' | 'thinking', text: string): void => {
    if (run?.kind !== kind) {
      closeRun(out);
      const index = startBlock(out, kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' });
      run = { kind, index };
    }
    out.push({ type: 'block_delta', index: run.index, delta: kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text } });
  };
  const toolDelta = (out: StreamEvent[], tc: Rec): void => {
    const key = typeof tc.index === 'number' ? tc.index : tools.size;
    const fn = isRecord(tc.function) ? tc.function : {};
    let index = tools.get(key);
    if (index === undefined) {
      closeRun(out);
      index = startBlock(out, { type: 'tool_use', id: String(tc.id ?? `call_${key}`), name: String(fn.name ?? ''), input: {} });
      tools.set(key, index);
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      out.push({ type: 'block_delta', index, delta: { type: 'input_json_delta', partial_json: fn.arguments } });
    }
  };
  const finish = (out: StreamEvent[]): void => {
    if (done) return;
    done = true;
    closeAll(out);
    out.push({ type: 'message_delta', stop_reason: stop, stop_sequence: null, usage: usage ?? {} });
    out.push({ type: 'message_stop' });
  };

  const onChunk = (c: Rec, out: StreamEvent[]): void => {
    if (isRecord(c.error)) {
      const e = c.error;
      const status = typeof e.code === 'number' ? e.code : 500;
      done = true;
      out.push({ type: 'error', error: { type: kindFromStatus(status), message: String(e.message ?? 'upstream stream error') } });
      return;
    }
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
    if (typeof delta.refusal === 'string' && delta.refusal !== '') textual(out, 'text', delta.refusal);
    if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls) if (isRecord(tc)) toolDelta(out, tc);
    if (choice && choice.finish_reason != null) {
      finishSeen = true;
      stop = stopReasonOf(choice.finish_reason);
      closeAll(out);
    }
    if (isRecord(c.usage)) usage = canonicalUsage(c.usage, c.service_tier);
  };

  const onFrames = (frames: { data: string }[], out: StreamEvent[]): StreamEvent[] => {
    for (const f of frames) {
      if (done) break;
      if (f.data === '[DONE]') { finish(out); break; }
      let parsed: unknown;
      try {
        parsed = JSON.parse(f.data);
      } catch {
        continue; // a stray non-JSON line (some proxies add them) carries nothing
      }
      if (isRecord(parsed)) onChunk(parsed, out);
    }
    return out;
  };

  return {
    push: (chunk) => onFrames(sse.push(chunk), []),
    end() {
      const out = onFrames(sse.end(), []);
      if (done) return out;
      // Some compatible servers omit [DONE]; a stream without a finish_reason was cut short.
      if (finishSeen) finish(out);
      else {
        done = true;
        out.push({ type: 'error', error: { type: 'api_error', message: 'upstream stream ended before completion' } });
      }
      return out;
    },
  };
}
