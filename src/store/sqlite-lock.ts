// SQLite's write lock, waited for without blocking the thread. node:sqlite is synchronous: with a busy
// timeout, a statement meeting the lock held by another connection (the CLI's `keys create` beside the
// server, a second replica on the same file, the write thread's batch) sleeps in SQLite's busy handler,
// and on the main thread every in-flight request and stream stalled with it, for up to 5 s. Connections
// run with busy_timeout 0 instead: a statement refused with SQLITE_BUSY is tried again on a timer with
// back-off until the same overall bound, then refused as the database being unavailable (a 503 to retry).

import type { DatabaseSync } from 'node:sqlite';

/** How long a statement waits, in all, for another connection's lock (SQLite's busy timeout before). */
export const LOCK_WAIT_MS = 5000;

/** The pauses between attempts: short at first (a batch commit holds the lock for a few ms), then 50 ms. */
const pauseAfter = (attempt: number): number => Math.min(50, 2 ** attempt);

const isBusy = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && typeof (e as { errcode?: unknown }).errcode === 'number' && ((e as { errcode: number }).errcode & 0xff) === 5;

/**
 * `attempt`'s result, trying it again while it fails with SQLITE_BUSY, for up to `boundMs` in all. An
 * attempt must leave no transaction open when it fails (a whole BEGIN...COMMIT, or one statement in
 * autocommit): a BUSY met inside a transaction left open is thrown at once, since only the transaction
 * as a whole can be tried again. Past the bound the error thrown keeps SQLite's code (errcode 5), so it
 * is classified 'unavailable' (src/store/errors.ts) like any other outage.
 */
export async function whenUnlocked<T>(db: DatabaseSync, attempt: () => T, boundMs = LOCK_WAIT_MS): Promise<T> {
  const deadline = performance.now() + boundMs;
  for (let n = 0; ; n++) {
    try {
      return attempt();
    } catch (e) {
      if (!isBusy(e) || db.isTransaction) throw e;
      const left = deadline - performance.now();
      if (left <= 0) throw lockTimeout(e, boundMs);
      await new Promise((ok) => setTimeout(ok, Math.min(left, pauseAfter(n))));
    }
  }
}

function lockTimeout(cause: unknown, boundMs: number): Error {
  const msg = `the database stayed locked by another connection for ${boundMs / 1000} s`;
  return Object.assign(new Error(msg, { cause }), { code: 'ERR_SQLITE_ERROR', errcode: (cause as { errcode: number }).errcode, errstr: 'database is locked' });
}

/**
 * One transaction with awaits in it at a time on a shared connection (SqlRunner.tx), and no other
 * statement on that connection while it is open. SQLite has one transaction per connection: before
 * 2026-11-29 a second tx begun while the first awaited failed ("cannot start a transaction within a
 * transaction": an admin's key rotation beside a dashboard read's rollup fold), and a statement of
 * another caller run meanwhile became part of the open transaction (rolled back with it, though its
 * caller had been told it was done). Statements wait only while such a transaction is open; the
 * store's own transactions (BEGIN ... COMMIT with no await between) need no gate of their own.
 */
export class TxGate {
  #open: Promise<void> | null = null;

  /** `run()` once no transaction is open (at once when none is: the common case). */
  outside<T>(run: () => Promise<T>): Promise<T> {
    return this.#open === null ? run() : this.#after(run);
  }

  async #after<T>(run: () => Promise<T>): Promise<T> {
    while (this.#open !== null) await this.#open;
    return run();
  }

  /** `fn()` as the connection's one open transaction. */
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    while (this.#open !== null) await this.#open;
    let release!: () => void;
    this.#open = new Promise<void>((ok) => { release = ok; });
    try { return await fn(); } finally { this.#open = null; release(); }
  }
}
