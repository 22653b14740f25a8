// The router's queries, written once against store.sql (both dialects): recorded decisions,
// the versioned learned state, and the training join of feedback and answers to decisions.
import type { SqlRunner } from '../store/sql-runner.ts';
import type { Row } from '../store/rows.ts';
import { addRouterCells, decisionFields, routerCells, type RollupSource } from '../store/router-rollup.ts';
import { isPacked, type PromptFeatures, type QualityState } from './quality/index.ts';
import type { OutputTable } from './output-stats.ts';
import { chunkedPass } from '../util/catch-up.ts';

export type DecisionRow = {
  inferenceId: string; createdAt: string; keyId: string | null; servedModel: string | null; canonical: string | null;
  kind: string; features: PromptFeatures; decision: unknown;
  /** The answer's HTTP status and exact cost in USD (decimal string): counted in the router rollups, not stored in the row. */
  status: number; costUsd: string;
};

/**
 * A decision row as written: the features and decision columns as their JSON text, and what the
 * rollups count of it. The router's worker writes these straight from the encoded chunk
 * (src/router/decision-text.ts); insertDecisions from objects.
 */
export type StoredDecision = RollupSource & { inferenceId: string; servedModel: string | null; canonical: string | null; features: string; decision: string };

/**
 * Position in a time-ordered table: (created_at, id) of the last row folded in. The feedback cursor
 * also keeps the settle window its rows were read with (`settleMs`) and the windows of first values
 * read before router.learning.feedback_settle_ms last changed (`earlier`, oldest first): a value keeps
 * the window it was learned with, so a change neither skips nor counts twice what lies between.
 */
export type Cursor = { at: string; id: string; settleMs?: number; earlier?: SettleSpan[]; trusted?: TrustSpans };
/** The settle window of the first values created at or before `until`. */
export type SettleSpan = { until: string; ms: number };
/** Per metric, the first value from which every first value was learned, of any key or of one key id (src/router/feedback-trust.ts). */
export type TrustSpans = Record<string, { all?: string; keys?: Record<string, string> }>;
export const START: Cursor = { at: '1970-01-01T00:00:00.000Z', id: '' };

/** An operator's rollback to an earlier version (`from`) or reset to the priors (from null), with who asked and why. */
export type StateOrigin = { kind: 'rollback' | 'reset'; from: number | null; by: string; reason: string | null };

export type StoredState = {
  version: number; createdAt: string; quality: QualityState; output: OutputTable;
  feedbackCursor: Cursor; decisionCursor: Cursor; outcomes: number;
  /** null: trained. */
  origin: StateOrigin | null;
  /** The latest rollback or reset this state descends from: changes to feedback first given before it are not learned. */
  restoredAt: string | null;
};

/** A timestamp column as ISO text (PostgreSQL gives a Date, SQLite the stored text). */
export const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : String(v));
const json = <T>(v: unknown): T => JSON.parse(String(v)) as T;

/** Stores decision rows given as objects (storeDecisions). */
export async function insertDecisions(sql: SqlRunner, rows: readonly DecisionRow[]): Promise<void> {
  await storeDecisions(sql, rows.map((r) => ({
    inferenceId: r.inferenceId, createdAt: r.createdAt, keyId: r.keyId, servedModel: r.servedModel, canonical: r.canonical, kind: r.kind,
    status: r.status, costUsd: r.costUsd, features: JSON.stringify(r.features), decision: JSON.stringify(r.decision), ...decisionFields(r.decision),
  })));
}

const INSERT = 'INSERT INTO router_decisions (inference_id, created_at, key_id, served_model, canonical, kind, features, decision) VALUES';
const params = (r: StoredDecision): unknown[] => [r.inferenceId, r.createdAt, r.keyId, r.servedModel, r.canonical, r.kind, r.features, r.decision];

/**
 * SQLite: one prepared statement run per row (synchronous calls, no round trips), a row counted when
 * it changed one, which costs less than a statement of many rows with RETURNING (its text prepared
 * per chunk size, its parameters spread by the thousand, its answer rows read back).
 */
