// The PostgreSQL store (pg Pool), used when DATABASE_URL is set. Money is NUMERIC, which pg returns
// as a string, so sums stay exact; every table lives in one schema (default "public").
import pg from 'pg';
import { MIGRATIONS_TABLE_SQL, pendingMigrations } from './migrations.ts';
import { storedSpend } from './key-spend.ts';
import {
  FEEDBACK_COLUMNS, INFERENCE_COLUMNS, KEY_COLUMNS, feedbackParams, inferenceParams, iso, keyParams,
  num, placeholders, rowToInference, rowToKey, str, strOrNull, type Row,
} from './rows.ts';
import { copyIn, copyLine } from './pg-copy.ts';
import { pgRunner, pgTransaction, type SqlRunner } from './sql-runner.ts';
import { retryingRead, type ReadRetries } from './pg-read-retry.ts';
import { abandoningQuery, KEEPALIVE_OPTIONS, READ_ABANDON_MS, watchPoolHealth } from './pg-pool-health.ts';
import { rollupFeedbackPg, rollupInferencesPg, type PgQuery } from './rollup-write.ts';
import { FEEDBACK_STATS_SELECT, USAGE_SELECT, statsRows, usageGroupExpr, usageRows } from './sql.ts';
import type {
  FeedbackRow, FeedbackStatsQuery, FeedbackStatsRow, InferenceRecord, InferenceRef, KeyRecord, Store, UsageQuery, UsageRow,
} from './types.ts';

/** batchDeadlineMs: how long one batch of records or feedback may take before its connection is given up (default 30 s). */
/** readAbandonMs: how long a plain read may go unanswered before its connection is given up (default 120 s, pg-pool-health.ts). */
export type PostgresOptions = { url: string; schema?: string; max?: number; batchDeadlineMs?: number; readAbandonMs?: number };

/** A batch write not done in this time is failed and its connection destroyed; the writer retries it (src/store/pg-pool-health.ts). */
export const BATCH_DEADLINE_MS = 30_000;

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;
const UNIQUE_VIOLATION = '23505';
const ROWS_PER_INSERT = 1000; // rows per json_to_recordset statement (a JSON parameter of about 0.7 MB)

/**
 * `INSERT ... VALUES ($1, ...), ($27, ...) ... ON CONFLICT (id) DO NOTHING` for `n` rows. Each row's
 * placeholder group is built once and joined per call: rebuilding 26 x 200 placeholders per batch cost
 * 4 to 6 µs per row of the write thread's CPU, and caching whole texts per size would hold megabytes.
 */
function multiRowInsert(table: string, columns: string, width: number): (n: number) => string {
  const groups: string[] = [];
  const head = `INSERT INTO ${table} (${columns}) VALUES `;
  return (n) => {
    for (let j = groups.length; j < n; j++) groups.push(`(${placeholders(width, true, j * width + 1)})`);
    return head + groups.slice(0, n).join(', ') + ' ON CONFLICT (id) DO NOTHING';
  };
}
const INFERENCE_TYPES = [
  'text', 'timestamptz', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'integer', 'text', 'integer', 'integer',
  'boolean', 'integer', 'integer', 'integer', 'integer', 'integer', 'numeric', 'text', 'text', 'text', 'text', 'text', 'text', 'boolean',
];
const INSERT_INFERENCES_JSON = `INSERT INTO inferences (${INFERENCE_COLUMNS}) SELECT ${INFERENCE_COLUMNS} FROM json_to_recordset($1::json) AS r(${
  INFERENCE_COLUMNS.split(', ').map((c, i) => `${c} ${INFERENCE_TYPES[i]}`).join(', ')}) ON CONFLICT (id) DO NOTHING`;

/**
 * Text PostgreSQL can store: it refuses NUL and, in JSON, lone surrogates (a provider's finish reason
 * or error could carry either). Both become U+FFFD, as the UTF-8 encoding of a bound parameter would
 * do for a lone surrogate; well-formed text without NUL (nearly always) is returned as it is.
 */
