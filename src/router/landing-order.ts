// The training reads in landing order (src/store/landing.ts), not by the rows' own times: a pair of
// rows (a decision and its inference record; a feedback row and its decision) is read once both have
// landed, at the later of their two positions, so a pair completed by a row landing late comes after
// every pair read before it, whatever times its rows carry. Pairs at one position (one PostgreSQL
// transaction) are ordered by time, then id, as all were before.
//
// Rows stored before migration 24 have position 0. A pair of two such rows is read in time order
// ((created_at, id), as every cursor was before), and only by a cursor from before (without `landed`),
// so a learned state stored by an older gateway goes on from where it stopped: first the old rows after
// its time, then the pairs with a position from the first after its time (startOf: an older replica in
// a rolling upgrade read the others). Its last pair's position is its cursor from then on.
import type { SqlRunner } from '../store/sql-runner.ts';
import type { Cursor } from './store.ts';

/** A pair's tables (aliases `a` and `b`, each with its `landed`), its id column and its time column. */
export type PairShape = { a: string; b: string; id: string; at: string };
export type Sql = { sql: string; params: unknown[] };

/** The larger of two positions, in the store's dialect. */
export const later = (sql: SqlRunner, a: string, b: string): string => (sql.dialect === 'sqlite' ? `MAX(${a}, ${b})` : `GREATEST(${a}, ${b})`);
const BIG = 'CAST(? AS BIGINT)';

/**
 * The pairs after cursor `c` whose position is below `below` (decimal text), as the rows of `cols` from
 * `from` matching `where` (its parameters `params`), with their position `g` and time `t`. `before`: only pairs before this one (position, time
 * and id) among those with a position. `limit`: at most that many from each branch (the caller orders by ORDER
 * and limits the whole).
 */
export function pairsAfter(
  sql: SqlRunner, p: PairShape, q: { cols: string; from: string; where: string; params: readonly unknown[]; },
  c: Cursor, below: string, o: { limit?: number; before?: { landed: string; at: string; id: string }; start?: string } = {},
): Sql {
  const limit = o.limit;
  const g = later(sql, `${p.a}.landed`, `${p.b}.landed`);
  const select = `SELECT ${q.cols}, ${g} AS g, ${p.at} AS t FROM ${q.from} WHERE ${q.where}`;
  const parts: Sql[] = [];
  const bounded = (s: string, order: string): string => (limit === undefined ? s : `SELECT * FROM (${s} ORDER BY ${order} LIMIT ${Math.max(1, Math.floor(limit))}) l`);
  const at = c.landed ?? o.start ?? '0';
  if (c.landed === undefined) {
    // Pairs of rows from before migration 24, after the cursor's time (their index on created_at).
    parts.push({
      sql: bounded(`${select} AND ${p.a}.landed = 0 AND ${p.b}.landed = 0 AND (${p.at} > ? OR (${p.at} = ? AND ${p.id} > ?))`, `${p.at}, ${p.id}`),
      params: [...q.params, c.at, c.at, c.id],
    });
  }
  // Pairs with a position, found from the side that landed last (the partial indexes on landed); `>= 0`
  // on the first side and `>` on the second keep a pair whose rows share a position in one branch.
  const b = o.before;
  const same = (cmp: string): string => `(${p.at} ${cmp} ? OR (${p.at} = ? AND ${p.id} ${cmp} ?))`;
  for (const [x, y, cmp] of [[p.a, p.b, '>='], [p.b, p.a, '>']] as const) {
    parts.push({
      // `landed >= cursor` as a term of its own: the OR after it gives the planner no range on the index.
      // And before `landed > 0` (which the partial index needs): SQLite bounds the range by the first
      // lower bound it meets, and the other way round an idle pass walked every row with a position (200,000
      // decisions: 11 ms a branch, 0.01 ms so).
      sql: bounded(`${select} AND ${x}.landed >= ${BIG} AND ${x}.landed < ${BIG} AND ${x}.landed > 0 AND ${x}.landed ${cmp} ${y}.landed
        AND (${x}.landed > ${BIG} OR (${x}.landed = ${BIG} AND ${same('>')}))${b ? ` AND (${x}.landed < ${BIG} OR (${x}.landed = ${BIG} AND ${same('<')}))` : ''}`,
      `${x}.landed, ${p.at}, ${p.id}`),
      params: [...q.params, at, below, at, at, c.at, c.at, c.id, ...(b ? [b.landed, b.landed, b.at, b.at, b.id] : [])],
    });
  }
  return { sql: parts.map((s) => s.sql).join(' UNION ALL '), params: parts.flatMap((s) => s.params) };
}

/**
 * Where the pairs with a position begin for cursor `c` without one (pairsAfter's `start`): just before the
 * first pair, in landing order, after the cursor's time, else just below `below`. Such a cursor was
 * stored by a gateway reading by time, which read every pair up to that time whatever its position:
 * not only before migration 24, but by an older replica training beside newer ones in a rolling
 * upgrade, after which every pair with a position was read again from the first (all feedback and
 * answers since the upgrade counted twice, each time an older replica stored its cursor).
 */
export async function startOf(sql: SqlRunner, p: PairShape, q: { cols: string; from: string; where: string; params: readonly unknown[] }, c: Cursor, below: string): Promise<string> {
  const after = { ...q, cols: `${p.id} AS id`, where: `${q.where} AND (${p.at} > ? OR (${p.at} = ? AND ${p.id} > ?))`, params: [...q.params, c.at, c.at, c.id] };
  const u = pairsAfter(sql, p, after, { at: c.at, id: c.id, landed: '0' }, below, { limit: 1 });
  const g = (await sql.all(`SELECT u.g AS g FROM (${u.sql}) u ORDER BY ${ORDER('u')} LIMIT 1`, u.params))[0]?.g;
  return String(BigInt(g === undefined ? below : String(g)) - 1n);
}

/** The order of pairsAfter's rows (alias `u`): by position, then time, then id. */
export const ORDER = (u: string): string => `${u}.g, ${u}.t, ${u}.id`;

/** The cursor at a row pairsAfter read (its time, id and position as the store gave them). */
export function cursorAt(at: string, id: string, g: unknown): Cursor {
  const landed = String(g);
  return landed === '0' ? { at, id } : { at, id, landed };
}


/**
 * A cursor past `next` (the first position not yet given out, nextLanding) re-based to just below
 * `below` (the landing horizon), else null. Positions only grow within one store, so a cursor past
 * every position given out means the store's positions started again: a PostgreSQL store dumped and
 * restored into another cluster (its transaction ids start again), or a SQLite file replaced by an
 * older copy. Left as it was, every row landing from then on would sit below the cursor and never be
 * read, until the new positions passed the old ones. Re-based, the rows the move brought along count
 * as read (they were, or are lost with the old cluster's last seconds) and those landing from now on are
 * read; the rows landed since the move and before this pass are passed.
 * Not the horizon itself: a rollback or reset stores its feedback cursor at `next` as it was then
 * (src/router/state-restore.ts), at or past the horizon until a later position lands (PostgreSQL: for
 * as long as any write transaction open at the time runs), and re-basing it read again the rows the
 * restore had passed.
 */
export function rebasedCursor(c: Cursor, below: string, next: string): Cursor | null {
  if (c.landed === undefined || BigInt(c.landed) <= BigInt(next)) return null;
  return { ...c, landed: String(BigInt(below) - 1n) };
}
