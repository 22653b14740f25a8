// Folds the rollup journal (one row per written batch, src/store/rollup-write.ts) into usage_rollup and
// feedback_rollup: entries are claimed and deleted in the transaction that adds them, so each counts
// exactly once whichever replica or thread folds it. Many batches per fold means each cell is upserted
// once per fold instead of once per batch: the upserts, not the sums, are what a rollup costs to write.
// Folds run a few seconds after writes (on the thread that wrote) and before the dashboard reads.
import { USAGE_SUM_COLUMNS } from './dashboard-schema.ts';
import type { Dialect } from './migrations.ts';
import {
  encodeFeedback, expandCells, expandFeedback, joinedOf, mergeEncoded, pgText, sameText, type FeedbackCell, type UsageCell,
} from './rollup-cells.ts';
import type { SqlRunner } from './sql-runner.ts';
import { throttledLog } from '../util/throttled-log.ts';

const USAGE_COLUMNS = ['span', 'grain', 't', 'key_id', 'model', 'provider', 'route', 'cost_hi', 'cost_lo', 'cost_rest', ...USAGE_SUM_COLUMNS];
const FEEDBACK_COLUMNS = ['span', 'grain', 't', 'key_id', 'model', 'metric', 'type', 'count', 'value_sum', 'value_sumsq'];

/** SQLite: one row of VALUES per statement (prepared once). PostgreSQL: every row as column arrays. */
function source(d: Dialect, cols: readonly string[], type: (c: string, i: number) => string): string {
  return d === 'postgres' ? `SELECT * FROM unnest(${cols.map((c, i) => `$${i + 1}::${type(c, i)}[]`).join(', ')})` : `VALUES (${cols.map(() => '?').join(', ')})`;
}

function usageUpsert(d: Dialect): string {
  const rest = d === 'postgres' ? 'COALESCE(r.cost_rest, 0) + excluded.cost_rest' : 'dec_add(r.cost_rest, excluded.cost_rest)';
  return `INSERT INTO usage_rollup AS r (${USAGE_COLUMNS.join(', ')}) ${source(d, USAGE_COLUMNS, (c, i) => (c === 't' ? 'timestamptz' : i < 7 ? 'text' : c === 'cost_rest' ? 'numeric' : 'bigint'))}
    ON CONFLICT (span, grain, t, key_id, model, provider, route) DO UPDATE SET
    cost_hi = r.cost_hi + excluded.cost_hi + (r.cost_lo + excluded.cost_lo) / 1000000000000,
    cost_lo = (r.cost_lo + excluded.cost_lo) % 1000000000000,
    cost_rest = CASE WHEN excluded.cost_rest IS NULL THEN r.cost_rest ELSE ${rest} END,
    ${USAGE_SUM_COLUMNS.map((c) => `${c} = r.${c} + excluded.${c}`).join(', ')}`;
}

function feedbackUpsert(d: Dialect): string {
  return `INSERT INTO feedback_rollup AS r (${FEEDBACK_COLUMNS.join(', ')}) ${source(d, FEEDBACK_COLUMNS, (c, i) => (c === 't' ? 'timestamptz' : i < 7 ? 'text' : c === 'count' ? 'bigint' : 'float8'))}
    ON CONFLICT (span, grain, t, model, metric, type, key_id) DO UPDATE SET count = r.count + excluded.count,
    value_sum = r.value_sum + excluded.value_sum, value_sumsq = r.value_sumsq + excluded.value_sumsq`;
}

const UPSERT = { sqlite: { usage: usageUpsert('sqlite'), feedback: feedbackUpsert('sqlite') }, postgres: { usage: usageUpsert('postgres'), feedback: feedbackUpsert('postgres') } };

/**
 * A column as a PostgreSQL array literal, built here: pg's generic serializer escapes element by element
 * and cost the write thread ~7 us per folded record; numbers need no quoting, text is quoted and escaped.
 */
function arrayLiteral(values: readonly unknown[]): string {
  const parts = values.map((v) => (v === null || v === undefined ? 'NULL' : typeof v === 'number' ? String(v)
    : `"${String(v).replace(/[\\"]/g, '\\$&')}"`));
  return `{${parts.join(',')}}`;
}

async function upsert(q: SqlRunner, sql: string, rows: unknown[][], width: number): Promise<void> {
  if (rows.length === 0) return;
  if (q.dialect === 'sqlite') { for (const r of rows) await q.run(sql, r); return; }
  const cols: unknown[][] = Array.from({ length: width }, () => []);
  for (const r of rows) for (let i = 0; i < width; i++) cols[i]!.push(r[i]);
  await q.run(sql, cols.map(arrayLiteral));
}

export const writeUsage = (q: SqlRunner, cells: readonly UsageCell[]): Promise<void> =>
  upsert(q, UPSERT[q.dialect].usage, cells.map((c) => [c.span, c.grain, c.t, c.keyId, c.model, c.provider, c.route, c.money.hi, c.money.lo, c.money.rest, ...c.v]), USAGE_COLUMNS.length);
export const writeFeedback = (q: SqlRunner, cells: readonly FeedbackCell[]): Promise<void> =>
  upsert(q, UPSERT[q.dialect].feedback, cells.map((c) => [c.span, c.grain, c.t, c.keyId, c.model, c.metric, c.type, c.count, c.sum, c.sumsq]), FEEDBACK_COLUMNS.length);

