// Reads a request body under the size limit and checks its content type, answering malformed input
// with GatewayErrors (never a crash or a hung socket). JSON parsing under the nesting limit: src/util/parse-json.ts.
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../gateway-error.ts';

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

export { jsonDepth, parseJson, parseJsonObject } from '../util/parse-json.ts';

export function requireJsonContentType(req: IncomingMessage): void {
  const ct = req.headers['content-type'];
  if (ct !== undefined && !/^application\/([a-z.+-]*\+)?json\b/i.test(ct) && !/^text\/plain\b/i.test(ct)) {
    throw new GatewayError('unsupported_media_type', `Content-Type must be application/json, got ${ct}`);
  }
}
