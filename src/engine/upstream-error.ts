// What an upstream failure means for the client and for the dispatcher: the GatewayError to answer
// (status, kind, redacted message) and whether another attempt may help. One mapping serves error
// statuses, error events sent in place of content, transport failures and timeouts.
import type { ModelEntry } from '../config/types.ts';
import type { Codec, UpstreamError } from '../formats/codec.ts';
import type { ErrorKind } from '../formats/canonical.ts';
import { GatewayError } from '../gateway-error.ts';
import type { ResponseHeaders } from './transport.ts';

/** Upstream statuses worth another attempt (elsewhere, or in place after a wait). */
export const RETRYABLE = (s: number): boolean => s === 408 || s === 409 || s === 429 || s >= 500;

/** The upstream refused the gateway's own credentials: the operator's problem, never the client's. */
export const CREDENTIALS_REFUSED = (s: number): boolean => s === 401 || s === 403;

/** The longest wait an upstream's retry-after is taken at (a larger one is no wait anybody means: 1e300, "0x10" read as hex). */
const MAX_RETRY_AFTER_MS = 1e12;
/** Digits, with a fraction (seconds in retry-after: HTTP has whole ones, servers send "0.3" too). */
const NUMBER = /^\s*\d+(?:\.\d+)?\s*$/;

/**
 * An upstream's wait in ms: `retry-after-ms` (a number), or `retry-after` as HTTP has it (seconds as
 * digits, a fraction allowed, or an HTTP date). Anything else is no wait (null), so it is neither
 * waited for nor passed on to the client as a header no client reads (`retry-after: 1e+300` before).
 */
export function retryAfterMs(h: ResponseHeaders): number | null {
  const v = h['retry-after-ms'] ?? h['retry-after'];
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return null;
  let ms: number;
  if (h['retry-after-ms'] !== undefined) ms = NUMBER.test(s) ? Number(s) : NaN;
  else if (NUMBER.test(s)) ms = Number(s) * 1000;
  // A date names its day or month (V8 reads "1.5" or "-5" as dates in 2001).
  else if (/[A-Za-z]{3}/.test(s)) { const at = Date.parse(s); ms = Number.isFinite(at) ? Math.max(0, at - Date.now()) : NaN; } else ms = NaN;
  return Number.isFinite(ms) && ms <= MAX_RETRY_AFTER_MS ? ms : null;
}

function flatHeaders(h: ResponseHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) { const v = h[k]; if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v; }
  return out;
}

/**
 * What the dispatcher does with a failed attempt: try again (elsewhere or in place), or answer it.
 * `again`: nothing reached the upstream's application (a kept-alive connection it had closed), so the
 * same target is tried once more at once, before any fallback, and the provider is not blamed.
 */
export type Verdict = { error: GatewayError; retry: boolean; inPlace: boolean; again?: true };

/**
 * An upstream error answer as the client's error: the provider's message (redacted) and kind, a 5xx
 * as 502 (503 when overloaded), a 4xx with its own status, a 429 with its retry-after. A 401/403 (or
 * an error of kind authentication/permission, such as a billing error) is the gateway's credentials
 * failing at the provider: a 502, never the client's own 401, worth trying the next target but not
 * the same one again.
 */
export function upstreamFailure(codec: Codec, entry: ModelEntry, status: number, bodyText: string, headers: ResponseHeaders, ra: number | null, redact: (s: string) => string): Verdict {
  if (status < 400) return redirectVerdict(entry, status, headers.location);
  return verdictFor(entry, status, codec.upstream.decodeError(status, bodyText, flatHeaders(headers)), ra, redact);
}

function verdictFor(entry: ModelEntry, status: number, up: UpstreamError, ra: number | null, redact: (s: string) => string): Verdict {
  const name = entry.provider.name;
  if (CREDENTIALS_REFUSED(status) || up.kind === 'authentication' || up.kind === 'permission') {
    const error = new GatewayError('upstream_error', `${name} refused the gateway's credentials (HTTP ${status}; the operator's configuration): ${redact(up.message)}`, { status: 502, kind: 'api_error' });
    return { error, retry: true, inPlace: false };
  }
  const error = new GatewayError(status === 429 ? 'rate_limited' : 'upstream_error', `${name}: ${redact(up.message)}`, {
    status: status >= 500 ? (status === 503 || status === 529 ? 503 : 502) : status, kind: up.kind,
    ...(ra !== null && status === 429 ? { headers: { 'retry-after': String(Math.ceil(ra / 1000)) } } : {}),
  });
  return { error, retry: RETRYABLE(status), inPlace: true };
}

/**
 * A redirect (3xx) is no answer: the gateway follows none, since the provider's key belongs to its
 * configured base URL only, and a moved endpoint is the operator's to configure. A 502 naming where
 * it pointed (the origin only: a path or query may hold a signed token), worth the next target.
 */
