// Helpers every codec's error decoder shares: status -> kind, readable text from non-JSON bodies,
// and the lenient JSON read of an error body (some servers wrap it in an array).
import type { ErrorKind } from './canonical.ts';

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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

/** The parsed error body (the first element when wrapped in an array), or undefined when not JSON. */
export function parseErrorJson(bodyText: string): unknown {
  let parsed: unknown;
  try { parsed = JSON.parse(bodyText); } catch { return undefined; }
  return Array.isArray(parsed) ? parsed[0] : parsed;
}