const INSERT_ROW = `${INSERT} (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (inference_id) DO NOTHING`;
async function insertEach(q: SqlRunner, rows: readonly StoredDecision[]): Promise<StoredDecision[]> {
  const landed: StoredDecision[] = [];
  for (const r of rows) if (await q.run(INSERT_ROW, params(r)) > 0) landed.push(r);
  return landed;
}

/**
 * PostgreSQL: statements of up to PG_ROWS rows (a few round trips a chunk), RETURNING the ids they
 * inserted. Their texts are written with $n placeholders (the runner leaves a text without `?` as it
 * is, rather than rewriting it character by character) and kept, one per row count up to PG_ROWS.
 */
const PG_ROWS = 100;
const pgInsert: string[] = [];
const pgInsertSql = (n: number): string => (pgInsert[n] ??=
  `${INSERT} ${Array.from({ length: n }, (_, i) => `(${Array.from({ length: 8 }, (_, j) => `$${i * 8 + j + 1}`).join(', ')})`).join(', ')} ON CONFLICT (inference_id) DO NOTHING RETURNING inference_id`);
async function insertReturning(q: SqlRunner, rows: readonly StoredDecision[]): Promise<StoredDecision[]> {
  const inserted = new Set<string>();
  for (let i = 0; i < rows.length; i += PG_ROWS) {
    const part = rows.slice(i, i + PG_ROWS);
    for (const r of await q.all(pgInsertSql(part.length), part.flatMap(params))) inserted.add(String(r.inference_id));
  }
  // The first row of each id inserted (a chunk holding an id twice stored its first copy).
  return rows.filter((r) => inserted.delete(r.inferenceId));
}

/**
 * Stores a chunk of decisions and adds them to the router rollups (src/store/router-rollup.ts) in one
 * transaction. A retried chunk may meet rows already stored: the first copy is kept, and only the rows
 * this INSERT really inserted are counted, so a chunk is never counted twice.
 */
export async function storeDecisions(sql: SqlRunner, rows: readonly StoredDecision[]): Promise<void> {
  if (rows.length === 0) return;
  await sql.tx(async (q) => {
    const landed = q.dialect === 'sqlite' ? await insertEach(q, rows) : await insertReturning(q, rows);
    await addRouterCells(q, routerCells(landed));
  });
}

export async function getDecision(sql: SqlRunner, inferenceId: string): Promise<{ decision: unknown; features: PromptFeatures } | null> {
  const rows = await sql.all('SELECT decision, features FROM router_decisions WHERE inference_id = ?', [inferenceId]);
  const r = rows[0];
  return r ? { decision: json(r.decision), features: json(r.features) } : null;
}

/**
 * The time by the store's clock (ms since the epoch), which every replica on a PostgreSQL store
 * shares; SQLite's file is this host's, so its clock is this process's.
 */
export async function storeNow(sql: SqlRunner): Promise<number> {
  if (sql.dialect === 'sqlite') return Date.now();
  const t = (await sql.all('SELECT now() AS t'))[0]?.t;
  return t instanceof Date ? t.getTime() : Date.parse(String(t));
}

export async function latestVersion(sql: SqlRunner): Promise<number> {
  const rows = await sql.all('SELECT MAX(version) AS v FROM router_state');
  return Number(rows[0]?.v ?? 0);
}

export async function loadState(sql: SqlRunner, version?: number): Promise<StoredState | null> {
  const rows = version === undefined
    ? await sql.all('SELECT * FROM router_state ORDER BY version DESC LIMIT 1')
    : await sql.all('SELECT * FROM router_state WHERE version = ?', [version]);
  const r = rows[0];
  if (!r) return null;
  // A damaged row's error names it and the way past it (the poll and every training pass report it until then).
  const col = <T>(name: string): T => {
    try { return json<T>(r[name]); } catch (e) {
      throw new Error(`learned state v${String(r.version)} cannot be read (${name}: ${(e as Error).message}): roll back or reset (router rollback / router reset)`);
    }
  };
  return {
    version: Number(r.version), createdAt: iso(r.created_at), quality: col('quality'), output: col('output'),
    feedbackCursor: col('feedback_cursor'), decisionCursor: col('decision_cursor'), outcomes: Number(r.outcomes),
    ...restoreFields(r),
  };
}

