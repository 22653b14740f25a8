// One attempt against one target: encode for its wire format, send, and either relay the answer to
// the client (committing at the first byte) or report a failure the dispatcher may fall back from.
import type { ModelEntry } from '../config/types.ts';
import { mergeUsage, type StreamEvent, type Usage } from '../formats/canonical.ts';
import type { Codec, Observed } from '../formats/codec.ts';
import { codecFor } from '../formats/registry.ts';
import { createSseParser } from '../formats/sse.ts';
import { sendJson } from '../http/envelope.ts';
import { GatewayError } from '../http/errors.ts';
import type { InferenceRequest } from './context.ts';
import { exchange, type Flow, type ResponseHeaders, type ResponseSink } from './transport.ts';
import { buildRequest } from './upstream.ts';
import { targetOf } from './convert-pool.ts';
import { encodeForTarget } from '../workers/convert-core.ts';

export type AttemptResult =
  | { kind: 'done'; observed: Observed; ttftMs: number | null; adjustments: string[]; status: number; responseText?: string }
  | { kind: 'retry'; error: GatewayError; retryAfterMs: number | null; status: number | null }
  | { kind: 'final'; error: GatewayError; status: number | null }
  | { kind: 'aborted'; status: number | null };

/** Upstream statuses worth another attempt (elsewhere, or in place after a wait). */
export const RETRYABLE = (s: number): boolean => s === 408 || s === 409 || s === 429 || s >= 500;

/**
 * Encodes the request for `entry`'s wire format (same format relays, else the codecs translate;
 * see src/workers/convert-core.ts). A body the worker pool prepared is encoded there, from bytes.
 */
async function encodeFor(r: InferenceRequest, entry: ModelEntry): Promise<{ path: string; body: string | Buffer; headers?: Record<string, string>; adjustments: string[] }> {
  const p = entry.provider;
  let enc: { path: string; body: string | Buffer; headers?: Record<string, string>; adjustments: string[] };
  if (r.prepared) enc = await r.prepared.encodeFor(entry);
  else {
    const canonical = { value: r.canonical };
    const e = encodeForTarget(r.clientFormat, r.body, canonical, targetOf(entry), p.mapping);
    r.canonical = canonical.value;
    enc = { ...e, body: JSON.stringify(e.body) };
  }
  let headers = enc.headers;
  for (const h of p.forwardHeaders) {
    const v = r.clientHeaders[h];
    if (v !== undefined) (headers = { ...headers })[h] = Array.isArray(v) ? v.join(',') : v;
  }
  return { path: enc.path, body: enc.body, ...(headers ? { headers } : {}), adjustments: enc.adjustments };
}

function flatHeaders(h: ResponseHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) { const v = h[k]; if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v; }
  return out;
}

export function retryAfterMs(h: ResponseHeaders): number | null {
  const v = h['retry-after-ms'] ?? h['retry-after'];
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return null;
  if (h['retry-after-ms'] !== undefined) return Number(s);
  const secs = Number(s);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(s);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}

/**
 * An upstream error answer as the client's error: the provider's message and kind, a 5xx as 502
 * (503 when overloaded), a 4xx with its own status, a 429 with its retry-after.
 */
export function upstreamHttpError(codec: Codec, entry: ModelEntry, status: number, bodyText: string, headers: ResponseHeaders, ra: number | null): GatewayError {
  const up = codec.upstream.decodeError(status, bodyText, flatHeaders(headers));
  return new GatewayError(status === 429 ? 'rate_limited' : 'upstream_error', `${entry.provider.name}: ${up.message}`, {
    status: status >= 500 ? (status === 503 || status === 529 ? 503 : 502) : status, kind: up.kind,
    ...(ra !== null && status === 429 ? { headers: { 'retry-after': String(Math.ceil(ra / 1000)) } } : {}),
  });
}

function transportError(e: unknown, r: InferenceRequest, phase: string): AttemptResult {
  if (r.clientGone()) return { kind: 'aborted', status: null };
  const code = (e as { code?: string }).code ?? '';
  const name = (e as Error).name;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || name === 'TimeoutError' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'FIRST_BYTE_TIMEOUT') {
    return { kind: 'retry', error: new GatewayError('upstream_timeout', `upstream timed out (${phase})`), retryAfterMs: null, status: null };
  }
  if (r.signal.aborted) return { kind: 'retry', error: new GatewayError('upstream_timeout', 'the request exceeded the total time limit'), retryAfterMs: null, status: null };
  return { kind: 'retry', error: new GatewayError('upstream_unavailable', `upstream unreachable (${phase}): ${code || (e as Error).message}`), retryAfterMs: null, status: null };
}

