// Retention of the dashboard's rollups: hour rows older than `hourDays` (and every row of the router's
// rollups, day rows included) and day rows older than `dayDays` are deleted by the dashboard's hourly maintenance (never on the request path), a whole UTC day of one
// grain per statement. So for every grain the hour rows that remain are all those from some UTC day on,
// and a read takes the range before that day from the day rows (readsFromDayRows), whatever the settings
// were when the rows were pruned and whether a pass is running.
import { GRAIN_DIM } from './rollup-schema.ts';
import type { Grain } from './rollup-cells.ts';
import { iso } from './rows.ts';
import { ROUTER_ROLLUP_PARTS, ROUTER_ROLLUP_TABLES } from './router-rollup.ts';
import type { SqlRunner } from './sql-runner.ts';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const floorDay = (ms: number): number => Math.floor(ms / DAY) * DAY;

/** dashboard.retention.hour_rollups_days / day_rollups_days; null keeps the rows forever. */
export type RollupRetention = { hourRollupsDays: number | null; dayRollupsDays: number | null };
const DEFAULTS: RollupRetention = { hourRollupsDays: 90, dayRollupsDays: 1095 };

/** The settings from a YAML `dashboard.retention` object (validated by the schema); null there means keep, not the default. */
export function rollupRetentionOf(raw: Record<string, unknown>): RollupRetention {
  return {
    hourRollupsDays: 'hour_rollups_days' in raw ? raw.hour_rollups_days as number | null : DEFAULTS.hourRollupsDays,
    dayRollupsDays: 'day_rollups_days' in raw ? raw.day_rollups_days as number | null : DEFAULTS.dayRollupsDays,
  };
}

export type RollupTable = 'usage_rollup' | 'feedback_rollup';
const GRAINS: Record<RollupTable, readonly Grain[]> = {
  usage_rollup: ['total', ...(Object.keys(GRAIN_DIM) as Grain[]), 'cell'],
  feedback_rollup: ['model', 'cell'],
};

/** A problem with the settings (day rows must outlive hour rows, or reads past the hour retention would find nothing), or null. */
export function rollupRetentionProblem(r: RollupRetention): string | null {
  const { hourRollupsDays: hour, dayRollupsDays: day } = r;
  if (day === null) return null;
  if (hour === null) return `day_rollups_days (${day}) needs hour_rollups_days set too: day rows must be kept at least as long as hour rows`;
  return day < hour ? `day_rollups_days (${day}) must be at least hour_rollups_days (${hour})` : null;
}

/** The first instant (a UTC midnight) whose rows of `span` the settings keep, or null for all. */
export function keptFrom(days: number | null, now: number): number | null {
  return days === null ? null : floorDay(now - days * DAY);
}

export type RollupPruneResult = { hourRows: number; dayRows: number };

/**
 * Deletes rows past their retention, one (table, span, grain, UTC day) per statement, oldest day first,
 * yielding between statements; at most `maxDays` days per (table, span, grain) and pass.
 */
export async function pruneRollups(sql: SqlRunner, r: RollupRetention, now = Date.now(), maxDays = 400): Promise<RollupPruneResult> {
  const out: RollupPruneResult = { hourRows: 0, dayRows: 0 };
  for (const [span, days] of [['h', r.hourRollupsDays], ['d', r.dayRollupsDays]] as const) {
    const bound = keptFrom(days, now);
    if (bound === null) continue;
    let n = 0;
    for (const table of Object.keys(GRAINS) as RollupTable[]) {
      for (const grain of GRAINS[table]) {
        n += await pruneByDay(bound, maxDays, () => oldestOfGrain(sql, table, span, grain),
          (until) => sql.run(`DELETE FROM ${table} WHERE span = ? AND grain = ? AND t < ?`, [span, grain, until]));
      }
    }
    // The router's rollups (src/store/router-rollup.ts): kept as long as the others' hour rows, their day rows too (a
    // span at a time, in its primary key's order), so the Router page's figures all reach back as far.
    if (span === 'h') {
      for (const table of ROUTER_ROLLUP_TABLES) {
        for (const part of ROUTER_ROLLUP_PARTS[table] ?? [null]) {
          const where = part ? 'grain = ? AND span = ? AND ' : '';
          const p = part ? [...part] : [];
          n += await pruneByDay(bound, maxDays, () => oldestT(sql, `${table} ${part ? 'WHERE grain = ? AND span = ? ORDER BY grain, span, t' : 'ORDER BY t'}`, p),
            (until) => sql.run(`DELETE FROM ${table} WHERE ${where}t < ?`, [...p, until]));
        }
      }
    }
    if (span === 'h') out.hourRows += n; else out.dayRows += n;
  }
  return out;
}

