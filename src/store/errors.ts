// What a failed store write means for the rows in it: the database is unavailable (keep the rows,
// back off, retry), or one row's values are refused (isolate that row so it never blocks the others).
// Both drivers' errors are classified here, and errors keep their code across the write thread.

export type StoreErrorClass = 'unavailable' | 'row' | 'unknown';

/** SQLite primary result codes (errcode & 0xff) that say the database cannot take writes now. */
const SQLITE_UNAVAILABLE = new Set([
  5,  // SQLITE_BUSY
  6,  // SQLITE_LOCKED
  7,  // SQLITE_NOMEM
  8,  // SQLITE_READONLY
  10, // SQLITE_IOERR
  11, // SQLITE_CORRUPT
  13, // SQLITE_FULL
  14, // SQLITE_CANTOPEN
  15, // SQLITE_PROTOCOL
  26, // SQLITE_NOTADB
]);
/** SQLite primary result codes that blame the values of a row. */
const SQLITE_ROW = new Set([
  18, // SQLITE_TOOBIG
  19, // SQLITE_CONSTRAINT
  20, // SQLITE_MISMATCH
  25, // SQLITE_RANGE
]);

/** Socket-level codes (pg, node:net) of a database that cannot be reached. */
const NET_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

export type StoreErrorFields = { message: string; code?: string; errcode?: number; sqlState?: string };

/**
 * PostgreSQL SQLSTATE classes: 08 connection, 53 insufficient resources (disk full, out of memory),
 * 57 operator intervention (shutdown), 58 system error are outages; 22 data exceptions (a value out
 * of range, bad text) and 23 integrity violations blame rows.
 */
export function classifyStoreError(e: unknown): StoreErrorClass {
  if (e instanceof TypeError || e instanceof RangeError) return 'row'; // our own conversions refused a value
  const f = fieldsOf(e);
  if (f.code === 'ROW_VALUE') return 'row';
  if (f.code !== undefined && NET_UNAVAILABLE.has(f.code)) return 'unavailable';
  if (f.errcode !== undefined) {
    const primary = f.errcode & 0xff;
    if (SQLITE_UNAVAILABLE.has(primary)) return 'unavailable';
    if (SQLITE_ROW.has(primary)) return 'row';
    return 'unknown';
  }
  const state = f.sqlState ?? (f.code && /^[0-9A-Z]{5}$/.test(f.code) ? f.code : undefined);
  if (state !== undefined) {
    const cls = state.slice(0, 2);
    if (cls === '08' || cls === '53' || cls === '57' || cls === '58') return 'unavailable';
    if (cls === '22' || (cls === '23' && state !== '23505')) return 'row';
    return 'unknown';
  }
  if (/Connection terminated|connection timeout|timeout exceeded when trying to connect|write thread exited|Client has encountered a connection error/i.test(f.message)) return 'unavailable';
  return 'unknown';
}

/** The fields that survive a structured clone (the write thread posts them back). */
export function fieldsOf(e: unknown): StoreErrorFields {
  if (e === null || typeof e !== 'object') return { message: String(e) };
  const o = e as { message?: unknown; code?: unknown; errcode?: unknown; sqlState?: unknown; name?: unknown };
  const out: StoreErrorFields = { message: typeof o.message === 'string' ? o.message : String(e) };
  if (typeof o.code === 'string') out.code = o.code;
  if (typeof o.errcode === 'number') out.errcode = o.errcode;
  if (typeof o.sqlState === 'string') out.sqlState = o.sqlState;
  // A TypeError/RangeError thrown by a conversion in the thread must stay a row error on this side.
  if ((o.name === 'TypeError' || o.name === 'RangeError') && out.code === undefined) out.code = 'ROW_VALUE';
  return out;
}

/** An Error rebuilt from posted fields, classified like the original. */
export class StoreError extends Error {
  readonly code: string | undefined;
  readonly errcode: number | undefined;
  readonly sqlState: string | undefined;
  constructor(f: StoreErrorFields) {
    super(f.message);
    this.name = 'StoreError';
    this.code = f.code;
    this.errcode = f.errcode;
    this.sqlState = f.sqlState;
  }
}
