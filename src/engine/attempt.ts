// One attempt against one target: encode for its wire format, send, and either relay the answer to
// the client (committing at the first byte) or report a failure the dispatcher may fall back from.
import type { Dispatcher } from 'undici';
import type { ModelEntry } from '../config/types.ts';
import { mergeUsage, type StreamEvent, type Usage } from '../formats/canonical.ts';
import type { Codec, Observed } from '../formats/codec.ts';
import { codecFor } from '../formats/registry.ts';
import { createSseParser } from '../formats/sse.ts';
import { sendJson } from '../http/envelope.ts';
import { GatewayError } from '../http/errors.ts';
import type { InferenceRequest } from './context.ts';
import { send } from './transport.ts';
import { buildRequest } from './upstream.ts';
import { targetOf } from './convert-pool.ts';
import { encodeForTarget } from '../workers/convert-core.ts';

export type AttemptResult =
  | { kind: 'done'; observed: Observed; ttftMs: number | null; adjustments: string[]; status: number; responseText?: string }
  | { kind: 'retry'; error: GatewayError; retryAfterMs: number | null; status: number | null }
  | { kind: 'final'; error: GatewayError; status: number | null }
  | { kind: 'aborted'; status: number | null };

const RETRYABLE = (s: number): boolean => s === 408 || s === 409 || s === 429 || s >= 500;

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

