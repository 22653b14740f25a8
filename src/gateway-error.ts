// The one error type: every failure is a GatewayError with a stable code and an HTTP status. A leaf
// module (it imports nothing) that every layer may use; only src/http/envelope.ts renders it into an
// endpoint's envelope (see docs/errors.md for the code list).

/** Error categories shared by every format; each client format renders them in its own envelope. */
export type ErrorKind =
  | 'invalid_request' | 'authentication' | 'permission' | 'not_found' | 'request_too_large'
  | 'rate_limit' | 'api_error' | 'overloaded' | 'timeout' | 'not_implemented';

export const ERROR_CODES = {
  bad_request: { status: 400, kind: 'invalid_request' },
  invalid_json: { status: 400, kind: 'invalid_request' },
  invalid_body: { status: 400, kind: 'invalid_request' },
  invalid_parameter: { status: 400, kind: 'invalid_request' },
  missing_parameter: { status: 400, kind: 'invalid_request' },
  unsupported_parameter: { status: 400, kind: 'invalid_request' },
  json_too_deep: { status: 400, kind: 'invalid_request' },
  model_prefix_required: { status: 400, kind: 'invalid_request' },
  model_not_found: { status: 404, kind: 'not_found' },
  response_not_found: { status: 404, kind: 'not_found' },
  previous_response_not_found: { status: 400, kind: 'invalid_request' },
  storage_unavailable: { status: 503, kind: 'overloaded' },
  model_retired: { status: 404, kind: 'not_found' },
  model_unpriced: { status: 400, kind: 'invalid_request' },
  route_not_found: { status: 404, kind: 'not_found' },
  method_not_allowed: { status: 405, kind: 'invalid_request' },
  unsupported_media_type: { status: 415, kind: 'invalid_request' },
  expectation_failed: { status: 417, kind: 'invalid_request' },
  body_too_large: { status: 413, kind: 'request_too_large' },
  client_disconnected: { status: 499, kind: 'invalid_request' },
  request_timeout: { status: 408, kind: 'invalid_request' },
  missing_api_key: { status: 401, kind: 'authentication' },
  invalid_api_key: { status: 401, kind: 'authentication' },
  model_not_allowed: { status: 403, kind: 'permission' },
  rate_limited: { status: 429, kind: 'rate_limit' },
  budget_exceeded: { status: 402, kind: 'rate_limit' },
  upstream_error: { status: 502, kind: 'api_error' },
  upstream_timeout: { status: 504, kind: 'timeout' },
  upstream_unavailable: { status: 503, kind: 'overloaded' },
  no_route: { status: 400, kind: 'invalid_request' },
  not_implemented: { status: 501, kind: 'not_implemented' },
  shutting_down: { status: 503, kind: 'overloaded' },
  not_ready: { status: 503, kind: 'overloaded' },
  internal_error: { status: 500, kind: 'api_error' },
  session_required: { status: 401, kind: 'authentication' },
  invalid_credentials: { status: 401, kind: 'authentication' },
  forbidden: { status: 403, kind: 'permission' },
  csrf_failed: { status: 403, kind: 'permission' },
  resource_not_found: { status: 404, kind: 'not_found' },
  conflict: { status: 409, kind: 'invalid_request' },
  too_many_attempts: { status: 429, kind: 'rate_limit' },
} as const satisfies Record<string, { status: number; kind: ErrorKind }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * How much of a value an error message quotes: a client may send a 100 KB model name, parameter name or
 * path, and every message that names it would echo it whole (into the answer, the log, the record).
 */
export const QUOTED_CHARS = 200;
/** The longest message kept, whatever it holds (a value with spaces is not one run of characters). */
export const MESSAGE_CHARS = 4096;

/** `text` when it has at most `max` characters, else its first `max` with an ellipsis and its length. */
export function bounded(text: string, max = QUOTED_CHARS): string {
  return text.length <= max ? text : `${head(text, max)}… (${text.length} characters)`;
}

/** A value quoted for a message (JSON string syntax), shortened like boundedMessage does: `"abc…" (1000 characters)`. */
export function quoted(value: string, max = QUOTED_CHARS): string {
  return value.length <= max ? JSON.stringify(value) : `${JSON.stringify(`${head(value, max)}…`)} (${value.length} characters)`;
}

/** The first `max` characters, never half of a surrogate pair. */
function head(text: string, max: number): string {
  const c = text.charCodeAt(max - 1);
  return text.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
}

/** A run of characters without a space longer than QUOTED_CHARS: how a long value shows in a message. */
const LONG_RUN = new RegExp(`\\S{${QUOTED_CHARS + 1},}`, 'g');
/** Quotes or brackets around a value, and the punctuation after it, kept around the shortened one. */
const OPENING = /^["'`([{<]{0,2}/;
const CLOSING = /["'`)\]}>]{0,2}$/;
const PUNCTUATION = /[:;,.!?]{0,2}$/;

/**
 * A message with every long value in it shortened, as `"<first 200 characters>…" (100000 characters)`
 * (quotes and brackets around the value and the punctuation after it stay where they were):
 * every GatewayError's message goes through here, so no call site has to remember to cut what it quotes.
 * Values are runs without spaces (model names, ids, parameter names, enum values, paths); the whole
 * message is bounded too, for a value that holds spaces.
 */
export function boundedMessage(message: string): string {
  if (message.length <= QUOTED_CHARS) return message;
  const out = message.replace(LONG_RUN, (run) => {
    const open = OPENING.exec(run)![0];
    const punct = PUNCTUATION.exec(run)![0];
    const close = CLOSING.exec(run.slice(open.length, run.length - punct.length))![0];
    const value = run.slice(open.length, run.length - punct.length - close.length);
    return value.length <= QUOTED_CHARS ? run : `${open}${head(value, QUOTED_CHARS)}…${close} (${value.length} characters)${punct}`;
  });
  return bounded(out, MESSAGE_CHARS);
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly kind: ErrorKind;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  /**
   * `status` overrides the code's default (used to relay an upstream 4xx status as is). The message and
   * param are bounded here (boundedMessage): they often quote what the client sent.
   */
  constructor(code: ErrorCode, message: string, opts: { param?: string | null; status?: number; headers?: Record<string, string>; kind?: ErrorKind } = {}) {
    super(boundedMessage(message));
    this.name = 'GatewayError';
    this.code = code;
    this.status = opts.status ?? ERROR_CODES[code].status;
    this.kind = opts.kind ?? ERROR_CODES[code].kind;
    this.param = opts.param == null ? null : bounded(opts.param);
    this.headers = opts.headers ?? {};
  }
}

export const invalidParam = (param: string, message: string): GatewayError =>
  new GatewayError('invalid_parameter', message, { param });
