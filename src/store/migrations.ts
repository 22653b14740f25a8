// Versioned schema migrations for both backends: numbered steps with per-dialect SQL, applied once each
// and recorded in schema_migrations. Steps are append-only: never edit a released step, add a new one.
import { dashboardAccountsDdl, dashboardRollupsDdl } from './dashboard-schema.ts';
import { loginFailuresDdl, rollupsInWriterDdl } from './rollup-schema.ts';
import { routerDdl, routerStateOriginDdl } from './router-schema.ts';
import { routerKindRollupDdl, routerRollupDdl } from './router-rollup.ts';
import { catalogDdl } from './catalog-schema.ts';
import { landingDdl } from './landing.ts';

export type Dialect = 'sqlite' | 'postgres';

export type Migration = { version: number; name: string; sqlite: string[]; postgres: string[] };

/** Shared DDL where both dialects agree; `cost` and timestamp columns differ (exact NUMERIC and timestamptz in pg). */
function ddl(d: Dialect): string[] {
  const ts = d === 'postgres' ? 'TIMESTAMPTZ' : 'TEXT';
  const money = d === 'postgres' ? 'NUMERIC' : 'TEXT';
  const bool = d === 'postgres' ? 'BOOLEAN' : 'INTEGER';
  return [
    `CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      hash TEXT NOT NULL UNIQUE,
      created_at ${ts} NOT NULL,
      last_used_at ${ts},
      expires_at ${ts},
      revoked_at ${ts},
      allowed_models TEXT NOT NULL DEFAULT '[]',
      budget_usd ${money},
      budget_period TEXT,
      rpm_limit INTEGER,
      tpm_limit INTEGER
    )`,
    `CREATE TABLE inferences (
      id TEXT PRIMARY KEY,
      created_at ${ts} NOT NULL,
      key_id TEXT,
      route TEXT NOT NULL,
      client_format TEXT NOT NULL,
      requested_model TEXT NOT NULL,
      served_model TEXT,
      provider TEXT,
      attempts TEXT NOT NULL DEFAULT '[]',
      status INTEGER NOT NULL,
      error_code TEXT,
      latency_ms INTEGER NOT NULL,
      ttft_ms INTEGER,
      stream ${bool} NOT NULL,
      input_tokens INTEGER NOT NULL DEFAULT 0,
      output_tokens INTEGER NOT NULL DEFAULT 0,
      cache_read_tokens INTEGER NOT NULL DEFAULT 0,
      cache_write_tokens INTEGER NOT NULL DEFAULT 0,
      reasoning_tokens INTEGER NOT NULL DEFAULT 0,
      cost_usd ${money} NOT NULL DEFAULT 0,
      finish_reason TEXT,
      metadata TEXT,
      extra TEXT,
      client_ip TEXT,
      request_body TEXT,
      response_body TEXT
    )`,
    'CREATE INDEX inferences_created_idx ON inferences (created_at)',
    'CREATE INDEX inferences_key_created_idx ON inferences (key_id, created_at)',
    'CREATE INDEX inferences_model_created_idx ON inferences (served_model, created_at)',
    `CREATE TABLE metrics (
      name TEXT PRIMARY KEY,
      type TEXT NOT NULL,
      created_at ${ts} NOT NULL
    )`,
    `CREATE TABLE feedback (
      id TEXT PRIMARY KEY,
      inference_id TEXT NOT NULL,
      key_id TEXT,
      metric TEXT NOT NULL,
      type TEXT NOT NULL,
      value TEXT NOT NULL,
      reason TEXT,
      tags TEXT NOT NULL DEFAULT '{}',
      optimize TEXT NOT NULL,
      created_at ${ts} NOT NULL
    )`,
    'CREATE INDEX feedback_inference_idx ON feedback (inference_id)',
    'CREATE INDEX feedback_metric_created_idx ON feedback (metric, created_at)',
    'CREATE INDEX feedback_created_idx ON feedback (created_at)',
  ];
}

/**
 * No query reads inferences by (served_model, created_at): usage by model scans the time range and
 * groups, feedback stats join by id. The index only cost every insert: SQLite took 11-15 µs per row
 * with the three secondary indexes and 6-7 µs with none, so each is about a sixth of the insert.
 */
const DROP_MODEL_INDEX = 'DROP INDEX IF EXISTS inferences_model_created_idx';

/**
 * An answer that did not finish normally (the client hung up, the upstream died or sent an error
 * mid-stream, a timeout): its tokens are what it consumed, reported or estimated (docs/reliability.md).
 */
const PARTIAL_COLUMN = (type: string): string => `ALTER TABLE inferences ADD COLUMN partial ${type}`;

/**
 * Responses stored for previous_response_id and GET /v1/responses/{id} (src/responses/store.ts): the
 * same DDL in both dialects, times as epoch milliseconds so one query text serves both.
 */
