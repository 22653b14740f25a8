// The router's queries, written once against store.sql (both dialects): recorded decisions,
// the versioned learned state, and the training join of feedback and answers to decisions.
import type { SqlRunner } from '../store/sql-runner.ts';
import type { Row } from '../store/rows.ts';
import { addRouterCells, decisionFields, routerCells, type RollupSource } from '../store/router-rollup.ts';
import { isPacked, type PromptFeatures, type QualityState } from './quality/index.ts';
import type { OutputTable } from './output-stats.ts';
import type { ScaleHistory } from './signal-scales.ts';
import { chunkedPass } from '../util/catch-up.ts';
import { storeNow } from '../store/clock.ts';
import { landingHorizon, TAKE_LANDING } from '../store/landing.ts';
import { later, ORDER, pairsAfter, startOf, type PairShape } from './landing-order.ts';

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
 * Position of the last row folded in: its landing position (`landed`, decimal text, src/router/landing-order.ts),
 * id and time. A cursor without `landed` (stored by a gateway reading by time, or at the start) is at
 * (created_at, id): after it come the rows from before migration 24 after that time, then the rows with a
 * position from the first after that time (landing-order.ts startOf). The feedback cursor
 * also keeps the settle window its rows were read with (`settleMs`) and the windows of first values
 * read before router.learning.feedback_settle_ms last changed (`earlier`, oldest first): a value keeps
 * the window it was learned with, so a change neither skips nor counts twice what lies between; and the
 * ids of rows it passed unsettled, stamped ahead of the store's clock (`ahead`, readFeedback).
 */