function flatHeaders(h: Dispatcher.ResponseData['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function retryAfterMs(h: Dispatcher.ResponseData['headers']): number | null {
  const v = h['retry-after-ms'] ?? h['retry-after'];
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return null;
  if (h['retry-after-ms'] !== undefined) return Number(s);
  const secs = Number(s);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(s);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
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
  let resp: Dispatcher.ResponseData;
  try {
    resp = await send({ ...built, method: 'POST', signal: r.signal, settings, firstByteTimeoutMs: settings.firstByteTimeoutMs });
  } catch (e) { return transportError(e, r, 'connect'); }

  const status = resp.statusCode;
  if (status >= 400) {
    const text = await resp.body.text().catch(() => '');
    const up = codec.upstream.decodeError(status, text, flatHeaders(resp.headers));
    const ra = retryAfterMs(resp.headers);
    const err = new GatewayError(status === 429 ? 'rate_limited' : 'upstream_error', `${entry.provider.name}: ${up.message}`, {
      status: status >= 500 ? (status === 503 || status === 529 ? 503 : 502) : status, kind: up.kind,
      ...(ra !== null && status === 429 ? { headers: { 'retry-after': String(Math.ceil(ra / 1000)) } } : {}),
    });
    return RETRYABLE(status) ? { kind: 'retry', error: err, retryAfterMs: ra, status } : { kind: 'final', error: err, status };
  }
  const headers: Record<string, string> = { 'x-inference-id': r.id, 'x-gateway-provider': entry.provider.id };
  if (enc.adjustments.length > 0) headers['x-gateway-adjustments'] = enc.adjustments.join(', ');
  return r.stream ? relayStream(r, entry, codec, resp, headers, enc.adjustments)
    : relayJson(r, entry, codec, resp, headers, enc.adjustments);
}

async function relayJson(r: InferenceRequest, entry: ModelEntry, codec: Codec, resp: Dispatcher.ResponseData, headers: Record<string, string>, adjustments: string[]): Promise<AttemptResult> {
  let json: Record<string, unknown>;
  try { json = JSON.parse(await resp.body.text()) as Record<string, unknown>; } catch (e) {
    if (e instanceof SyntaxError) return { kind: 'retry', error: new GatewayError('upstream_error', `${entry.provider.name} sent a malformed response`), retryAfterMs: null, status: resp.statusCode };
    return transportError(e, r, 'body');
  }
  let out: unknown; let observed: Observed;
  if (entry.provider.format === r.clientFormat && codec.passthrough) {
    observed = codec.passthrough.rewriteResponse(json, { id: r.id, model: entry.id });
    out = json;
  } else {
    let res;
    try { res = codec.upstream.decodeResponse(json); } catch {
      return { kind: 'retry', error: new GatewayError('upstream_error', `${entry.provider.name} sent a response the gateway cannot read`), retryAfterMs: null, status: resp.statusCode };
    }
    res.id = r.id;
    res.model = entry.id;
    observed = { usage: res.usage, finishReason: res.stop_reason };
    out = codecFor(r.clientFormat).client!.encodeResponse(res);
  }
  const ttft = performance.now() - r.startedAt;
  const text = JSON.stringify(out);
  sendJson(r.res, 200, text, headers);
  return { kind: 'done', observed, ttftMs: ttft, adjustments, status: 200, responseText: text };
}

/**
 * Relays an upstream stream, event-driven (no async iterator, no promise per chunk). Nothing reaches
 * the client before the first upstream chunk, which must come within the first-byte budget: until then
 * a failure is still a retry. After it, failures end the client's stream with an error event.
 */
function relayStream(r: InferenceRequest, entry: ModelEntry, codec: Codec, resp: Dispatcher.ResponseData, headers: Record<string, string>, adjustments: string[]): Promise<AttemptResult> {
  const body = resp.body;
  const res = r.res;
  const relay = entry.provider.format === r.clientFormat && codec.passthrough
    ? passthroughRelay(codec, r, entry) : translateRelay(codec, r, entry);
  return new Promise<AttemptResult>((resolve) => {
    let started = false;
    let ttft = 0;
    let settled = false;
    const finish = (result: AttemptResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      body.off('data', onData); body.off('end', onEnd); body.off('error', onError); res.off('close', onClose);
      // A body destroyed later (client gone, abort) may still emit 'error': never leave it unhandled.
      body.on('error', () => {});
      resolve(result);
    };
    const timer = setTimeout(() => {
      body.destroy();
      finish(transportError(Object.assign(new Error('first byte timeout'), { code: 'FIRST_BYTE_TIMEOUT' }), r, 'first byte'));
    }, r.cfg.upstream.firstByteTimeoutMs);
    const onData = (chunk: Buffer): void => {
      if (!started) {
        started = true;
        clearTimeout(timer);
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
        ttft = performance.now() - r.startedAt;
      }
      const out = relay.push(chunk);
      if (out && !res.write(out)) { body.pause(); res.once('drain', () => body.resume()); }
    };
    const onEnd = (): void => {
      if (!started) {
        finish({ kind: 'retry', error: new GatewayError('upstream_error', `${entry.provider.name} closed the stream before sending anything`), retryAfterMs: null, status: resp.statusCode });
        return;
      }
      // The stream's last bytes go out with res.end(): one socket write fewer per stream.
      res.end(relay.end());
      finish({ kind: 'done', observed: relay.observed(), ttftMs: ttft, adjustments, status: 200 });
    };
    const onError = (e: Error): void => {
      if (r.clientGone()) { finish({ kind: 'aborted', status: 200 }); return; }
      if (!started) { finish(transportError(e, r, 'first byte')); return; }
      const timedOut = (e as { code?: string }).code === 'UND_ERR_BODY_TIMEOUT';
      const msg = timedOut ? 'upstream stream went idle past the idle timeout' : `upstream stream failed: ${e.message}`;
      const enc = codecFor(r.clientFormat).client!.newStreamEncoder({ includeUsage: r.includeUsage });
      res.end(enc.encode({ type: 'error', error: { type: timedOut ? 'timeout' : 'api_error', message: msg } }));
      finish({ kind: 'done', observed: relay.observed(), ttftMs: ttft, adjustments, status: 200 });
    };
    const onClose = (): void => {
      if (res.writableFinished) return;
      body.destroy();
      finish({ kind: 'aborted', status: started ? 200 : null });
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
    res.once('close', onClose);
  });
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
