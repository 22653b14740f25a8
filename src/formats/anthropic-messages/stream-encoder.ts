// Client side streaming: canonical stream events -> Messages API SSE events (`event: X` + JSON data).
import type { Block, StreamEvent } from '../canonical.ts';
import type { StreamEncoder } from '../codec.ts';
import { sseFrame } from '../sse.ts';
import { toolInput } from '../tool-arguments.ts';
import { ANTHROPIC_ERROR_TYPES } from './errors.ts';
import { anthropicUsage } from './response.ts';

type Rec = Record<string, unknown>;

const frame = (type: string, data: Rec): string => sseFrame(JSON.stringify({ type, ...data }), type);

/** The empty shell a content_block_start announces; text and input arrive as deltas. */
function blockShell(b: Block): Rec {
  switch (b.type) {
    case 'text': return { type: 'text', text: '' };
    case 'tool_use': return { type: 'tool_use', id: b.id, name: b.name, input: {} };
    case 'thinking': return { type: 'thinking', thinking: '', signature: '' };
    case 'redacted_thinking': return { type: 'redacted_thinking', data: b.data };
    default: return { type: 'text', text: '' }; // user-side blocks never stream from a model
  }
}

/**
 * Canonical events map one to one onto Anthropic events. A block_start that already carries text
 * (decoders may produce one) is followed by a delta so no text is lost; message_start always
 * carries a complete usage object because SDKs read its fields unconditionally.
 *
 * Except a tool call's input: this encoder only runs for translated streams, whose arguments an
 * OpenAI-format model wrote as text that may end as no object's JSON, and a Messages client (its SDK
 * parses the accumulated partial_json at the block's end) cannot take that. So a call's input goes
 * out as one delta at its block's end, once its validity is known: the text when it is an object's
 * JSON, else `{}`, as the collected answer gives (src/formats/tool-arguments.ts). The text as written
 * stays in the canonical events for everything else that reads them.
 */
export function createMessagesStreamEncoder(): StreamEncoder {
  /**
   * What earlier message_deltas said: the SDKs assign each delta's stop_reason, stop_sequence and
   * output_tokens to the message as they come, so a later delta (usage only) repeats them, never nulls them.
   */
  let stop: { stop_reason: string | null; stop_sequence: string | null } = { stop_reason: null, stop_sequence: null };
  let outputTokens = 0;
  /** Argument text of the open tool_use blocks, by block index. */
  const toolArgs = new Map<number, string>();
  const toolInputDelta = (index: number): string => {
    const text = toolArgs.get(index);
    toolArgs.delete(index);
    if (text === undefined || text === '') return '';
    const partial_json = toolInput(text).raw_arguments === undefined ? text : '{}';
    return frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
  };
  return {
    encode(ev: StreamEvent): string {
      switch (ev.type) {
        case 'message_start':
          return frame('message_start', {
            message: {
              id: ev.id, type: 'message', role: 'assistant', model: ev.model, content: [],
              stop_reason: null, stop_sequence: null, usage: anthropicUsage(ev.usage),
            },
          });
        case 'block_start': {
          const b = ev.block;
          if (b.type === 'tool_use') toolArgs.set(ev.index, '');
          let out = frame('content_block_start', { index: ev.index, content_block: blockShell(b) });
          if (b.type === 'text' && b.text !== '') out += frame('content_block_delta', { index: ev.index, delta: { type: 'text_delta', text: b.text } });
          if (b.type === 'thinking' && b.thinking !== '') out += frame('content_block_delta', { index: ev.index, delta: { type: 'thinking_delta', thinking: b.thinking } });
          if (b.type === 'thinking' && b.signature !== '') out += frame('content_block_delta', { index: ev.index, delta: { type: 'signature_delta', signature: b.signature } });
          return out;
        }
        case 'block_delta': {
          const held = toolArgs.get(ev.index);
          if (held !== undefined && ev.delta.type === 'input_json_delta') { toolArgs.set(ev.index, held + ev.delta.partial_json); return ''; }
          return frame('content_block_delta', { index: ev.index, delta: ev.delta });
        }
        case 'block_stop':
          return toolInputDelta(ev.index) + frame('content_block_stop', { index: ev.index });
        case 'message_delta':
          if (ev.stop_reason !== null) stop = { stop_reason: ev.stop_reason, stop_sequence: ev.stop_sequence };
          if (ev.usage.output_tokens !== undefined) outputTokens = ev.usage.output_tokens;
          return frame('message_delta', {
            delta: { ...stop },
            usage: { output_tokens: outputTokens, ...anthropicUsage(ev.usage, true) },
          });
        case 'message_stop':
          return frame('message_stop', {});
        case 'ping':
          return frame('ping', {});
        case 'error':
          return frame('error', { error: { type: ANTHROPIC_ERROR_TYPES[ev.error.type], message: ev.error.message } });
      }
    },
    end: () => '',
    // The format's own keep-alive, as Anthropic sends it while a model thinks.
    keepAlive: () => frame('ping', {}),
  };
}
