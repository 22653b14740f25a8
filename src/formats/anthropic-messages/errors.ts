// Error mapping for the Anthropic Messages wire: `{type: "error", error: {type, message}}` bodies
// -> UpstreamError, and canonical kinds -> Anthropic error types for the client envelope.
import type { ErrorKind } from '../canonical.ts';
import type { UpstreamError } from '../codec.ts';
import { isRecord, kindFromStatus, parseErrorJson, plainErrorMessage } from '../errors.ts';

/** The `error.type` of an Anthropic-shaped error envelope for each canonical kind. */
export const ANTHROPIC_ERROR_TYPES = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  request_too_large: 'request_too_large',
  rate_limit: 'rate_limit_error',
  api_error: 'api_error',
  overloaded: 'overloaded_error',
  timeout: 'timeout_error',
  not_implemented: 'api_error',
} as const satisfies Record<ErrorKind, string>;

const KIND_BY_TYPE: Record<string, ErrorKind> = {
  invalid_request_error: 'invalid_request',
  authentication_error: 'authentication',
  permission_error: 'permission',
  not_found_error: 'not_found',
  request_too_large: 'request_too_large',
  rate_limit_error: 'rate_limit',
  api_error: 'api_error',
  overloaded_error: 'overloaded',
  timeout_error: 'timeout',
  billing_error: 'permission',
};

/** Anthropic error type -> kind; unknown types fall back to the status. */
export function kindFromAnthropicType(type: unknown, status: number): ErrorKind {
  return (typeof type === 'string' ? KIND_BY_TYPE[type] : undefined) ?? kindFromStatus(status);
}

export function decodeAnthropicError(status: number, bodyText: string): UpstreamError {
  const parsed = parseErrorJson(bodyText);
  if (parsed === undefined) return { kind: kindFromStatus(status), message: plainErrorMessage(status, bodyText) };
  const err = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : {};
  const message = typeof err.message === 'string' && err.message !== '' ? err.message : plainErrorMessage(status, bodyText);
  const out: UpstreamError = { kind: kindFromAnthropicType(err.type, status), message };
  if (typeof err.type === 'string') out.upstreamType = err.type;
  return out;
}
