// What reached an upstream before an exchange failed without an answer, so the failure can be told
// apart: nothing written (the connect failed: safe to send again), written on a kept-alive connection
// the server had closed while idle (reset before any byte of an answer: nothing processed, resent as
// HTTP clients do), or written and then left unanswered (the provider may have processed, and will
// bill, it: never sent to it again). undici's handler says neither which socket carried a request nor
// whether it was reused, so the sockets the transport's connector opens record it themselves.
import type { Socket } from 'node:net';

/**
 * One request's view of its connection: `written` once the whole request was handed to the socket
 * (undici's onRequestSent), `reused` when an earlier request had used the connection, `received` once
 * any byte came back after its head.
 */
export type Wire = { written: boolean; reused: boolean; received: boolean };

export const newWire = (): Wire => ({ written: false, reused: false, received: false });

/**
 * The request whose head is written next. undici calls a request's handler (`onRequestStart`) and then
 * writes its head on the socket in the same synchronous step, one request at a time per connection
 * (pipelining 1), so the next head written on any upstream socket is this request's.
 */
let next: Wire | null = null;

export function expectHead(w: Wire): void { next = w; }

/** The head of a request undici writes: `POST /v1/chat/completions HTTP/1.1\r\n...`. */
const REQUEST_HEAD = /^[A-Z]+ \S+ HTTP\/1\.1\r\n/;

export const isRequestHead = (chunk: unknown): boolean =>
  typeof chunk === 'string' ? REQUEST_HEAD.test(chunk) : Buffer.isBuffer(chunk) && REQUEST_HEAD.test(chunk.toString('latin1', 0, Math.min(chunk.length, 2048)));

/**
 * Makes `socket` record, for each request written on it, whether an earlier
 * request had used the connection, and whether any byte came back after it. Applied last, so its
 * read hook sees the bytes as they arrive (an interim 100 counts as an answer's byte: the server read
 * the request).
 */
export function recordWire(socket: Socket): void {
  let heads = 0;
  let current: Wire | null = null;
  const write = socket.write;
  socket.write = function (this: Socket, chunk: unknown, ...rest: unknown[]): boolean {
    if (next !== null && isRequestHead(chunk)) {
      current = next; next = null;
      current.reused = heads > 0;
      heads++;
    }
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Socket['write'];
  const push = socket.push;
  socket.push = function (this: Socket, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (current !== null && chunk !== null) { current.received = true; current = null; }
    return push.call(this, chunk, encoding);
  } as Socket['push'];
}