function redirectVerdict(entry: ModelEntry, status: number, location: string | string[] | undefined): Verdict {
  const to = Array.isArray(location) ? location[0] : location;
  let where = '';
  try { if (to) where = ` to ${new URL(to, entry.provider.origin).origin}`; } catch { /* an unreadable location names nothing */ }
  const error = new GatewayError('upstream_error', `${entry.provider.name} answered HTTP ${status}, a redirect${where} the gateway does not follow (check the provider's base_url)`, { status: 502, kind: 'api_error' });
  return { error, retry: true, inPlace: false };
}

/** The HTTP status an error event stands for, so a 200 that opens with an error is treated like that status. */
const STATUS_OF_KIND: Record<ErrorKind, number> = {
  invalid_request: 400, authentication: 401, permission: 403, not_found: 404, request_too_large: 413,
  rate_limit: 429, api_error: 500, overloaded: 529, timeout: 504, not_implemented: 501,
};

/**
 * An error the upstream sent as its first event, in place of content (Anthropic `overloaded_error`,
 * a Bedrock exception frame, an OpenAI-compatible error chunk): as if it had answered that status.
 */
export function verdictForErrorEvent(entry: ModelEntry, up: UpstreamError, redact: (s: string) => string): Verdict & { status: number } {
  const status = STATUS_OF_KIND[up.kind];
  return { ...verdictFor(entry, status, up, null, redact), status };
}

/** The request's total time limit passed (not the client hanging up): a 504, never retried. */
export const totalTimeout = (): GatewayError => new GatewayError('upstream_timeout', 'the request exceeded the total time limit (upstream.total_timeout_ms)');

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'FIRST_BYTE_TIMEOUT']);

/**
 * What reached the upstream before a failure without any answer: `nothing` (the connect failed, or the
 * request was not written whole), `stale` (written on a kept-alive connection the server had closed
 * while idle: reset or closed before any byte came back, so nothing was processed; HTTP clients send
 * those again), `sent` (written whole and left unanswered: reset, closed, bytes that are no HTTP, no
 * status in time; the provider may have processed it and will bill it).
 */
export type Reach = 'nothing' | 'stale' | 'sent';

/** A connection reset or closed by the other side (undici: `other side closed`; node:http: `socket hang up`). */
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/** Reach from what the connection saw: the request written whole, on a reused connection, any answer byte read. */
export function reachOf(e: unknown, w: { written: boolean; reused: boolean; received: boolean }): Reach {
  if (!w.written) return 'nothing';
  const code = (e as { code?: string }).code ?? '';
  return w.reused && !w.received && CLOSED_CODES.has(code) ? 'stale' : 'sent';
}

/**
 * A transport failure (connect, reset, timeout) before the client got a byte. `reach` says what reached
 * the upstream before an answer's status (`nothing` when one came: the phase names the failure then).
 * Only a request that cannot have been processed is sent to the same target again: one `sent` and
 * left unanswered moves to the next target (a fallback) and is never resent to this one, since every
 * upstream call is a POST (not idempotent: a chat request processed twice is billed twice).
 */
export function transportVerdict(e: unknown, phase: string, redact: (s: string) => string, reach: Reach = 'nothing'): Verdict {
  const code = (e as { code?: string }).code ?? '';
  const name = (e as Error).name;
  // A body whose content encoding cannot be undone (src/engine/content-coding.ts): the server answered, unreadably.
  if (code === 'UPSTREAM_CONTENT_CODING') {
    return { error: new GatewayError('upstream_error', redact((e as Error).message)), retry: true, inPlace: false };
  }
  const what = redact(code || (e as Error).message);
  if (reach === 'sent') {
    const timedOut = TIMEOUT_CODES.has(code) || name === 'TimeoutError';
    const error = timedOut
      ? new GatewayError('upstream_timeout', 'upstream timed out (sent, no answer: the request was sent and no status came in time; not sent to this target again)')
      : new GatewayError('upstream_unavailable', `upstream failed after the request was sent (sent, no answer; not sent to this target again): ${what}`);
    return { error, retry: true, inPlace: false };
  }
  if (reach === 'stale') {
    return { error: new GatewayError('upstream_unavailable', `upstream closed a kept-alive connection while idle, as the request was written (nothing processed; sent again): ${what}`), retry: true, inPlace: true, again: true };
  }
  if (TIMEOUT_CODES.has(code) || name === 'TimeoutError') {
    return { error: new GatewayError('upstream_timeout', `upstream timed out (${phase})`), retry: true, inPlace: true };
  }
  return { error: new GatewayError('upstream_unavailable', `upstream unreachable (${phase}): ${what}`), retry: true, inPlace: true };
}
