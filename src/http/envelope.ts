// Renders a GatewayError in the envelope of the endpoint that failed: OpenAI's {error:{...}} or
// Anthropic's {type:"error", error:{type, message}}. The only place error bodies are written.
import type { ServerResponse } from 'node:http';
import type { ErrorKind } from '../formats/canonical.ts';
import { GatewayError } from '../gateway-error.ts';

export type Envelope = 'openai' | 'anthropic';

const OPENAI_TYPE: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error', authentication: 'authentication_error', permission: 'permission_error',
  not_found: 'not_found_error', request_too_large: 'invalid_request_error', rate_limit: 'rate_limit_error',
  api_error: 'api_error', overloaded: 'service_unavailable_error', timeout: 'timeout_error', not_implemented: 'not_implemented_error',
};

const ANTHROPIC_TYPE: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error', authentication: 'authentication_error', permission: 'permission_error',
  not_found: 'not_found_error', request_too_large: 'request_too_large', rate_limit: 'rate_limit_error',
  api_error: 'api_error', overloaded: 'overloaded_error', timeout: 'timeout_error', not_implemented: 'not_implemented_error',
};

export function errorBody(err: GatewayError, envelope: Envelope): Record<string, unknown> {
  if (envelope === 'anthropic') return { type: 'error', error: { type: ANTHROPIC_TYPE[err.kind], message: err.message } };
  return { error: { message: err.message, type: OPENAI_TYPE[err.kind], param: err.param, code: err.code } };
}

/** Any thrown value becomes a GatewayError; unknown errors are internal and their text is not leaked. */
export function asGatewayError(e: unknown): GatewayError {
  if (e instanceof GatewayError) return e;
  return new GatewayError('internal_error', 'internal error');
}

const CLOSE = { connection: 'close' } as const;

export function sendError(res: ServerResponse, e: unknown, envelope: Envelope, extraHeaders: Record<string, string> = {}): void {
  const err = asGatewayError(e);
  if (!(e instanceof GatewayError)) console.error('internal error:', e);
  if (res.headersSent) { res.destroy(); return; }
  const body = JSON.stringify(errorBody(err, envelope));
  // Answered before the request's body was in (too large, refused at its headers): the connection closes
  // after the answer, or keeping it would read the rest of the body, whatever size it declared.
  const unread = res.req !== undefined && !res.req.complete ? CLOSE : undefined;
  res.writeHead(err.status, {
    'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...unread, ...extraHeaders, ...err.headers,
  });
  res.end(body);
}

export { sendJson } from '../util/send-json.ts';