export type Cursor = { at: string; id: string; landed?: string; settleMs?: number; earlier?: SettleSpan[]; ahead?: string[]; trusted?: TrustSpans; scales?: ScaleHistory };
/** The settle window of the first values created at or before `until`. */
export type SettleSpan = { until: string; ms: number };
/**
 * Per metric, the first value from which every first value was learned, of any key or of one key id
 * (src/router/feedback-trust.ts): its landing position (decimal digits), or its time (ISO) for one read
 * by time (before migration 24, or stored before 2026-11-29).
 */
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
const INSERT_ROW = 'INSERT INTO router_decisions (inference_id, created_at, key_id, served_model, canonical, kind, features, decision, landed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (inference_id) DO NOTHING';
async function insertEach(q: SqlRunner, rows: readonly StoredDecision[]): Promise<StoredDecision[]> {
  const landed: StoredDecision[] = [];
  // This transaction's landing position (src/store/landing.ts); PostgreSQL's comes by default.
  const at = Number((await q.all(TAKE_LANDING))[0]?.n);
  for (const r of rows) if (await q.run(INSERT_ROW, [...params(r), at]) > 0) landed.push(r);
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

/** The time by the store's clock (src/store/clock.ts), which training, restores and retention measure against. */
export { storeNow };

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
  /** Its landing position with its decision's (src/router/landing-order.ts). */
  landed: string;
  /** Its first value's landing position with the decision's (its own `landed` for a first value). */
  firstLanded: string;
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
 * Feedback rows on quality-signal metrics for routed inferences, after `c` in landing order
 * (src/router/landing-order.ts: a row and its decision are read once both have landed, so feedback whose
 * decision landed late is read when it does) and below the position `horizon` (the store's now by
 * default: src/store/landing.ts), up to the first row not
 * settled (created at or after `settledBefore`, now minus router.learning.feedback_settle_ms), as what
 * they teach:
 * - the first row of an inference and metric, with the value of the latest row created within
 *   `settleMs` of it (a mis-click undone within the window is learned as undone; the window lies in
 *   the past when the row is read, so the value is the same whenever it is read);
 * - each row created `settleMs` or more after the first: a correction from the value of the row
 *   before it to its own. Corrections add up to (latest value - value first learned), and a repeated
 *   value corrects by nothing: one client posting the same verdict 100 times still counts once
 *   (5 negatives flip a kind, docs/router.md Learning).
 * A row landing after a later value of its feedback teaches nothing: that value was read first, as the
 * first value or a change from the rows landed then, and is the latest (before 2026-11-29 a first value
 * whose writer was held back was learned as a second first value).
 * Rows inside a first row's window teach nothing of their own and are left out, and so are comments
 * (a metric a key first gave a string: its text is no score, though "", " " or "0.9" read as numbers
 * and "true" as a boolean did until 2026-11-29). `earlier`: the windows of first values read before
 * the setting last changed (Cursor), which they keep.
 */
export async function feedbackSince(sql: SqlRunner, metrics: readonly string[], c: Cursor, limit: number, settledBefore: string, settleMs: number, earlier: readonly SettleSpan[] = [], o: FeedbackReadOptions = {}): Promise<FeedbackJoin[]> {
  return (await readFeedback(sql, metrics, c, limit, settledBefore, settleMs, earlier, o)).rows;
}

export type FeedbackReadOptions = {
  /** The landing position the read stays below (one per training pass); the store's now by default. */
  horizon?: string;
  /** The store's time (ISO): an unsettled row stamped after it does not stop the read. Default: this host's. */
  now?: string;
};

/**
 * feedbackSince's read, with what the next cursor needs: `last`, the last row read in landing order
 * (null: the cursor stays), `full` when that read reached `limit`, and `ahead`, the cursor's list of
 * rows passed unsettled. `rows` also holds the rows of the cursor's `ahead` that have settled since.
 */
export type FeedbackRead = { rows: FeedbackJoin[]; last: FeedbackJoin | undefined; full: boolean; ahead: string[] };

/**
 * Rows stamped ahead of the store's clock (by a replica whose clock runs ahead) kept in a cursor at most:
 * such a row is unsettled until the store's clock passes it, and stopping there held every row landing
 * after it for as long (an hour, for a clock an hour ahead). Past this many, the read stops at them.
 */
const MAX_AHEAD = 100;

/**
 * SQLite: the per-row lookups of an inference's other feedback go by its inference index. Left to
 * choose, SQLite took the index on (metric, created_at), which gives the lookup's order but holds every
 * row of the metric: a pass reading 5,000 of 20,000 feedback rows took 42 s (all of them per row read).
 */
const byInference = (sql: SqlRunner): string => (sql.dialect === 'sqlite' ? ' INDEXED BY feedback_inference_idx' : '');

export async function readFeedback(sql: SqlRunner, metrics: readonly string[], c: Cursor, limit: number, settledBefore: string, settleMs: number, earlier: readonly SettleSpan[] = [], o: FeedbackReadOptions = {}): Promise<FeedbackRead> {
  const kept = c.ahead ?? [];
  if (metrics.length === 0) return { rows: [], last: undefined, full: false, ahead: kept };
  const below = o.horizon ?? await landingHorizon(sql);
  const now = o.now ?? new Date().toISOString();
  const kinds = (pre: string): string => `${pre}f.metric IN (${metrics.map(() => '?').join(', ')}) AND f.type IN ('boolean', 'float') AND d.canonical IS NOT NULL`;
  const q = {
    cols: `f.id AS id, f.inference_id AS inference_id, f.metric AS metric, f.value AS value, f.created_at AS created_at, f.key_id AS key_id,
      (SELECT e.id FROM feedback e${byInference(sql)} WHERE e.inference_id = f.inference_id AND e.metric = f.metric ORDER BY e.created_at, e.id LIMIT 1) AS first_id,
      d.canonical AS canonical, d.features AS features, i.output_tokens AS output_tokens, i.cost_usd AS cost_usd, f.landed AS fl, d.landed AS dl`,
    from: 'feedback f JOIN router_decisions d ON d.inference_id = f.inference_id LEFT JOIN inferences i ON i.id = f.inference_id',
    where: kinds(''),
    params: metrics,
  };
  // A cursor stored by a gateway reading by time (landing-order.ts startOf).
  const start = c.landed === undefined ? await startOf(sql, FEEDBACK_PAIR, q, c, below) : undefined;
  const firstOf = async (where: string, params: unknown[], n: number): Promise<Row[]> => {
    const u = pairsAfter(sql, FEEDBACK_PAIR, { ...q, cols: 'f.id AS id', where: `${q.where} AND ${where}`, params: [...metrics, ...params] }, c, below, { limit: n, start });
    return await sql.all(`SELECT u.g AS g, u.t AS t, u.id AS id FROM (${u.sql}) u ORDER BY ${ORDER('u')} LIMIT ${n}`, u.params);
  };
  // The read stops before the first row (in landing order) not settled yet, but for up to MAX_AHEAD rows
  // stamped ahead of the store's clock, which it passes and keeps in the cursor's `ahead`. Without a
  // position (a row from before migration 24, read by time) it stops at the old rows created before
  // settledBefore.
  const room = Math.max(0, MAX_AHEAD - kept.length);
  const stops = [...await firstOf('f.created_at >= ? AND f.created_at <= ?', [settledBefore, now], 1), ...(await firstOf('f.created_at > ?', [now], room + 1)).slice(room)];
  stops.sort((a, b) => compareAt(keyOf(a), keyOf(b)));
  const stop = stops[0];
  const before = stop === undefined || String(stop.g) === '0' ? undefined : keyOf(stop);
  // SQLite: the settled rows are found by position (the landing indexes), not by metric and time, which
  // cover every row of the metric before settledBefore: read so, an idle pass went through all the
  // feedback ever given (20,000 rows: 35 ms a pass). `+` keeps a term off the indexes.
  const off = sql.dialect === 'sqlite' ? '+' : '';
  const settled = { ...q, where: `${kinds(off)} AND ${off}f.created_at < ?`, params: [...metrics, settledBefore] };
  const x = pairsAfter(sql, FEEDBACK_PAIR, settled, c, stop !== undefined && String(stop.g) === '0' ? '0' : below, { before, start });
  const rows = await feedbackRows(sql, { sql: x.sql, params: x.params }, limit, settleMs, earlier);
  const last = rows.at(-1);
  // The cursor's rows stamped ahead: those settled now are read (whatever they teach), the rest kept.
  let ahead = kept;
  let caught: FeedbackJoin[] = [];
  if (kept.length > 0) {
    const marks = kept.map(() => '?').join(', ');
    caught = await feedbackRows(sql, { sql: `SELECT ${settled.cols}, ${later(sql, 'f.landed', 'd.landed')} AS g, f.created_at AS t FROM ${settled.from} WHERE ${settled.where} AND f.id IN (${marks})`, params: [...settled.params, ...kept] }, kept.length, settleMs, earlier);
    ahead = (await sql.all(`SELECT id FROM feedback WHERE id IN (${marks}) AND created_at >= ?`, [...kept, settledBefore])).map((r) => String(r.id));
  }
  // Rows stamped ahead that this read passed (before its last row) join them.
  if (last) ahead = [...ahead, ...(await firstOf('f.created_at > ?', [now], room)).filter((r) => compareAt(keyOf(r), { landed: last.landed, at: last.at, id: last.id }) < 0).map((r) => String(r.id))];
  return { rows: [...caught, ...rows], last, full: rows.length === limit, ahead };
}

type At = { landed: string; at: string; id: string };
const keyOf = (r: Row): At => ({ landed: String(r.g), at: iso(r.t), id: String(r.id) });
/** Landing order of two rows (position, then time, then id). */
function compareAt(a: At, b: At): number {
  const d = BigInt(a.landed) - BigInt(b.landed);
  if (d !== 0n) return d < 0n ? -1 : 1;
  return a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The feedback rows of `x` (pairsAfter's columns) as what they teach (feedbackSince), in landing order. */
async function feedbackRows(sql: SqlRunner, x: { sql: string; params: unknown[] }, limit: number, settleMs: number, earlier: readonly SettleSpan[]): Promise<FeedbackJoin[]> {
  const end = windowEnd(sql, 'ff.created_at', settleMs, earlier);
  const pair = (t: string): string => `${t}.inference_id = x.inference_id AND ${t}.metric = x.metric`;
  const rows: Row[] = await sql.all(
    `SELECT x.id AS id, x.created_at AS at, ff.created_at AS first_at, x.metric AS metric, x.first_id AS first_id, x.g AS g,
            ${later(sql, 'ff.landed', 'x.dl')} AS first_g,
            CASE WHEN x.id = x.first_id THEN (SELECT l.value FROM feedback l${byInference(sql)} WHERE ${pair('l')} AND (l.id = x.id OR l.created_at < ${end})
              ORDER BY l.created_at DESC, l.id DESC LIMIT 1) ELSE x.value END AS value,
            CASE WHEN x.id = x.first_id THEN NULL ELSE (SELECT p.value FROM feedback p${byInference(sql)} WHERE ${pair('p')}
              AND (p.created_at < x.created_at OR (p.created_at = x.created_at AND p.id < x.id)) ORDER BY p.created_at DESC, p.id DESC LIMIT 1) END AS prev,
            x.canonical AS canonical, x.features AS features, x.output_tokens AS output_tokens, x.cost_usd AS cost_usd, x.key_id AS key_id
     FROM (${x.sql}) x
     JOIN feedback ff ON ff.id = x.first_id
     WHERE (x.id = x.first_id OR x.created_at >= ${end})
       -- Not a row landing after a later value of its feedback, which was read first (as a first value,
       -- when this one, its first, had not landed): what was learned is that later value.
       AND NOT (x.fl > x.dl AND EXISTS (SELECT 1 FROM feedback z${byInference(sql)} WHERE ${pair('z')} AND z.landed < x.fl
         AND (z.created_at > x.created_at OR (z.created_at = x.created_at AND z.id > x.id))))
     ORDER BY ${ORDER('x')} LIMIT ?`,
    [...x.params, limit],
  );
  return rows.map((r) => {
    const f: FeedbackJoin = {
      id: String(r.id), at: iso(r.at), firstAt: iso(r.first_at), metric: String(r.metric), value: String(r.value), canonical: String(r.canonical),
      keyId: r.key_id == null ? null : String(r.key_id), landed: String(r.g), firstLanded: String(r.first_g),
      features: json(r.features), outputTokens: Number(r.output_tokens ?? 0), costUsd: Number(r.cost_usd ?? 0),
    };
    if (String(r.id) !== String(r.first_id)) f.from = String(r.prev);
    return f;
  });
}

const FEEDBACK_PAIR: PairShape = { a: 'f', b: 'd', id: 'f.id', at: 'f.created_at' };
const ANSWER_PAIR: PairShape = { a: 'd', b: 'i', id: 'd.inference_id', at: 'd.created_at' };

export type AnswerJoin = { id: string; at: string; landed: string; canonical: string; kind: string; outputTokens: number };

/**
 * Successful routed answers after `c` in landing order (src/router/landing-order.ts: an answer is read
 * once its decision and its inference record have both landed, whichever lands last) and below the
 * position `below`, oldest first: their output tokens teach expected output.
 */
export async function answersSince(sql: SqlRunner, c: Cursor, limit: number, below: string): Promise<AnswerJoin[]> {
  const q = {
    cols: 'd.inference_id AS id, d.canonical AS canonical, d.kind AS kind, i.output_tokens AS output_tokens',
    from: 'router_decisions d JOIN inferences i ON i.id = d.inference_id',
    where: 'i.status = 200 AND d.canonical IS NOT NULL AND i.finish_reason IS NOT NULL', params: [],
  };
  // A cursor stored by a gateway reading by time (landing-order.ts startOf).
  const start = c.landed === undefined ? await startOf(sql, ANSWER_PAIR, q, c, below) : undefined;
  const u = pairsAfter(sql, ANSWER_PAIR, q, c, below, { limit, start });
  const rows = await sql.all(`SELECT * FROM (${u.sql}) u ORDER BY ${ORDER('u')} LIMIT ?`, [...u.params, limit]);
  return rows.map((r) => ({ id: String(r.id), at: iso(r.t), landed: String(r.g), canonical: String(r.canonical), kind: String(r.kind), outputTokens: Number(r.output_tokens ?? 0) }));
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
export async function pruneStates(sql: SqlRunner, keep: number, days = 0, now?: number): Promise<number> {
  const newest = await latestVersion(sql);
  if (newest <= keep) return 0;
  if (days <= 0) return await sql.run('DELETE FROM router_state WHERE version <= ?', [newest - keep]);
  const day = sql.dialect === 'sqlite' ? 'substr(created_at, 1, 10)' : "date_trunc('day', created_at AT TIME ZONE 'UTC')";
  return await sql.run(
    `DELETE FROM router_state WHERE version <= ? AND version NOT IN (
       SELECT MAX(version) FROM router_state WHERE created_at >= ? GROUP BY ${day})`,
    [newest - keep, new Date((now ?? await storeNow(sql)) - days * 86_400_000).toISOString().slice(0, 10) + 'T00:00:00.000Z'],
  );
}

/** `more`: the pass stopped at its bound with decisions left to delete (the next comes soon: src/util/catch-up.ts). */
export type PruneResult = { decisions: number; states: number; more: boolean };
/** Learned states the retention pass keeps: the newest `states` and the last of each of `days` UTC days. */
export type KeepStates = { states: number; days: number };

/**
 * The router's retention pass (the worker and the inline backend): decisions older than `decisionsDays`
 * (null: none deleted), then states, both by the store's clock: a replica whose
 * clock ran a year ahead deleted every decision with the default 30 days.
 */
export async function pruneRouterData(sql: SqlRunner, decisionsDays: number | null, keep: KeepStates, maxChunks = PRUNE_PASS_CHUNKS): Promise<PruneResult> {
  const now = await storeNow(sql);
  const d = decisionsDays === null ? { rows: 0, more: false } : await pruneDecisions(sql, new Date(now - decisionsDays * 86_400_000).toISOString(), maxChunks);
  return { decisions: d.rows, states: await pruneStates(sql, keep.states, keep.days, now), more: d.more };
}
