// Native relay of the Responses API to a provider that serves it (paths.responses in its YAML): the
// body goes up with the model rewritten, without previous_response_id (the route already put the
// stored turns in `input`) and with store: false plus encrypted reasoning (the gateway keeps the
// conversation, the provider keeps nothing); answers come back with the gateway's id and model and
// the client's own store/previous_response_id, events otherwise byte for byte.
import type { ErrorKind, StopReason } from '../canonical.ts';
import { newProgress, type Observed, type PassthroughCodec, type StreamProgress } from '../codec.ts';
import { isRecord, kindFromStatus } from '../errors.ts';
import { sseFrame, type SseFrame } from '../sse.ts';
import { readEvent, relayUnreadable, UnreadableFrame, type StreamError } from '../stream-frames.ts';
import { GATEWAY_ONLY_FIELDS } from '../passthrough/openai-chat.ts';
import { responsesUsage as canonicalResponsesUsage } from '../passthrough/usage.ts';
import { kindOfOpenAICode } from '../openai-chat/errors.ts';
import { RESPONSE_ERROR_CODES } from './errors.ts';
import { compactionText, isGatewayReasoning, unpackCompaction } from './items.ts';

type Rec = Record<string, unknown>;

const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

/** The canonical stop reason of a finished response object. */
export function stopOfResponse(r: Rec): StopReason | null {
  if (r.status === 'incomplete') {
    const reason = isRecord(r.incomplete_details) ? r.incomplete_details.reason : null;
    return reason === 'content_filter' ? 'refusal' : 'max_tokens';
  }
  if (r.status !== 'completed') return null;
  const output = Array.isArray(r.output) ? r.output as Rec[] : [];
  return output.some((o) => o.type === 'function_call' || o.type === 'custom_tool_call') ? 'tool_use' : 'end_turn';
}

const textLength = (v: unknown): number => (typeof v === 'string' ? v.length : 0);

/** Characters of a response object's output: message text and refusals, reasoning summaries, tool call arguments and input. */
function responseOutputChars(r: Rec): number {
  let n = 0;
  for (const item of Array.isArray(r.output) ? r.output : []) {
    if (!isRecord(item)) continue;
    n += textLength(item.arguments) + textLength(item.input);
    for (const part of [...(Array.isArray(item.content) ? item.content : []), ...(Array.isArray(item.summary) ? item.summary : [])]) {
      if (isRecord(part)) n += textLength(part.text) + textLength(part.refusal);
    }
  }
  return n;
}

/** Stamps the gateway's id and model and the client's own echo fields on a response object. */
function stamp(r: Rec, ctx: { id: string; model: string; request?: Rec }): void {
  r.id = ctx.id;
  r.model = ctx.model;
  const req = ctx.request;
  if (!req) return;
  r.previous_response_id = typeof req.previous_response_id === 'string' ? req.previous_response_id : null;
  r.store = req.store !== false;
}

/** An id the gateway gave a stored input item that had none (src/responses/rows.ts): no prefix the API accepts for its type. */
const STORED_ITEM_ID = /^item_[0-9a-f]{32}i[0-9a-f]{4}$/;

/**
 * `it` as a native server can take it: the item itself (the usual case), the user message the
 * gateway's own compaction stands for, the item without an id the gateway gave it, or null for
 * reasoning it cannot read (a translated target's in the gateway's token, or none at all, which a
 * server keeping nothing cannot look up).
 */
function forNative(it: unknown): unknown {
  if (!isRecord(it)) return it;
  if (it.type === 'compaction' && typeof it.encrypted_content === 'string') {
    const summary = unpackCompaction(it.encrypted_content);
    if (summary !== null) return { type: 'message', role: 'user', content: [{ type: 'input_text', text: compactionText(summary) }] };
  }
  if (it.type === 'reasoning' && (typeof it.encrypted_content !== 'string' || isGatewayReasoning(it.encrypted_content))) return null;
  if (typeof it.id === 'string' && STORED_ITEM_ID.test(it.id)) { const { id: _given, ...rest } = it; return rest; }
  return it;
}

/**
 * Input for a native Responses server: compaction items the gateway made (on a translated model)
 * become the user message they stand for, since only the gateway can read their token; reasoning
 * items it cannot read (a translated target's thinking in the gateway's token, after a chain or the
 * router moved the conversation, or reasoning without encrypted content, which a server told to keep
 * nothing cannot look up) are left out, as a target that verifies reasoning leaves them out translated;
 * ids the gateway gave stored items go up without them (the API refuses `item_` ids on a function
 * call or reasoning item; ids are optional). OpenAI's own items and everything else go up unchanged.
 * The array is copied only when one is found.
 */
export function nativeInput(input: unknown): unknown {
  if (!Array.isArray(input)) return input;
  let out: unknown[] | null = null;
  for (let i = 0; i < input.length; i++) {
    const it: unknown = input[i];
    const x = forNative(it);
    if (x !== it) out ??= input.slice(0, i);
    if (out !== null && x !== null) out.push(x);
  }
  return out ?? input;
}

/** The kind of a Responses error code (`error` event, failed response): an HTTP status, else the OpenAI code table (src/formats/openai-chat/errors.ts), else a server error. */
function kindOfCode(code: unknown): ErrorKind {
  if (typeof code === 'number') return kindFromStatus(code);
  return kindOfOpenAICode(code) ?? 'api_error';
}

