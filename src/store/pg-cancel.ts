// Asks the PostgreSQL server to cancel what a connection the gateway is giving up is running.
// Destroying the socket is not enough: a backend waiting on a lock or busy in a long statement notices
// its client gone only when it next reads from or writes to it, so each statement given up at a
// deadline (pg-pool-health.ts abandoningQuery, sql-runner.ts pgTransaction) kept running on the server,
// a server connection held and a place kept in the lock queue; a batch retried every 30 s behind a
// migration's lock piled one such backend up per try (measured: 3 writes and 4 reads given up behind
// an ACCESS EXCLUSIVE lock left 7 backends waiting on it). The protocol's CancelRequest (a new
// connection, 16 bytes, no authentication) interrupts the statement; the backend then fails writing its
// error to the closed socket and ends, its transaction rolled back.
import net from 'node:net';

/** How long the cancel's own connection may take (the server may be the unreachable one). */
export const CANCEL_CONNECT_MS = 5000;

/** The parts of a pg.Client a cancel needs (its server and its BackendKeyData). */
export type Cancellable = { host?: string; port?: number; processID?: number | null; secretKey?: number | null };

/**
 * Sends a CancelRequest for `c`'s backend, fire and forget: every error is swallowed (the statement is
 * given up either way). Does nothing for a client that never learnt its key (never connected).
 */
export function cancelOnServer(c: Cancellable): void {
  if (c.processID == null || c.secretKey == null || c.port === undefined) return;
  const msg = Buffer.alloc(16);
  msg.writeInt32BE(16, 0);
  msg.writeInt32BE(80877102, 4); // the CancelRequest code (1234 << 16 | 5678)
  msg.writeInt32BE(c.processID, 8);
  msg.writeInt32BE(c.secretKey, 12);
  const host = c.host ?? 'localhost';
  const s = host.startsWith('/') ? net.connect({ path: `${host}/.s.PGSQL.${c.port}` }) : net.connect({ host, port: c.port });
  s.setTimeout(CANCEL_CONNECT_MS, () => s.destroy());
  s.on('error', () => {});
  s.on('connect', () => s.end(msg));
  s.resume(); // the server answers nothing and closes: read to the end so 'close' comes
  s.unref();
}

/** A pooled client's socket (pg keeps it as `connection.stream`). */
type WithStream = { connection?: { stream?: { destroy(e?: Error): void } } };

/** Closes a pooled client's socket: it errors, and the pool drops it rather than hand it out again. */
export function dropSocket(c: unknown): void {
  (c as WithStream).connection?.stream?.destroy();
}

/**
 * Gives up a busy client: its statement cancelled on the server (cancelOnServer: a backend waiting on a
 * lock or busy would otherwise run on after the socket is gone) and its socket closed (dropSocket).
 */
export function abandonClient(c: unknown): void {
  cancelOnServer(c as Cancellable);
  dropSocket(c);
}