/** A router_state row's origin and restore time (migration 23; null in rows from before it). */
export function restoreFields(r: Row): Pick<StoredState, 'origin' | 'restoredAt'> {
  return { origin: r.origin == null ? null : json(r.origin), restoredAt: r.restored_at == null ? null : String(r.restored_at) };
}

/** Stores a new version; false when another replica stored that version first. */
export async function saveState(sql: SqlRunner, s: StoredState): Promise<boolean> {
  // A packed state (typed arrays in place of the stored prompts) would be stored without them.
  if (isPacked(s.quality)) throw new Error('saveState: the quality state is packed for the main thread; store the full state');
  const n = await sql.run(
    'INSERT INTO router_state (version, created_at, quality, output, feedback_cursor, decision_cursor, outcomes, origin, restored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (version) DO NOTHING',
    [s.version, s.createdAt, JSON.stringify(s.quality), JSON.stringify(s.output), JSON.stringify(s.feedbackCursor), JSON.stringify(s.decisionCursor), s.outcomes,
      s.origin === null ? null : JSON.stringify(s.origin), s.restoredAt],
  );
  return n > 0;
}

/**
 * A feedback row read for training. `from` absent: the first value of an (inference, metric), with
 * `value` the value it settled on. `from` present: a correction, a later row whose value `value`
 * replaces `from` (the row before it); `firstAt` is when the first value was given.
 */
export type FeedbackJoin = {
  id: string; at: string; firstAt: string; metric: string; value: string; from?: string;
  /** The API key it was given with (the answer's own: /v1/feedback takes no other), null without auth. */
  keyId: string | null;
  canonical: string; features: PromptFeatures; outputTokens: number; costUsd: number;
};

const ISO_TEXT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/;

/**
 * SQL for the end of a first value's settle window: `col` plus `ms`, or plus the window of the earliest
 * span holding it (spans ascending by `until`; timestamps this module wrote, checked before they are
 * written into the statement).
 */
function windowEnd(sql: SqlRunner, col: string, ms: number, earlier: readonly SettleSpan[]): string {
  const spans = earlier.filter((e) => ISO_TEXT.test(e.until) && Number.isFinite(e.ms));
  if (spans.length === 0) return plusMs(sql, col, ms);
  return `(CASE ${spans.map((e) => `WHEN ${col} <= '${e.until}' THEN ${plusMs(sql, col, e.ms)}`).join(' ')} ELSE ${plusMs(sql, col, ms)} END)`;
}

/** SQL for the timestamp `col` plus `ms` milliseconds, comparable with created_at in each dialect. */
function plusMs(sql: SqlRunner, col: string, ms: number): string {
  const n = Math.max(0, Math.round(ms));
  return sql.dialect === 'sqlite' ? `strftime('%Y-%m-%dT%H:%M:%fZ', ${col}, '+${n / 1000} seconds')` : `(${col} + ${n} * interval '1 millisecond')`;
}

/**
 * Feedback rows on quality-signal metrics for routed inferences, after `c` and created before
 * `settledBefore` (now minus router.learning.feedback_settle_ms), oldest first, as what they teach:
 * - the first row of an inference and metric, with the value of the latest row created within
 *   `settleMs` of it (a mis-click undone within the window is learned as undone; the window lies in
 *   the past when the row is read, so the value is the same whenever it is read);
 * - each row created `settleMs` or more after the first: a correction from the value of the row
 *   before it to its own. Corrections add up to (latest value - value first learned), and a repeated
 *   value corrects by nothing: one client posting the same verdict 100 times still counts once
 *   (5 negatives flip a kind, docs/router.md Learning).
 * Rows inside a first row's window teach nothing of their own and are left out, and so are comments
 * (a metric a key first gave a string: its text is no score, though "", " " or "0.9" read as numbers
 * and "true" as a boolean did until 2026-11-29). The window also
 * covers feedback rows the batched writer lands late. `earlier`: the windows of first values read
 * before the setting last changed (Cursor), which they keep.
 */
