// Undoes an upstream body's Content-Encoding (gzip, deflate, br, zstd) before anything reads it. The
// gateway asks for no encoding, but a server may choose one (HTTP reads a missing Accept-Encoding as
// "any"), a provider's headers may ask for one, and proxies in front of providers compress: read raw,
// such a body was a "malformed response" (a 502 for a good answer), an error message of binary
// garbage, or a pass-through answer billed $0.
import { createBrotliDecompress, createGunzip, createInflate, createZstdDecompress } from 'node:zlib';
import type { Transform } from 'node:stream';
import { parseCodings, type Coding } from '../util/content-codings.ts';

const DECODERS: Record<Coding, () => Transform> = {
  gzip: createGunzip, deflate: createInflate, br: createBrotliDecompress, zstd: createZstdDecompress,
};

/** Thrown (or passed to a sink's error) for a body whose encoding is unknown or whose bytes do not decode. */
export class ContentCodingError extends Error {
  override readonly name = 'ContentCodingError';
  readonly code = 'UPSTREAM_CONTENT_CODING';
}

/**
 * The codings of a Content-Encoding header, in the order they were applied ('identity' dropped);
 * [] for none. Throws ContentCodingError naming a coding the gateway cannot undo.
 */
export function contentCodings(header: string | string[] | undefined): Coding[] {
  const { codings, unknown } = parseCodings(header);
  if (unknown !== null) throw new ContentCodingError(`the upstream answered with a content encoding the gateway cannot decode: ${JSON.stringify(unknown.slice(0, 40))}`);
  return codings;
}

/** Where decoded bytes go: the body's chunks, then exactly one of end and error. */
export type DecodedSink = { data(chunk: Buffer): void; end(): void; error(err: ContentCodingError): void };

/** `pause` holds the decoded bytes back (a client slower than the upstream), as pausing the socket holds raw ones. */
export type BodyDecoder = { write(chunk: Buffer): void; end(): void; destroy(): void; pause(): void; resume(): void };

/**
 * A decoder for `codings` (applied in that order, so undone in reverse) feeding `out`. An empty body
 * ends without decoding (a 204, or an empty error body, still carries the header). Bytes that do not
 * decode (a cut or corrupt body) are one ContentCodingError, and nothing more reaches `out`.
 */
export function bodyDecoder(codings: Coding[], out: DecodedSink): BodyDecoder {
  const chain = codings.slice().reverse().map((c) => DECODERS[c]!());
  let fed = false;
  let over = false;
  const fail = (e: Error): void => {
    if (over) return;
    over = true;
    for (const d of chain) d.destroy();
    out.error(new ContentCodingError(`the upstream's ${codings.join(', ')} body does not decode: ${e.message}`));
  };
  for (let i = 0; i < chain.length; i++) {
    chain[i]!.on('error', fail);
    if (i + 1 < chain.length) chain[i]!.pipe(chain[i + 1]!);
  }
  const last = chain[chain.length - 1]!;
  last.on('data', (c: Buffer) => { if (!over) out.data(c); });
  last.on('end', () => { if (!over) { over = true; out.end(); } });
  return {
    write: (c) => { if (over || c.length === 0) return; fed = true; chain[0]!.write(c); },
    end: () => { if (over) return; if (fed) chain[0]!.end(); else { over = true; out.end(); } },
    destroy: () => { over = true; for (const d of chain) d.destroy(); },
    pause: () => { last.pause(); },
    resume: () => { last.resume(); },
  };
}
