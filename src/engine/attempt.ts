// One attempt against one target: encode for its wire format, send, and either relay the answer to
// the client (committing at its first real content) or report a failure the dispatcher may fall back from.
import type { ModelEntry } from '../config/types.ts';
import type { Codec, Observed } from '../formats/codec.ts';
import { codecFor } from '../formats/registry.ts';
import { GatewayError } from '../gateway-error.ts';
import type { InferenceRequest } from './context.ts';
import { exchange, type ResponseHeaders } from './transport.ts';
import { buildRequest, relayedQuery, upstreamReady, withRelayedQuery } from './upstream.ts';
import { totalTimeout } from './upstream-error.ts';
import { targetOf } from './convert-pool.ts';
import { encodeForTarget } from '../workers/convert-core.ts';
import { AttemptSink } from './attempt-sink.ts';
import type { ToolNameMap } from '../formats/tool-names.ts';

export type AttemptResult =
  /** `partial`: the answer did not finish normally (cut, timed out, an error mid-stream); usage is then what it consumed. */
  | { kind: 'done'; observed: Observed; ttftMs: number | null; adjustments: string[]; status: number; responseText?: string; partial: boolean }
  /**
   * `inPlace`: the same target may be tried again (false when it refused the gateway's credentials).
   * `again`: a kept-alive connection the upstream had closed failed under the request (nothing was
   * processed): the same target is tried once more at once (upstream-error.ts, Verdict).
   * `unusable`: the provider answered 2xx with nothing a client can use (no answer, unreadable, cut
   * short before content): a provider-level failure like a 5xx, whatever the status says.
   */
  | { kind: 'retry'; error: GatewayError; retryAfterMs: number | null; status: number | null; inPlace: boolean; unusable?: true; again?: true }
  | { kind: 'final'; error: GatewayError; status: number | null }
  /**
   * The client hung up; `observed` is what a stream it had started consumed (null when nothing reached it),
   * `ttftMs` when its answer had begun.
   */
  | { kind: 'aborted'; status: number | null; observed: Observed | null; ttftMs?: number };

export { RETRYABLE, retryAfterMs } from './upstream-error.ts';
export type { ResponseHeaders };

/** One attempt's upstream request; `toolNames`: the tool names replaced for this target (src/formats/tool-names.ts). */
type Encoded = { path: string; body: string | Buffer; headers?: Record<string, string>; adjustments: string[]; toolNames?: ToolNameMap };

/**
 * Encodes the request for `entry`'s wire format (same format relays, else the codecs translate;
 * see src/workers/convert-core.ts). A body the worker pool prepared is encoded there, from bytes.
 */
async function encodeFor(r: InferenceRequest, entry: ModelEntry, maxOutputTokens?: number): Promise<Encoded> {
  const p = entry.provider;
  let enc: Encoded;
  if (r.prepared) enc = await r.prepared.encodeFor(entry);
  else {
    const canonical = { value: r.canonical };
    const e = encodeForTarget(r.clientFormat, r.body, canonical, targetOf(entry), p.mapping, maxOutputTokens);
    r.canonical = canonical.value;
    enc = { ...e, body: JSON.stringify(e.body) };
  }
  let headers = enc.headers;
  for (const h of p.forwardHeaders) {
    const v = r.clientHeaders[h];
    if (v !== undefined) (headers = { ...headers })[h] = Array.isArray(v) ? v.join(',') : v;
  }
  let { path, adjustments } = enc;
  if (r.clientQuery !== '') {
    // The client's query parameters the provider declares (forward_query); the rest are reported dropped.
    const q = relayedQuery(p, r.clientFormat, r.clientQuery);
    path = withRelayedQuery(path, q.query);
    if (q.dropped.length > 0) adjustments = [...adjustments, ...q.dropped];
  }
  return { path, body: enc.body, ...(headers ? { headers } : {}), adjustments, ...(enc.toolNames ? { toolNames: enc.toolNames } : {}) };
}

/**
 * Awaits what the provider's auth transform needs (AWS credentials on a cold start), bounded by the
 * request's own signal. null when ready; else the attempt's result: a failure to fall back from, the
 * total timeout, or the client gone.
 */
async function whenReady(wait: Promise<void>, r: InferenceRequest): Promise<AttemptResult | null> {
  try {
    await new Promise<void>((resolve, reject) => {
      if (r.signal.aborted) { reject(r.signal.reason); return; }
      const onAbort = (): void => reject(r.signal.reason);
      r.signal.addEventListener('abort', onAbort, { once: true });
      wait.then(resolve, reject).finally(() => r.signal.removeEventListener('abort', onAbort));
    });
    return null;
  } catch (e) {
    if (r.clientGone()) return { kind: 'aborted', status: null, observed: null };
    if (r.signal.aborted) return { kind: 'final', error: totalTimeout(), status: null };
    const error = e instanceof GatewayError ? e : new GatewayError('upstream_error', `the provider's credentials could not be loaded: ${(e as Error)?.message ?? e}`);
    // Not retried on the same target (its credentials are missing, not flaky): the next target is tried.
    return { kind: 'retry', error, retryAfterMs: null, status: null, inPlace: false };
  }
}

/** `maxOutputTokens` caps the upstream output limit of this attempt (router max_cost). */
export async function runAttempt(r: InferenceRequest, entry: ModelEntry, maxOutputTokens?: number): Promise<AttemptResult> {
  const wait = upstreamReady(entry.provider);
  if (wait !== null) {
    const failed = await whenReady(wait, r);
    if (failed) return failed;
  }
  const codec: Codec = codecFor(entry.provider.format);
  let enc;
  try { enc = await encodeFor(r, entry, maxOutputTokens); } catch (e) {
    if (e instanceof GatewayError) return { kind: 'final', error: e, status: null };
    throw e;
  }
  const built = buildRequest(entry.provider, entry, enc.path, enc.body, enc.headers);
  const settings = r.cfg.upstream;
  return new Promise<AttemptResult>((resolve) => {
    exchange({ ...built, method: 'POST', signal: r.signal, settings, firstByteTimeoutMs: settings.firstByteTimeoutMs },
      new AttemptSink(r, entry, codec, enc, resolve));
  });
}
