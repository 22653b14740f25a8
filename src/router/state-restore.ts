// An operator undoing what the router learned: list the stored learned-state versions, roll back to
// one of them or reset to the priors. Either stores a new version (every replica adopts it on its
// next poll, as it does a trained one) holding the earlier version's quality model, or an empty one,
// while the expected-output table (measured from answers, no one's judgment) and the answers' cursor
// stay as they are. Feedback given up to that moment is not learned afterwards: the feedback cursor
// moves to now, and a later change to such feedback is not learned either (`restored_at`, read by
// train-pass.ts), since the restored state may not hold the value the change would replace.
// The quality model is copied in SQL, never parsed here (a state runs to megabytes).
import type { SqlRunner } from '../store/sql-runner.ts';
import { emptyState } from './quality/index.ts';
import { outputTableProblem } from './output-stats.ts';
import { iso, restoreFields, START, storeNow, type Cursor, type StateOrigin } from './store.ts';
import { nextLanding } from '../store/landing.ts';

/** One stored version as listed (its quality model's size, not the model). */
export type StateSummary = {
  version: number; createdAt: string; outcomes: number; origin: StateOrigin | null; restoredAt: string | null; bytes: number;
};

export class StateNotFound extends Error {
  readonly version: number;
  constructor(version: number, kept: readonly number[]) {
    super(kept.length === 0
      ? `router state version ${version} is not stored: no learned state is stored yet`
      : `router state version ${version} is not stored (kept: ${kept.length > 12 ? `${kept.slice(0, 12).join(', ')}, ...` : kept.join(', ')}; router.retention keeps the newest and one a day)`);
    this.version = version;
  }
}

/**
 * How a version came to be, in a few words ("trained", "rollback to v9 by a@b.c: why"), for the log and
 * the command line: the reason's control, line-separator and bidirectional-override characters written
 * as \u escapes, so a reason cannot forge a log line or reorder the text around it on a terminal.
 */
export function describeOrigin(o: StateOrigin | null): string {
  if (!o) return 'trained';
  const what = o.kind === 'reset' ? 'reset to the priors' : `rollback to v${o.from}`;
  return `${what} by ${o.by}${o.reason ? `: ${o.reason.replace(UNPRINTABLE, escapeChar)}` : ''}`;
}

const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const escapeChar = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

const SUMMARY = 'SELECT version, created_at, outcomes, origin, restored_at, LENGTH(quality) AS bytes FROM router_state';

/** The stored versions, newest first. */
export async function listStates(sql: SqlRunner, limit = 100): Promise<StateSummary[]> {
  return summaries(await sql.all(`${SUMMARY} ORDER BY version DESC LIMIT ?`, [limit]));
}

function summaries(rows: ReadonlyArray<Record<string, unknown>>): StateSummary[] {
  return rows.map((r) => ({
    version: Number(r.version), createdAt: iso(r.created_at), outcomes: Number(r.outcomes), ...restoreFields(r), bytes: Number(r.bytes),
  }));
}

export type RestoreRequest = {
  /** The version whose quality model comes back; null: reset to the priors (nothing learned). */
  from: number | null;
  /** Who asked (a dashboard user's email, or "cli"), and why (free text, optional). */
  by: string; reason: string | null;
};

/** Longest reason kept with a rollback or reset. */
export const REASON_MAX = 500;

/**
 * A rollback's or reset's reason as stored, whoever gives it (the admin API, the command line): trimmed,
 * null when empty or absent; undefined when it is not a string of at most REASON_MAX characters (the
 * caller refuses it in its own terms).
 */
export function restoreReason(raw: unknown): string | null | undefined {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string' || raw.length > REASON_MAX) return undefined;
  const t = raw.trim();
  return t === '' ? null : t;
}

const isCursor = (v: unknown): v is Cursor => typeof v === 'object' && v !== null && typeof (v as Cursor).at === 'string' && typeof (v as Cursor).id === 'string';
const parsed = (text: unknown): unknown => { try { return JSON.parse(String(text)); } catch { return undefined; } };

