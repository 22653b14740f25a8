// Tables of the dashboard (migrations 40-41, released): users and sessions, key owners and rotation grace
// hashes, and the first hourly rollups kept by database triggers. Migration 42 (rollup-schema.ts) replaced
// those rollups and dropped the triggers; their DDL stays here because released steps never change (and
// bench/dashboard.ts measures them). Latency and time-to-first-token histograms share one bucket scale.
// The column types, columns and time truncation both generations of rollups use are defined here once
// (the generated DDL of every released migration is unchanged, byte for byte).
import type { Dialect } from './migrations.ts';

/** Upper bounds (ms, exclusive) of the histogram buckets; the last bucket is open-ended. */
export const LATENCY_BOUNDS_MS = [
  25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 15000, 20000, 30000, 60000, 120000,
] as const;
export const HISTOGRAM_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

const cols = (prefix: string): string[] => Array.from({ length: HISTOGRAM_BUCKETS }, (_, i) => `${prefix}${i}`);
export const LAT_COLUMNS = cols('lat_h');
export const TTFT_COLUMNS = cols('ttft_h');

/** Additive columns of usage_hourly (all but the dimensions and cost). */
export const USAGE_SUM_COLUMNS = [
  'requests', 'errors', 'stream_requests', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens',
  'reasoning_tokens', 'latency_ms_sum', 'ttft_count', 'ttft_ms_sum', ...LAT_COLUMNS, ...TTFT_COLUMNS,
] as const;

/** One 0/1 expression per bucket over `v` (a nullable ms value): NULL counts in no bucket. */
function bucketFlags(v: string, d: Dialect): string[] {
  const lo = [0, ...LATENCY_BOUNDS_MS];
  return lo.map((from, i) => {
    const to = LATENCY_BOUNDS_MS[i];
    const cond = to === undefined ? `${v} >= ${from}` : `${v} >= ${from} AND ${v} < ${to}`;
    return d === 'postgres' ? `(${cond})::int` : `IFNULL(${cond}, 0)`;
  });
}

function userTables(d: Dialect): string[] {
  const ts = d === 'postgres' ? 'TIMESTAMPTZ' : 'TEXT';
  return [
    `CREATE TABLE dashboard_users (
      id TEXT PRIMARY KEY,
      email TEXT NOT NULL UNIQUE,
      name TEXT NOT NULL,
      role TEXT NOT NULL,
      password_hash TEXT NOT NULL,
      created_at ${ts} NOT NULL,
      password_changed_at ${ts} NOT NULL,
      disabled_at ${ts}
    )`,
    // id is the SHA-256 of the cookie's token: a leaked table cannot be replayed as cookies.
    `CREATE TABLE dashboard_sessions (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL,
      csrf TEXT NOT NULL,
      created_at ${ts} NOT NULL,
      last_seen_at ${ts} NOT NULL,
      expires_at ${ts} NOT NULL,
      ip TEXT,
      user_agent TEXT
    )`,
    'CREATE INDEX dashboard_sessions_user_idx ON dashboard_sessions (user_id)',
    'CREATE TABLE key_owners (key_id TEXT PRIMARY KEY, user_id TEXT NOT NULL)',
    'CREATE INDEX key_owners_user_idx ON key_owners (user_id)',
    // The hash a rotated key had, accepted until valid_until (the rotation's grace period).
    `CREATE TABLE key_grace (key_id TEXT NOT NULL, hash TEXT NOT NULL, valid_until ${ts} NOT NULL, PRIMARY KEY (key_id, hash))`,
  ];
}

/** Column types per dialect (exact money is NUMERIC or decimal TEXT), and the additive usage columns. */
export function columnTypes(d: Dialect): { ts: string; int: string; money: string; real: string; sums: string } {
  const int = d === 'postgres' ? 'BIGINT' : 'INTEGER';
  return {
    ts: d === 'postgres' ? 'TIMESTAMPTZ' : 'TEXT', int, money: d === 'postgres' ? 'NUMERIC' : 'TEXT', real: d === 'postgres' ? 'DOUBLE PRECISION' : 'REAL',
    sums: columnLines(USAGE_SUM_COLUMNS.map((c) => `${c} ${int} NOT NULL DEFAULT 0`)),
  };
}

/** Column definitions in the layout of the tables' DDL (one per line). */
export const columnLines = (defs: readonly string[]): string => defs.join(',\n      ');
/** The usage rollups' dimensions. */
export const USAGE_DIMS = ['key_id', 'model', 'provider', 'route'] as const;
/** The feedback rollups' dimensions and sums, as columns. */
export function feedbackColumns(d: Dialect): string {
  const { int, real } = columnTypes(d);
  return columnLines([...['key_id', 'model', 'metric', 'type'].map((c) => `${c} TEXT NOT NULL`),
    `count ${int} NOT NULL DEFAULT 0`, `value_sum ${real} NOT NULL DEFAULT 0`, `value_sumsq ${real} NOT NULL DEFAULT 0`]);
}

