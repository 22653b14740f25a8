// A stand-in for the client's ServerResponse when the engine answers the gateway itself (the compact
// endpoint's summary request): it takes what the engine writes and drops it, so dispatch, fallbacks
// and the attempt sink run unchanged while the caller builds its own answer from the outcome.
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';

class DiscardedResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  writeHead(status: number): this { this.statusCode = status; this.headersSent = true; return this; }
  setHeader(): this { return this; }
  getHeader(): undefined { return undefined; }
  removeHeader(): void { /* nothing was kept */ }
  write(): boolean { this.headersSent = true; return true; }
  end(): this {
    if (this.writableEnded) return this;
    this.headersSent = true; this.writableEnded = true; this.writableFinished = true;
    queueMicrotask(() => { this.emit('finish'); this.emit('close'); });
    return this;
  }
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    queueMicrotask(() => this.emit('close'));
    return this;
  }
}

/** A response object the engine may write to, end or destroy; nothing reaches any socket. */
export const discardedResponse = (): ServerResponse => new DiscardedResponse() as unknown as ServerResponse;