const STORED_RESPONSES_DDL = [
  `CREATE TABLE stored_responses (
    id TEXT PRIMARY KEY,
    key_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    previous_id TEXT,
    input_items TEXT NOT NULL,
    response TEXT NOT NULL
  )`,
  'CREATE INDEX stored_responses_expires_idx ON stored_responses (expires_at)',
];

/**
 * Version numbers are reserved by area so that work on several features at once never takes the same
 * number: 1-9 core records and durability, 10-19 catalog, 20-29 router, 30-39 client APIs (stored
 * responses), 40-59 dashboard (users, sessions, rollups). Gaps are fine: a step runs when its version
 * is not yet applied, in version order.
 */
/**
 * Metric definitions per scope (the API key; '' without keys): one tenant's first value no longer fixes a
 * metric's type for every key, nor tells another key that the metric exists. Each scope's existing
 * metrics are carried over from its stored feedback (first type and direction; comments have none).
 */
function metricTypesDdl(d: Dialect): string[] {
  const ts = d === 'postgres' ? 'TIMESTAMPTZ' : 'TEXT';
  return [
    `CREATE TABLE metric_types (
      scope TEXT NOT NULL,
      name TEXT NOT NULL,
      type TEXT NOT NULL,
      optimize TEXT,
      created_at ${ts} NOT NULL,
      PRIMARY KEY (scope, name)
    )`,
    `INSERT INTO metric_types (scope, name, type, optimize, created_at)
      SELECT COALESCE(key_id, ''), metric, MIN(type), CASE WHEN MIN(type) = 'comment' THEN NULL ELSE MIN(optimize) END, MIN(created_at)
      FROM feedback GROUP BY COALESCE(key_id, ''), metric`,
  ];
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial schema', sqlite: ddl('sqlite'), postgres: ddl('postgres') },
  { version: 2, name: 'drop the unused inferences (served_model, created_at) index', sqlite: [DROP_MODEL_INDEX], postgres: [DROP_MODEL_INDEX] },
  { version: 3, name: 'inferences.partial: answers cut short, billed for what they consumed', sqlite: [PARTIAL_COLUMN('INTEGER NOT NULL DEFAULT 0')], postgres: [PARTIAL_COLUMN('BOOLEAN NOT NULL DEFAULT false')] },
  { version: 6, name: 'metric definitions per key (metric_types)', sqlite: metricTypesDdl('sqlite'), postgres: metricTypesDdl('postgres') },
  { version: 10, name: 'catalog refresh overlays and runs', sqlite: catalogDdl('sqlite'), postgres: catalogDdl('postgres') },
  { version: 20, name: 'router decisions and versioned learned state', sqlite: routerDdl('sqlite'), postgres: routerDdl('postgres') },
  { version: 21, name: 'router rollups per hour, key and chosen model, state version and constraint, written with the decisions (backfilled from them)', sqlite: routerRollupDdl('sqlite'), postgres: routerRollupDdl('postgres') },
  { version: 22, name: 'router rollup per hour, key, prompt kind and chosen model, written with the decisions (backfilled from them)', sqlite: routerKindRollupDdl('sqlite'), postgres: routerKindRollupDdl('postgres') },
  { version: 23, name: 'router states: origin (an operator\'s rollback or reset) and the time corrections start from', sqlite: routerStateOriginDdl(), postgres: routerStateOriginDdl() },
  { version: 24, name: 'landing order of decisions, inference records and feedback, which the router\'s training cursors walk (a record landing late is still learned)', sqlite: landingDdl('sqlite'), postgres: landingDdl('postgres') },
  { version: 30, name: 'stored responses (POST /v1/responses with store)', sqlite: STORED_RESPONSES_DDL, postgres: STORED_RESPONSES_DDL },
  { version: 40, name: 'dashboard users, sessions, key owners and rotation grace', sqlite: dashboardAccountsDdl('sqlite'), postgres: dashboardAccountsDdl('postgres') },
  { version: 41, name: 'dashboard hourly rollups maintained by insert triggers', sqlite: dashboardRollupsDdl('sqlite'), postgres: dashboardRollupsDdl('postgres') },
  { version: 42, name: 'dashboard rollups per hour and day at every grain, written by the record writer (no triggers), exact integer money', sqlite: rollupsInWriterDdl('sqlite'), postgres: rollupsInWriterDdl('postgres') },
  { version: 43, name: 'dashboard sign-in failures shared by replicas', sqlite: loginFailuresDdl('sqlite'), postgres: loginFailuresDdl('postgres') },
];

export const MIGRATIONS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

/** Steps not yet applied, in version order. Throws when the database is newer than this build. */
export function pendingMigrations(applied: ReadonlySet<number>, all: readonly Migration[] = MIGRATIONS): Migration[] {
  const latest = all.reduce((m, x) => Math.max(m, x.version), 0);
  for (const v of applied) {
    if (v > latest) throw new Error(`database schema version ${v} is newer than this gateway (knows up to ${latest}); upgrade the gateway`);
  }
  return [...all].sort((a, b) => a.version - b.version).filter((m) => !applied.has(m.version));
}