const LIFECYCLE = new Set(['response.created', 'response.queued', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed']);

export const openaiResponsesPassthrough: PassthroughCodec = {
  prepareRequest(body, { upstreamModel, modelInBody }) {
    const out: Rec = { ...body };
    for (const f of GATEWAY_ONLY_FIELDS) delete out[f];
    if (modelInBody) out.model = upstreamModel; else delete out.model;
    delete out.previous_response_id;
    out.input = nativeInput(out.input);
    out.store = false;
    const include = Array.isArray(out.include) ? out.include as string[] : [];
    if (!include.includes(ENCRYPTED_REASONING)) out.include = [...include, ENCRYPTED_REASONING];
    return out;
  },

  rewriteResponse(json, ctx) {
    stamp(json, ctx);
    return { usage: isRecord(json.usage) ? canonicalResponsesUsage(json.usage) : null, finishReason: stopOfResponse(json), result: json };
  },

  outputChars: responseOutputChars,

  answerError(json) {
    if (json.status !== 'failed') return null;
    const e = isRecord(json.error) ? json.error : {};
    return { kind: kindOfCode(e.code), message: typeof e.message === 'string' ? e.message : 'the response failed' };
  },

  newStream(ctx) {
    const seen: Observed = { usage: null, finishReason: null };
    const progress: StreamProgress = newProgress();
    const redact = ctx.redact ?? ((s: string) => s);
    // What a failure the gateway raises itself continues from: the last event number, the response as
    // last announced and the output items finished so far.
    let seq = -1;
    let response: Rec | null = null;
    const items = new Map<number, Rec>();
    let done = false;
    const fail = (error: StreamError): string => {
      const code = RESPONSE_ERROR_CODES[error.type];
      const out = sseFrame(JSON.stringify({ type: 'error', sequence_number: ++seq, code, message: error.message, param: null }), 'error');
      return out + failedEvent(code, error.message);
    };
    /** response.failed for the response as last announced, with the output items finished so far ('' before any). */
    const failedEvent = (code: unknown, message: string): string => {
      if (!response) return '';
      done = true;
      const failed = { ...response, output: [...items.keys()].sort((a, b) => a - b).map((k) => items.get(k)), status: 'failed', error: { code, message } };
      return sseFrame(JSON.stringify({ type: 'response.failed', sequence_number: ++seq, response: failed }), 'response.failed');
    };
    /** An error event relayed after content, which the server may or may not follow with response.failed. */
    let relayedError: { code: unknown; message: string } | null = null;
    return {
      progress,
      fail,
      frame(f: SseFrame): string {
        // Nothing after the terminal event (completed, incomplete, failed) belongs to the answer.
        if ((progress.error !== null && !progress.content) || progress.ended || done) return '';
        // Responses streams have no [DONE]; a compatible server that ends with one has ended the stream.
        if (f.data === '[DONE]') return '';
        const ev = readEvent(f.data);
        if (ev === null) return '';
        if (ev instanceof UnreadableFrame) return relayUnreadable(ev, progress, fail);
        if (Number.isSafeInteger(ev.sequence_number)) seq = ev.sequence_number as number;
        // An object without a type is no event the API defines: not relayed.
        if (typeof ev.type !== 'string') return '';
        const type = ev.type;
        if (type === 'response.output_item.done' && isRecord(ev.item) && typeof ev.output_index === 'number') items.set(ev.output_index, ev.item);
        if (LIFECYCLE.has(type) && isRecord(ev.response)) {
          const r = ev.response;
          stamp(r, ctx);
          response = r;
          if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') done = true;
          if (type === 'response.completed' || type === 'response.incomplete') {
            seen.usage = isRecord(r.usage) ? canonicalResponsesUsage(r.usage) : seen.usage;
            seen.finishReason = stopOfResponse(r);
            seen.result = r;
            progress.content = true;
            progress.complete = true;
          } else if (type === 'response.failed') {
            const e = isRecord(r.error) ? r.error : {};
            const message = redact(typeof e.message === 'string' ? e.message : 'the response failed');
            r.error = { ...e, message };
            if (isRecord(r.usage)) seen.usage = canonicalResponsesUsage(r.usage);
            progress.error ??= { kind: kindOfCode(e.code), message };
            progress.complete = false;
          }
          return sseFrame(JSON.stringify(ev), type);
        }
        if (type === 'error') {
          const message = redact(typeof ev.message === 'string' ? ev.message : 'upstream stream error');
          progress.error ??= { kind: kindOfCode(ev.code), message };
          progress.complete = false;
          if (progress.content) relayedError ??= { code: ev.code, message };
          return sseFrame(JSON.stringify({ ...ev, message }), type);
        }
        progress.content = true;
        if (typeof ev.delta === 'string') progress.outputChars += ev.delta.length;
        return sseFrame(f.data, f.event ?? type);
      },
      // A stream whose server sent an error event and closed without response.failed ends as the
      // gateway's own failures end it, with the response failed (clients wait for a terminal event).
      end: () => (relayedError !== null && !done ? failedEvent(relayedError.code, relayedError.message) : ''),
      observed: () => seen,
    };
  },
};
