// The default store: one SQLite file through node:sqlite, in WAL mode so readers never block the writer.
// Money is TEXT; sums go through a `dec_sum` aggregate registered in JS that adds exact decimal strings.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { addDecimal } from '../catalog/decimal.ts';
import { MIGRATIONS_TABLE_SQL, pendingMigrations } from './migrations.ts';
import { storedSpend } from './key-spend.ts';
import {
  FEEDBACK_COLUMNS, INFERENCE_COLUMNS, KEY_COLUMNS, feedbackParams, inferenceParams, iso, keyParams,
  num, placeholders, rowToInference, rowToKey, str, strOrNull, type Row,
} from './rows.ts';
import type {
  FeedbackRow, FeedbackStatsQuery, FeedbackStatsRow, InferenceRecord, InferenceRef, KeyRecord, Store, UsageQuery, UsageRow,
} from './types.ts';
import { FEEDBACK_STATS_SELECT, USAGE_SELECT, statsRows, usageGroupExpr, usageRows } from './sql.ts';
import { sqliteRunner, type SqlRunner } from './sql-runner.ts';
import { rollupFeedbackSqlite, rollupInferencesSqlite } from './rollup-write.ts';
import { TAKE_LANDING } from './landing.ts';
import { LOCK_WAIT_MS, TxGate, whenUnlocked } from './sqlite-lock.ts';

/** `lockWaitMs`: how long a statement waits, in all, for another connection's lock (src/store/sqlite-lock.ts). */
export type SqliteOptions = { path: string; lockWaitMs?: number };

const bind = (p: unknown[]): SQLInputValue[] => p as SQLInputValue[];

/** The page size a new database gets (the constructor says why); `store vacuum` converts an existing one to it. */
export const PAGE_SIZE = 16_384;

// Each row with its batch's landing position (src/store/landing.ts), taken in the batch's transaction.
const INSERT_INFERENCE = `INSERT INTO inferences (${INFERENCE_COLUMNS}, landed) VALUES (${placeholders(28, false)}) ON CONFLICT (id) DO NOTHING`;
const INSERT_FEEDBACK = `INSERT INTO feedback (${FEEDBACK_COLUMNS}, landed) VALUES (${placeholders(11, false)}) ON CONFLICT (id) DO NOTHING`;

/**
 * SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM,
 * SQLITE_BUSY at COMMIT...). An unconditional ROLLBACK then throws "cannot rollback - no transaction is
 * active", which replaced the real error ("database or disk is full") in every report. Roll back only
 * an open transaction, and never let the rollback's own failure hide the error that caused it.
 */
