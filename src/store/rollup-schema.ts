// The dashboard's rollup tables since migration 42: usage and feedback summed per UTC hour and day ("span"),
// at several grains (everything, per key, model, provider, route, and the full cell), journaled by the
// record writer in the transaction that inserts the rows and folded in later (src/store/rollup-write.ts,
// rollup-fold.ts), no triggers.
// Money is exact integers (src/store/rollup-cells.ts, Money). Migration 42 converts the hourly tables of
// migration 41 (which may hold history whose raw records retention deleted) and drops them and their triggers.
import type { Dialect } from './migrations.ts';
import { columnLines, columnTypes, feedbackColumns, USAGE_DIMS as DIMS, USAGE_SUM_COLUMNS, utcTrunc } from './dashboard-schema.ts';

/** The dimension each single-dimension grain keeps. */
export const GRAIN_DIM = { key: 'key_id', model: 'model', provider: 'provider', route: 'route' } as const;

function tables(d: Dialect): string[] {
  const { ts, int, money: rest, sums } = columnTypes(d);
  // SQLite: the rows live in the primary key's b-tree, so an upsert is one seek (a rowid table needs two).
  const tail = d === 'sqlite' ? ' WITHOUT ROWID' : '';
  return [
    `CREATE TABLE usage_rollup (
      span TEXT NOT NULL,
      grain TEXT NOT NULL,
      t ${ts} NOT NULL,
      ${columnLines(DIMS.map((c) => `${c} TEXT NOT NULL`))},
      cost_hi ${int} NOT NULL DEFAULT 0,
      cost_lo ${int} NOT NULL DEFAULT 0,
      cost_rest ${rest},
      ${sums},
      PRIMARY KEY (span, grain, t, key_id, model, provider, route)
    )${tail}`,
    // Upserts never change these columns, so the indexes cost only when a cell is first created.
    'CREATE INDEX usage_rollup_key_idx ON usage_rollup (span, grain, key_id, t)',
    'CREATE INDEX usage_rollup_model_idx ON usage_rollup (span, grain, model, t)',
    `CREATE TABLE feedback_rollup (
      span TEXT NOT NULL,
      grain TEXT NOT NULL,
      t ${ts} NOT NULL,
      ${feedbackColumns(d)},
      PRIMARY KEY (span, grain, t, model, metric, type, key_id)
    )${tail}`,
    'CREATE INDEX feedback_rollup_key_idx ON feedback_rollup (span, grain, key_id, t)',
    // Feedback stored before its inference: counted when the inference lands (or by the sweep).
    `CREATE TABLE feedback_rollup_pending (feedback_id TEXT PRIMARY KEY, inference_id TEXT NOT NULL, created_at ${ts} NOT NULL)`,
    'CREATE INDEX feedback_rollup_pending_inference_idx ON feedback_rollup_pending (inference_id)',
    // One row per written batch: its hour cells, until a fold adds them to the tables above (src/store/rollup-fold.ts).
    `CREATE TABLE rollup_journal (seq ${d === 'postgres' ? 'BIGSERIAL' : 'INTEGER'} PRIMARY KEY, kind TEXT NOT NULL, cells TEXT NOT NULL)`,
    // Entries live seconds: compressing them (pglz, ~20 KB per batch) cost the server more than storing them.
    ...(d === 'postgres' ? ['ALTER TABLE rollup_journal ALTER COLUMN cells SET STORAGE EXTERNAL'] : []),
  ];
}

/** SQL for integer division and remainder of a summed integer (PostgreSQL's SUM(bigint) is numeric). */
const div = (d: Dialect, x: string): string => (d === 'postgres' ? `div(${x}, 1000000000000)::bigint` : `(${x}) / 1000000000000`);
const mod = (d: Dialect, x: string): string => (d === 'postgres' ? `mod(${x}, 1000000000000)::bigint` : `(${x}) % 1000000000000`);
const restSum = (d: Dialect): string => (d === 'postgres' ? 'SUM(cost_rest)' : "NULLIF(dec_sum(cost_rest) FILTER (WHERE cost_rest IS NOT NULL), '0')");
const dayOf = (d: Dialect, c: string): string => utcTrunc('day', d, c);