/**
 * What a restore keeps of the newest version, as stored text: its expected-output table with its
 * answers' cursor (both null when either cannot be read: the answers are then folded again from the
 * start into an empty table), and its feedback cursor (null when it cannot be read: the restore's own
 * time is used). A rollback or reset is how an admin gets past a damaged newest row, so it never
 * copies one on: before 2026-11-29 a damaged output table was copied into the restored version (which
 * no replica could then route with or train on either) and a damaged feedback cursor failed the
 * restore itself. Small columns (a few cells per model and kind), unlike the quality model.
 */
function keptColumns(latest: Record<string, unknown>): { output: string | null; decisionCursor: string | null; feedbackCursor: Cursor | null } {
  const output = parsed(latest.output);
  const answers = parsed(latest.decision_cursor);
  const feedback = parsed(latest.feedback_cursor);
  const answersOk = outputTableProblem(output) === null && isCursor(answers);
  return {
    output: answersOk ? String(latest.output) : null, decisionCursor: answersOk ? String(latest.decision_cursor) : null,
    feedbackCursor: isCursor(feedback) ? feedback : null,
  };
}

/** Attempts before giving up when training replicas keep storing the next version first. */
const TRIES = 5;

/**
 * Stores the rollback or reset as the next version and resolves with it; throws StateNotFound for a
 * version that is not stored. A replica's training pass storing the same version first is a race
 * the primary key settles: the restore then retries on top of the version that won. `now`: the time
 * the restore is stored at (tests); by default the store's clock (storeNow), as training reads rows up
 * to it: the command runs on an admin's machine, or one replica of several, and before 2026-11-29 a
 * clock running ahead there moved the feedback cursor past feedback the replicas then wrote (never
 * learned), and one running behind left feedback given before the restore to be learned after it.
 */
export async function restoreState(sql: SqlRunner, req: RestoreRequest, now?: () => Date): Promise<StateSummary> {
  for (let i = 0; i < TRIES; i++) {
    const latest = (await sql.all('SELECT version, output, decision_cursor, feedback_cursor FROM router_state ORDER BY version DESC LIMIT 1'))[0];
    if (req.from !== null) {
      const found = await sql.all('SELECT version FROM router_state WHERE version = ?', [req.from]);
      if (found.length === 0) throw new StateNotFound(req.from, (await listStates(sql, 1000)).map((s) => s.version));
    }
    const version = latest ? Number(latest.version) + 1 : 1;
    const kept = latest ? keptColumns(latest) : null;
    const cursor: Cursor = kept?.feedbackCursor ?? START;
    // Never backwards: a replica whose clock runs ahead may have moved the cursor past this one's now.
    const t = (now ? now() : new Date(await storeNow(sql))).toISOString();
    const at = cursor.at > t ? cursor.at : t;
    const origin: StateOrigin = { kind: req.from === null ? 'reset' : 'rollback', from: req.from, by: req.by, reason: req.reason };
    const head = [version, at];
    // The feedback cursor is at the first landing position not yet given out (src/store/landing.ts): its
    // time alone would read again every row with a position, all of which come after any time.
    const tail = [JSON.stringify({ at, id: '', landed: await nextLanding(sql) } satisfies Cursor), JSON.stringify(origin), at];
    const cols = 'INSERT INTO router_state (version, created_at, quality, output, feedback_cursor, decision_cursor, outcomes, origin, restored_at)';
    const output = kept?.output ?? '{}';
    const answers = kept?.decisionCursor ?? JSON.stringify(START);
    const n = req.from === null
      ? await sql.run(`${cols} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (version) DO NOTHING`,
        [...head, JSON.stringify(emptyState()), output, tail[0], answers, 0, tail[1], tail[2]])
      : await sql.run(`${cols} SELECT ?, ?, f.quality, ?, ?, ?, f.outcomes, ?, ? FROM router_state f WHERE f.version = ? ON CONFLICT (version) DO NOTHING`,
        [...head, output, tail[0], answers, tail[1], tail[2], req.from]);
    if (n > 0) return summaries(await sql.all(`${SUMMARY} WHERE version = ?`, [version]))[0]!;
    // A training pass stored this version first, or retention removed the version asked for: look again.
  }
  throw new Error(`router state restore: ${TRIES} attempts lost the race for the next version to training replicas; try again`);
}
