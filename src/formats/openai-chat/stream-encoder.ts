// Client side streaming: canonical stream events -> chat.completion.chunk SSE frames.
import type { StopReason, StreamEvent, Usage } from '../canonical.ts';
import type { StreamEncoder } from '../codec.ts';
import { sseFrame } from '../sse.ts';
import { OPENAI_ERROR_TYPES } from './errors.ts';
import { finishReasonOf, openaiUsage } from './response.ts';
import { callExtra } from './thought-signatures.ts';

type Rec = Record<string, unknown>;

/**
 * One encoder per response. Tool calls are numbered among tool blocks only (OpenAI's
 * `tool_calls[].index`), thinking deltas go out as `delta.reasoning_content`, a Gemini thought
 * signature rides on the tool call after it (callExtra), and when the
 * client asked for usage every chunk carries `usage: null` except the final usage chunk, as
 * OpenAI does.
 */
export function createChatStreamEncoder(opts: { includeUsage: boolean; created?: number }): StreamEncoder {
  const created = opts.created ?? Math.floor(Date.now() / 1000);
  let id = '';
  let model = '';
  let usage: Partial<Usage> = {};
  let stop: StopReason | null = null;
  let finished = false;
  const toolIndex = new Map<number, number>();
  /** Tool blocks that have had no argument text yet: they end with `{}` (below). */
  const noArgs = new Set<number>();
  /** The signature of the latest thinking block, for the next tool call. */
  let signature = '';

  // Every chunk is {id, object, created, model, choices: [{index, delta, logprobs, finish_reason}]
  // (, usage: null)}: the text around `delta` is fixed once id and model are known, so only the delta
  // is serialised per chunk (the same bytes JSON.stringify of the whole object gives).
  let head = '';
  const setHead = (): void => {
    head = `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":`;
  };
  setHead();
  const tail = opts.includeUsage ? '}],"usage":null}' : '}]}';
  const chunk = (delta: Rec, finish: string | null = null): string =>
    sseFrame(`${head}${JSON.stringify(delta)},"logprobs":null,"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}${tail}`);

  const finish = (): string => {
    if (finished) return '';
    finished = true;
    return chunk({}, finishReasonOf(stop) ?? 'stop');
  };

  return {
    encode(ev: StreamEvent): string {
      switch (ev.type) {
        case 'message_start':
          id = ev.id;
          model = ev.model;
          setHead();
          usage = { ...ev.usage };
          return chunk({ role: 'assistant', content: '', refusal: null });
        case 'block_start': {
          const b = ev.block;
          if (b.type === 'thinking') signature = b.signature;
          if (b.type !== 'tool_use') return b.type === 'text' && b.text !== '' ? chunk({ content: b.text }) : '';
          const index = toolIndex.size;
          toolIndex.set(ev.index, index);
          noArgs.add(ev.index);
          const extra = callExtra(signature);
          signature = '';
          return chunk({ tool_calls: [{ index, id: b.id, type: 'function', function: { name: b.name, arguments: '' }, ...extra }] });
        }
        case 'block_delta': {
          const d = ev.delta;
          if (d.type === 'text_delta') return chunk({ content: d.text });
          if (d.type === 'thinking_delta') return chunk({ reasoning_content: d.thinking });
          if (d.type === 'input_json_delta') {
            const index = toolIndex.get(ev.index);
            if (index === undefined || d.partial_json === '') return '';
            noArgs.delete(ev.index);
            return chunk({ tool_calls: [{ index, function: { arguments: d.partial_json } }] });
          }
          // A signature goes out on the tool call that follows it (callExtra), or nowhere.
          if (d.type === 'signature_delta') signature += d.signature;
          return '';
        }
        case 'message_delta':
          // Later usage figures are cumulative totals, so they replace earlier ones field by field.
          usage = { ...usage, ...ev.usage };
          // Anthropic may send more than one message_delta, an early one with usage only: the finish
          // chunk waits for the stop reason (or message_stop), or it would go out as 'stop'.
          if (ev.stop_reason === null) return '';
          stop = ev.stop_reason;
          return finish();
        case 'message_stop': {
          const out = finish();
          if (!opts.includeUsage) return out;
          const u: Rec = { id, object: 'chat.completion.chunk', created, model, choices: [], usage: openaiUsage(usage) };
          return out + sseFrame(JSON.stringify(u));
        }
        case 'error': {
          finished = true;
          const { type, message } = ev.error;
          return sseFrame(JSON.stringify({ error: { message, type: OPENAI_ERROR_TYPES[type], code: type } }));
        }
        case 'block_stop': {
          // A call without arguments (Anthropic streams an empty input as no text, or as '') is
          // `{}` in OpenAI's format, as OpenAI sends it and as the collected answer gives it: an
          // empty arguments string is no JSON, and clients parse it.
          const index = toolIndex.get(ev.index);
          if (index === undefined || !noArgs.delete(ev.index)) return '';
          return chunk({ tool_calls: [{ index, function: { arguments: '{}' } }] });
        }
        default:
          return ''; // ping has no chunk of its own
      }
    },
    end: () => 'data: [DONE]\n\n',
  };
}