export async function feedbackSince(sql: SqlRunner, metrics: readonly string[], c: Cursor, limit: number, settledBefore: string, settleMs: number, earlier: readonly SettleSpan[] = []): Promise<FeedbackJoin[]> {
  if (metrics.length === 0) return [];
  const end = windowEnd(sql, 'ff.created_at', settleMs, earlier);
  const pair = (t: string): string => `${t}.inference_id = x.inference_id AND ${t}.metric = x.metric`;
  const rows: Row[] = await sql.all(
    `SELECT x.id AS id, x.created_at AS at, ff.created_at AS first_at, x.metric AS metric, x.first_id AS first_id,
            CASE WHEN x.id = x.first_id THEN (SELECT l.value FROM feedback l WHERE ${pair('l')} AND (l.id = x.id OR l.created_at < ${end})
              ORDER BY l.created_at DESC, l.id DESC LIMIT 1) ELSE x.value END AS value,
            CASE WHEN x.id = x.first_id THEN NULL ELSE (SELECT p.value FROM feedback p WHERE ${pair('p')}
              AND (p.created_at < x.created_at OR (p.created_at = x.created_at AND p.id < x.id)) ORDER BY p.created_at DESC, p.id DESC LIMIT 1) END AS prev,
            x.canonical AS canonical, x.features AS features, x.output_tokens AS output_tokens, x.cost_usd AS cost_usd, x.key_id AS key_id
     FROM (SELECT f.id AS id, f.inference_id AS inference_id, f.metric AS metric, f.value AS value, f.created_at AS created_at, f.key_id AS key_id,
             (SELECT e.id FROM feedback e WHERE e.inference_id = f.inference_id AND e.metric = f.metric ORDER BY e.created_at, e.id LIMIT 1) AS first_id,
             d.canonical AS canonical, d.features AS features, i.output_tokens AS output_tokens, i.cost_usd AS cost_usd
           FROM feedback f JOIN router_decisions d ON d.inference_id = f.inference_id
           LEFT JOIN inferences i ON i.id = f.inference_id
           WHERE f.metric IN (${metrics.map(() => '?').join(', ')}) AND f.type IN ('boolean', 'float') AND d.canonical IS NOT NULL
             AND (f.created_at > ? OR (f.created_at = ? AND f.id > ?)) AND f.created_at < ?) x
     JOIN feedback ff ON ff.id = x.first_id
     WHERE x.id = x.first_id OR x.created_at >= ${end}
     ORDER BY x.created_at, x.id LIMIT ?`,
    [...metrics, c.at, c.at, c.id, settledBefore, limit],
  );
  return rows.map((r) => {
    const f: FeedbackJoin = {
      id: String(r.id), at: iso(r.at), firstAt: iso(r.first_at), metric: String(r.metric), value: String(r.value), canonical: String(r.canonical),
      keyId: r.key_id == null ? null : String(r.key_id),
      features: json(r.features), outputTokens: Number(r.output_tokens ?? 0), costUsd: Number(r.cost_usd ?? 0),
    };
    if (String(r.id) !== String(r.first_id)) f.from = String(r.prev);
    return f;
  });
}

/**
 * The oldest feedback row on these metrics after `c`, created from `from` up to `until`, whose answer
 * has no recorded decision yet (ISO time), or null. Such a row is either on an answer that was not
 * routed or on one whose decision the batched writers have not landed: a read with a window shorter
 * than `from`'s lag stops before it, so a decision landing late is still joined (it was passed by the
 * cursor and never learned: 35 of 2,819 feedback rows with feedback_settle_ms 0 on one gateway, 95 of
 * 746 on two); once the row is older than `from` it no longer holds the read.
 */
export async function feedbackAwaitingDecision(sql: SqlRunner, metrics: readonly string[], c: Cursor, from: string, until: string): Promise<string | null> {
  const rows = await sql.all(
    `SELECT MIN(f.created_at) AS t FROM feedback f LEFT JOIN router_decisions d ON d.inference_id = f.inference_id
     WHERE f.metric IN (${metrics.map(() => '?').join(', ')}) AND f.type IN ('boolean', 'float') AND d.inference_id IS NULL
       AND f.created_at >= ? AND f.created_at < ? AND (f.created_at > ? OR (f.created_at = ? AND f.id > ?))`,
    [...metrics, from, until, c.at, c.at, c.id],
  );
  const t = rows[0]?.t;
  return t === null || t === undefined ? null : iso(t);
}

