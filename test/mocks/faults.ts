// Fault injection shared by every mock upstream: the Fault union, the per-mock queue, the
// `x-mock-fault` header, and the sinks that make replies slow, cut, garbled or never sent.
import type { ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';

/** One injected failure, consumed by exactly one request. */
export type Fault =
  | { status: number; retryAfter?: number | string; body?: unknown }
  | { delayFirstByteMs: number }
  | { disconnectAfterChunks: number }
  /** Extra to the common set: stream N chunks, then send nothing more but keep the socket open. */
  | { stallAfterChunks: number }
  | { malformedSse: true }
  | { hang: true }
  | { resetConnection: true }
  /**
   * A provider-shaped frame sent before chunk `afterChunks` (default 1) of a stream: `scalar` a JSON
   * scalar as an event's data, `malformed` the provider's garbage chunk (an event cut short, as
   * `malformedSse` sends after the first chunk), `error` the provider's in-stream error (the stream ends after it),
   * `oversize` one event longer than any parser should hold, `badUtf8` invalid UTF-8 bytes spliced
   * into the first text of the answer (no frame of its own). On a JSON reply: the body `null`, the
   * provider's error body with status 200, the body after 65 MiB of whitespace, or the bytes spliced.
   */
  | { inject: InjectKind; afterChunks?: number }
  /** The reply (stream or JSON) goes out under this content type instead of its own. */
  | { contentType: string };

export type InjectKind = 'scalar' | 'malformed' | 'error' | 'oversize' | 'badUtf8';

/** What each provider sends for an injected frame (see ProviderSpec.frames); the path picks the endpoint's dialect. */
export type FaultFrames = { scalar: string | Buffer; error: string | Buffer; oversize(bytes: number): string | Buffer };

/** Bytes past every upstream bound the gateway keeps (SSE event 16 Mi characters, event-stream frame 24 MiB, JSON 64 MiB). */
export const OVERSIZE_BYTES = 65 * 1024 * 1024;
/** Oversized stream events only need to pass the SSE and event-stream bounds. */
export const OVERSIZE_EVENT_BYTES = 25 * 1024 * 1024;

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
    if (o.inject === 'scalar' || o.inject === 'malformed' || o.inject === 'error' || o.inject === 'oversize' || o.inject === 'badUtf8') {
      return typeof o.afterChunks === 'number' ? { inject: o.inject, afterChunks: o.afterChunks } : { inject: o.inject };
    }
    if (typeof o.contentType === 'string') return { contentType: o.contentType };
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
  #frames: FaultFrames | undefined;
  #spliced = false;

  constructor(res: ServerResponse, fault: Fault | undefined, garbage: string | Buffer, delayMs: number, frames?: FaultFrames) {
    this.#res = res;
    this.#fault = fault;
    this.#garbage = garbage;
    this.#delayMs = delayMs;
    this.#frames = frames;
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
    if (f && 'inject' in f) {
      if (f.inject === 'badUtf8') {
        if (!this.#spliced) { const out = spliceBadUtf8(chunk); this.#spliced = out !== chunk; chunk = out; }
      } else if (this.#sent === (f.afterChunks ?? 1) && this.#frames) {
        const frames = this.#frames;
        this.#res.write(f.inject === 'scalar' ? frames.scalar : f.inject === 'malformed' ? this.#garbage : f.inject === 'error' ? frames.error : frames.oversize(OVERSIZE_EVENT_BYTES));
        // A provider ends its stream after an error event.
        if (f.inject === 'error') { this.#dead = true; this.#res.end(); return; }
      }
    }
    this.#res.write(chunk);
    this.#sent++;
    if (f && 'malformedSse' in f && this.#sent === 1) this.#res.write(this.#garbage);
    if (f && 'disconnectAfterChunks' in f && this.#sent >= f.disconnectAfterChunks) this.#kill();
  }

  end(): void {
    if (this.alive) this.#res.end();
  }

  /** The answer (stream or JSON) about to go out under this fault's content type, if it names one. */
  static contentType(fault: Fault | undefined, own: string): string {
    return fault && 'contentType' in fault ? fault.contentType : own;
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
  errorBody?: () => string,
): void {
  if (fault && 'contentType' in fault) headers = { ...headers, 'content-type': fault.contentType };
  if (fault && 'inject' in fault) {
    if (fault.inject === 'scalar') body = 'null';
    else if (fault.inject === 'error' && errorBody) body = errorBody();
    else if (fault.inject === 'badUtf8') body = spliceBadUtf8(body);
    else if (fault.inject === 'oversize') body = Buffer.concat([Buffer.alloc(OVERSIZE_BYTES, 0x20), Buffer.from(body)]);
  }
  if (fault && ('malformedSse' in fault || ('inject' in fault && fault.inject === 'malformed'))) {
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

/** The bytes spliced into an answer's text: a lone continuation byte, a byte never valid in UTF-8, a cut 3-byte sequence. */
const BAD_UTF8 = Buffer.from([0x80, 0xff, 0xe2, 0x82]);
const MARK = Buffer.from('Echo');

/**
 * Inserts invalid UTF-8 right after the first `Echo` (every mock's answer text starts with it) of a
 * chunk; an AWS event-stream frame (Bedrock) is re-framed with its lengths and both CRCs fixed, so
 * only the text is bad. Returns the chunk unchanged when it holds no answer text.
 */
export function spliceBadUtf8(chunk: string | Buffer): string | Buffer {
  const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
  const at = buf.indexOf(MARK);
  if (at < 0) return chunk;
  const cut = at + MARK.length;
  const out = Buffer.concat([buf.subarray(0, cut), BAD_UTF8, buf.subarray(cut)]);
  if (!Buffer.isBuffer(chunk) || buf.length < 16 || buf.readUInt32BE(0) !== buf.length) return out;
  // An event-stream frame: total length, prelude CRC, message CRC.
  out.writeUInt32BE(out.length, 0);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  out.writeUInt32BE(crc32(out.subarray(0, out.length - 4)), out.length - 4);
  return out;
}
