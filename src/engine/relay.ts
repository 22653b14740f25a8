// How one upstream stream reaches the client: relayed frame by frame when both speak the same format,
// else decoded to canonical events and encoded for the client, or (for a client that did not ask to
// stream) collected into one answer. Each relay reports its progress: whether content began (the
// commit point), the error the upstream sent instead, normal completion and output characters.
import type { ModelEntry } from '../config/types.ts';
import { mergeUsage, type StreamEvent, type Usage } from '../formats/canonical.ts';
import { newProgress, type Codec, type Observed, type PassthroughCodec, type StreamProgress } from '../formats/codec.ts';
import { clientCodecFor, relayCodecFor } from '../formats/registry.ts';
import { markResponse, signerOf, streamMarker, type Signer } from '../formats/signatures.ts';
import { createSseParser, SSE_KEEPALIVE } from '../formats/sse.ts';
import { restoreEventNames, restoreResponseNames, type ToolNameMap } from '../formats/tool-names.ts';
import type { InferenceRequest } from './context.ts';
import { createCollector } from './collect.ts';
import type { Redact } from './redact.ts';

export type Relay = {
  /** Upstream body bytes in, the client's bytes out ('' when none are owed yet). */
  push(chunk: Buffer): string;
  /** The upstream ended: what is still owed to the client. */
  end(): string;
  observed(): Observed;
  readonly progress: StreamProgress;
  /** Ends the client's stream after a mid-stream failure: the error event in the client's format. */
  fail(ev: StreamEvent): string;
  /** What keeps the client's stream alive while the upstream sends nothing it can relay. */
  keepAlive(): string;
  /** Collecting relays only: the whole answer in the client's format, once end() returned. */
  answer?(): unknown;
  /**
   * Translating relays: the upstream's terminal event (canonical message_stop) went out, so the client
   * has the whole answer whatever happens to the connection afterwards (a reset before the body's end).
   */
  whole?(): boolean;
};

/** Same wire format on both sides: frames pass through with the id and model rewritten. */
export function passthroughRelay(codec: PassthroughCodec, r: InferenceRequest, entry: ModelEntry, redact: Redact): Relay {
  const parser = createSseParser();
  const s = codec.newStream({ id: r.id, model: entry.id, includeUsage: r.includeUsage, redact, request: r.body });
  const run = (frames: ReturnType<typeof parser.push>): string => { let out = ''; for (const f of frames) out += s.frame(f); return out; };
  const end = (): string => {
    const out = run(parser.end());
    const p = s.progress;
    // Closed after content without the format's end ([DONE] after a finish reason, message_stop,
    // response.completed): the answer was cut short, and the client is told so with an error event,
    // as the translating relays' decoders do, instead of a stream that looks finished.
    const cut = p.content && !p.complete && p.error === null && !p.ended ? s.fail({ type: 'api_error', message: 'upstream stream ended before completion' }) : '';
    return out + cut + s.end();
  };
  return {
    progress: s.progress, push: (c) => run(parser.push(c)), end, observed: () => s.observed(),
    // In the relay's own format, numbered on from the stream where the format numbers its events.
    fail: (ev) => (ev.type === 'error' ? s.fail(ev.error) : ''),
    keepAlive: () => SSE_KEEPALIVE,
    // The format's last event was relayed ([DONE], message_stop, response.completed): a connection
    // failing after it leaves the client a whole answer, ended as the format ends one.
    whole: () => (s.whole ? s.whole() : s.progress.complete) && s.progress.error === null,
  };
}

