// Error mapping for the OpenAI chat-completions wire: upstream error bodies -> UpstreamError, and
// canonical error kinds -> the `type` string OpenAI clients expect in an error envelope.
import type { ErrorKind } from '../canonical.ts';
import { isRecord, kindFromStatus, parseErrorJson, plainErrorMessage } from '../errors.ts';
import type { UpstreamError } from '../codec.ts';

/**
 * The kind each documented OpenAI error `code` or `type` stands for (chat and Responses errors share
 * them: the Responses API's ResponseError codes are listed too). `requests` and `tokens` are the types
 * of OpenAI's rate-limit errors; `insufficient_quota` is the 429 of an account out of credit.
 */
const KIND_OF_CODE: Record<string, ErrorKind> = {
  rate_limit_exceeded: 'rate_limit', insufficient_quota: 'rate_limit', rate_limit_error: 'rate_limit', requests: 'rate_limit', tokens: 'rate_limit',
  server_error: 'api_error', api_error: 'api_error', internal_error: 'api_error',
  overloaded: 'overloaded', overloaded_error: 'overloaded', engine_overloaded: 'overloaded', service_unavailable: 'overloaded', service_unavailable_error: 'overloaded',
  timeout: 'timeout', timeout_error: 'timeout', vector_store_timeout: 'timeout',
  invalid_request_error: 'invalid_request', context_length_exceeded: 'invalid_request', string_above_max_length: 'invalid_request',
  invalid_prompt: 'invalid_request', invalid_value: 'invalid_request', bio_policy: 'invalid_request', misalignment_policy_violation: 'invalid_request',
  invalid_image: 'invalid_request', invalid_image_format: 'invalid_request', invalid_base64_image: 'invalid_request', invalid_image_url: 'invalid_request',
  image_too_large: 'invalid_request', image_too_small: 'invalid_request', image_parse_error: 'invalid_request', image_content_policy_violation: 'invalid_request',
  invalid_image_mode: 'invalid_request', image_file_too_large: 'invalid_request', unsupported_image_media_type: 'invalid_request', empty_image_file: 'invalid_request',
  failed_to_download_image: 'invalid_request', image_file_not_found: 'invalid_request',
  request_too_large: 'request_too_large',
  invalid_api_key: 'authentication', authentication_error: 'authentication',
  permission_error: 'permission', data_residency_mismatch: 'permission', unsupported_country_region_territory: 'permission',
  model_not_found: 'not_found', not_found_error: 'not_found',
};

/** The kind an error's `code` (then its `type`) names, or null when neither is one of OpenAI's. */
export function kindOfOpenAICode(code: unknown, type?: unknown): ErrorKind | null {
  if (typeof code === 'string' && Object.hasOwn(KIND_OF_CODE, code)) return KIND_OF_CODE[code]!;
  if (typeof type === 'string' && Object.hasOwn(KIND_OF_CODE, type)) return KIND_OF_CODE[type]!;
  return null;
}

/**
 * An OpenAI-shaped error object `{message, type, param, code}` as an UpstreamError. A status that
 * names a kind (4xx, 503, 504) decides it; where the status says nothing specific (an error event in a
 * stream answered 200, a body of a 200 answer read as 502, a plain 500), the `code`/`type` does, so
 * `rate_limit_exceeded` mid-stream is a rate limit (retried elsewhere), not a server error.
 */
export function openAIErrorOf(status: number, err: Record<string, unknown>, fallbackMessage: () => string): UpstreamError {
  const message = typeof err.message === 'string' && err.message !== '' ? err.message : fallbackMessage();
  const byStatus = kindFromStatus(status);
  const kind = status < 400 || byStatus === 'api_error' ? kindOfOpenAICode(err.code, err.type) ?? (status < 400 ? 'api_error' : byStatus) : byStatus;
  const out: UpstreamError = { kind, message };
  const upstreamType = typeof err.type === 'string' ? err.type : typeof err.code === 'string' ? err.code : undefined;
  if (upstreamType !== undefined) out.upstreamType = upstreamType;
  return out;
}

/** Decodes `{error: {message, type, param, code}}` (see openAIErrorOf for the kind). */
export function decodeOpenAIError(status: number, bodyText: string): UpstreamError {
  const root = parseErrorJson(bodyText);
  if (root === undefined) return { kind: kindFromStatus(status), message: plainErrorMessage(status, bodyText) };
  // Some compatible servers send a bare `{message}` rather than `{error: {...}}`.
  const err = isRecord(root) && isRecord(root.error) ? root.error : isRecord(root) ? root : {};
  return openAIErrorOf(status, err, () => plainErrorMessage(status, bodyText));
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