/** Deletes one table's rows before `bound` a UTC day per statement, oldest first, yielding between statements, at most `maxDays` days; the rows deleted. */
async function pruneByDay(bound: number, maxDays: number, oldest: () => Promise<number | null>, before: (until: string) => Promise<number>): Promise<number> {
  let n = 0;
  for (let i = 0; i < maxDays; i++) {
    const t = await oldest();
    if (t === null || t >= bound) break;
    n += await before(new Date(Math.min(floorDay(t) + DAY, bound)).toISOString());
    await new Promise((res) => setImmediate(res));
  }
  return n;
}

/**
 * The oldest row's time in `from` (a table, its conditions and the order of its primary key), or null
 * when there is none: the first entry of the key's range. Written as ORDER BY ... LIMIT 1 because
 * PostgreSQL planned MIN(t) on a freshly filled table (no statistics yet) as a scan of a whole span and
 * grain through another index: 17 ms for 20 000 rows, against 0.07 ms for this form (0.8 ms per call with
 * the round trip, SELECT 1 taking 0.14; SQLite 0.003).
 */
async function oldestT(sql: SqlRunner, from: string, params: unknown[]): Promise<number | null> {
  const t = (await sql.all(`SELECT t FROM ${from} LIMIT 1`, params))[0]?.t;
  return t === null || t === undefined ? null : Date.parse(iso(t));
}

/** The oldest `t` of one span and grain of a dashboard rollup table. */
const oldestOfGrain = (sql: SqlRunner, table: RollupTable, span: 'h' | 'd', grain: Grain): Promise<number | null> =>
  oldestT(sql, `${table} WHERE span = ? AND grain = ? ORDER BY span, grain, t`, [span, grain]);

/**
 * The UTC midnight before which a read of `grain` must use day rows: the day of the oldest hour row left
 * (pruning removes whole days, so every hour row from there on is present); +Infinity when there are no
 * hour rows at all (nothing to read from them; any history is in the day rows).
 */
export async function dayRowsBefore(sql: SqlRunner, table: RollupTable, grain: Grain): Promise<number> {
  const oldest = await oldestOfGrain(sql, table, 'h', grain);
  return oldest === null ? Infinity : floorDay(oldest);
}

/**
 * Hour segments reaching before `keep` (a UTC midnight) are read from day rows there: each UTC day goes
 * to the segment holding its midday, so a day is counted once, in the bucket it overlaps most. The part
 * of a segment from `keep` on still reads hour rows; day segments are unchanged.
 */
export function readsFromDayRows<S extends { span: 'h' | 'd'; lo: number; hi: number }>(segs: readonly S[], keep: number): S[] {
  const out: S[] = [];
  for (const s of segs) {
    if (s.span === 'd' || s.lo >= keep) { out.push(s); continue; }
    const end = Math.min(s.hi, keep);
    // Days D with D + 12 h in [s.lo, end).
    const first = Math.ceil((s.lo - 12 * HOUR) / DAY) * DAY;
    const last = Math.ceil((end - 12 * HOUR) / DAY) * DAY;
    if (first < last) out.push({ ...s, span: 'd', lo: first, hi: last });
    if (s.hi > keep) out.push({ ...s, lo: keep });
  }
  return out;
}