/** Watches canonical events for the commit point, errors, completion and output size. */
export function track(ev: StreamEvent, p: StreamProgress, redact: Redact): void {
  if (p.error !== null && !p.content) return; // failed before content: what follows does not count
  switch (ev.type) {
    case 'message_start': case 'ping': return;
    case 'block_delta': {
      const d = ev.delta;
      p.outputChars += d.type === 'text_delta' ? d.text.length : d.type === 'thinking_delta' ? d.thinking.length : d.type === 'input_json_delta' ? d.partial_json.length : 0;
      p.content = true;
      return;
    }
    case 'message_stop': p.complete = p.error === null; return;
    case 'error':
      ev.error.message = redact(ev.error.message);
      p.error ??= { kind: ev.error.type, message: ev.error.message };
      p.complete = false;
      // Decoders send nothing after an error: once content went out, this event ends the client's stream.
      if (p.content) p.ended = true;
      return;
    default: p.content = true;
  }
}

/**
 * Who signed the reasoning of a translated answer (its signatures reach the client marked with it,
 * src/formats/signatures.ts); null for an answer in the client's own format, relayed as it is.
 */
export const answerSigner = (codec: Codec, r: InferenceRequest, entry: ModelEntry): Signer | null =>
  (relayCodecFor(entry.provider, r.clientFormat) ? null : signerOf(codec.format, entry.upstream));

/** Different formats: upstream bytes -> canonical events -> the client's stream (`names`: tool names the attempt replaced, given back). */
export function translateRelay(codec: Codec, r: InferenceRequest, entry: ModelEntry, redact: Redact, names: ToolNameMap | null = null): Relay {
  const decoder = codec.upstream.newStreamDecoder();
  const encoder = clientCodecFor(r.clientFormat).newStreamEncoder({ includeUsage: r.includeUsage, request: r.body });
  const mark = streamMarker(answerSigner(codec, r, entry), r.clientFormat);
  const progress = newProgress();
  let usage: Usage | null = null;
  let finish: string | null = null;
  let whole = false;
  const run = (events: StreamEvent[]): string => {
    let out = '';
    for (const ev of events) {
      if (ev.type === 'message_stop') whole = progress.error === null;
      mark?.(ev);
      restoreEventNames(ev, names);
      if (ev.type === 'message_start') { ev.id = r.id; ev.model = entry.id; usage = mergeUsage(usage, ev.usage); }
      else if (ev.type === 'message_delta') { usage = mergeUsage(usage, ev.usage); if (ev.stop_reason) finish = ev.stop_reason; }
      track(ev, progress, redact);
      out += encoder.encode(ev);
    }
    return out;
  };
  return {
    progress,
    push: (c) => run(decoder.push(c)),
    end: () => run(decoder.end()) + encoder.end(),
    fail: (ev) => encoder.encode(ev),
    keepAlive: () => encoder.keepAlive?.() ?? SSE_KEEPALIVE,
    whole: () => whole,
    observed: () => {
      // A stream cut before its closing event: what the upstream reported is billed, not an estimate.
      const held = decoder.heldUsage?.() ?? null;
      const u = held ? mergeUsage(usage ? { ...usage } : null, held) : usage;
      return encoder.result ? { usage: u, finishReason: finish, result: encoder.result() } : { usage: u, finishReason: finish };
    },
  };
}

/** A client that did not ask to stream, from an upstream that streams anyway: one answer at the end. */
export function collectRelay(codec: Codec, r: InferenceRequest, entry: ModelEntry, redact: Redact, names: ToolNameMap | null = null): Relay {
  const decoder = codec.upstream.newStreamDecoder();
  const collector = createCollector();
  const progress = newProgress();
  const run = (events: StreamEvent[]): string => {
    for (const ev of events) { track(ev, progress, redact); collector.add(ev); }
    return '';
  };
  return {
    progress,
    push: (c) => run(decoder.push(c)),
    end: () => run(decoder.end()),
    fail: () => '',
    keepAlive: () => '', // nothing is sent before the whole answer
    observed: () => { const res = collector.response(); return { usage: res.usage, finishReason: res.stop_reason }; },
    answer: () => {
      const res = collector.response();
      res.id = r.id;
      res.model = entry.id;
      markResponse(res, answerSigner(codec, r, entry), r.clientFormat);
      restoreResponseNames(res, names);
      return clientCodecFor(r.clientFormat).encodeResponse(res, r.body);
    },
  };
}
