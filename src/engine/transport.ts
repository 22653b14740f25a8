// The transport for routes whose bodies the gateway interprets: keep-alive undici Pools per upstream
// origin (the fastest client measured in bench/overhead), shared across config reloads. Requests go
// through `Pool.dispatch` with a handler of callbacks: no Readable stream, promise or async resource
// per response, which undici's `request()` would add (about a tenth of a request's CPU in profiles).
import { Pool, type Dispatcher } from 'undici';
import type { UpstreamSettings } from '../config/types.ts';

const pools = new Map<string, Pool>();

function poolFor(origin: string, s: UpstreamSettings): Pool {
  let p = pools.get(origin);
  if (!p) {
    p = new Pool(origin, {
      connections: s.connectionsPerOrigin,
      connect: { timeout: s.connectTimeoutMs },
      keepAliveTimeout: 30_000,
      pipelining: 1,
    });
    pools.set(origin, p);
  }
  return p;
}

export type UpstreamCall = {
  origin: string; path: string; method: 'POST' | 'GET'; headers: Record<string, string>; body: string | Buffer | null;
  signal: AbortSignal; settings: UpstreamSettings; firstByteTimeoutMs: number;
};

export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** Flow control handed to a sink: pause and resume the body, or abort the exchange. */
export type Flow = { pause(): void; resume(): void; abort(reason: Error): void };

/**
 * What receives one upstream response. Exactly one of `end` and `error` is called last; `error` also
 * covers connect failures, timeouts (connect, first byte = headers, idle between body chunks) and an
 * abort through the call's signal (its reason is the error).
 */
export type ResponseSink = {
  start(status: number, headers: ResponseHeaders, flow: Flow): void;
  data(chunk: Buffer): void;
  end(): void;
  error(err: Error): void;
};

/** Why an aborted signal stopped the exchange, always as an Error for the sink. */
const abortReason = (signal: AbortSignal): Error => (signal.reason instanceof Error ? signal.reason : new Error('aborted'));

class SinkHandler implements Dispatcher.DispatchHandler {
  readonly #sink: ResponseSink;
  readonly #signal: AbortSignal;
  #controller: Dispatcher.DispatchController | null = null;
  #flow: Flow | null = null;
  #done = false;
  readonly #onAbort = (): void => {
    if (this.#controller) this.#controller.abort(abortReason(this.#signal));
    else this.#fail(abortReason(this.#signal));
  };

  constructor(sink: ResponseSink, signal: AbortSignal) {
    this.#sink = sink;
    this.#signal = signal;
    signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  #finish(): void {
    this.#done = true;
    this.#signal.removeEventListener('abort', this.#onAbort);
  }

  #fail(err: Error): void {
    if (this.#done) return;
    this.#finish();
    this.#sink.error(err);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Aborted while queued in the pool: the abort listener already failed the sink.
    if (this.#done) { controller.abort(abortReason(this.#signal)); return; }
    this.#controller = controller;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    if (this.#done || statusCode < 200) return;
    this.#flow ??= { pause: () => controller.pause(), resume: () => controller.resume(), abort: (e) => controller.abort(e) };
    this.#sink.start(statusCode, headers, this.#flow);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#done) this.#sink.data(chunk);
  }

  onResponseEnd(): void {
    if (this.#done) return;
    this.#finish();
    this.#sink.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#fail(err);
  }
}

/** Sends one request and feeds its response to `sink` as it arrives. */
export function exchange(c: UpstreamCall, sink: ResponseSink): void {
  const handler = new SinkHandler(sink, c.signal);
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
  await Promise.allSettled(all.map((p) => p.close()));
}
