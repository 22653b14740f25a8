// Retention: raw records older than `records_days` are deleted and request/response bodies older than
// `bodies_days` are cleared, in small chunks so no pass holds the write lock for long; the rollups
// stay (they are never derived again from raw rows). Each chunk is one step (RetentionSteps): the
// gateway runs them on the store's write thread (src/store/write-thread.ts), where SQLite's
// synchronous deletes do not hold the event loop, and on the main store while that thread is down.
import type { SqlRunner } from '../store/sql-runner.ts';
import { idAt } from './history.ts';
import { chunkedPass } from '../util/catch-up.ts';

export type RetentionSettings = { recordsDays: number | null; bodiesDays: number | null };

/** Rows a step deletes or clears at most. */
export const RETENTION_CHUNK = 2000;
const DAY = 86_400_000;

/** One chunk of each kind, given the id bound (records with a smaller id are due); each resolves with the rows it touched. */
export type RetentionSteps = { records(bound: string): Promise<number>; bodies(bound: string): Promise<number> };

/** Deletes the oldest records with an id below `bound` (at most a chunk) and their feedback, in one transaction. */
export function pruneRecordsChunk(sql: SqlRunner, bound: string): Promise<number> {
  return sql.tx(async (q) => {
    await q.run(`DELETE FROM feedback WHERE inference_id IN (SELECT id FROM inferences WHERE id < ? ORDER BY id LIMIT ${RETENTION_CHUNK})`, [bound]);
    return q.run(`DELETE FROM inferences WHERE id IN (SELECT id FROM inferences WHERE id < ? ORDER BY id LIMIT ${RETENTION_CHUNK})`, [bound]);
  });
}

/** Clears the bodies of the oldest records with an id below `bound` that still have one (at most a chunk). */
export function clearBodiesChunk(sql: SqlRunner, bound: string): Promise<number> {
  return sql.run(`UPDATE inferences SET request_body = NULL, response_body = NULL WHERE id IN (
    SELECT id FROM inferences WHERE id < ? AND (request_body IS NOT NULL OR response_body IS NOT NULL) ORDER BY id LIMIT ${RETENTION_CHUNK})`, [bound]);
}

/** The steps on `sql` itself (the write thread's own connection, the main store, tests). */
export const sqlSteps = (sql: SqlRunner): RetentionSteps => ({ records: (b) => pruneRecordsChunk(sql, b), bodies: (b) => clearBodiesChunk(sql, b) });

/** `more`: the pass stopped at its bound (maxChunks) with records or bodies left (the next pass comes soon: src/util/catch-up.ts). */
export type PruneResult = { records: number; bodies: number; more: boolean };

/** One pass; returns how many records were deleted and how many had bodies cleared. */
export async function pruneOnce(steps: RetentionSteps, s: RetentionSettings, now = Date.now(), maxChunks = 500): Promise<PruneResult> {
  const out: PruneResult = { records: 0, bodies: 0, more: false };
  const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
  if (s.recordsDays !== null) {
    const bound = idAt(now - s.recordsDays * DAY);
    const p = await chunkedPass(() => steps.records(bound), RETENTION_CHUNK, maxChunks, turn);
    out.records = p.rows;
    out.more = p.more;
  }
  if (s.bodiesDays !== null) {
    const bound = idAt(now - s.bodiesDays * DAY);
    const p = await chunkedPass(() => steps.bodies(bound), RETENTION_CHUNK, maxChunks, turn);
    out.bodies = p.rows;
    out.more ||= p.more;
  }
  return out;
}
