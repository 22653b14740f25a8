// Reads a request body under the size limit and parses JSON under the nesting limit,
// answering malformed input with GatewayErrors (never a crash or a hung socket).
import type { IncomingMessage } from 'node:http';
import { GatewayError } from './errors.ts';

/** Collects the body; rejects with body_too_large as soon as the limit is passed. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) { req.removeAllListeners('data'); req.resume(); reject(tooLarge(limit)); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    req.on('error', reject);
    req.on('aborted', () => reject(new GatewayError('invalid_body', 'request aborted by the client')));
  });
}

const tooLarge = (limit: number): GatewayError =>
  new GatewayError('body_too_large', `request body exceeds the limit of ${limit} bytes`);

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

export function requireJsonContentType(req: IncomingMessage): void {
  const ct = req.headers['content-type'];
  if (ct !== undefined && !/^application\/([a-z.+-]*\+)?json\b/i.test(ct) && !/^text\/plain\b/i.test(ct)) {
    throw new GatewayError('unsupported_media_type', `Content-Type must be application/json, got ${ct}`);
  }
}