function pgText(s: string | null): string | null {
  if (s === null) return null;
  const t = s.includes('\0') ? s.replaceAll('\0', '\uFFFD') : s;
  return t.isWellFormed() ? t : t.toWellFormed();
}

/**
 * A feedback row's parameters with its client text (metric, value, reason) as PostgreSQL can store it:
 * POST /v1/feedback has answered with the row's id already, so a NUL in a comment must not get it refused.
 */
function feedbackPgParams(f: FeedbackRow): unknown[] {
  const p = feedbackParams(f);
  p[3] = pgText(p[3] as string); p[5] = pgText(p[5] as string); p[6] = pgText(p[6] as string | null);
  return p;
}

/** One inference as a json_to_recordset row: the same values inferenceParams binds, by column name. */
function inferenceJsonRow(x: InferenceRecord): Record<string, unknown> {
  const p = inferenceParams(x, x.stream);
  return {
    id: p[0], created_at: p[1], key_id: pgText(p[2] as string | null), route: pgText(p[3] as string), client_format: p[4],
    requested_model: pgText(p[5] as string), served_model: pgText(p[6] as string | null), provider: pgText(p[7] as string | null),
    attempts: pgText(p[8] as string), status: p[9], error_code: pgText(p[10] as string | null), latency_ms: p[11], ttft_ms: p[12],
    stream: p[13], input_tokens: p[14], output_tokens: p[15], cache_read_tokens: p[16], cache_write_tokens: p[17],
    reasoning_tokens: p[18], cost_usd: p[19], finish_reason: pgText(p[20] as string | null), metadata: pgText(p[21] as string | null),
    extra: pgText(p[22] as string | null), client_ip: pgText(p[23] as string | null), request_body: pgText(p[24] as string | null),
    response_body: pgText(p[25] as string | null), partial: p[26],
  };
}
const insertFeedbackSql = multiRowInsert('feedback', FEEDBACK_COLUMNS, 10);

/** Concatenated parameters of `n` rows from `from`, without a slice and flatMap per chunk. */
function rowParams<T>(rows: T[], from: number, n: number, params: (r: T) => unknown[]): unknown[] {
  const out: unknown[] = [];
  for (let i = from; i < from + n; i++) for (const v of params(rows[i]!)) out.push(v);
  return out;
}