export type AnswerJoin = { id: string; at: string; canonical: string; kind: string; outputTokens: number };

/**
 * Successful routed answers after `c` and before `before` (their output tokens teach expected output),
 * oldest first. `before` lags behind now so the inference records (batched writer) have landed.
 */
export async function answersSince(sql: SqlRunner, c: Cursor, limit: number, before: string): Promise<AnswerJoin[]> {
  const rows = await sql.all(
    `SELECT d.inference_id AS id, d.created_at AS at, d.canonical AS canonical, d.kind AS kind, i.output_tokens AS output_tokens
     FROM router_decisions d JOIN inferences i ON i.id = d.inference_id
     WHERE i.status = 200 AND d.canonical IS NOT NULL AND i.finish_reason IS NOT NULL
       AND (d.created_at > ? OR (d.created_at = ? AND d.inference_id > ?)) AND d.created_at < ?
     ORDER BY d.created_at, d.inference_id LIMIT ?`,
    [c.at, c.at, c.id, before, limit],
  );
  return rows.map((r) => ({ id: String(r.id), at: iso(r.at), canonical: String(r.canonical), kind: String(r.kind), outputTokens: Number(r.output_tokens ?? 0) }));
}

/** Rows deleted per statement by the retention pass (the index on created_at finds them). */
const PRUNE_CHUNK = 2000;
/** Chunks a retention pass deletes at most (100,000 decisions); one that reaches it is followed by another within seconds. */
const PRUNE_PASS_CHUNKS = 50;

/**
 * Deletes recorded decisions created before `before`, oldest first, in chunks of 2000, at most
 * `maxChunks` of them (`more`: the pass stopped there, the rest waits for the next).
 */
export function pruneDecisions(sql: SqlRunner, before: string, maxChunks = PRUNE_PASS_CHUNKS): Promise<{ rows: number; more: boolean }> {
  return chunkedPass(() => sql.run(
    `DELETE FROM router_decisions WHERE inference_id IN (
       SELECT inference_id FROM router_decisions WHERE created_at < ? ORDER BY created_at, inference_id LIMIT ${PRUNE_CHUNK})`,
    [before],
  ), PRUNE_CHUNK, maxChunks);
}

/**
 * Deletes learned states but the newest `keep` versions and the last version of the UTC day of `now`
 * and of each of the `days` days before it (what an operator can roll back to,
 * src/router/state-restore.ts); resolves with the rows deleted.
 */
export async function pruneStates(sql: SqlRunner, keep: number, days = 0, now = Date.now()): Promise<number> {
  const newest = await latestVersion(sql);
  if (newest <= keep) return 0;
  if (days <= 0) return await sql.run('DELETE FROM router_state WHERE version <= ?', [newest - keep]);
  const day = sql.dialect === 'sqlite' ? 'substr(created_at, 1, 10)' : "date_trunc('day', created_at AT TIME ZONE 'UTC')";
  return await sql.run(
    `DELETE FROM router_state WHERE version <= ? AND version NOT IN (
       SELECT MAX(version) FROM router_state WHERE created_at >= ? GROUP BY ${day})`,
    [newest - keep, new Date(now - days * 86_400_000).toISOString().slice(0, 10) + 'T00:00:00.000Z'],
  );
}

/** `more`: the pass stopped at its bound with decisions left to delete (the next comes soon: src/util/catch-up.ts). */
export type PruneResult = { decisions: number; states: number; more: boolean };
/** Learned states the retention pass keeps: the newest `states` and the last of each of `days` UTC days. */
export type KeepStates = { states: number; days: number };

/** The router's retention pass (the worker and the inline backend): decisions created before `before` (null: none), then states. */
export async function pruneRouterData(sql: SqlRunner, before: string | null, keep: KeepStates, maxChunks = PRUNE_PASS_CHUNKS): Promise<PruneResult> {
  const d = before === null ? { rows: 0, more: false } : await pruneDecisions(sql, before, maxChunks);
  return { decisions: d.rows, states: await pruneStates(sql, keep.states, keep.days), more: d.more };
}