export async function runAttempt(r: InferenceRequest, entry: ModelEntry): Promise<AttemptResult> {
  const codec = codecFor(entry.provider.format);
  let enc;
  try { enc = await encodeFor(r, entry); } catch (e) {
    if (e instanceof GatewayError) return { kind: 'final', error: e, status: null };
    throw e;
  }
  const built = buildRequest(entry.provider, entry, enc.path, enc.body, enc.headers);
  const settings = r.cfg.upstream;
  return new Promise<AttemptResult>((resolve) => {
    exchange({ ...built, method: 'POST', signal: r.signal, settings, firstByteTimeoutMs: settings.firstByteTimeoutMs },
      new AttemptSink(r, entry, codec, enc.adjustments, resolve));
  });
}

const flushSink = (sink: AttemptSink): void => sink.flush();

const RESPONSE_HEADERS_SSE = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' };

/**
 * Receives one upstream response. An error status or a JSON answer is collected whole; a stream is
 * relayed chunk by chunk. Nothing reaches the client before the first upstream body chunk, which must
 * come within the first-byte budget: until then a failure is still a retry. After it, failures end
 * the client's stream with an error event.
 */
class AttemptSink implements ResponseSink {
  readonly #r: InferenceRequest;
  readonly #entry: ModelEntry;
  readonly #codec: Codec;
  readonly #adjustments: string[];
  readonly #resolve: (a: AttemptResult) => void;
  #settled = false;
  #status = 0;
  #headers: ResponseHeaders = {};
  #mode: 'error' | 'json' | 'stream' = 'json';
  #chunks: Buffer[] = [];
  #flow: Flow | null = null;
  #relay: Relay | null = null;
  #started = false;
  #ttft = 0;
  #timer: NodeJS.Timeout | null = null;
  #flushQueued = false;

  constructor(r: InferenceRequest, entry: ModelEntry, codec: Codec, adjustments: string[], resolve: (a: AttemptResult) => void) {
    this.#r = r; this.#entry = entry; this.#codec = codec; this.#adjustments = adjustments; this.#resolve = resolve;
  }

