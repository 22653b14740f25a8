// A bound on the store reads a client request waits for (a stored response, a feedback event's
// inference and metric types). PostgreSQL that stops answering on open connections (a partition, a
// table locked by another session) leaves a query on a pooled connection waiting with no end: the
// pool's 5 s connection timeout covers only new connections. Past the bound the read is refused as the
// store being unavailable (a 503 to retry), the same time a new connection is given up after.

/** How long a request waits for one store read. */
export const STORE_READ_DEADLINE_MS = 5000;

/** The read's outcome, or an error classified 'unavailable' (src/store/errors.ts: ETIMEDOUT) once `ms` pass. */
export function withinReadDeadline<T>(read: Promise<T>, ms = STORE_READ_DEADLINE_MS): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(`the database did not answer within ${ms / 1000} s`), { code: 'ETIMEDOUT' })), ms);
    read.then((v) => { clearTimeout(timer); resolve(v); }, (e: unknown) => { clearTimeout(timer); reject(e); });
  });
}