/** Folds up to `max` journal entries (oldest first) in one transaction; returns how many it folded. */
export async function foldOnce(sql: SqlRunner, max = 500): Promise<number> {
  return sql.tx(async (q) => {
    // PostgreSQL: a concurrent fold waits on these rows' locks, then finds them deleted and skips them.
    const rows = sql.dialect === 'postgres'
      ? await q.all('DELETE FROM rollup_journal WHERE seq IN (SELECT seq FROM rollup_journal ORDER BY seq LIMIT ?) RETURNING kind, cells', [max])
      : await q.all('SELECT seq, kind, cells FROM rollup_journal ORDER BY seq LIMIT ?', [max]);
    if (rows.length === 0) return 0;
    if (sql.dialect === 'sqlite') await q.run('DELETE FROM rollup_journal WHERE seq <= ?', [Math.max(...rows.map((r) => Number(r.seq)))]);
    const hours = new Map<string, UsageCell>();
    const feedback: string[] = [];
    for (const r of rows) {
      if (r.kind === 'usage') mergeEncoded(hours, String(r.cells));
      else feedback.push(String(r.cells));
    }
    await writeUsage(q, expandCells(hours.values()));
    await writeFeedback(q, expandFeedback(feedback));
    return rows.length;
  });
}

/** When the write path folds by itself: `delayMs` after a batch, or at once after `maxEntries` appends. */
export const foldSettings = { delayMs: 15_000, maxEntries: 200 };

type State = { timer: NodeJS.Timeout | null; appended: number; running: Promise<void> | null };
const states = new WeakMap<SqlRunner, State>();
const stateOf = (sql: SqlRunner): State => {
  let s = states.get(sql);
  if (!s) { s = { timer: null, appended: 0, running: null }; states.set(sql, s); }
  return s;
};

/** A failing fold repeats on every append: one line a minute. */
const logFailure = throttledLog(undefined, 60_000);

/** Folds everything in the journal (a fold already running on this runner first). Errors go to the log, rate-limited. */
export function foldAll(sql: SqlRunner): Promise<void> {
  const s = stateOf(sql);
  if (s.timer) { clearTimeout(s.timer); s.timer = null; }
  s.appended = 0;
  const run = (s.running ?? Promise.resolve()).then(async () => {
    for (let i = 0; i < 100; i++) if ((await foldOnce(sql)) < 500) return;
  }).catch((e: unknown) => {
    // A closed store (shutdown, a test's end) leaves the entries for the next fold: nothing is lost, nothing to say.
    const msg = (e as Error).message ?? String(e);
    if (/not open|after calling end|closed|terminat/i.test(msg)) return;
    logFailure('rollup fold failed (entries kept)', msg);
  }).finally(() => { if (s.running === run) s.running = null; });
  s.running = run;
  return run;
}

/** Called by the write path after each journal append (inside its transaction, so it only schedules). */
export function noteAppended(sql: SqlRunner): void {
  const s = stateOf(sql);
  s.appended++;
  if (s.appended >= foldSettings.maxEntries) { s.appended = 0; setTimeout(() => void foldAll(sql), 0).unref(); return; }
  if (s.timer === null) { s.timer = setTimeout(() => { s.timer = null; void foldAll(sql); }, foldSettings.delayMs); s.timer.unref(); }
}

/** Before a dashboard read: folds what is journaled so the answer includes every stored record. */
export async function foldBeforeRead(sql: SqlRunner): Promise<void> {
  const s = states.get(sql);
  if (s?.running) await s.running;
  if ((await sql.all('SELECT 1 AS x FROM rollup_journal LIMIT 1')).length > 0) await foldAll(sql);
}

/**
 * On PostgreSQL a feedback batch and its inference's batch can commit at once, each not seeing the
 * other: the feedback then waits although its inference is stored. This pass (the dashboard's hourly
 * maintenance) journals those, and drops waiting rows older than `staleMs` whose inference never came.
 */
export async function sweepPendingFeedback(sql: SqlRunner, now = Date.now(), staleMs = 86_400_000): Promise<number> {
  const n = await sql.tx(async (q) => {
    const claim = sql.dialect === 'postgres'
      ? `WITH p AS (DELETE FROM feedback_rollup_pending p USING inferences i WHERE i.id = p.inference_id RETURNING p.feedback_id, i.served_model)
         SELECT p.served_model, f.key_id, f.metric, f.type, f.value, f.created_at FROM p JOIN feedback f ON f.id = p.feedback_id`
      : `SELECT i.served_model, f.key_id, f.metric, f.type, f.value, f.created_at FROM feedback_rollup_pending p
         JOIN inferences i ON i.id = p.inference_id JOIN feedback f ON f.id = p.feedback_id`;
    const rows = await q.all(claim);
    if (sql.dialect === 'sqlite') await q.run('DELETE FROM feedback_rollup_pending WHERE inference_id IN (SELECT id FROM inferences)');
    const joined = rows.filter((r) => r.served_model !== null && r.served_model !== undefined).map((r) => joinedOf(r, String(r.served_model)));
    if (joined.length > 0) await q.run('INSERT INTO rollup_journal (kind, cells) VALUES (?, ?)', ['feedback', encodeFeedback(joined, sql.dialect === 'postgres' ? pgText : sameText)]);
    await q.run('DELETE FROM feedback_rollup_pending WHERE created_at < ?', [new Date(now - staleMs).toISOString()]);
    return rows.length;
  });
  if (n > 0) await foldAll(sql);
  return n;
}
