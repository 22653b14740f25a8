// Converts between the two shapes of an answer, so the client gets the shape it asked for whatever the
// upstream sent: canonical stream events collected into one response (an upstream that streamed to
// a client that did not ask), and one response replayed as events (a JSON answer to a stream request).
import { emptyUsage, mergeUsage, type Block, type CanonicalResponse, type StreamEvent } from '../formats/canonical.ts';
import { toolInput } from '../formats/tool-arguments.ts';

type OpenBlock = { block: Block; json: string };

export type Collector = { add(ev: StreamEvent): void; response(): CanonicalResponse };

export function createCollector(): Collector {
  const res: CanonicalResponse = { id: '', model: '', content: [], stop_reason: null, stop_sequence: null, usage: emptyUsage() };
  const open = new Map<number, OpenBlock>();
  const close = (index: number): void => {
    const p = open.get(index);
    if (!p) return;
    open.delete(index);
    if (p.block.type === 'tool_use' && p.json !== '') Object.assign(p.block, toolInput(p.json));
  };
  return {
    add(ev) {
      switch (ev.type) {
        case 'message_start':
          res.id = ev.id; res.model = ev.model; mergeUsage(res.usage, ev.usage);
          return;
        case 'block_start': {
          const block = structuredClone(ev.block);
          res.content.push(block);
          open.set(ev.index, { block, json: '' });
          return;
        }
        case 'block_delta': {
          const p = open.get(ev.index);
          if (!p) return;
          const d = ev.delta; const b = p.block;
          if (d.type === 'text_delta' && b.type === 'text') b.text += d.text;
          else if (d.type === 'thinking_delta' && b.type === 'thinking') b.thinking += d.thinking;
          else if (d.type === 'signature_delta' && b.type === 'thinking') b.signature += d.signature;
          else if (d.type === 'input_json_delta') p.json += d.partial_json;
          return;
        }
        case 'block_stop': close(ev.index); return;
        case 'message_delta':
          if (ev.stop_reason !== null) res.stop_reason = ev.stop_reason;
          if (ev.stop_sequence !== null) res.stop_sequence = ev.stop_sequence;
          mergeUsage(res.usage, ev.usage);
          return;
        default:
      }
    },
    response() {
      for (const i of [...open.keys()]) close(i);
      return res;
    },
  };
}

/** One complete response as the stream events that would have carried it. */
export function responseEvents(res: CanonicalResponse): StreamEvent[] {
  const u = res.usage;
  const out: StreamEvent[] = [{
    type: 'message_start', id: res.id, model: res.model,
    usage: { input_tokens: u.input_tokens, cache_read_input_tokens: u.cache_read_input_tokens, cache_creation_input_tokens: u.cache_creation_input_tokens, cache_creation_5m: u.cache_creation_5m, cache_creation_1h: u.cache_creation_1h, output_tokens: 0 },
  }];
  res.content.forEach((b, index) => {
    switch (b.type) {
      case 'text':
        out.push({ type: 'block_start', index, block: { type: 'text', text: '' } });
        if (b.text !== '') out.push({ type: 'block_delta', index, delta: { type: 'text_delta', text: b.text } });
        break;
      case 'thinking':
        out.push({ type: 'block_start', index, block: { type: 'thinking', thinking: '', signature: '' } });
        if (b.thinking !== '') out.push({ type: 'block_delta', index, delta: { type: 'thinking_delta', thinking: b.thinking } });
        if (b.signature !== '') out.push({ type: 'block_delta', index, delta: { type: 'signature_delta', signature: b.signature } });
        break;
      case 'tool_use':
        out.push({ type: 'block_start', index, block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
        // The input's JSON, which every client format reads (arguments that were no object's JSON are then `{}`).
        out.push({ type: 'block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input ?? {}) } });
        break;
      default:
        out.push({ type: 'block_start', index, block: b });
    }
    out.push({ type: 'block_stop', index });
  });
  out.push({ type: 'message_delta', stop_reason: res.stop_reason, stop_sequence: res.stop_sequence, usage: { ...u } });
  out.push({ type: 'message_stop' });
  return out;
}
