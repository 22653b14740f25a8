// The order in which rows landed in the store (column `landed` on router_decisions, inferences and
// feedback), which the router's training cursors walk instead of the rows' own times: the record writers
// queue and retry through a store outage, so a row can land minutes after the time it carries, behind a
// cursor on times (its answer was never counted, its feedback never learned).
//
// A cursor on landing positions must never pass a position that can still appear. How each backend
// keeps that promise:
// - SQLite runs one write transaction at a time, and a writer takes its transaction's position inside
//   the transaction from a counter row (record_landing): positions become visible in the order they
//   were given, so every visible position is final.
// - PostgreSQL commits concurrent transactions in any order, so a sequence would not do: a cursor at the
//   highest committed value can pass a lower one still in flight (seen: a transaction holding value 1
//   while value 2 committed). A row's position is the id of the transaction that inserted it
//   (pg_current_xact_id(), 64 bits, never wraps), and a read takes only positions below the oldest
//   transaction still running (pg_snapshot_xmin): every transaction below it has ended, so nothing can
//   land there any more. A long write transaction anywhere in the cluster holds training back while it
//   runs; it loses nothing. (pg_current_xact_id: PostgreSQL 13 or later.)
//   Positions are this cluster's transaction ids: a store dumped and restored into another cluster
//   starts its ids again, below the restored cursors; training re-bases such cursors (landing-order.ts
//   rebasedCursor).
// Either way a position is a transaction: the rows one batch lands share it, and both backends order
// them alike (by time, then id: src/router/landing-order.ts). Rows stored before migration 24 keep
// position 0 and are read in time order, as they were.
import type { Dialect } from './migrations.ts';
import type { SqlRunner } from './sql-runner.ts';

const TABLES = [['router_decisions', 'inference_id'], ['inferences', 'id'], ['feedback', 'id']] as const;

/**
 * Migration 24. Existing rows get 0 without a table rewrite (a constant default); the indexes hold only
 * rows with a position (partial), so building them on a large table writes nothing.
 */
export function landingDdl(d: Dialect): string[] {
  const out: string[] = [];
  for (const [t, id] of TABLES) {
    out.push(`ALTER TABLE ${t} ADD COLUMN landed ${d === 'postgres' ? 'BIGINT' : 'INTEGER'} NOT NULL DEFAULT 0`);
    if (d === 'postgres') out.push(`ALTER TABLE ${t} ALTER COLUMN landed SET DEFAULT (pg_current_xact_id()::text::bigint)`);
    out.push(`CREATE INDEX ${t}_landed_idx ON ${t} (landed, ${id}) WHERE landed > 0`);
  }
  if (d === 'sqlite') out.push('CREATE TABLE record_landing (n INTEGER NOT NULL)', 'INSERT INTO record_landing (n) VALUES (0)');
  return out;
}

/**
 * SQLite: the position of the caller's write transaction (`n` of the row returned). Every insert into the
 * three tables on SQLite must give its rows one (a row without, 0, is read only by a cursor from before
 * migration 24). A counter row, not a trigger: a trigger numbering each row made an inference insert
 * four times as slow (5 -> 21 µs); this is one statement a batch.
 */
export const TAKE_LANDING = 'UPDATE record_landing SET n = n + 1 RETURNING n';

/**
 * The positions a read may take now: those below the returned one (decimal text). SQLite: every
 * position given out so far; PostgreSQL: those of transactions that have all ended (see above).
 */
export async function landingHorizon(sql: SqlRunner): Promise<string> {
  const q = sql.dialect === 'sqlite' ? 'SELECT n + 1 AS h FROM record_landing' : 'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS h';
  return String((await sql.all(q))[0]?.h ?? '1');
}

/**
 * The first position not yet given out (decimal text): rows landing after this call have it or a later
 * one. PostgreSQL: the next transaction id (one that began before this call and lands later counts as
 * before it).
 */
export async function nextLanding(sql: SqlRunner): Promise<string> {
  const q = sql.dialect === 'sqlite' ? 'SELECT n + 1 AS h FROM record_landing' : 'SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS h';
  return String((await sql.all(q))[0]?.h ?? '1');
}
