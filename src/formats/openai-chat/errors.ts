// Error mapping for the OpenAI chat-completions wire: upstream error bodies -> UpstreamError, and
// canonical error kinds -> the `type` string OpenAI clients expect in an error envelope.
import type { ErrorKind } from '../canonical.ts';
import type { UpstreamError } from '../codec.ts';

/** HTTP status -> error kind; the fallback for every format when the body says nothing usable. */
export function kindFromStatus(status: number): ErrorKind {
  if (status === 401) return 'authentication';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 503 || status === 529) return 'overloaded';
  if (status === 501) return 'not_implemented';
  if (status >= 500) return 'api_error';
  return 'invalid_request';
}

/** A readable message from a body that is not the JSON we expected (HTML error pages, proxies). */
export function plainErrorMessage(status: number, bodyText: string): string {
  const text = bodyText.trim().replace(/\s+/g, ' ');
  return text === '' ? `upstream returned HTTP ${status}` : text.slice(0, 500);
}

/**
 * Decodes `{error: {message, type, param, code}}`. OpenAI's `type` values are not a closed set,
 * so the kind comes from the status, which OpenAI and its imitators set consistently.
 */
export function decodeOpenAIError(status: number, bodyText: string): UpstreamError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return { kind: kindFromStatus(status), message: plainErrorMessage(status, bodyText) };
  }
  // Some compatible servers wrap the error in an array or send a bare `{message}`.
  const root = Array.isArray(parsed) ? parsed[0] : parsed;
  const err = isRecord(root) && isRecord(root.error) ? root.error : isRecord(root) ? root : {};
  const message = typeof err.message === 'string' && err.message !== '' ? err.message : plainErrorMessage(status, bodyText);
  const out: UpstreamError = { kind: kindFromStatus(status), message };
  const upstreamType = typeof err.type === 'string' ? err.type : typeof err.code === 'string' ? err.code : undefined;
  if (upstreamType !== undefined) out.upstreamType = upstreamType;
  return out;
}

/** The `type` field of an OpenAI-shaped error envelope for each canonical kind. */
export const OPENAI_ERROR_TYPES = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  request_too_large: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  api_error: 'api_error',
  overloaded: 'service_unavailable_error',
  timeout: 'timeout_error',
  not_implemented: 'not_implemented_error',
} as const satisfies Record<ErrorKind, string>;

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
