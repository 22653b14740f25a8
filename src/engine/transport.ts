// The transport for routes whose bodies the gateway interprets: keep-alive undici Pools per upstream
// origin (the fastest client measured in bench/overhead), shared across config reloads. Requests go
// through `Pool.dispatch` with a handler of callbacks: no Readable stream, promise or async resource
// per response, which undici's `request()` would add (about a tenth of a request's CPU in profiles).
import type { Socket } from 'node:net';
import { buildConnector, Pool, type Dispatcher } from 'undici';
import { dropInterimContinue } from './interim-continue.ts';
import { expectHead, newWire, recordWire, type Wire } from './wire.ts';
import type { UpstreamSettings } from '../config/types.ts';
import { bodyDecoder, contentCodings, type BodyDecoder } from './content-coding.ts';
import type { Coding } from '../util/content-codings.ts';
import { BodyText, utf8ContentType } from './charset.ts';

/** One pool per upstream origin, built with the connection settings it was made for. */
const pools = new Map<string, { pool: Pool; settings: string }>();

const settingsKey = (s: UpstreamSettings): string => `${s.connectionsPerOrigin}/${s.connectTimeoutMs}`;

/**
 * undici's own connector, each socket it opens made to drop interim 100s (interim-continue.ts) and to
 * record what reached the upstream for each request (wire.ts; applied last, so it sees bytes first).
 */
function upstreamConnector(timeoutMs: number): buildConnector.connector {
  const base = buildConnector({ timeout: timeoutMs });
  return (opts, callback) => base(opts, (err, socket) => {
    if (socket) { dropInterimContinue(socket as Socket); recordWire(socket as Socket); }
    (callback as (e: Error | null, s: typeof socket) => void)(err, socket);
  });
}

/** Closes a pool once its requests in flight are done (undici's close waits for them). */
const retire = (p: Pool): void => { p.close().catch(() => {}); };

function poolFor(origin: string, s: UpstreamSettings): Pool {
  const key = settingsKey(s);
  const have = pools.get(origin);
  if (have && have.settings === key) return have.pool;
  // New origin, or its connection settings changed on reload: new requests get a pool built with the
  // new settings; the old one finishes what it carries, then closes.
  if (have) retire(have.pool);
  const pool = new Pool(origin, {
    connections: s.connectionsPerOrigin,
    connect: upstreamConnector(s.connectTimeoutMs),
    keepAliveTimeout: 30_000,
    pipelining: 1,
  });
  pools.set(origin, { pool, settings: key });
  return pool;
}

/**
 * After a reload: pools of origins no provider uses any more are closed (their requests in flight
 * finish first), so removed providers leave no sockets or memory behind.
 */
export function retainTransports(origins: ReadonlySet<string>): void {
  for (const [origin, { pool }] of pools) {
    if (origins.has(origin)) continue;
    pools.delete(origin);
    retire(pool);
  }
}

/** The pools in use: origin and the connection settings (`connections/connect timeout`) each was built with. */
export const transportPools = (): Array<{ origin: string; settings: string }> => [...pools].map(([origin, p]) => ({ origin, settings: p.settings }));

export type UpstreamCall = {
  origin: string; path: string; method: 'POST' | 'GET'; headers: Record<string, string>; body: string | Buffer | null;
  signal: AbortSignal; settings: UpstreamSettings; firstByteTimeoutMs: number;
};

export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** Flow control handed to a sink: pause and resume the body, or abort the exchange. */
export type Flow = { pause(): void; resume(): void; abort(reason: Error): void };

/**
 * What receives one upstream response. Exactly one of `end` and `error` is called last; `error` also
 * covers connect failures, timeouts (connect, first byte = headers, idle between body chunks), a body
 * whose content encoding cannot be undone (a ContentCodingError) and an abort through the call's
 * signal (its reason is the error). The body arrives decoded: the headers have no content-encoding
 * or content-length when it was encoded. A text body arrives as UTF-8 whatever charset it was in
 * (src/engine/charset.ts): one declared in another charset has its content-type say utf-8 and no
 * content-length; a byte order mark is dropped.
 */
export type ResponseSink = {
  start(status: number, headers: ResponseHeaders, flow: Flow): void;
  data(chunk: Buffer): void;
  end(): void;
  /** `wire`: what reached the upstream (src/engine/wire.ts), to tell a failure before any answer by it. */
  error(err: Error, wire: Readonly<Wire>): void;
};

/** Why an aborted signal stopped the exchange, always as an Error for the sink. */
const abortReason = (signal: AbortSignal): Error => (signal.reason instanceof Error ? signal.reason : new Error('aborted'));

/**
 * Adapts undici's handler callbacks to a sink. Every call into the sink is guarded: a sink that throws
 * (a codec meeting bytes it cannot handle) gets its error() with what it threw and the exchange is
 * aborted, so an exception can neither escape into undici (which would swallow it, leaving the
 * request hanging) nor be thrown from a socket callback (which would end the process).
 */
