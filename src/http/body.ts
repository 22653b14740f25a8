// Reads a request body under the size limit and checks its content type, answering malformed input
// with GatewayErrors (never a crash or a hung socket). JSON parsing under the nesting limit: src/util/parse-json.ts.
import type { IncomingMessage } from 'node:http';
import { isUtf8 } from 'node:buffer';
import zlib from 'node:zlib';
import { GatewayError, bounded } from '../gateway-error.ts';
import { parseCodings, type Coding } from '../util/content-codings.ts';

/**
 * Collects the body; rejects with body_too_large as soon as the limit is passed. A body sent with a
 * Content-Encoding (gzip, deflate, br, zstd) is decompressed off the event loop, its output held to the
 * same limit (a gzip bomb stops there).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  const transfer = req.headers['transfer-encoding'];
  // Node undoes only `chunked`: another transfer coding before it (gzip, chunked) would be read as the body itself.
  if (transfer !== undefined && transfer.trim().toLowerCase() !== 'chunked') {
    return Promise.reject(new GatewayError('not_implemented', `Transfer-Encoding ${bounded(transfer)} is not supported; send the body chunked or with a Content-Length (a compressed body with Content-Encoding)`));
  }
  let codings: Coding[];
  try { codings = contentCodings(req.headers['content-encoding']); } catch (e) { return Promise.reject(e); }
  if (codings.length === 0) return collect(req, limit).then(jsonText);
  return collect(req, limit).then((buf) => decompress(buf, codings, limit)).then(jsonText);
}

/**
 * A JSON body is UTF-8 (RFC 8259): other bytes are a 400, not text silently changed into U+FFFD on its
 * way to the model and the records. A leading byte order mark, which the RFC lets a parser ignore
 * (Windows tools write one), is dropped.
 */
function jsonText(buf: Buffer): Buffer {
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
  if (!isUtf8(buf)) throw new GatewayError('invalid_json', 'request body is not valid UTF-8; JSON text must be encoded in UTF-8');
  return buf;
}

/** Requests whose body the server stopped waiting for (server.request_timeout_ms), with the 408 it answered. */
const timedOut = new WeakMap<IncomingMessage, GatewayError>();

/** Marks `req` as ended by the request timeout: its reader rejects with `err`, not as a client hang-up. */
export function endedByTimeout(req: IncomingMessage, err: GatewayError): void {
  timedOut.set(req, err);
}

function collect(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) { req.removeAllListeners('data'); req.resume(); reject(tooLarge(limit)); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    // The client left before its body was in: recorded as the hang-up it is (499), not as a bad request.
    const gone = (): void => reject(timedOut.get(req) ?? new GatewayError('client_disconnected', 'the client closed the connection before its request body was received'));
    req.on('error', gone);
    req.on('aborted', gone);
  });
}

const tooLarge = (limit: number, what = 'request body'): GatewayError =>
  new GatewayError('body_too_large', `${what} exceeds the limit of ${limit} bytes`);

const DECODERS: Record<Coding, (buf: Buffer, o: { maxOutputLength: number }, cb: (e: Error | null, out: Buffer) => void) => void> = {
  gzip: zlib.gunzip, deflate: zlib.inflate, br: zlib.brotliDecompress, zstd: zlib.zstdDecompress,
};

/** The codings applied to the body, in the order they were applied; 415 for one not decoded here. */
function contentCodings(header: string | undefined): Coding[] {
  const { codings, unknown } = parseCodings(header);
  if (unknown !== null) {
    throw new GatewayError('unsupported_media_type', `Content-Encoding ${bounded(unknown)} is not supported; send the body uncompressed or as gzip, deflate, br or zstd`);
  }
  return codings;
}

/** Undoes the codings (the last applied first), each output held to `limit`; corrupt data is a 400. */
async function decompress(buf: Buffer, codings: Coding[], limit: number): Promise<Buffer> {
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    buf = await new Promise<Buffer>((resolve, reject) => {
      DECODERS[coding](buf, { maxOutputLength: limit }, (e, out) => {
        if (e === null) resolve(out);
        else if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') reject(tooLarge(limit, 'request body decompressed'));
        else reject(new GatewayError('invalid_body', `request body is not valid ${coding} data (Content-Encoding: ${coding}): ${e.message}`));
      });
    });
  }
  return buf;
}

export { jsonDepth, parseJson, parseJsonObject } from '../util/parse-json.ts';

/**
 * The admin APIs' strict rule: a request that carries a body labels it `application/json` (any case,
 * a `charset` parameter allowed if it is UTF-8), else a 415 naming the expected type. A body-less
 * write (DELETE, an empty POST) needs no label. The inference routes keep their lenient rule below.
 */
export function requireJsonLabel(req: IncomingMessage): void {
  const length = req.headers['content-length'];
  const hasBody = length !== undefined ? Number(length) !== 0 : req.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return;
  const ct = req.headers['content-type'];
  const [type, ...params] = (ct ?? '').split(';').map((x) => x.trim().toLowerCase());
  const charset = params.find((x) => x.startsWith('charset='))?.slice(8).replace(/^"|"$/g, '');
  if (type === 'application/json' && (charset === undefined || charset === 'utf-8' || charset === 'utf8')) return;
  throw new GatewayError('unsupported_media_type', `the body must be sent with Content-Type: application/json (UTF-8), got ${ct === undefined ? 'no Content-Type' : bounded(ct)}`);
}

export function requireJsonContentType(req: IncomingMessage): void {
  const ct = req.headers['content-type'];
  if (ct !== undefined && !/^application\/([a-z.+-]*\+)?json\b/i.test(ct) && !/^text\/plain\b/i.test(ct)) {
    throw new GatewayError('unsupported_media_type', `Content-Type must be application/json, got ${ct}`);
  }
}