const pgQuery = (c: pg.PoolClient): PgQuery => (text, values, name) => c.query(name ? { name, text, values } : { text, values }) as Promise<{ rows: Row[] }>;

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly schema: string;
  readonly #pool: pg.Pool;
  readonly sql: SqlRunner;
  /** Plain reads run again after their connection was lost (src/store/pg-read-retry.ts), its own and its runner's. */
  readonly #retries: ReadRetries = { count: 0 };
  readonly #health: { discarded(): number };
  readonly #batchDeadlineMs: number;
  readonly #read: (sql: string, params: unknown[]) => Promise<pg.QueryResult>;

  constructor(opts: PostgresOptions) {
    this.schema = opts.schema ?? 'public';
    if (!SCHEMA_RE.test(this.schema)) throw new Error(`invalid postgres schema name: ${this.schema}`);
    // search_path is set per connection so every unqualified table name resolves inside the schema.
    // A connect that hangs (a blackholed host) fails after 5 s instead of pg's default of never: the writer
    // then backs off and retries instead of waiting on one batch for the kernel's TCP timeout.
    // Keepalive and the discarding of idle connections a drop took too: src/store/pg-pool-health.ts.
    this.#pool = new pg.Pool({
      connectionString: opts.url, max: opts.max ?? 10, options: `-c search_path=${this.schema}`, connectionTimeoutMillis: 5000, ...KEEPALIVE_OPTIONS,
    });
    this.#health = watchPoolHealth(this.#pool);
    this.#batchDeadlineMs = opts.batchDeadlineMs ?? BATCH_DEADLINE_MS;
    // An idle client whose connection ends (pg_terminate_backend, idle_session_timeout, a firewall, a
    // failover) is emitted here, and an 'error' event nobody listens to would end the process: the pool
    // has already dropped the client and opens a new connection on next use.
    this.#pool.on('error', () => {});
    const abandonMs = opts.readAbandonMs ?? READ_ABANDON_MS;
    this.#read = abandoningQuery(this.#pool, abandonMs);
    this.sql = pgRunner(this.#pool, this.#retries, abandonMs);
  }

  get readRetries(): number { return this.#retries.count; }
  /** Idle connections discarded because another connection of the pool was lost (pg-pool-health.ts). */
  get discardedConnections(): number { return this.#health.discarded(); }

  /** A statement's rows; a plain read whose connection was lost is retried once (src/store/pg-read-retry.ts). */
  async #q(sql: string, params: unknown[] = []): Promise<Row[]> {
    return retryingRead(sql, async () => (await this.#read(sql, params)).rows as Row[], this.#retries);
  }

  #tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return pgTransaction(this.#pool, fn);
  }

  /**
   * A batch of records or feedback: bounded by batchDeadlineMs, since the writer may run it again (ids
   * make it idempotent) and one that never ends would hold every row behind it.
   */
  #batchTx(fn: (c: pg.PoolClient) => Promise<void>): Promise<void> {
    return pgTransaction(this.#pool, fn, this.#batchDeadlineMs);
  }

  /** A transaction-scoped advisory lock serializes replicas starting at once; the loser sees the steps applied. */
  async migrate(): Promise<void> {
    await this.#tx(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`gateway-migrations:${this.schema}`]);
      await c.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
      await c.query(MIGRATIONS_TABLE_SQL);
      const applied = new Set((await c.query('SELECT version FROM schema_migrations')).rows.map((r: Row) => num(r.version)));
      for (const m of pendingMigrations(applied)) {
        for (const stmt of m.postgres) await c.query(stmt);
        await c.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, new Date().toISOString()]);
      }
    });
  }

  async ping(): Promise<void> {
    await this.#q('SELECT 1');
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  async insertKey(k: KeyRecord): Promise<void> {
    await this.#q(`INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (${placeholders(12, true)})`, keyParams(k));
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const rows = await this.#q(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return rows[0] ? rowToKey(rows[0]) : null;
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.#q(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`)).map(rowToKey);
  }

  async revokeKey(id: string, at: string): Promise<boolean> {
    const res = await this.#pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [iso(at), id]);
    return (res.rowCount ?? 0) > 0;
  }

  async touchKeys(lastUsed: Array<{ id: string; at: string }>): Promise<void> {
    if (lastUsed.length === 0) return;
    // One statement for the whole batch: unnest the id/time arrays and keep the newest time per key.
    await this.#q(`UPDATE api_keys k SET last_used_at = u.at FROM
      (SELECT id, MAX(at) AS at FROM unnest($1::text[], $2::timestamptz[]) AS t(id, at) GROUP BY id) u
      WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`,
    [lastUsed.map((u) => u.id), lastUsed.map((u) => iso(u.at))]);
  }

  /** The records' spend, and the rollups' where retention deleted records (key-spend.ts). */
  keySpend(id: string, since: string): Promise<string> {
    return storedSpend(this.sql, id, iso(since));
  }

  /**
   * One COPY per batch, in one transaction. COPY has no ON CONFLICT, so when the batch meets an id
   * already stored (the writer retrying a batch whose commit landed but whose answer was lost: 23505)
   * it goes again through the idempotent INSERT below.
   */
  async insertInferences(recs: InferenceRecord[]): Promise<void> {
    if (recs.length === 0) return;
    let lines = '';
    for (const r of recs) lines += copyLine(inferenceParams(r, r.stream) as Array<string | number | boolean | null>);
    try {
      // The dashboard's rollups move in the same transaction: COPY inserted every row or failed (src/store/rollup-write.ts).
      await this.#batchTx(async (c) => { await copyIn(c, 'inferences', INFERENCE_COLUMNS, lines); await rollupInferencesPg(pgQuery(c), recs, this.sql); });
    } catch (err) {
      if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
      await this.#insertInferencesIdempotent(recs);
    }
  }

  /**
   * One statement per chunk: the rows go as a single JSON parameter expanded by json_to_recordset, and
   * ids already stored are skipped. Measured against a multi-row VALUES insert of 26 bind parameters
   * per row: server CPU 12-16 vs 21-25 us per row, this thread's 2.5-5 vs 5-9 us per row.
   */
  async #insertInferencesIdempotent(recs: InferenceRecord[]): Promise<void> {
    await this.#batchTx(async (c) => {
      const landed = new Set<string>();
      for (let i = 0; i < recs.length; i += ROWS_PER_INSERT) {
        const res = await c.query(`${INSERT_INFERENCES_JSON} RETURNING id`, [JSON.stringify(recs.slice(i, i + ROWS_PER_INSERT).map(inferenceJsonRow))]);
        for (const r of res.rows as Row[]) landed.add(String(r.id));
      }
      // Only the rows really inserted count in the rollups (the first of an id repeated in the batch).
      await rollupInferencesPg(pgQuery(c), recs.filter((r) => landed.delete(r.id)), this.sql);
    });
  }

  async getInference(id: string): Promise<InferenceRef | null> {
    const r = (await this.#q('SELECT id, key_id, served_model, created_at FROM inferences WHERE id = $1', [id]))[0];
    return r ? { id: str(r.id), keyId: strOrNull(r.key_id), servedModel: strOrNull(r.served_model), createdAt: iso(r.created_at) } : null;
  }

  async listInferences(q: { limit: number; before?: string; keyId?: string }): Promise<InferenceRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.before !== undefined) { params.push(q.before); where.push(`id < $${params.length}`); }
    if (q.keyId !== undefined) { params.push(q.keyId); where.push(`key_id = $${params.length}`); }
    params.push(Math.max(0, Math.floor(q.limit)));
    const sql = `SELECT ${INFERENCE_COLUMNS} FROM inferences ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`;
    return (await this.#q(sql, params)).map(rowToInference);
  }

  async usage(q: UsageQuery): Promise<UsageRow[]> {
    const params: unknown[] = [iso(q.since), iso(q.until)];
    let sql = USAGE_SELECT(usageGroupExpr(q.groupBy, 'postgres'), 'COALESCE(SUM(cost_usd), 0)::text') + ' WHERE created_at >= $1 AND created_at < $2';
    if (q.keyId !== undefined) { params.push(q.keyId); sql += ' AND key_id = $3'; }
    sql += ' GROUP BY grp ORDER BY grp';
    return usageRows(await this.#q(sql, params));
  }

  async insertFeedback(rows: FeedbackRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.#batchTx(async (c) => {
      const landed = new Set<string>();
      for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
        const n = Math.min(ROWS_PER_INSERT, rows.length - i);
        const res = await c.query(`${insertFeedbackSql(n)} RETURNING id`, rowParams(rows, i, n, feedbackPgParams));
        for (const r of res.rows as Row[]) landed.add(String(r.id));
      }
      await rollupFeedbackPg(pgQuery(c), rows.filter((f) => landed.delete(f.id)), this.sql);
    });
  }

  async feedbackStats(q: FeedbackStatsQuery): Promise<FeedbackStatsRow[]> {
    const params: unknown[] = [iso(q.since), iso(q.until)];
    let sql = FEEDBACK_STATS_SELECT('DOUBLE PRECISION') + ' WHERE f.created_at >= $1 AND f.created_at < $2 AND i.served_model IS NOT NULL';
    if (q.model !== undefined) { params.push(q.model); sql += ` AND i.served_model = $${params.length}`; }
    if (q.metric !== undefined) { params.push(q.metric); sql += ` AND f.metric = $${params.length}`; }
    sql += ' GROUP BY i.served_model, f.metric, f.type ORDER BY model, metric';
    return statsRows(await this.#q(sql, params));
  }
}