/** The instant in column `c` truncated to its UTC hour or day (ISO text in SQLite, as the stores write it). */
export function utcTrunc(unit: 'hour' | 'day', d: Dialect, c: string): string {
  if (d === 'postgres') return `date_trunc('${unit}', ${c}, 'UTC')`;
  return unit === 'hour' ? `substr(${c}, 1, 13) || ':00:00.000Z'` : `substr(${c}, 1, 10) || 'T00:00:00.000Z'`;
}

function rollupTables(d: Dialect): string[] {
  const { ts, money, sums } = columnTypes(d);
  return [
    `CREATE TABLE usage_hourly (
      hour ${ts} NOT NULL,
      ${columnLines(USAGE_DIMS.map((c) => `${c} TEXT NOT NULL`))},
      cost_usd ${money} NOT NULL DEFAULT 0,
      ${sums},
      PRIMARY KEY (hour, key_id, model, provider, route)
    )`,
    'CREATE INDEX usage_hourly_key_idx ON usage_hourly (key_id, hour)',
    `CREATE TABLE feedback_hourly (
      hour ${ts} NOT NULL,
      ${feedbackColumns(d)},
      PRIMARY KEY (hour, key_id, model, metric, type)
    )`,
  ];
}

const V = (c: string): string => `CASE WHEN ${c} = 'true' THEN 1.0 WHEN ${c} = 'false' THEN 0.0 ELSE NULL END`;
/** A feedback row's value (alias `f`) as a number: booleans 1 or 0, floats cast, comments NULL. */
const metricValue = (f: string, d: Dialect): string =>
  `CASE WHEN ${f}.type = 'boolean' THEN ${V(`${f}.value`)} WHEN ${f}.type = 'float' THEN CAST(${f}.value AS ${columnTypes(d).real}) ELSE NULL END`;

/**
 * SQLite: row triggers (they fire only for rows really inserted, so a retried batch that partly
 * landed is never counted twice). Money adds through dec_add, registered by SqliteStore.
 */
function sqliteTriggers(): string[] {
  const flags = [...bucketFlags('NEW.latency_ms', 'sqlite'), ...bucketFlags('NEW.ttft_ms', 'sqlite')];
  const additive = USAGE_SUM_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ');
  const fbValue = (f: string): string => metricValue(f, 'sqlite');
  const hour = (c: string): string => utcTrunc('hour', 'sqlite', c);
  const fbUpsert = `ON CONFLICT (hour, key_id, model, metric, type) DO UPDATE SET count = count + excluded.count,
      value_sum = value_sum + excluded.value_sum, value_sumsq = value_sumsq + excluded.value_sumsq`;
  /** Feedback rows (alias `f`) with their inference's model, from `from`, counted once each. */
  const fbInsert = (f: string, model: string, from: string): string => `INSERT INTO feedback_hourly (hour, key_id, model, metric, type, count, value_sum, value_sumsq)
      SELECT ${hour(`${f}.created_at`)}, IFNULL(${f}.key_id, ''), ${model}, ${f}.metric, ${f}.type, 1,
        IFNULL(${fbValue(f)}, 0), IFNULL(${fbValue(f)} * ${fbValue(f)}, 0)
      FROM ${from}
      ${fbUpsert};`;
  return [
    `CREATE TRIGGER inferences_rollup AFTER INSERT ON inferences BEGIN
      INSERT INTO usage_hourly (hour, key_id, model, provider, route, cost_usd, ${USAGE_SUM_COLUMNS.join(', ')})
      VALUES (${hour('NEW.created_at')}, IFNULL(NEW.key_id, ''), IFNULL(NEW.served_model, NEW.requested_model),
        IFNULL(NEW.provider, ''), NEW.route, NEW.cost_usd, 1, NEW.status >= 400, NEW.stream != 0, NEW.input_tokens, NEW.output_tokens,
        NEW.cache_read_tokens, NEW.cache_write_tokens, NEW.reasoning_tokens, NEW.latency_ms, NEW.ttft_ms IS NOT NULL,
        IFNULL(NEW.ttft_ms, 0), ${flags.join(', ')})
      ON CONFLICT (hour, key_id, model, provider, route) DO UPDATE SET cost_usd = dec_add(cost_usd, excluded.cost_usd), ${additive};
      ${fbInsert('f', 'NEW.served_model', 'feedback f WHERE f.inference_id = NEW.id AND NEW.served_model IS NOT NULL')}
    END`,
    // Feedback whose inference is stored already counts now; the rest counts when the inference lands (above).
    `CREATE TRIGGER feedback_rollup AFTER INSERT ON feedback BEGIN
      ${fbInsert('NEW', 'i.served_model', 'inferences i WHERE i.id = NEW.inference_id AND i.served_model IS NOT NULL')}
    END`,
  ];
}

/**
 * PostgreSQL: statement triggers over transition tables (one grouped upsert per batch, COPY included).
 * Rows are upserted in key order so concurrent batches of several replicas lock them in the same order.
 */
