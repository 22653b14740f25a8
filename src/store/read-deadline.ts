// A bound on the store reads a client request waits for (a stored response, a feedback event's
// inference and metric types). PostgreSQL that stops answering on open connections (a partition, a
// table locked by another session) leaves a query on a pooled connection waiting with no end: the
// pool's 5 s connection timeout covers only new connections. Past the bound the read is refused as the
// store being unavailable (a 503 to retry), the same time a new connection is given up after.
// A read passed as a function runs with its deadline in its async context (readerDeadline):
// when it fires, a PostgreSQL read still running for it is given up there and then (cancelled on the
// server, its connection dropped: pg-pool-health.ts abandoningQuery) instead of holding its pooled
// connection until the 120 s abandon bound. Before, as many reads stuck behind a lock as the pool had
// connections left every other statement of the gateway refused for want of a connection.
import { AsyncLocalStorage } from 'node:async_hooks';

/** How long a request waits for one store read. */
export const STORE_READ_DEADLINE_MS = 5000;

/** A reader's deadline: given up once, then every read registered on it is told (a Set, not an EventTarget: cheaper). */
export class ReadDeadline {
  /** Why the reader gave up; undefined while it waits. */
  reason: Error | undefined;
  readonly #gone = new Set<() => void>();
  /** Calls `f` when the reader gives up; returns what unregisters it. */
  onGone(f: () => void): () => void { this.#gone.add(f); return () => { this.#gone.delete(f); }; }
  giveUp(e: Error): void {
    if (this.reason) return;
    this.reason = e;
    for (const f of this.#gone) f();
    this.#gone.clear();
  }
}

const reader = new AsyncLocalStorage<ReadDeadline>();

/** The read deadline the current code runs under, if any (abandoningQuery gives its read up when it passes). */
export const readerDeadline = (): ReadDeadline | undefined => reader.getStore();

/**
 * The read's outcome, or an error classified 'unavailable' (src/store/errors.ts: ETIMEDOUT) once `ms`
 * pass. Given a function, runs it under the deadline (an outer deadline giving up gives this one up
 * too), so the PostgreSQL reads it makes are given up when it passes; given a promise, only bounds the wait.
 */
export function withinReadDeadline<T>(read: Promise<T> | (() => Promise<T>), ms = STORE_READ_DEADLINE_MS): Promise<T> {
  let d: ReadDeadline | undefined;
  let off: (() => void) | undefined;
  let p: Promise<T>;
  if (typeof read === 'function') {
    const deadline = (d = new ReadDeadline());
    const outer = reader.getStore();
    if (outer?.reason) deadline.giveUp(outer.reason);
    else off = outer?.onGone(() => deadline.giveUp(outer.reason!));
    try { p = reader.run(deadline, read); } catch (e) { p = Promise.reject(e); }
  } else p = read;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      const e = Object.assign(new Error(`the database did not answer within ${ms / 1000} s`), { code: 'ETIMEDOUT' });
      d?.giveUp(e);
      reject(e);
    }, ms);
    p.then((v) => { clearTimeout(timer); off?.(); resolve(v); }, (e: unknown) => { clearTimeout(timer); off?.(); reject(e); });
  });
}