export function rollbackQuietly(db: DatabaseSync): void {
  if (!db.isTransaction) return;
  try { db.exec('ROLLBACK'); } catch { /* the connection reports the original error; nothing to add */ }
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly #db: DatabaseSync;
  // Prepared once per SQL text (a prepare costs ~15 µs, as much as inserting a row); the cache is bounded
  // (see #stmt).
  readonly #stmts = new Map<string, StatementSync>();
  readonly #lockWaitMs: number;
  /** The runner's transactions one at a time, the store's statements kept out of them (TxGate). */
  readonly #gate = new TxGate();
  readonly sql: SqlRunner;

  constructor(opts: SqliteOptions) {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    this.#lockWaitMs = opts.lockWaitMs ?? LOCK_WAIT_MS;
    // The set-up below runs once, at start: it may wait in SQLite's busy handler. Every statement after
    // it meets a lock at once (busy_timeout 0) and waits for it on a timer instead (#unlocked).
    this.#db = new DatabaseSync(opts.path, { timeout: this.#lockWaitMs });
    // A new database gets 16 KB pages (an existing one keeps its own: SQLite sets the size only before the
    // first page is written). The writers append rows of 0.3-2 KB in batches and a commit writes each
    // dirty page to the WAL as its own frame: 16 KB pages write the same bytes in a quarter of the
    // frames, 21.0 -> 16.0 us of the router's worker per recorded decision (bench/router-record.ts).
    this.#db.exec(`PRAGMA page_size = ${PAGE_SIZE}`);
    this.#db.exec('PRAGMA journal_mode = WAL');
    this.#db.exec('PRAGMA synchronous = NORMAL');
    this.#db.exec('PRAGMA busy_timeout = 0');
    this.#db.aggregate('dec_sum', {
      start: '0',
      step: (acc: string, v: unknown) => (v === null || v === undefined ? acc : addDecimal(acc, String(v))),
    });
    // Exact money addition for the rare rollup cells whose cost has digits past the 18th decimal (src/store/rollup-fold.ts).
    this.#db.function('dec_add', { deterministic: true }, (a: unknown, b: unknown) =>
      addDecimal(a === null || a === undefined ? '0' : String(a), b === null || b === undefined ? '0' : String(b)));
    this.sql = sqliteRunner(this.#db, (sql) => this.#stmt(sql), (attempt) => whenUnlocked(this.#db, attempt, this.#lockWaitMs), this.#gate);
  }

  /** BEGIN IMMEDIATE takes the write lock up front, so a second replica waits (busy_timeout) instead of racing. */
  migrate(): Promise<void> {
    const db = this.#db;
    return this.#tx(() => {
      db.exec(MIGRATIONS_TABLE_SQL);
      const applied = new Set(db.prepare('SELECT version FROM schema_migrations').all().map((r) => num(r.version)));
      const ins = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
      for (const m of pendingMigrations(applied)) {
        for (const stmt of m.sqlite) db.exec(stmt);
        ins.run(m.version, m.name, new Date().toISOString());
      }
    });
  }

  async ping(): Promise<void> {
    await this.#unlocked(() => this.#stmt('SELECT 1').get());
  }

  async close(): Promise<void> {
    this.#stmts.clear();
    if (this.#db.isOpen) this.#db.close();
  }

  #stmt(sql: string): StatementSync {
    let st = this.#stmts.get(sql);
    if (st === undefined) {
      // Feature queries (store.sql) may build texts from filters: the cache stays bounded all the same.
      if (this.#stmts.size >= 512) this.#stmts.clear();
      st = this.#db.prepare(sql);
      this.#stmts.set(sql, st);
    }
    return st;
  }

  /** `attempt` (one statement, or a whole transaction) once no other connection holds the lock it needs. */
  #unlocked<T>(attempt: () => T): Promise<T> {
    return this.#gate.outside(() => whenUnlocked(this.#db, attempt, this.#lockWaitMs));
  }

  /**
   * `fn` in one transaction, begun and committed with no await between (nothing else on this shared
   * connection can join it), the whole tried again while another connection holds the write lock. The
   * error that failed the transaction is the one thrown, whatever the rollback does (see rollbackQuietly).
   */
  #tx(fn: () => void): Promise<void> {
    return this.#unlocked(() => {
      this.#db.exec('BEGIN IMMEDIATE');
      try { fn(); this.#db.exec('COMMIT'); } catch (err) { rollbackQuietly(this.#db); throw err; }
    });
  }

  /** The open transaction's landing position. */
  #landing(): number {
    return Number((this.#stmt(TAKE_LANDING).get() as Row).n);
  }

  async insertKey(k: KeyRecord): Promise<void> {
    await this.#unlocked(() => this.#stmt(`INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (${placeholders(12, false)})`).run(...bind(keyParams(k))));
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const r = await this.#unlocked(() => this.#stmt(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`).get(id));
    return r ? rowToKey(r as Row) : null;
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.#unlocked(() => this.#stmt(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`).all())).map((r) => rowToKey(r as Row));
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    const res = await this.#unlocked(() => this.#stmt('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(iso(at), id));
    return Number(res.changes) > 0;
  }

  async touchKeys(lastUsed: Array<{ id: string; at: string }>): Promise<void> {
    if (lastUsed.length === 0) return;
    await this.#tx(() => {
      const st = this.#stmt('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)');
      for (const u of lastUsed) { const at = iso(u.at); st.run(at, u.id, at); }
    });
  }

  /** The records' spend, and the rollups' where retention deleted records (key-spend.ts). */
  keySpend(id: string, since: string): Promise<string> {
    return storedSpend(this.sql, id, iso(since));
  }

  /** Idempotent per id (ON CONFLICT DO NOTHING), so the writer may retry a batch that partly landed. */
  async insertInferences(recs: InferenceRecord[]): Promise<void> {
    if (recs.length === 0) return;
    // The dashboard's rollups move in the same transaction, with only the rows really inserted (src/store/rollup-write.ts).
    await this.#tx(() => {
      const st = this.#stmt(INSERT_INFERENCE);
      const landed: InferenceRecord[] = [];
      const at = this.#landing();
      for (const r of recs) if (Number(st.run(...bind(inferenceParams(r, r.stream ? 1 : 0, r.partial ? 1 : 0)), at).changes) > 0) landed.push(r);
      rollupInferencesSqlite((sql) => this.#stmt(sql), landed, this.sql);
    });
  }

  async getInference(id: string): Promise<InferenceRef | null> {
    const r = await this.#unlocked(() => this.#stmt('SELECT id, key_id, served_model, created_at FROM inferences WHERE id = ?').get(id));
    return r ? { id: str(r.id), keyId: strOrNull(r.key_id), servedModel: strOrNull(r.served_model), createdAt: iso(r.created_at) } : null;
  }

  async listInferences(q: { limit: number; before?: string; keyId?: string }): Promise<InferenceRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.before !== undefined) { where.push('id < ?'); params.push(q.before); }
    if (q.keyId !== undefined) { where.push('key_id = ?'); params.push(q.keyId); }
    const sql = `SELECT ${INFERENCE_COLUMNS} FROM inferences ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    params.push(Math.max(0, Math.floor(q.limit)));
    return (await this.#unlocked(() => this.#stmt(sql).all(...bind(params)))).map((r) => rowToInference(r as Row));
  }

  async usage(q: UsageQuery): Promise<UsageRow[]> {
    const params: unknown[] = [iso(q.since), iso(q.until)];
    let sql = USAGE_SELECT(usageGroupExpr(q.groupBy, 'sqlite'), 'dec_sum(cost_usd)') + ' WHERE created_at >= ? AND created_at < ?';
    if (q.keyId !== undefined) { sql += ' AND key_id = ?'; params.push(q.keyId); }
    sql += ' GROUP BY grp ORDER BY grp';
    return usageRows(await this.#unlocked(() => this.#stmt(sql).all(...bind(params))) as Row[]);
  }

  async insertFeedback(rows: FeedbackRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.#tx(() => {
      const st = this.#stmt(INSERT_FEEDBACK);
      const landed: FeedbackRow[] = [];
      const at = this.#landing();
      for (const f of rows) if (Number(st.run(...bind(feedbackParams(f)), at).changes) > 0) landed.push(f);
      rollupFeedbackSqlite((sql) => this.#stmt(sql), landed, this.sql);
    });
  }

  async feedbackStats(q: FeedbackStatsQuery): Promise<FeedbackStatsRow[]> {
    const params: unknown[] = [iso(q.since), iso(q.until)];
    let sql = FEEDBACK_STATS_SELECT('REAL') + ' WHERE f.created_at >= ? AND f.created_at < ? AND i.served_model IS NOT NULL';
    if (q.model !== undefined) { sql += ' AND i.served_model = ?'; params.push(q.model); }
    if (q.metric !== undefined) { sql += ' AND f.metric = ?'; params.push(q.metric); }
    sql += ' GROUP BY i.served_model, f.metric, f.type ORDER BY model, metric';
    return statsRows(await this.#unlocked(() => this.#stmt(sql).all(...bind(params))) as Row[]);
  }
}
