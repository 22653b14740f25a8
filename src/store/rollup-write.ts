// The write path of the dashboard's rollups, run by the stores inside the transaction that inserts a
// batch: the rows really inserted (a retried batch's rows already stored are not among them) are summed
// into hour cells in memory and appended as ONE journal row; src/store/rollup-fold.ts later folds many
// journal rows into every grain and span at once. Feedback is journaled the same way, with its inference's
// served model; feedback stored before its inference waits in feedback_rollup_pending.
import type { SQLInputValue, StatementSync } from 'node:sqlite';
import { encodeCells, encodeFeedback, hourCells, joinedOf, pgText, type JoinedFeedback } from './rollup-cells.ts';
import { noteAppended } from './rollup-fold.ts';
import type { Row } from './rows.ts';
import type { SqlRunner } from './sql-runner.ts';
import type { FeedbackRow, InferenceRecord } from './types.ts';

/** For bench/dashboard.ts only, which compares the write path without these rollups; the gateway never changes it. */
export const rollupBench = { enabled: true };

const APPEND = 'INSERT INTO rollup_journal (kind, cells) VALUES (?, ?)';

/** Feedback rows that waited for these inferences, with their served models (none: counted nowhere). */
function claimed(waiting: readonly Row[], landed: readonly InferenceRecord[]): JoinedFeedback[] {
  const model = new Map(landed.map((r) => [r.id, r.servedModel]));
  return waiting.flatMap((r) => { const m = model.get(String(r.inference_id)); return m ? [joinedOf(r, m)] : []; });
}

// ---- SQLite: synchronous, on the connection and inside the transaction that inserts the rows.

type Prepare = (sql: string) => StatementSync;

export function rollupInferencesSqlite(prepare: Prepare, landed: readonly InferenceRecord[], runner: SqlRunner): void {
  if (landed.length === 0 || !rollupBench.enabled) return;
  prepare(APPEND).run('usage', encodeCells(hourCells(landed)));
  // Nearly always empty: one probe of an empty b-tree per batch.
  if (prepare('SELECT 1 AS x FROM feedback_rollup_pending LIMIT 1').get() !== undefined) {
    const ids = JSON.stringify(landed.map((r) => r.id));
    const waiting = prepare(`SELECT p.inference_id, f.key_id, f.metric, f.type, f.value, f.created_at FROM feedback_rollup_pending p
      JOIN feedback f ON f.id = p.feedback_id WHERE p.inference_id IN (SELECT value FROM json_each(?))`).all(ids) as Row[];
    prepare('DELETE FROM feedback_rollup_pending WHERE inference_id IN (SELECT value FROM json_each(?))').run(ids);
    const fb = claimed(waiting, landed);
    if (fb.length > 0) prepare(APPEND).run('feedback', encodeFeedback(fb));
  }
  noteAppended(runner);
}

export function rollupFeedbackSqlite(prepare: Prepare, landed: readonly FeedbackRow[], runner: SqlRunner): void {
  if (landed.length === 0 || !rollupBench.enabled) return;
  const found = new Map((prepare('SELECT id, served_model FROM inferences WHERE id IN (SELECT value FROM json_each(?))')
    .all(JSON.stringify(landed.map((f) => f.inferenceId))) as Row[]).map((r) => [String(r.id), r.served_model]));
  const joined: JoinedFeedback[] = [];
  const pend = prepare('INSERT INTO feedback_rollup_pending (feedback_id, inference_id, created_at) VALUES (?, ?, ?) ON CONFLICT (feedback_id) DO NOTHING');
  for (const f of landed) {
    if (!found.has(f.inferenceId)) { pend.run(f.id, f.inferenceId, f.createdAt as SQLInputValue); continue; }
    const m = found.get(f.inferenceId);
    if (m !== null && m !== undefined) joined.push({ f, model: String(m) });
  }
  if (joined.length === 0) return;
  prepare(APPEND).run('feedback', encodeFeedback(joined));
  noteAppended(runner);
}

// ---- PostgreSQL: on the client of the insert's transaction.

/** A query on the transaction's client; `name` makes it a prepared statement (planned once per connection). */
export type PgQuery = (sql: string, params: unknown[], name?: string) => Promise<{ rows: Row[] }>;
const APPEND_PG = 'INSERT INTO rollup_journal (kind, cells) VALUES ($1, $2)';

export async function rollupInferencesPg(q: PgQuery, landed: readonly InferenceRecord[], runner: SqlRunner): Promise<void> {
  if (landed.length === 0 || !rollupBench.enabled) return;
  // One round trip: the journal row, and the claim of feedback that waited for these inferences
  // (DELETE ... RETURNING claims each waiting row once, whichever replica's transaction gets there first;
  // the EXISTS is evaluated once, so an empty waiting list costs no index probe per id).
  const waiting = (await q(`WITH j AS (INSERT INTO rollup_journal (kind, cells) VALUES ('usage', $1)),
      p AS (DELETE FROM feedback_rollup_pending WHERE EXISTS (SELECT 1 FROM feedback_rollup_pending) AND inference_id = ANY($2::text[])
        RETURNING feedback_id, inference_id)
    SELECT p.inference_id, f.key_id, f.metric, f.type, f.value, f.created_at FROM p JOIN feedback f ON f.id = p.feedback_id`,
  [encodeCells(hourCells(landed, pgText)), landed.map((r) => r.id)], 'gw_rollup_journal_usage')).rows;
  const fb = claimed(waiting, landed);
  if (fb.length > 0) await q(APPEND_PG, ['feedback', encodeFeedback(fb, pgText)]);
  noteAppended(runner);
}

export async function rollupFeedbackPg(q: PgQuery, landed: readonly FeedbackRow[], runner: SqlRunner): Promise<void> {
  if (landed.length === 0 || !rollupBench.enabled) return;
  const found = new Map((await q('SELECT id, served_model FROM inferences WHERE id = ANY($1::text[])', [landed.map((f) => f.inferenceId)], 'gw_rollup_models')).rows
    .map((r) => [String(r.id), r.served_model]));
  const waiting = landed.filter((f) => !found.has(f.inferenceId));
  if (waiting.length > 0) {
    await q(`INSERT INTO feedback_rollup_pending (feedback_id, inference_id, created_at) SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])
      ON CONFLICT (feedback_id) DO NOTHING`, [waiting.map((f) => f.id), waiting.map((f) => f.inferenceId), waiting.map((f) => f.createdAt)]);
  }
  const joined: JoinedFeedback[] = [];
  for (const f of landed) { const m = found.get(f.inferenceId); if (m !== null && m !== undefined) joined.push({ f, model: String(m) }); }
  if (joined.length === 0) return;
  await q(APPEND_PG, ['feedback', encodeFeedback(joined, pgText)]);
  noteAppended(runner);
}
