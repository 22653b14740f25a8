// The codings a Content-Encoding header names, for both directions: a client's request body
// (src/http/body.ts) and an upstream's answer (src/engine/content-coding.ts), which undo them with
// node:zlib whole or as a stream.

/** Codings the gateway undoes (x-gzip is gzip's old name). */
export type Coding = 'gzip' | 'deflate' | 'br' | 'zstd';
const KNOWN: Readonly<Record<string, Coding>> = { gzip: 'gzip', 'x-gzip': 'gzip', deflate: 'deflate', br: 'br', zstd: 'zstd' };

/** No Content-Encoding (nearly every body), one answer shared (frozen: no caller adds to it). */
const NONE: { codings: Coding[]; unknown: null } = Object.freeze({ codings: Object.freeze([]) as unknown as Coding[], unknown: null });

/**
 * The codings of a Content-Encoding header in the order they were applied ('identity' and empty entries
 * dropped; [] for none), or the first one the gateway cannot undo, lower-cased, as `unknown`.
 */
export function parseCodings(header: string | string[] | undefined): { codings: Coding[]; unknown: string | null } {
  if (header === undefined) return NONE;
  const codings: Coding[] = [];
  for (const raw of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const c = raw.trim().toLowerCase();
    if (c === '' || c === 'identity') continue;
    const known = Object.hasOwn(KNOWN, c) ? KNOWN[c]! : undefined;
    if (known === undefined) return { codings, unknown: c };
    codings.push(known);
  }
  return { codings, unknown: null };
}
