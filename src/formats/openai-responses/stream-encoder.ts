// Client side streaming: canonical stream events -> the Responses API's event sequence
// (response.created, response.in_progress, output_item.added, content_part.added, *.delta, *.done,
// output_item.done, response.completed / incomplete / failed), every event numbered by
// `sequence_number` from 0. Each canonical block is one output item, in the order blocks start.
import type { Block, StopReason, StreamEvent, Usage } from '../canonical.ts';
import type { StreamEncoder } from '../codec.ts';
import { sseFrame } from '../sse.ts';
import { RESPONSE_ERROR_CODES } from './errors.ts';
import { itemPrefix, outputItem, outputItemId } from './items.ts';
import { responseSkeleton, responsesUsage, statusOf } from './response.ts';
import { toolOrigins } from './tools.ts';

type Rec = Record<string, unknown>;

/** An output item being streamed: its position, the block so far, and the text it has accumulated. */
type Open = { outputIndex: number; id: string; block: Block; text: string; signature: string };

export function createResponsesStreamEncoder(opts: { request: Rec; created?: number }): StreamEncoder & { result(): Rec | null } {
  const created = opts.created ?? Math.floor(Date.now() / 1000);
  const origins = toolOrigins(opts.request);
  let seq = 0;
  let response: Rec | null = null;
  const output: Rec[] = [];
  const open = new Map<number, Open>();
  let usage: Partial<Usage> = {};
  let stop: StopReason | null = null;
  let finished = false;

  const emit = (type: string, fields: Rec): string => sseFrame(JSON.stringify({ type, sequence_number: seq++, ...fields }), type);
  const snapshot = (): Rec => ({ ...response!, output: output.filter((o) => o !== undefined) });

  const start = (index: number, b: Block): string => {
    const outputIndex = output.length;
    const id = outputItemId(itemPrefix(b, origins), String(response!.id), outputIndex);
    const o: Open = { outputIndex, id, block: b, text: '', signature: b.type === 'thinking' ? b.signature : '' };
    if (b.type === 'text') o.text = b.text;
    open.set(index, o);
    const base = { item_id: id, output_index: outputIndex };
    output.push(undefined as unknown as Rec); // placeholder until the item is done
    switch (b.type) {
      case 'text':
        return emit('response.output_item.added', { output_index: outputIndex, item: { id, type: 'message', status: 'in_progress', content: [], role: 'assistant' } })
          + emit('response.content_part.added', { ...base, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } })
          + (o.text !== '' ? emit('response.output_text.delta', { ...base, content_index: 0, delta: o.text, logprobs: [] }) : '');
      case 'tool_use': {
        const item: Rec = { ...outputItem({ ...b, input: '' }, id, origins)!, status: 'in_progress' };
        if (item.type === 'function_call') item.arguments = '';
        else item.input = '';
        return emit('response.output_item.added', { output_index: outputIndex, item });
      }
      case 'thinking': case 'redacted_thinking':
        return emit('response.output_item.added', { output_index: outputIndex, item: { id, type: 'reasoning', summary: [] } });
      default:
        return '';
    }
  };

  const delta = (index: number, d: Extract<StreamEvent, { type: 'block_delta' }>['delta']): string => {
    const o = open.get(index);
    if (!o) return '';
    const base = { item_id: o.id, output_index: o.outputIndex };
    if (d.type === 'text_delta') {
      o.text += d.text;
      return emit('response.output_text.delta', { ...base, content_index: 0, delta: d.text, logprobs: [] });
    }
    if (d.type === 'input_json_delta') {
      o.text += d.partial_json;
      // Custom tools take free text: their input is sent whole when the call is done.
      return origins.get((o.block as { name: string }).name)?.custom ? '' : emit('response.function_call_arguments.delta', { ...base, delta: d.partial_json });
    }
    if (d.type === 'thinking_delta') {
      const first = o.text === '';
      o.text += d.thinking;
      return (first ? emit('response.reasoning_summary_part.added', { ...base, summary_index: 0, part: { type: 'summary_text', text: '' } }) : '')
        + emit('response.reasoning_summary_text.delta', { ...base, summary_index: 0, delta: d.thinking });
    }
    o.signature += d.signature;
    return '';
  };

  const done = (index: number): string => {
    const o = open.get(index);
    if (!o) return '';
    open.delete(index);
    const base = { item_id: o.id, output_index: o.outputIndex };
    const b = o.block;
    let out = '';
    let item: Rec | null = null;
    if (b.type === 'text') {
      item = outputItem({ type: 'text', text: o.text }, o.id, origins)!;
      const part = (item.content as Rec[])[0]!;
      out += emit('response.output_text.done', { ...base, content_index: 0, text: o.text, logprobs: [] })
        + emit('response.content_part.done', { ...base, content_index: 0, part });
    } else if (b.type === 'tool_use') {
      let input: unknown = o.text;
      try { input = o.text.trim() === '' ? {} : JSON.parse(o.text); } catch { /* kept as the raw text */ }
      item = outputItem({ ...b, input }, o.id, origins)!;
      out += item.type === 'custom_tool_call'
        ? emit('response.custom_tool_call_input.delta', { ...base, delta: item.input }) + emit('response.custom_tool_call_input.done', { ...base, input: item.input })
        : emit('response.function_call_arguments.done', { ...base, name: item.name, arguments: item.arguments });
    } else if (b.type === 'thinking') {
      item = outputItem({ type: 'thinking', thinking: o.text, signature: o.signature }, o.id, origins)!;
      if (o.text !== '') {
        const part = { type: 'summary_text', text: o.text };
        out += emit('response.reasoning_summary_text.done', { ...base, summary_index: 0, text: o.text })
          + emit('response.reasoning_summary_part.done', { ...base, summary_index: 0, part });
      }
    } else if (b.type === 'redacted_thinking') item = outputItem(b, o.id, origins)!;
    if (!item) return out;
    output[o.outputIndex] = item;
    return out + emit('response.output_item.done', { output_index: o.outputIndex, item });
  };

  const closeAll = (): string => {
    let out = '';
    for (const index of [...open.keys()].sort((a, b) => a - b)) out += done(index);
    return out;
  };

  const finish = (): string => {
    if (finished || !response) return '';
    finished = true;
    const out = closeAll();
    const st = statusOf(stop);
    response = { ...snapshot(), status: st.status, incomplete_details: st.incomplete_details, usage: responsesUsage(usage) };
    if (st.status === 'completed') response.completed_at = Math.floor(Date.now() / 1000);
    return out + emit(st.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  };

  return {
    encode(ev: StreamEvent): string {
      if (finished) return '';
      switch (ev.type) {
        case 'message_start':
          response = responseSkeleton(ev.id, ev.model, opts.request, created);
          usage = { ...ev.usage };
          return emit('response.created', { response }) + emit('response.in_progress', { response });
        case 'block_start':
          return response ? start(ev.index, ev.block) : '';
        case 'block_delta':
          return delta(ev.index, ev.delta);
        case 'block_stop':
          return done(ev.index);
        case 'message_delta':
          // A later delta without a stop reason (usage only) never erases the one already known.
          if (ev.stop_reason !== null) stop = ev.stop_reason;
          usage = { ...usage, ...ev.usage };
          return '';
        case 'message_stop':
          return finish();
        case 'error': {
          finished = true;
          const code = RESPONSE_ERROR_CODES[ev.error.type];
          const err = emit('error', { code, message: ev.error.message, param: null });
          if (!response) return err;
          response = { ...snapshot(), status: 'failed', error: { code, message: ev.error.message }, usage: responsesUsage(usage) };
          return err + emit('response.failed', { response });
        }
        default:
          return '';
      }
    },
    // The Responses stream has no [DONE] sentinel: it ends with its terminal event.
    end: () => '',
    result: () => response,
  };
}
