// Retention: raw records older than `records_days` are deleted and request/response bodies older than
// `bodies_days` are cleared, in small chunks so no pass holds the write lock for long; the rollups
// stay (they are never derived again from raw rows). Also drops expired sessions and grace hashes.
import type { SqlRunner } from '../store/sql-runner.ts';
import { idAt } from './history.ts';
import { chunkedPass } from '../util/catch-up.ts';

export type RetentionSettings = { recordsDays: number | null; bodiesDays: number | null };

const CHUNK = 2000;
const DAY = 86_400_000;

/** `more`: the pass stopped at its bound (maxChunks) with records or bodies left (the next pass comes soon: src/util/catch-up.ts). */
export type PruneResult = { records: number; bodies: number; more: boolean };

/** One pass; returns how many records were deleted and how many had bodies cleared. */
export async function pruneOnce(sql: SqlRunner, s: RetentionSettings, now = Date.now(), maxChunks = 500): Promise<PruneResult> {
  const out: PruneResult = { records: 0, bodies: 0, more: false };
  const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
  if (s.recordsDays !== null) {
    const bound = idAt(now - s.recordsDays * DAY);
    const p = await chunkedPass(() => sql.tx(async (q) => {
      await q.run(`DELETE FROM feedback WHERE inference_id IN (SELECT id FROM inferences WHERE id < ? ORDER BY id LIMIT ${CHUNK})`, [bound]);
      return q.run(`DELETE FROM inferences WHERE id IN (SELECT id FROM inferences WHERE id < ? ORDER BY id LIMIT ${CHUNK})`, [bound]);
    }), CHUNK, maxChunks, turn);
    out.records = p.rows;
    out.more = p.more;
  }
  if (s.bodiesDays !== null) {
    const bound = idAt(now - s.bodiesDays * DAY);
    const p = await chunkedPass(() => sql.run(`UPDATE inferences SET request_body = NULL, response_body = NULL WHERE id IN (
      SELECT id FROM inferences WHERE id < ? AND (request_body IS NOT NULL OR response_body IS NOT NULL) ORDER BY id LIMIT ${CHUNK})`, [bound]), CHUNK, maxChunks, turn);
    out.bodies = p.rows;
    out.more ||= p.more;
  }
  return out;
}