  #settle(a: AttemptResult): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#resolve(a);
  }

  #clientHeaders(): Record<string, string> {
    const h: Record<string, string> = { 'x-inference-id': this.#r.id, 'x-gateway-provider': this.#entry.provider.id };
    if (this.#adjustments.length > 0) h['x-gateway-adjustments'] = this.#adjustments.join(', ');
    return h;
  }

  start(status: number, headers: ResponseHeaders, flow: Flow): void {
    this.#status = status; this.#headers = headers; this.#flow = flow;
    if (status >= 400) { this.#mode = 'error'; return; }
    if (!this.#r.stream) return;
    this.#mode = 'stream';
    const r = this.#r;
    const entry = this.#entry;
    this.#relay = entry.provider.format === r.clientFormat && this.#codec.passthrough
      ? passthroughRelay(this.#codec, r, entry) : translateRelay(this.#codec, r, entry);
    this.#timer = setTimeout(() => {
      const err = Object.assign(new Error('first byte timeout'), { code: 'FIRST_BYTE_TIMEOUT' });
      this.#settle(transportError(err, r, 'first byte'));
      flow.abort(err);
    }, r.cfg.upstream.firstByteTimeoutMs);
  }

  data(chunk: Buffer): void {
    if (this.#settled) return;
    if (this.#mode !== 'stream') { this.#chunks.push(chunk); return; }
    const r = this.#r;
    const res = r.res;
    if (!this.#started) {
      this.#started = true;
      clearTimeout(this.#timer!);
      this.#timer = null;
      res.writeHead(200, { ...RESPONSE_HEADERS_SSE, ...this.#clientHeaders() });
      this.#ttft = performance.now() - r.startedAt;
    }
    // Chunks of one socket read (undici hands over each HTTP chunk, often ten per read) are relayed
    // together at the end of the tick: one parse call and one client write instead of one per chunk.
    this.#chunks.push(chunk);
    if (!this.#flushQueued) { this.#flushQueued = true; process.nextTick(flushSink, this); }
  }

  /** Relays the chunks received this tick (see data()). */
  flush(): void {
    this.#flushQueued = false;
    if (this.#settled) return;
    const out = this.#relayPending();
    const res = this.#r.res;
    if (out && !res.write(out)) {
      const flow = this.#flow!;
      flow.pause();
      res.once('drain', () => flow.resume());
    }
  }

  #relayPending(): string {
    return this.#chunks.length === 0 ? '' : this.#relay!.push(this.#takeChunks());
  }

  /** The body bytes received and not consumed yet, as one buffer. */
  #takeChunks(): Buffer {
    const c = this.#chunks;
    this.#chunks = [];
    return c.length === 1 ? c[0]! : Buffer.concat(c);
  }

  end(): void {
    if (this.#settled) return;
    if (this.#mode === 'error') { this.#settle(this.#upstreamError()); return; }
    if (this.#mode === 'json') { this.#settle(this.#relayJson()); return; }
    const entry = this.#entry;
    if (!this.#started) {
      this.#settle({ kind: 'retry', error: new GatewayError('upstream_error', `${entry.provider.name} closed the stream before sending anything`), retryAfterMs: null, status: this.#status });
      return;
    }
    // The stream's last bytes (and those of this tick not relayed yet) go out with res.end().
    this.#r.res.end(this.#relayPending() + this.#relay!.end());
    this.#settle({ kind: 'done', observed: this.#relay!.observed(), ttftMs: this.#ttft, adjustments: this.#adjustments, status: 200 });
  }

  error(e: Error): void {
    if (this.#settled) return;
    const r = this.#r;
    if (this.#mode !== 'stream' || !this.#started) {
      this.#settle(transportError(e, r, this.#status === 0 ? 'connect' : this.#mode === 'stream' ? 'first byte' : 'body'));
      return;
    }
    if (r.clientGone()) { this.#settle({ kind: 'aborted', status: 200 }); return; }
    const timedOut = (e as { code?: string }).code === 'UND_ERR_BODY_TIMEOUT';
    const msg = timedOut ? 'upstream stream went idle past the idle timeout' : `upstream stream failed: ${e.message}`;
    const enc = codecFor(r.clientFormat).client!.newStreamEncoder({ includeUsage: r.includeUsage });
    r.res.end(this.#relayPending() + enc.encode({ type: 'error', error: { type: timedOut ? 'timeout' : 'api_error', message: msg } }));
    this.#settle({ kind: 'done', observed: this.#relay!.observed(), ttftMs: this.#ttft, adjustments: this.#adjustments, status: 200 });
  }

  #upstreamError(): AttemptResult {
    const status = this.#status;
    const ra = retryAfterMs(this.#headers);
    const err = upstreamHttpError(this.#codec, this.#entry, status, this.#takeChunks().toString('utf8'), this.#headers, ra);
    return RETRYABLE(status) ? { kind: 'retry', error: err, retryAfterMs: ra, status } : { kind: 'final', error: err, status };
  }

  #relayJson(): AttemptResult {
    const r = this.#r;
    const entry = this.#entry;
    const codec = this.#codec;
    const unusable = (what: string): AttemptResult =>
      ({ kind: 'retry', error: new GatewayError('upstream_error', `${entry.provider.name} sent ${what}`), retryAfterMs: null, status: this.#status });
    let json: Record<string, unknown>;
    try { json = JSON.parse(this.#takeChunks().toString('utf8')) as Record<string, unknown>; } catch {
      return unusable('a malformed response');
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return unusable('a response the gateway cannot read');
    let out: unknown; let observed: Observed;
    if (entry.provider.format === r.clientFormat && codec.passthrough) {
      observed = codec.passthrough.rewriteResponse(json, { id: r.id, model: entry.id });
      out = json;
    } else {
      let res;
      try { res = codec.upstream.decodeResponse(json); } catch {
        return unusable('a response the gateway cannot read');
      }
      res.id = r.id;
      res.model = entry.id;
      observed = { usage: res.usage, finishReason: res.stop_reason };
      out = codecFor(r.clientFormat).client!.encodeResponse(res);
    }
    const ttft = performance.now() - r.startedAt;
    const text = JSON.stringify(out);
    sendJson(r.res, 200, text, this.#clientHeaders());
    return { kind: 'done', observed, ttftMs: ttft, adjustments: this.#adjustments, status: 200, responseText: text };
  }
}

type Relay = { push(chunk: Buffer): string; end(): string; observed(): Observed };

function passthroughRelay(codec: Codec, r: InferenceRequest, entry: ModelEntry): Relay {
  const parser = createSseParser();
  const s = codec.passthrough!.newStream({ id: r.id, model: entry.id, includeUsage: r.includeUsage });
  const run = (frames: ReturnType<typeof parser.push>): string => { let out = ''; for (const f of frames) out += s.frame(f); return out; };
  return { push: (c) => run(parser.push(c)), end: () => run(parser.end()) + s.end(), observed: () => s.observed() };
}

function translateRelay(codec: Codec, r: InferenceRequest, entry: ModelEntry): Relay {
  const decoder = codec.upstream.newStreamDecoder();
  const encoder = codecFor(r.clientFormat).client!.newStreamEncoder({ includeUsage: r.includeUsage });
  let usage: Usage | null = null;
  let finish: string | null = null;
  const run = (events: StreamEvent[]): string => {
    let out = '';
    for (const ev of events) {
      if (ev.type === 'message_start') { ev.id = r.id; ev.model = entry.id; usage = mergeUsage(usage, ev.usage); }
      else if (ev.type === 'message_delta') { usage = mergeUsage(usage, ev.usage); if (ev.stop_reason) finish = ev.stop_reason; }
      out += encoder.encode(ev);
    }
    return out;
  };
  return { push: (c) => run(decoder.push(c)), end: () => run(decoder.end()) + encoder.end(), observed: () => ({ usage, finishReason: finish }) };
}
