// Receives one upstream response for an attempt. Streaming is decided by the response's content type,
// not the request: a stream is relayed (or collected for a client that did not ask to stream), a JSON
// answer is sent whole (or replayed as a stream for a client that did). Nothing reaches the client
// before the upstream's first real content: an error sent in its place is a failure the dispatcher
// may fall back from. Every callback runs inside this sink's error boundary: whatever an upstream
// sends, the attempt settles once, the client is answered or its stream ended, the upstream released.
import type { ModelEntry } from '../config/types.ts';
import { isRecord } from '../formats/errors.ts';
import type { Codec, Observed } from '../formats/codec.ts';
import type { CanonicalResponse } from '../formats/canonical.ts';
import { clientCodecFor, relayCodecFor } from '../formats/registry.ts';
import { markResponse } from '../formats/signatures.ts';
import { SseLimitError } from '../formats/sse.ts';
import { sendJson } from '../util/send-json.ts';
import { GatewayError } from '../gateway-error.ts';
import type { AttemptResult } from './attempt.ts';
import type { InferenceRequest } from './context.ts';
import { responseEvents } from './collect.ts';
import { redactorFor, type Redact } from './redact.ts';
import { answerSigner, collectRelay, passthroughRelay, translateRelay, type Relay } from './relay.ts';
import type { Flow, ResponseHeaders, ResponseSink } from './transport.ts';
import type { Wire } from './wire.ts';
import { reachOf, retryAfterMs, totalTimeout, transportVerdict, upstreamFailure, verdictForErrorEvent, type Reach, type Verdict } from './upstream-error.ts';
import { completedUsage, consumedUsage, inputTokensOf } from './usage.ts';
import { UPSTREAM_LIMITS } from './limits.ts';
import { restoreResponseNames, type ToolNameMap } from '../formats/tool-names.ts';

const flushSink = (sink: AttemptSink): void => sink.flush();
const keepAliveSink = (sink: AttemptSink): void => sink.keepAlive();

/** A stream's first bytes kept for #bareError: an error body is a few hundred bytes; a longer start is no bare error. */
const HEAD_BYTES = 8192;

const RESPONSE_HEADERS_SSE = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' };

/** Content types of streamed answers: server-sent events, and AWS's binary event stream (Bedrock). */
const isStreamType = (ct: string): boolean => ct.includes('text/event-stream') || ct.includes('vnd.amazon.eventstream');

/** An error object where an answer should be (some servers answer 200 with one). */
const isErrorBody = (j: Record<string, unknown>): boolean =>
  (isRecord(j.error) || j.type === 'error') && j.choices === undefined && j.content === undefined && j.candidates === undefined && j.output === undefined;

/** Characters of text, thinking and tool input in an answer's content, to estimate output it did not report. */
function contentChars(content: CanonicalResponse['content']): number {
  let n = 0;
  for (const b of content) n += b.type === 'text' ? b.text.length : b.type === 'thinking' ? b.thinking.length : b.type === 'tool_use' ? JSON.stringify(b.input ?? {}).length : 0;
  return n;
}

/**
 * An answer with neither content nor a stop reason (`{}`, a status object, `choices: []`) is no
 * answer: a failure to fall back from, as a stream that closes before any content is.
 */
const noAnswer = (a: CanonicalResponse): boolean => a.content.length === 0 && a.stop_reason === null;

/** A JSON answer read by the upstream's own codec, or null when it cannot read it (relayed as before; its input is still billed). */
function decodedAnswer(codec: Codec, json: unknown): CanonicalResponse | null {
  try { return codec.upstream.decodeResponse(json); } catch { return null; }
}

