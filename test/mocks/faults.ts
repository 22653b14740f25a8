// Fault injection shared by every mock upstream: the Fault union, the per-mock queue, the
// `x-mock-fault` header, and the sinks that make replies slow, cut, garbled or never sent.
import type { ServerResponse } from 'node:http';

/** One injected failure, consumed by exactly one request. */
export type Fault =
  | { status: number; retryAfter?: number | string; body?: unknown }
  | { delayFirstByteMs: number }
  | { disconnectAfterChunks: number }
  /** Extra to the common set: stream N chunks, then send nothing more but keep the socket open. */
  | { stallAfterChunks: number }
  | { malformedSse: true }
  | { hang: true }
  | { resetConnection: true };

/** The header a request can carry (JSON of one Fault) when the test cannot reach the mock. */
export const FAULT_HEADER = 'x-mock-fault';

/** FIFO of faults; each request takes the head, if any. */
export class FaultQueue {
  #queue: Fault[] = [];

  push(f: Fault | Fault[]): void {
    for (const one of Array.isArray(f) ? f : [f]) this.#queue.push(one);
  }

  clear(): void {
    this.#queue.length = 0;
  }

  /** The header's fault wins (and leaves the queue untouched); otherwise the queue's head. */
  take(header: string | string[] | undefined): Fault | undefined {
    const raw = Array.isArray(header) ? header[0] : header;
    if (raw !== undefined && raw !== '') {
      const parsed = parseFault(raw);
      if (parsed) return parsed;
    }
    return this.#queue.shift();
  }
}

function parseFault(raw: string): Fault | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value !== 'object' || value === null) return undefined;
    const o = value as Record<string, unknown>;
    if (typeof o.status === 'number') {
      const f: Fault = { status: o.status };
      if (typeof o.retryAfter === 'number' || typeof o.retryAfter === 'string') f.retryAfter = o.retryAfter;
      if ('body' in o) f.body = o.body;
      return f;
    }
    if (typeof o.delayFirstByteMs === 'number') return { delayFirstByteMs: o.delayFirstByteMs };
    if (typeof o.disconnectAfterChunks === 'number') return { disconnectAfterChunks: o.disconnectAfterChunks };
    if (typeof o.stallAfterChunks === 'number') return { stallAfterChunks: o.stallAfterChunks };
    if (o.malformedSse === true) return { malformedSse: true };
    if (o.hang === true) return { hang: true };
    if (o.resetConnection === true) return { resetConnection: true };
  } catch {
    // An unparsable header is ignored, exactly as if it were absent.
  }
  return undefined;
}

export function isStatusFault(f: Fault | undefined): f is { status: number; retryAfter?: number | string; body?: unknown } {
  return f !== undefined && 'status' in f;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Writes a stream one chunk (one SSE event or one binary frame) at a time and applies the
 * stream faults: `disconnectAfterChunks` destroys the socket after N chunks were written,
 * `stallAfterChunks` stops writing after N chunks and never ends the response (the socket
 * stays open until the client gives up or the mock closes), `malformedSse` sends the
 * provider's garbage chunk right after the first good one.
 */
export class StreamSink {
  #res: ServerResponse;
  #fault: Fault | undefined;
  #garbage: string | Buffer;
  #delayMs: number;
  #sent = 0;
  #dead = false;
  #stalled = false;

  constructor(res: ServerResponse, fault: Fault | undefined, garbage: string | Buffer, delayMs: number) {
    this.#res = res;
    this.#fault = fault;
    this.#garbage = garbage;
    this.#delayMs = delayMs;
    // Zero chunks: the headers went out, the body never does.
    if (fault && 'disconnectAfterChunks' in fault && fault.disconnectAfterChunks <= 0) this.#kill();
  }

  /** False once the socket is gone (fault or client hang-up): stop producing. */
  get alive(): boolean {
    return !this.#dead && !this.#stalled && !this.#res.destroyed;
  }

  async write(chunk: string | Buffer): Promise<void> {
    const f = this.#fault;
    if (f && 'stallAfterChunks' in f && this.#sent >= f.stallAfterChunks) this.#stalled = true;
    if (!this.alive) return;
    if (this.#sent > 0 && this.#delayMs > 0) await sleep(this.#delayMs);
    if (!this.alive) return;
    this.#res.write(chunk);
    this.#sent++;
    if (f && 'malformedSse' in f && this.#sent === 1) this.#res.write(this.#garbage);
    if (f && 'disconnectAfterChunks' in f && this.#sent >= f.disconnectAfterChunks) this.#kill();
  }

  end(): void {
    if (this.alive) this.#res.end();
  }

  #kill(): void {
    this.#dead = true;
    // Flush what was written, then drop the connection without a terminating chunk.
    const socket = this.#res.socket;
    if (socket) socket.write('', () => socket.destroy());
    else this.#res.destroy();
  }
}

/**
 * Sends a complete (non-streaming) body under the body faults: `malformedSse` replaces it
 * with invalid JSON, `disconnectAfterChunks` sends the headers and half the body, then drops;
 * `stallAfterChunks` sends the headers and half the body, then nothing more.
 */
export function sendBody(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string | Buffer,
  fault: Fault | undefined,
): void {
  if (fault && 'malformedSse' in fault) {
    const bad = '{"malformed": tru';
    res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(bad)) });
    res.end(bad);
    return;
  }
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  if (fault && 'stallAfterChunks' in fault) {
    const buf = Buffer.isBuffer(body) ? body : Buffer.from(body);
    res.write(buf.subarray(0, Math.floor(buf.length / 2)));
    return;
  }
  if (fault && 'disconnectAfterChunks' in fault) {
    const buf = Buffer.isBuffer(body) ? body : Buffer.from(body);
    const socket = res.socket;
    res.write(buf.subarray(0, Math.floor(buf.length / 2)));
    if (socket) socket.write('', () => socket.destroy());
    else res.destroy();
    return;
  }
  res.end(body);
}
