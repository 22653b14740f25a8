// Parses untrusted JSON under a nesting limit, answering malformed input with GatewayErrors (400s),
// never an exception of another kind. Used by the HTTP layer and by the conversion workers.
import { GatewayError } from '../gateway-error.ts';

/** Nesting depth of a JSON text without parsing it (strings skipped), so deep input never reaches JSON.parse. */
export function jsonDepth(buf: Uint8Array, max: number): number {
  let depth = 0;
  let peak = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) { if (++depth > peak) { peak = depth; if (peak > max) return peak; } }
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return peak;
}

export function parseJson(buf: Buffer, maxDepth: number): unknown {
  if (buf.length === 0) throw new GatewayError('invalid_json', 'request body is empty; expected JSON');
  if (jsonDepth(buf, maxDepth) > maxDepth) {
    throw new GatewayError('json_too_deep', `JSON nesting exceeds the limit of ${maxDepth} levels`);
  }
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch (e) {
    throw new GatewayError('invalid_json', `request body is not valid JSON: ${(e as Error).message}`);
  }
}

/** Parses a JSON object body (the inference routes); anything else is a 400. */
export function parseJsonObject(buf: Buffer, maxDepth: number): Record<string, unknown> {
  const v = parseJson(buf, maxDepth);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new GatewayError('invalid_body', 'request body must be a JSON object');
  }
  return v as Record<string, unknown>;
}
