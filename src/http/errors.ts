// The one error path: every failure is a GatewayError with a stable code and an HTTP status,
// rendered once per endpoint in that endpoint's envelope (see docs/errors.md for the code list).
import type { ErrorKind } from '../formats/canonical.ts';

export const ERROR_CODES = {
  invalid_json: { status: 400, kind: 'invalid_request' },
  invalid_body: { status: 400, kind: 'invalid_request' },
  invalid_parameter: { status: 400, kind: 'invalid_request' },
  missing_parameter: { status: 400, kind: 'invalid_request' },
  unsupported_parameter: { status: 400, kind: 'invalid_request' },
  json_too_deep: { status: 400, kind: 'invalid_request' },
  model_prefix_required: { status: 400, kind: 'invalid_request' },
  model_not_found: { status: 404, kind: 'not_found' },
  route_not_found: { status: 404, kind: 'not_found' },
  method_not_allowed: { status: 405, kind: 'invalid_request' },
  unsupported_media_type: { status: 415, kind: 'invalid_request' },
  body_too_large: { status: 413, kind: 'request_too_large' },
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
  internal_error: { status: 500, kind: 'api_error' },
} as const satisfies Record<string, { status: number; kind: ErrorKind }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly kind: ErrorKind;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  /** `status` overrides the code's default (used to relay an upstream 4xx status as is). */
  constructor(code: ErrorCode, message: string, opts: { param?: string | null; status?: number; headers?: Record<string, string>; kind?: ErrorKind } = {}) {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
    this.status = opts.status ?? ERROR_CODES[code].status;
    this.kind = opts.kind ?? ERROR_CODES[code].kind;
    this.param = opts.param ?? null;
    this.headers = opts.headers ?? {};
  }
}

export const invalidParam = (param: string, message: string): GatewayError =>
  new GatewayError('invalid_parameter', message, { param });