export class AttemptSink implements ResponseSink {
  readonly #r: InferenceRequest;
  readonly #entry: ModelEntry;
  readonly #codec: Codec;
  readonly #adjustments: string[];
  /** Tool names this attempt sent replaced (src/formats/tool-names.ts): the answer's calls get the client's back. */
  readonly #toolNames: ToolNameMap | null;
  readonly #resolve: (a: AttemptResult) => void;
  #settled = false;
  #status = 0;
  #headers: ResponseHeaders = {};
  #mode: 'error' | 'json' | 'stream' = 'json';
  #chunks: Buffer[] = [];
  /**
   * A stream's first bytes (up to HEAD_BYTES), kept while it has shown no content: an upstream that
   * answers 200 with an event-stream type and then a bare JSON error body (no SSE framing) is read as
   * that error, its message and status kept, where it was "nothing before closing the stream".
   */
  #head: Buffer[] | null = [];
  #headBytes = 0;
  #bytes = 0;
  #flow: Flow | null = null;
  #relay: Relay | null = null;
  /** Headers and bytes went to the client: from here on a failure ends the stream, never falls back. */
  #committed = false;
  /** Client bytes produced before the commit point (a message_start, pings), sent at the commit. */
  #held = '';
  #firstByte = false;
  #ttft = 0;
  #timer: NodeJS.Timeout | null = null;
  #flushQueued = false;
  /** Keeps a committed stream alive towards its client while the upstream sends nothing relayable (see keepAlive()). */
  #keepAliveTimer: NodeJS.Timeout | null = null;
  /** When bytes last went to the client of a committed stream (performance.now()). */
  #lastWrite = 0;

  constructor(r: InferenceRequest, entry: ModelEntry, codec: Codec, enc: { adjustments: string[]; toolNames?: ToolNameMap }, resolve: (a: AttemptResult) => void) {
    this.#r = r; this.#entry = entry; this.#codec = codec; this.#adjustments = enc.adjustments; this.#toolNames = enc.toolNames ?? null; this.#resolve = resolve;
  }

  /**
   * The redactor of the request's config, looked up only when upstream text is about to leave (error
   * paths, relays), not on every attempt. A getter rather than a closure made in the constructor: a
   * per-sink closure over the request kept every request's objects (request, response, parsed body)
   * alive through a young-generation GC, promoting ~4 KB per request into old space (bench/README.md).
   */
  get #redact(): Redact { return redactorFor(this.#r.cfg); }

  /** The prompt's tokens for this target, counted only when an answer reported no input of its own. */
  #inputTokens(): number { return inputTokensOf(this.#r, this.#entry); }

