// One small query interface over both backends, so a feature's queries (dashboard, router state,
// catalog overlay, stored responses) are written once instead of once per store class. SQL uses `?`
// placeholders in both dialects; PostgreSQL gets them rewritten to $1, $2, ... (outside quotes).
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type pg from 'pg';
import type { Dialect } from './migrations.ts';
import { retryingRead, type ReadRetries } from './pg-read-retry.ts';
import { abandonClient } from './pg-cancel.ts';
import { abandoningQuery, READ_ABANDON_MS } from './pg-pool-health.ts';
import type { Row } from './rows.ts';
import type { TxGate } from './sqlite-lock.ts';

export type SqlRunner = {
  readonly dialect: Dialect;
  /**
   * Rows of a query. Parameters: string, number, bigint, boolean (1/0 on SQLite), null, Buffer. On
   * PostgreSQL, outside a transaction, a plain read (SELECT or WITH that changes nothing) whose
   * connection was lost is run once more within the read deadline (src/store/pg-read-retry.ts).
   */
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs a statement; resolves with the number of rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * Runs `fn` in one transaction (rolled back when it throws). On SQLite the connection is shared:
   * `fn` must await nothing but the runner it is given, or other work could join the transaction.
   */
  tx<T>(fn: (q: SqlRunner) => Promise<T>): Promise<T>;
};

/** `?` -> `$n`, skipping quoted strings, quoted identifiers and comments. */
export function toPgPlaceholders(sql: string): string {
  if (!sql.includes('?')) return sql;
  let out = '';
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = closing(sql, i, c);
      out += sql.slice(i, end + 1);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end < 0 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === '?') out += `$${++n}`;
    else out += c;
  }
  return out;
}

/** Index of the quote closing the one at `from` ('' and "" inside are escapes). */
function closing(sql: string, from: number, q: string): number {
  for (let i = from + 1; i < sql.length; i++) {
    if (sql[i] !== q) continue;
    if (sql[i + 1] === q) { i++; continue; }
    return i;
  }
  return sql.length - 1;
}

const sqliteValue = (v: unknown): SQLInputValue =>
  v === undefined ? null : typeof v === 'boolean' ? (v ? 1 : 0) : (v as SQLInputValue);

/**
 * `unlocked` runs one attempt (a statement, or BEGIN IMMEDIATE) once no other connection holds the lock
 * it needs, waiting on a timer rather than in SQLite's busy handler (src/store/sqlite-lock.ts); `gate`
 * keeps this connection's transactions one at a time and other statements out of them (TxGate).
 */
export function sqliteRunner(db: DatabaseSync, stmt: (sql: string) => StatementSync, unlocked: <T>(attempt: () => T) => Promise<T>, gate: TxGate): SqlRunner {
  const all = (sql: string, params: readonly unknown[] = []): Promise<Row[]> => unlocked(() => stmt(sql).all(...params.map(sqliteValue)) as Row[]);
  const run = (sql: string, params: readonly unknown[] = []): Promise<number> => unlocked(() => Number(stmt(sql).run(...params.map(sqliteValue)).changes));
  // The runner a transaction's function gets: its statements are the transaction's; a nested tx joins it.
  const inner: SqlRunner = { dialect: 'sqlite', all, run, tx: (fn) => fn(inner) };
  return {
    dialect: 'sqlite',
    all: (sql, params) => gate.outside(() => all(sql, params)),
    run: (sql, params) => gate.outside(() => run(sql, params)),
    tx: (fn) => gate.hold(async () => {
      await unlocked(() => db.exec('BEGIN IMMEDIATE'));
      try {
        const out = await fn(inner);
        db.exec('COMMIT');
        return out;
      } catch (err) {
        if (db.isTransaction) { try { db.exec('ROLLBACK'); } catch { /* keep the error that failed the transaction */ } }
        throw err;
      }
    }),
  };
}

type PgQueryable = { query(sql: string, params?: unknown[]): Promise<pg.QueryResult> };

function pgQueries(c: PgQueryable): Pick<SqlRunner, 'all' | 'run'> {
  return {
    all: async (sql, params = []) => (await c.query(toPgPlaceholders(sql), [...params])).rows as Row[],
    run: async (sql, params = []) => (await c.query(toPgPlaceholders(sql), [...params])).rowCount ?? 0,
  };
}

/**
 * Runs `fn` in one transaction on a client borrowed from the pool (rolled back when it throws). A client
 * whose ROLLBACK fails too is broken: it is destroyed rather than handed out again. The store's own
 * writes (COPY, prepared statements) and SqlRunner.tx both go through here. With `deadlineMs`, a
 * transaction not done by then fails as its connection lost (ETIMEDOUT), the connection is destroyed and
 * the server asked to cancel its statement (a backend waiting on a lock would otherwise wait on):
 * a connection a network dropped without a FIN or RST answers never, and the kernel gives up on data it
 * sent only after about 15 minutes of retransmissions. Only for writes that may run again (idempotent).
 */
export async function pgTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>, deadlineMs?: number): Promise<T> {
  const c = await pool.connect();
  let broken: Error | undefined;
  // A connection that dies under the transaction fails it (as pool.query does for one statement): a
  // query written to a socket that was just cut could otherwise wait forever for its answer.
  let onError: (e: Error) => void = () => {};
  const died = new Promise<never>((_, reject) => { onError = (e) => { broken = e; reject(e); }; });
  died.catch(() => {});
  c.on('error', onError);
  const timer = deadlineMs === undefined ? undefined : setTimeout(() => {
    const e = Object.assign(new Error(`the database did not finish a write within ${deadlineMs / 1000} s: its connection is discarded`), { code: 'ETIMEDOUT' });
    onError(e);
    abandonClient(c); // its statement cancelled on the server (else a lock wait runs on) and its socket closed
  }, deadlineMs);
  try {
    const out = await Promise.race([(async () => { await c.query('BEGIN'); const r = await fn(c); await c.query('COMMIT'); return r; })(), died]);
    return out;
  } catch (err) {
    if (!broken) await c.query('ROLLBACK').catch((e: unknown) => { broken = e instanceof Error ? e : new Error(String(e)); });
    throw err;
  } finally {
    clearTimeout(timer);
    c.removeListener('error', onError);
    c.release(broken);
  }
}

/**
 * `tx` borrows one client from the pool for the transaction (pgTransaction); nested `tx` calls join it.
 * `all` outside a transaction retries a plain read whose connection was lost, once (counted in
 * `retries`), and gives up a connection that has not answered it in `abandonMs` (pg-pool-health.ts);
 * statements in a transaction are never retried (the transaction failed with its connection).
 */
export function pgRunner(pool: pg.Pool, retries: ReadRetries = { count: 0 }, abandonMs = READ_ABANDON_MS): SqlRunner {
  const q = pgQueries(pool);
  const read = pgQueries({ query: abandoningQuery(pool, abandonMs) });
  return {
    dialect: 'postgres',
    all: (sql, params) => retryingRead(sql, () => read.all(sql, params), retries),
    run: q.run,
    tx: (fn) => pgTransaction(pool, (c) => {
      const inner: SqlRunner = { dialect: 'postgres', ...pgQueries(c), tx: (f) => f(inner) };
      return fn(inner);
    }),
  };
}