function postgresTriggers(): string[] {
  const flags = [...bucketFlags('latency_ms', 'postgres'), ...bucketFlags('ttft_ms', 'postgres')].map((f) => `COALESCE(SUM(${f}), 0)`);
  const additive = USAGE_SUM_COLUMNS.map((c) => `${c} = usage_hourly.${c} + EXCLUDED.${c}`).join(', ');
  const fbValue = (f: string): string => metricValue(f, 'postgres');
  const fbInsert = (from: string): string => `INSERT INTO feedback_hourly (hour, key_id, model, metric, type, count, value_sum, value_sumsq)
      SELECT ${utcTrunc('hour', 'postgres', 'f.created_at')}, COALESCE(f.key_id, ''), i.served_model, f.metric, f.type, COUNT(*),
        COALESCE(SUM(${fbValue('f')}), 0), COALESCE(SUM(${fbValue('f')} * ${fbValue('f')}), 0)
      FROM ${from} WHERE i.served_model IS NOT NULL
      GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (hour, key_id, model, metric, type) DO UPDATE SET count = feedback_hourly.count + EXCLUDED.count,
        value_sum = feedback_hourly.value_sum + EXCLUDED.value_sum, value_sumsq = feedback_hourly.value_sumsq + EXCLUDED.value_sumsq;`;
  return [
    `CREATE FUNCTION gw_inferences_rollup() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO usage_hourly (hour, key_id, model, provider, route, cost_usd, ${USAGE_SUM_COLUMNS.join(', ')})
      SELECT ${utcTrunc('hour', 'postgres', 'created_at')}, COALESCE(key_id, ''), COALESCE(served_model, requested_model), COALESCE(provider, ''), route,
        SUM(cost_usd), COUNT(*), COUNT(*) FILTER (WHERE status >= 400), COUNT(*) FILTER (WHERE stream), SUM(input_tokens), SUM(output_tokens),
        SUM(cache_read_tokens), SUM(cache_write_tokens), SUM(reasoning_tokens), SUM(latency_ms), COUNT(ttft_ms), COALESCE(SUM(ttft_ms), 0),
        ${flags.join(', ')}
      FROM new_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (hour, key_id, model, provider, route) DO UPDATE SET cost_usd = usage_hourly.cost_usd + EXCLUDED.cost_usd, ${additive};
      ${fbInsert('new_rows i JOIN feedback f ON f.inference_id = i.id')}
      RETURN NULL;
    END $fn$`,
    `CREATE TRIGGER inferences_rollup AFTER INSERT ON inferences REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION gw_inferences_rollup()`,
    `CREATE FUNCTION gw_feedback_rollup() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      ${fbInsert('new_rows f JOIN inferences i ON i.id = f.inference_id')}
      RETURN NULL;
    END $fn$`,
    `CREATE TRIGGER feedback_rollup AFTER INSERT ON feedback REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION gw_feedback_rollup()`,
  ];
}

/**
 * Rows stored before the rollups existed are folded in once, by the same grouping the triggers use
 * (an upgrade of a database with history keeps its history on the dashboard).
 */
function backfill(d: Dialect): string[] {
  const flags = [...bucketFlags('latency_ms', d), ...bucketFlags('ttft_ms', d)].map((f) => `COALESCE(SUM(${f}), 0)`);
  const hour = (c: string): string => utcTrunc('hour', d, c);
  const money = d === 'postgres' ? 'SUM(cost_usd)' : 'dec_sum(cost_usd)';
  const streamCount = d === 'postgres' ? 'COUNT(*) FILTER (WHERE stream)' : 'SUM(stream != 0)';
  const errors = d === 'postgres' ? 'COUNT(*) FILTER (WHERE status >= 400)' : 'SUM(status >= 400)';
  const fv = metricValue('f', d);
  return [
    `INSERT INTO usage_hourly (hour, key_id, model, provider, route, cost_usd, ${USAGE_SUM_COLUMNS.join(', ')})
    SELECT ${hour('created_at')}, COALESCE(key_id, ''), COALESCE(served_model, requested_model), COALESCE(provider, ''), route,
      ${money}, COUNT(*), ${errors}, ${streamCount}, SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens),
      SUM(cache_write_tokens), SUM(reasoning_tokens), SUM(latency_ms), COUNT(ttft_ms), COALESCE(SUM(ttft_ms), 0), ${flags.join(', ')}
    FROM inferences GROUP BY 1, 2, 3, 4, 5`,
    `INSERT INTO feedback_hourly (hour, key_id, model, metric, type, count, value_sum, value_sumsq)
    SELECT ${hour('f.created_at')}, COALESCE(f.key_id, ''), i.served_model, f.metric, f.type, COUNT(*),
      COALESCE(SUM(${fv}), 0), COALESCE(SUM((${fv}) * (${fv})), 0)
    FROM feedback f JOIN inferences i ON i.id = f.inference_id WHERE i.served_model IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
  ];
}

/** Migration 40: accounts; 41: rollups (tables, backfill of existing rows, then the triggers). */
export function dashboardAccountsDdl(d: Dialect): string[] { return userTables(d); }
export function dashboardRollupsDdl(d: Dialect): string[] {
  return [...rollupTables(d), ...backfill(d), ...(d === 'postgres' ? postgresTriggers() : sqliteTriggers())];
}
