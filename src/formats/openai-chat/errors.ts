// Error mapping for the OpenAI chat-completions wire: upstream error bodies -> UpstreamError, and
// canonical error kinds -> the `type` string OpenAI clients expect in an error envelope.
import type { ErrorKind } from '../canonical.ts';
import { isRecord, kindFromStatus, parseErrorJson, plainErrorMessage } from '../errors.ts';
import type { UpstreamError } from '../codec.ts';

/**
 * Decodes `{error: {message, type, param, code}}`. OpenAI's `type` values are not a closed set,
 * so the kind comes from the status, which OpenAI and its imitators set consistently.
 */
export function decodeOpenAIError(status: number, bodyText: string): UpstreamError {
  const root = parseErrorJson(bodyText);
  if (root === undefined) return { kind: kindFromStatus(status), message: plainErrorMessage(status, bodyText) };
  // Some compatible servers send a bare `{message}` rather than `{error: {...}}`.
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