class SinkHandler implements Dispatcher.DispatchHandler {
  readonly #sink: ResponseSink;
  readonly #signal: AbortSignal;
  #controller: Dispatcher.DispatchController | null = null;
  #flow: Flow | null = null;
  /** Undoes the body's content encoding, when it has one (src/engine/content-coding.ts). */
  #decoder: BodyDecoder | null = null;
  /** The body's text as UTF-8 (src/engine/charset.ts), after the decoder; null before the headers. */
  #text: BodyText | null = null;
  readonly #origin: string;
  /** What reached the upstream: the request written whole, on a reused connection, answer bytes read. */
  readonly #wire: Wire = newWire();
  #done = false;
  readonly #onAbort = (): void => {
    if (this.#controller) this.#controller.abort(abortReason(this.#signal));
    else this.#fail(abortReason(this.#signal));
  };

  constructor(sink: ResponseSink, signal: AbortSignal, origin: string) {
    this.#sink = sink;
    this.#origin = origin;
    this.#signal = signal;
    signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  #finish(): void {
    this.#done = true;
    this.#signal.removeEventListener('abort', this.#onAbort);
    this.#decoder?.destroy();
  }

  #fail(err: Error): void {
    if (this.#done) return;
    this.#finish();
    try { this.#sink.error(err, this.#wire); } catch (e) { console.error('upstream response sink failed in error():', e); }
  }

  /** The sink threw: stop the exchange and tell the sink, once. */
  #threw(e: unknown): void {
    const err = e instanceof Error ? e : new Error(String(e));
    try { this.#controller?.abort(err); } catch { /* already finished */ }
    this.#fail(err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Aborted while queued in the pool: the abort listener already failed the sink.
    if (this.#done) { controller.abort(abortReason(this.#signal)); return; }
    this.#controller = controller;
    // Its head is written next, in this same step (src/engine/wire.ts).
    expectHead(this.#wire);
  }

  /** The whole request (head and body) was handed to the socket. */
  onRequestSent(): void { this.#wire.written = true; }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    if (this.#done || statusCode < 200) return;
    // Pausing holds the decoder too: one compressed chunk can decode to megabytes the client is not reading.
    this.#flow ??= {
      pause: () => { controller.pause(); this.#decoder?.pause(); },
      resume: () => { controller.resume(); this.#decoder?.resume(); },
      abort: (e) => controller.abort(e),
    };
    let codings: Coding[];
    try { codings = contentCodings(headers['content-encoding']); } catch (e) {
      // An encoding the gateway cannot undo: the sink learns the status, then that the body is unreadable.
      try { this.#sink.start(statusCode, headers, this.#flow); } catch { /* failing anyway */ }
      this.#threw(e);
      return;
    }
    if (codings.length > 0) {
      this.#decoder = bodyDecoder(codings, { data: (c) => this.#data(c), end: () => this.#end(), error: (e) => this.#threw(e) });
      const { 'content-encoding': _, 'content-length': __, ...plain } = headers;
      headers = plain;
    }
    const ct = headers['content-type'];
    this.#text = new BodyText(ct, this.#origin);
    if (this.#text.declared) {
      const { 'content-length': _, ...recoded } = headers;
      headers = { ...recoded, 'content-type': utf8ContentType(String(ct)) };
    }
    try { this.#sink.start(statusCode, headers, this.#flow); } catch (e) { this.#threw(e); }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#done) return;
    if (this.#decoder) this.#decoder.write(chunk); else this.#data(chunk);
  }

  #data(chunk: Buffer): void {
    if (this.#done) return;
    if (this.#text !== null) { chunk = this.#text.push(chunk); if (chunk.length === 0) return; }
    try { this.#sink.data(chunk); } catch (e) { this.#threw(e); }
  }

  onResponseEnd(): void {
    if (this.#done) return;
    if (this.#decoder) this.#decoder.end(); else this.#end();
  }

  #end(): void {
    if (this.#done) return;
    if (this.#text !== null) {
      // What the recoder still held.
      const rest = this.#text.end();
      this.#text = null;
      if (rest.length > 0) { try { this.#sink.data(rest); } catch (e) { this.#threw(e); return; } }
      if (this.#done) return;
    }
    this.#finish();
    try { this.#sink.end(); } catch (e) {
      try { this.#sink.error(e instanceof Error ? e : new Error(String(e)), this.#wire); } catch (e2) { console.error('upstream response sink failed in error():', e2); }
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#fail(err);
  }
}

/** Sends one request and feeds its response to `sink` as it arrives. */
export function exchange(c: UpstreamCall, sink: ResponseSink): void {
  const handler = new SinkHandler(sink, c.signal, c.origin);
  if (c.signal.aborted) { handler.onResponseError(null as never, abortReason(c.signal)); return; }
  poolFor(c.origin, c.settings).dispatch({
    origin: c.origin,
    path: c.path,
    method: c.method,
    headers: c.headers,
    body: c.body,
    headersTimeout: c.firstByteTimeoutMs,
    bodyTimeout: c.settings.idleTimeoutMs,
  }, handler);
}

export async function closeTransports(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.allSettled(all.map((p) => p.pool.close()));
}