/** Every other grain and the day span, summed from the ('h', 'cell') rows (the conversion below). */
function deriveRollups(d: Dialect): string[] {
  const money = `SUM(cost_hi) + ${div(d, 'SUM(cost_lo)')}, ${mod(d, 'SUM(cost_lo)')}, ${restSum(d)}`;
  const sums = USAGE_SUM_COLUMNS.map((c) => `SUM(${c})`).join(', ');
  const cols = `span, grain, t, ${DIMS.join(', ')}, cost_hi, cost_lo, cost_rest, ${USAGE_SUM_COLUMNS.join(', ')}`;
  const from = `FROM usage_rollup WHERE span = 'h' AND grain = 'cell'`;
  const out: string[] = [];
  const dimsOf = (grain: string): string[] => DIMS.map((c) => (grain === 'cell' || GRAIN_DIM[grain as keyof typeof GRAIN_DIM] === c ? c : "''"));
  for (const [span, t] of [['h', 't'], ['d', dayOf(d, 't')]] as const) {
    for (const grain of ['total', 'key', 'model', 'provider', 'route', 'cell']) {
      if (span === 'h' && grain === 'cell') continue;
      const dims = dimsOf(grain);
      const groupBy = ['1', ...dims.map((x, i) => (x === "''" ? null : String(i + 2))).filter((x) => x !== null)].join(', ');
      out.push(`INSERT INTO usage_rollup (${cols}) SELECT '${span}', '${grain}', x.* FROM (SELECT ${t}, ${dims.join(', ')}, ${money}, ${sums} ${from} GROUP BY ${groupBy}) x`);
    }
  }
  const fb = `FROM feedback_rollup WHERE span = 'h' AND grain = 'cell'`;
  const fcols = 'span, grain, t, key_id, model, metric, type, count, value_sum, value_sumsq';
  out.push(`INSERT INTO feedback_rollup (${fcols}) SELECT 'h', 'model', t, '', model, metric, type, SUM(count), SUM(value_sum), SUM(value_sumsq) ${fb} GROUP BY t, model, metric, type`);
  out.push(`INSERT INTO feedback_rollup (${fcols}) SELECT 'd', 'cell', ${dayOf(d, 't')}, key_id, model, metric, type, SUM(count), SUM(value_sum), SUM(value_sumsq) ${fb} GROUP BY 3, key_id, model, metric, type`);
  out.push(`INSERT INTO feedback_rollup (${fcols}) SELECT 'd', 'model', ${dayOf(d, 't')}, '', model, metric, type, SUM(count), SUM(value_sum), SUM(value_sumsq) ${fb} GROUP BY 3, model, metric, type`);
  return out;
}

/** Migration 41's exact decimal cost (TEXT in SQLite, NUMERIC in PostgreSQL) as Money columns. */
function moneyFromDecimal(d: Dialect): { select: string; from: (table: string) => string } {
  if (d === 'postgres') {
    return {
      select: 'trunc(u)::bigint, trunc((u - trunc(u)) * 1000000000000)::bigint, NULLIF((u - trunc(u) - trunc((u - trunc(u)) * 1000000000000) / 1000000000000) / 1000000, 0)',
      from: (table) => `(SELECT *, cost_usd * 1000000 AS u FROM ${table}) m`,
    };
  }
  return {
    select: `s * (CAST(ip AS INTEGER) * 1000000 + CAST(substr(f18, 1, 6) AS INTEGER)), s * CAST(substr(f18, 7, 12) AS INTEGER),
      CASE WHEN length(fp) > 18 THEN (CASE WHEN s < 0 THEN '-' ELSE '' END) || '0.000000000000000000' || substr(fp, 19) END`,
    from: (table) => `(SELECT *, substr(fp || '000000000000000000', 1, 18) AS f18 FROM (
        SELECT *, CASE WHEN instr(a, '.') = 0 THEN a ELSE substr(a, 1, instr(a, '.') - 1) END AS ip,
          CASE WHEN instr(a, '.') = 0 THEN '' ELSE substr(a, instr(a, '.') + 1) END AS fp
        FROM (SELECT *, CASE WHEN substr(CAST(cost_usd AS TEXT), 1, 1) = '-' THEN -1 ELSE 1 END AS s, ltrim(CAST(cost_usd AS TEXT), '-') AS a FROM ${table}) a0) a1) m`,
  };
}

function dropTriggersAndOldTables(d: Dialect): string[] {
  const drops = d === 'postgres'
    ? ['DROP TRIGGER IF EXISTS inferences_rollup ON inferences', 'DROP TRIGGER IF EXISTS feedback_rollup ON feedback',
      'DROP FUNCTION IF EXISTS gw_inferences_rollup()', 'DROP FUNCTION IF EXISTS gw_feedback_rollup()']
    : ['DROP TRIGGER IF EXISTS inferences_rollup', 'DROP TRIGGER IF EXISTS feedback_rollup'];
  return [...drops, 'DROP TABLE usage_hourly', 'DROP TABLE feedback_hourly'];
}

/** Migration 42: the new tables, the old hourly rows converted (with every grain and day derived), then the old design dropped. */
export function rollupsInWriterDdl(d: Dialect): string[] {
  const m = moneyFromDecimal(d);
  const sums = USAGE_SUM_COLUMNS.join(', ');
  return [
    ...tables(d),
    `INSERT INTO usage_rollup (span, grain, t, ${DIMS.join(', ')}, cost_hi, cost_lo, cost_rest, ${sums})
      SELECT 'h', 'cell', hour, ${DIMS.join(', ')}, ${m.select}, ${sums} FROM ${m.from('usage_hourly')}`,
    `INSERT INTO feedback_rollup (span, grain, t, key_id, model, metric, type, count, value_sum, value_sumsq)
      SELECT 'h', 'cell', hour, key_id, model, metric, type, count, value_sum, value_sumsq FROM feedback_hourly`,
    ...deriveRollups(d),
    // Feedback whose inference is not stored yet was counted by migration 41's trigger when the inference
    // landed; from now on the writer does that, from this list.
    `INSERT INTO feedback_rollup_pending (feedback_id, inference_id, created_at)
      SELECT f.id, f.inference_id, f.created_at FROM feedback f WHERE NOT EXISTS (SELECT 1 FROM inferences i WHERE i.id = f.inference_id)`,
    ...dropTriggersAndOldTables(d),
  ];
}

/** Migration 43: failed sign-ins counted in the store, so every replica enforces one limit. */
export function loginFailuresDdl(d: Dialect): string[] {
  const { int } = columnTypes(d);
  return [`CREATE TABLE dashboard_login_failures (k TEXT PRIMARY KEY, count ${int} NOT NULL, until_ms ${int} NOT NULL)`];
}
