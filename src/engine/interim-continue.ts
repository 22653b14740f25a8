// An upstream may answer `100 Continue` before its real answer even when the request did not ask for it
// (RFC 9110 15.2.1: a client must be able to ignore it; some servers and proxies send one before every
// answer to a POST). undici (8.x, client-h1.js) takes any 100 for a "bad response" and destroys the
// socket, which the gateway saw as the upstream unreachable: the request was sent again up to
// upstream.max_attempts times (each one processed, and billed, by the provider) and ended in a 503.
// 102 and 103 pass undici untouched, but a 100 after one of them (103 Early Hints, then 100) was the
// same bad response. This drops each `100` block (status line and headers) among the interim blocks
// at the start of a response on an upstream connection before undici's parser reads the bytes; the
// other interim blocks (102, 103, ...) are passed on as they are.
import type { Socket } from 'node:net';
import { isRequestHead as isHead } from './wire.ts';
/** A status line's first 12 bytes: `HTTP/1.1 100`. */
const STATUS_BYTES = 12;
/** An interim status line's first 12 bytes but 101 (an upgrade, which ends the HTTP exchange): its last two digits. */
const INTERIM = /^HTTP\/1\.[01] 1(0[02-9]|[1-9]\d)$/;
/** An interim block longer than this is not skipped: undici reads it, and fails as before. */
const MAX_INTERIM = 16 * 1024;

/**
 * Makes `socket` drop interim `100` responses. A request head written on it marks the start of the
 * next response; until that response's status line is in, bytes are held (at most a status line's 12,
 * or one interim block) and a 100 block is cut from them, any other interim block passed on whole.
 * Once a final status (or 101) shows, everything passes as
 * it comes until the next request head: a response body is never looked at. Undici writes one request
 * at a time on a connection (pipelining 1), so a response always follows its own request's head.
 */
export function dropInterimContinue(socket: Socket): void {
  let awaiting = false;
  let held: Buffer | null = null;
  const write = socket.write;
  socket.write = function (this: Socket, chunk: unknown, ...rest: unknown[]): boolean {
    if (!awaiting && isHead(chunk)) awaiting = true;
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Socket['write'];
  const push = socket.push;
  socket.push = function (this: Socket, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null && held !== null) { const h = held; held = null; awaiting = false; push.call(this, h); }
    if (!awaiting || !Buffer.isBuffer(chunk)) return push.call(this, chunk, encoding);
    let b: Buffer = held === null ? chunk : Buffer.concat([held, chunk]);
    held = null;
    // Another interim block (102, 103) is passed on whole, and the answer is still awaited after it.
    let kept: Buffer | null = null;
    for (;;) {
      if (b.length < STATUS_BYTES) { if (b.length > 0) held = b; return kept === null || push.call(this, kept); }
      const status = INTERIM.exec(b.toString('latin1', 0, STATUS_BYTES))?.[1];
      if (status === undefined) break;
      const end = b.indexOf('\r\n\r\n');
      if (end === -1) {
        if (b.length > MAX_INTERIM) break;
        held = b;
        return kept === null || push.call(this, kept);
      }
      if (status !== '00') kept = kept === null ? b.subarray(0, end + 4) : Buffer.concat([kept, b.subarray(0, end + 4)]);
      b = b.subarray(end + 4);
    }
    awaiting = false;
    return push.call(this, kept === null ? b : Buffer.concat([kept, b]));
  } as Socket['push'];
}
