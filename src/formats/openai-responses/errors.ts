// Errors of the Responses wire: the `code` a failed response (and the `error` stream event) carries for
// each canonical error kind. HTTP errors use OpenAI's {error: {...}} envelope (src/http/envelope.ts).
import type { ErrorKind } from '../canonical.ts';

/** ResponseError.code values of the API for each kind; kinds it has no code for are server errors. */
export const RESPONSE_ERROR_CODES = {
  invalid_request: 'invalid_prompt',
  authentication: 'server_error',
  permission: 'server_error',
  not_found: 'server_error',
  request_too_large: 'invalid_prompt',
  rate_limit: 'rate_limit_exceeded',
  api_error: 'server_error',
  overloaded: 'server_error',
  timeout: 'server_error',
  not_implemented: 'server_error',
} as const satisfies Record<ErrorKind, string>;

export { decodeOpenAIError as decodeResponsesError } from '../openai-chat/errors.ts';