  #settle(a: AttemptResult): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#keepAliveTimer) { clearTimeout(this.#keepAliveTimer); this.#keepAliveTimer = null; }
    this.#chunks.length = 0;
    this.#resolve(a);
  }

  #clientHeaders(): Record<string, string> {
    const h: Record<string, string> = { 'x-inference-id': this.#r.id, 'x-gateway-provider': this.#entry.provider.id };
    if (this.#adjustments.length > 0) h['x-gateway-adjustments'] = this.#adjustments.join(', ');
    return h;
  }

  start(status: number, headers: ResponseHeaders, flow: Flow): void {
    this.#status = status; this.#headers = headers; this.#flow = flow;
    // A redirect is read as a failure too (src/engine/upstream-error.ts: the gateway follows none).
    if (status >= 300) { this.#mode = 'error'; return; }
    const ct = headers['content-type'];
    const streamed = ct === undefined ? this.#r.stream : isStreamType(String(ct).toLowerCase());
    if (!streamed) return;
    try {
      this.#mode = 'stream';
      const r = this.#r;
      const entry = this.#entry;
      this.#relay = !r.stream ? collectRelay(this.#codec, r, entry, this.#redact, this.#toolNames)
        : relayCodecFor(entry.provider, r.clientFormat) ? passthroughRelay(relayCodecFor(entry.provider, r.clientFormat)!, r, entry, this.#redact)
          : translateRelay(this.#codec, r, entry, this.#redact, this.#toolNames);
      this.#timer = setTimeout(() => this.#timedOutBeforeFirstByte(), r.cfg.upstream.firstByteTimeoutMs);
    } catch (e) { this.#broken(e); }
  }

  #timedOutBeforeFirstByte(): void {
    const err = Object.assign(new Error('first byte timeout'), { code: 'FIRST_BYTE_TIMEOUT' });
    try {
      this.#settle(this.#beforeCommitFailure(err, 'first byte'));
      this.#flow?.abort(err);
    } catch (e) { this.#lastResort(e); }
  }

  data(chunk: Buffer): void {
    if (this.#settled) return;
    if (this.#mode !== 'stream') {
      // Whole bodies are bounded: an error body is kept up to its limit (the rest is not needed),
      // an answer past its limit is a failure, never unbounded memory.
      const limit = this.#mode === 'error' ? UPSTREAM_LIMITS.errorBodyBytes : UPSTREAM_LIMITS.jsonBodyBytes;
      if (this.#bytes + chunk.length > limit) {
        if (this.#mode === 'error') { if (this.#bytes < limit) { this.#chunks.push(chunk.subarray(0, limit - this.#bytes)); this.#bytes = limit; } return; }
        this.#fail(new GatewayError('upstream_error', `${this.#entry.provider.name} sent an answer larger than ${limit} bytes`));
        return;
      }
      this.#chunks.push(chunk);
      this.#bytes += chunk.length;
      return;
    }
    if (!this.#firstByte) {
      this.#firstByte = true;
      if (this.#timer) { clearTimeout(this.#timer); this.#timer = null; }
    }
    if (this.#head !== null && this.#headBytes < HEAD_BYTES) { this.#head.push(chunk); this.#headBytes += chunk.length; }
    // Chunks of one socket read (undici hands over each HTTP chunk, often ten per read) are relayed
    // together at the end of the tick: one parse call and one client write instead of one per chunk.
    this.#chunks.push(chunk);
    if (!this.#flushQueued) { this.#flushQueued = true; process.nextTick(flushSink, this); }
  }

  /** Relays the chunks received this tick (see data()). Runs from process.nextTick: it must never throw. */
  flush(): void {
    this.#flushQueued = false;
    if (this.#settled) return;
    try {
      this.#forward(this.#relayPending());
      if (this.#committed && this.#relay!.progress.ended) this.#endedByRelay();
    } catch (e) { this.#broken(e); }
  }

  /**
   * A committed stream that has sent its client nothing for server.stream_keepalive_ms (a model thinking,
   * an upstream between events: Gemini and Bedrock send no pings, and translated pings are not relayed)
   * gets the relay's keep-alive (an SSE comment, a Messages ping), so proxies and clients with idle
   * timeouts keep it open. Not while the client is not draining: bytes are pending then. Runs from a
   * timer: it must never throw.
   */
  keepAlive(): void {
    this.#keepAliveTimer = null;
    if (this.#settled) return;
    try {
      const every = this.#r.cfg.server.streamKeepaliveMs;
      const idle = performance.now() - this.#lastWrite;
      if (idle < every) { this.#keepAliveTimer = setTimeout(keepAliveSink, every - idle, this); return; }
      const res = this.#r.res;
      // Nothing after the client's own end (a ping after message_stop), should the upstream linger.
      if (!res.writableNeedDrain && !res.writableEnded && !this.#relay!.whole?.()) res.write(this.#relay!.keepAlive());
      this.#lastWrite = performance.now();
      this.#keepAliveTimer = setTimeout(keepAliveSink, every, this);
    } catch (e) { this.#lastResort(e); }
  }

  /**
   * The relay ended the client's stream itself after content (an error event is in what it sent, e.g.
   * for a frame it could not read): the answer ends now, partial, and the upstream is released.
   */
  #endedByRelay(): void {
    this.#r.res.end(this.#relay!.end());
    this.#settle({ kind: 'done', ...this.#consumed(), ttftMs: this.#ttft, adjustments: this.#adjustments, status: 200 });
    this.#flow?.abort(new Error('the relay ended the stream'));
  }

  #relayPending(): string {
    if (this.#chunks.length === 0) return '';
    const c = this.#chunks;
    this.#chunks = [];
    return this.#relay!.push(c.length === 1 ? c[0]! : Buffer.concat(c));
  }

  /** Sends relayed bytes, or holds them until the stream shows content (or fails before any). */
  #forward(out: string): void {
    const res = this.#r.res;
    if (this.#committed) {
      if (!out) return;
      this.#lastWrite = performance.now();
      if (!res.write(out)) {
        const flow = this.#flow!;
        flow.pause();
        res.once('drain', () => flow.resume());
      }
      return;
    }
    const relay = this.#relay!;
    const p = relay.progress;
    // An error before content, or any error in an answer still being collected (nothing was sent):
    // a failure to fall back from, and the rest of the upstream's bytes are not needed.
    if (p.error !== null && (!p.content || relay.answer)) {
      this.#settle(this.#fromErrorEvent());
      this.#flow!.abort(new Error('the upstream sent an error instead of content'));
      return;
    }
    if (relay.answer) return; // collected for a client that did not ask to stream: sent at the end
    this.#held += out;
    if (p.content || this.#held.length > UPSTREAM_LIMITS.heldBeforeContentChars) this.#commit();
  }

  /** Sends the stream's headers: from here on the client has its answer from this target. */
  #open(): void {
    const r = this.#r;
    this.#committed = true;
    this.#ttft = performance.now() - r.startedAt;
    r.res.writeHead(200, { ...RESPONSE_HEADERS_SSE, ...this.#clientHeaders() });
  }

  #commit(): void {
    this.#head = null;
    this.#open();
    this.#lastWrite = performance.now();
    const every = this.#r.cfg.server.streamKeepaliveMs;
    if (every > 0) this.#keepAliveTimer = setTimeout(keepAliveSink, every, this);
    const out = this.#held;
    this.#held = '';
    if (out && !this.#r.res.write(out)) {
      const flow = this.#flow!;
      flow.pause();
      this.#r.res.once('drain', () => flow.resume());
    }
  }

  end(): void {
    if (this.#settled) return;
    try {
      if (this.#mode === 'error') { this.#settle(this.#upstreamError()); return; }
      if (this.#mode === 'json') { this.#settle(this.#relayJson()); return; }
      const relay = this.#relay!;
      const out = this.#relayPending() + relay.end();
      const p = relay.progress;
      if (!this.#committed) {
        if (p.error !== null && (!p.content || relay.answer)) { this.#settle(this.#fromErrorEvent()); return; }
        if (!p.content) { this.#settle(this.#bareError() ?? this.#unusable('nothing before closing the stream')); return; }
        if (relay.answer) {
          // Collected for a client that asked for one answer: nothing was sent, so a cut one is a failure too.
          this.#settle(p.complete ? this.#sendAnswer(relay) : this.#unusable('a stream that ended before completion'));
          return;
        }
        this.#open();
        this.#r.res.end(this.#held + out);
        this.#held = '';
      } else this.#r.res.end(out);
      this.#settle({ kind: 'done', ...this.#consumed(), ttftMs: this.#ttft, adjustments: this.#adjustments, status: 200 });
    } catch (e) { this.#broken(e); }
  }

  error(e: Error, wire?: Readonly<Wire>): void {
    if (this.#settled) return;
    try {
      if (!this.#committed) {
        // Before a status: "connect" only when nothing reached the upstream (wire.ts tells).
        const before = this.#status === 0;
        this.#settle(this.#beforeCommitFailure(e, before ? 'connect' : this.#mode === 'stream' ? 'first byte' : 'body', before && wire ? reachOf(e, wire) : 'nothing'));
        return;
      }
      const r = this.#r;
      let out = '';
      try { out = this.#relayPending(); } catch { /* the stream is failing anyway */ }
      if (r.clientGone()) { this.#settle({ kind: 'aborted', status: 200, observed: this.#consumed().observed, ttftMs: this.#ttft }); return; }
      // The upstream's terminal event was relayed and only the connection failed after it: the answer is
      // whole. No error event after the client's own end (a Messages client's SDK throws on one), not partial.
      const relay = this.#relay!;
      if (relay.whole?.() && !relay.progress.ended) {
        r.res.end(out + relay.end());
        this.#settle({ kind: 'done', ...this.#consumed(), ttftMs: this.#ttft, adjustments: this.#adjustments, status: 200 });
        return;
      }
      const timedOut = (e as { code?: string }).code === 'UND_ERR_BODY_TIMEOUT';
      const total = r.signal.aborted;
      const message = total ? totalTimeout().message : timedOut ? 'upstream stream went idle past the idle timeout' : `upstream stream failed: ${this.#redact(e.message)}`;
      this.#endWithError(out, total || timedOut ? 'timeout' : 'api_error', message);
    } catch (e2) { this.#lastResort(e2); }
  }

  /** Data the gateway cannot handle (a codec threw, an event past its size limit): the upstream is released. */
  #broken(e: unknown): void {
    if (this.#settled) return;
    const what = e instanceof SseLimitError ? `an event larger than ${UPSTREAM_LIMITS.sseEventChars} characters` : 'a response the gateway cannot read';
    if (!(e instanceof SseLimitError)) console.error(`upstream ${this.#entry.id}: unreadable response: ${this.#redact(String((e as Error)?.message ?? e))}`);
    this.#fail(new GatewayError('upstream_error', `${this.#entry.provider.name} sent ${what}`));
  }

  /** Settles with `err` (before the commit: a failure to fall back from; after: the stream's end) and aborts the exchange. */
  #fail(err: GatewayError): void {
    try {
      if (!this.#committed) this.#settle({ kind: 'retry', error: err, retryAfterMs: null, status: this.#status || null, inPlace: true, unusable: true });
      else if (this.#r.clientGone()) this.#settle({ kind: 'aborted', status: 200, observed: this.#consumed().observed, ttftMs: this.#ttft });
      else this.#endWithError('', 'api_error', err.message);
    } catch (e2) { this.#lastResort(e2); }
    this.#flow?.abort(err);
  }

  #endWithError(out: string, type: 'timeout' | 'api_error', message: string): void {
    // A relay that already ended the stream (its error event is in `out`) gets no second one.
    const relay = this.#relay!;
    this.#r.res.end(out + (relay.progress.ended ? '' : relay.fail({ type: 'error', error: { type, message } })));
    // The client's stream ended with an error, so the answer it got is partial, even where the relay had
    // seen the answer's finish (an OpenAI finish reason and usage, the connection then reset before [DONE]).
    relay.progress.complete = false;
    this.#settle({ kind: 'done', ...this.#consumed(), ttftMs: this.#ttft, adjustments: this.#adjustments, status: 200 });
  }

  /** If even ending the client's answer failed: drop the connection, settle all the same. */
  #lastResort(e: unknown): void {
    console.error(`attempt on ${this.#entry.id} failed while ending its answer: ${this.#redact(String((e as Error)?.message ?? e))}`);
    this.#r.res.destroy();
    this.#settle(this.#relay && this.#committed
      ? { kind: 'aborted', status: this.#status || null, observed: this.#consumed().observed, ttftMs: this.#ttft }
      : { kind: 'aborted', status: this.#status || null, observed: null });
  }

  #beforeCommitFailure(e: unknown, phase: string, reach: Reach = 'nothing'): AttemptResult {
    const r = this.#r;
    // A client that leaves while the upstream is already streaming (e.g. while a model thinks before
    // its first content) leaves a bill: the upstream consumed the input and what it generated so far.
    if (r.clientGone()) return { kind: 'aborted', status: null, observed: this.#relay && this.#firstByte && !this.#relay.answer ? this.#consumed().observed : null };
    if (r.signal.aborted) return { kind: 'final', error: totalTimeout(), status: this.#status || null };
    return this.#asResult(transportVerdict(e, phase, this.#redact, reach), null, this.#status || null);
  }

  #asResult(v: Verdict, retryAfter: number | null, status: number | null): AttemptResult {
    return v.retry ? { kind: 'retry', error: v.error, retryAfterMs: retryAfter, status, inPlace: v.inPlace, ...(v.again ? { again: true as const } : {}) } : { kind: 'final', error: v.error, status };
  }

  /** The upstream answered 200 but sent an error where content should be: as if it had answered that error. */
  #fromErrorEvent(): AttemptResult {
    const v = verdictForErrorEvent(this.#entry, this.#relay!.progress.error!, this.#redact);
    return this.#asResult(v, null, v.status);
  }

  /** What the relayed answer consumed: usage as reported, or estimated where the answer was cut short or unreported. */
  #consumed(): { observed: Observed; partial: boolean } {
    const relay = this.#relay!;
    const o = relay.observed();
    const p = relay.progress;
    const partial = !p.complete;
    const usage = partial ? consumedUsage(o.usage, () => this.#inputTokens(), p.outputChars) : completedUsage(o.usage, () => this.#inputTokens(), p.outputChars);
    return { observed: usage === o.usage ? o : { ...o, usage }, partial };
  }

  #upstreamError(): AttemptResult {
    const status = this.#status;
    const ra = retryAfterMs(this.#headers);
    const text = Buffer.concat(this.#chunks).toString('utf8');
    return this.#asResult(upstreamFailure(this.#codec, this.#entry, status, text, this.#headers, ra, this.#redact), ra, status);
  }

  /** The stream's bytes as a bare JSON error body (see #head), read as a JSON answer's error is; null when they are not one. */
  #bareError(): AttemptResult | null {
    const head = this.#head;
    this.#head = null;
    if (head === null || head.length === 0 || this.#headBytes >= HEAD_BYTES) return null;
    const text = Buffer.concat(head).toString('utf8');
    let json: unknown;
    try { json = JSON.parse(text); } catch { return null; }
    if (!isRecord(json) || !isErrorBody(json)) return null;
    const v = verdictForErrorEvent(this.#entry, this.#codec.upstream.decodeError(502, text), this.#redact);
    return this.#asResult(v, null, v.status);
  }

  #unusable(what: string): AttemptResult {
    return { kind: 'retry', error: new GatewayError('upstream_error', `${this.#entry.provider.name} sent ${what}`), retryAfterMs: null, status: this.#status, inPlace: true, unusable: true };
  }

  /** A whole JSON answer: relayed or translated; replayed as a stream when the client asked for one. */
  #relayJson(): AttemptResult {
    const r = this.#r;
    const entry = this.#entry;
    const codec = this.#codec;
    const text = Buffer.concat(this.#chunks, this.#bytes).toString('utf8');
    let json: unknown;
    try { json = JSON.parse(text); } catch { return this.#unusable('a malformed response'); }
    if (!isRecord(json)) return this.#unusable('a response the gateway cannot read');
    if (isErrorBody(json)) {
      const up = codec.upstream.decodeError(502, text);
      const v = verdictForErrorEvent(entry, up, this.#redact);
      return this.#asResult(v, null, v.status);
    }
    const client = clientCodecFor(r.clientFormat);
    let res;
    const relay = relayCodecFor(entry.provider, r.clientFormat);
    if (r.stream || !relay) {
      try { res = codec.upstream.decodeResponse(json); } catch { return this.#unusable('a response the gateway cannot read'); }
      if (noAnswer(res)) return this.#unusable('a response without an answer');
      res.id = r.id;
      res.model = entry.id;
      markResponse(res, answerSigner(codec, r, entry), r.clientFormat);
      restoreResponseNames(res, this.#toolNames);
    }
    const usageOf = (a: CanonicalResponse) => completedUsage(a.usage, () => this.#inputTokens(), () => contentChars(a.content));
    if (res && r.stream) {
      const encoder = client.newStreamEncoder({ includeUsage: r.includeUsage, request: r.body });
      let out = '';
      for (const ev of responseEvents(res)) out += encoder.encode(ev);
      out += encoder.end();
      this.#open();
      r.res.end(out);
      const observed: Observed = { usage: usageOf(res), finishReason: res.stop_reason, ...(encoder.result ? { result: encoder.result() } : {}) };
      return { kind: 'done', observed, ttftMs: this.#ttft, adjustments: this.#adjustments, status: 200, partial: false };
    }
    let out: unknown; let observed: Observed;
    if (!res) {
      // A failure the answer reports in its own shape (a failed Responses object): a failed attempt.
      const failed = relay!.answerError?.(json) ?? null;
      if (failed !== null) {
        const v = verdictForErrorEvent(entry, failed, this.#redact);
        return this.#asResult(v, null, v.status);
      }
      observed = relay!.rewriteResponse(json, { id: r.id, model: entry.id, request: r.body });
      // Relayed as it is; read by its own codec (once, and only when needed) for what the relay does not say.
      let read: CanonicalResponse | null | undefined;
      const answer = (): CanonicalResponse | null => (read === undefined ? (read = decodedAnswer(codec, json)) : read);
      // An answer without a stop reason (the upstream's format; a relay for another format, such as
      // the native Responses one, has its own shapes).
      if (observed.finishReason === null && entry.provider.format === r.clientFormat) {
        const a = answer();
        if (a !== null && noAnswer(a)) return this.#unusable('a response without an answer');
      }
      // An upstream that reports no usage is billed an estimate, not nothing.
      observed.usage = completedUsage(observed.usage, () => this.#inputTokens(), () => (relay!.outputChars ? relay!.outputChars(json) : contentChars(answer()?.content ?? [])));
      out = json;
    } else {
      out = client.encodeResponse(res, r.body);
      observed = { usage: usageOf(res), finishReason: res.stop_reason, result: out };
    }
    const ttft = performance.now() - r.startedAt;
    const body = JSON.stringify(out);
    sendJson(r.res, 200, body, this.#clientHeaders());
    return { kind: 'done', observed, ttftMs: ttft, adjustments: this.#adjustments, status: 200, responseText: body, partial: false };
  }

  /** A stream collected for a client that asked for one JSON answer. */
  #sendAnswer(relay: Relay): AttemptResult {
    const r = this.#r;
    const out = relay.answer!();
    const body = JSON.stringify(out);
    sendJson(r.res, 200, body, this.#clientHeaders());
    const c = this.#consumed();
    return { kind: 'done', observed: { ...c.observed, result: out }, ttftMs: performance.now() - r.startedAt, adjustments: this.#adjustments, status: 200, responseText: body, partial: c.partial };
  }
}
