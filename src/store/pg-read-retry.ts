// One retry for a PostgreSQL read whose connection was lost under it: a backend terminated by an admin
// or a pooler (pg_terminate_backend), a failover that drops the connections, an idle connection cut by
// a firewall or idle_session_timeout. The read is run again once, on a connection from the pool (the
// lost one is discarded), within what is left of the read deadline (src/store/read-deadline.ts), so a
// retry never makes a request wait longer than a read without one. Only plain reads are retried: a
// write whose connection was lost has an unknown outcome, and running it again could apply it twice.
// Query errors (syntax, constraint, statement timeout 57014, serialization failure) are never retried.
import { readerDeadline, STORE_READ_DEADLINE_MS, withinReadDeadline } from './read-deadline.ts';

/** SQLSTATEs of a connection the server ended: admin_shutdown, crash_shutdown, cannot_connect_now; class 08 is added below. */
const LOST_STATES = new Set(['57P01', '57P02', '57P03']);
/** Socket codes of a connection cut under a query; ETIMEDOUT is the kernel's verdict on one its keepalive probes found dead (pg-pool-health.ts). */
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/** pg's messages for a connection that ended under a query, or a pooled client whose connection had already failed. */
const LOST_MESSAGE = /^(Connection terminated unexpectedly|Client has encountered a connection error and is not queryable)$/;

/** Whether `e` says the connection was lost (the query may not have run), not that the query failed. */
export function connectionLost(e: unknown): boolean {
  if (e === null || typeof e !== 'object') return false;
  const { code, message } = e as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (LOST_STATES.has(code) || LOST_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  return code === undefined && typeof message === 'string' && LOST_MESSAGE.test(message);
}

/** Words of a statement that changes something, or may: such a statement is never run twice. */
const CHANGES = /\b(insert|update|delete|merge|truncate|copy|call|do|create|alter|drop|grant|revoke|lock|listen|notify|vacuum|analyze|refresh|nextval|setval|set_config|pg_advisory_\w*|pg_notify|pg_terminate_backend|pg_cancel_backend|into)\b/i;

/**
 * A statement that only reads: it begins with SELECT or WITH (or a parenthesis before them) and no
 * word outside its quoted strings and comments may change anything (INSERT, UPDATE, nextval(), a
 * data-modifying WITH ...). A read of that kind returns the same rows when run again.
 */
export function plainRead(sql: string): boolean {
  const bare = sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\/\*[\s\S]*?\*\//g, ' ');
  return /^[\s(]*(select|with)\b/i.test(bare) && !CHANGES.test(bare);
}

/** Counts the retries (for /metrics). */
export type ReadRetries = { count: number };

/**
 * `run()`'s result; when `sql` is a plain read and the first attempt lost its connection, one more
 * attempt, given only the rest of `deadlineMs` from the first attempt's start (past it, the first
 * attempt's error stands).
 */
export async function retryingRead<T>(sql: string, run: () => Promise<T>, retries: ReadRetries, deadlineMs = STORE_READ_DEADLINE_MS): Promise<T> {
  const t0 = Date.now();
  try {
    return await run();
  } catch (e) {
    const left = deadlineMs - (Date.now() - t0);
    // A read given up because its reader left (read-deadline.ts) is not run again: nobody waits for it.
    if (left <= 0 || !connectionLost(e) || !plainRead(sql) || readerDeadline()?.reason) throw e;
    retries.count++;
    return withinReadDeadline(run, left);
  }
}
