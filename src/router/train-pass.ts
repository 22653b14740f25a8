// One training pass of the router's learning loop, the same wherever it runs (the router's worker
// thread, or inline for tests and workers.threads 0): read the feedback and answers newer than the
// state's cursors, fold them into the next state, store it as a new version. Feedback comes as first
// values and corrections of them (store.ts feedbackSince); a correction trains as an outcome
// carrying the score it replaces.
import type { SqlRunner } from '../store/sql-runner.ts';
import { globToRegExp } from '../util/glob.ts';
import { emptyState, feedbackScore, STATE_SCHEMA, type Outcome, type QualitySignal } from './quality/index.ts';
import { answersSince, readFeedback, latestVersion, loadState, saveState, START, storeNow, type AnswerJoin, type Cursor, type FeedbackJoin, type SettleSpan, type StoredState } from './store.ts';
import { landingHorizon, nextLanding } from '../store/landing.ts';
import { cursorAt, rebasedCursor } from './landing-order.ts';
import type { TrainResult, TrainTask } from '../workers/router-train.ts';
import { FeedbackTrust } from './feedback-trust.ts';
import { signalScales, signalWhenFirst, type ScaleHistory } from './signal-scales.ts';

/** Feedback rows folded per training pass, and answers per read (a backlog is worked off over several passes). */
const BATCH = 5000;
/**
 * Reads of answers per pass (50,000 answers): every routed answer teaches expected output, so at one
 * read a pass (every train_interval_ms, 30 s) routed traffic above ~167 requests a second left the
 * output table further behind with every pass. A pass that stops at either bound says so (`more`):
 * the next comes within a second (RouterLearning). Not more a pass: the worker writes the decisions
 * too, and they wait (queued, bounded) while a pass runs (50,000 answers: ~0.5 s on SQLite).
 */
const ANSWER_READS = 10;

export type TrainSettings = { qualitySignals: QualitySignal[]; halfLifeDays: number | null; feedbackSettleMs: number };

export const emptyStored = (): StoredState => ({
  version: 0, createdAt: new Date(0).toISOString(), quality: emptyState(), output: {}, feedbackCursor: START, decisionCursor: START, outcomes: 0,
  origin: null, restoredAt: null,
});

/** A stored feedback value ('true'/'false' or a number as text) as the score its signal gives. */
export function scoreOf(value: string, signal: QualitySignal): number | undefined {
  const v: unknown = value === 'true' ? true : value === 'false' ? false : Number(value);
  return typeof v === 'number' && !Number.isFinite(v) ? undefined : feedbackScore(v, signal);
}

/** Key ids looked up per statement. */
const KEY_LOOKUP = 500;

/**
 * The rows whose signal takes feedback from the key they were given with (quality_signals[].keys:
 * globs over key names, as the keys are named now; a signal without `keys` takes every row).
 */
export async function fromTrustedKeys(sql: SqlRunner, fb: FeedbackJoin[], signals: ReadonlyMap<string, QualitySignal>): Promise<FeedbackJoin[]> {
  const patterns = new Map<string, RegExp[]>();
  for (const [metric, s] of signals) if (s.keys) patterns.set(metric, s.keys.map(globToRegExp));
  if (patterns.size === 0) return fb;
  const ids = [...new Set(fb.flatMap((f) => (f.keyId !== null && patterns.has(f.metric) ? [f.keyId] : [])))];
  const names = new Map<string, string>();
  for (let i = 0; i < ids.length; i += KEY_LOOKUP) {
    const part = ids.slice(i, i + KEY_LOOKUP);
    for (const r of await sql.all(`SELECT id, name FROM api_keys WHERE id IN (${part.map(() => '?').join(', ')})`, part)) names.set(String(r.id), String(r.name));
  }
  return fb.filter((f) => {
    const p = patterns.get(f.metric);
    if (!p) return true;
    const name = f.keyId === null ? undefined : names.get(f.keyId);
    return name !== undefined && p.some((re) => re.test(name));
  });
}

/** Settle windows kept per cursor (the oldest past this take the next one's window). */
const MAX_SPANS = 16;

/**
 * The windows of the first values read so far: a cursor stored with another window than `ms` (the
 * setting changed since) closes a span at its position, where every first value up to it was read.
 * A cursor without one (stored before this was kept, or by a rollback, after which earlier values
 * are not corrected) has none.
 */
export function settleSpans(c: Cursor, ms: number): SettleSpan[] {
  const earlier = c.earlier ?? [];
  if (c.settleMs === undefined || c.settleMs === ms) return earlier;
  return [...earlier, { until: c.at, ms: c.settleMs }].slice(-MAX_SPANS);
}

/**
 * The feedback cursor after a pass that read up to `last` (none: unchanged but for `ahead`) with window
 * `ms` and the spans settleSpans gave; `ahead`: the rows it passed unsettled (readFeedback); `trusted`:
 * the trust spans (FeedbackTrust) it ended with.
 */
export function nextFeedbackCursor(c: Cursor, last: FeedbackJoin | undefined, ms: number, earlier: SettleSpan[], ahead: string[] = c.ahead ?? [], trusted?: Cursor['trusted'], scales?: ScaleHistory): Cursor {
  const { ahead: _, ...rest } = c;
  const next: Cursor = last
    ? { ...cursorAt(last.at, last.id, last.landed), settleMs: ms, ...(earlier.length > 0 ? { earlier } : {}), ...(trusted ? { trusted } : {}), ...(scales ? { scales } : {}) }
    : rest;
  return ahead.length > 0 ? { ...next, ahead } : next;
}

/** The newest stored state if its version is above `after`, else null. */
export async function newerState(sql: SqlRunner, after: number): Promise<StoredState | null> {
  const v = await latestVersion(sql);
  if (v <= after) return null;
  const s = await loadState(sql, v);
  return s && s.version > after ? s : null;
}

/**
 * A state a newer gateway stored (its quality model of a later STATE_SCHEMA: a rolling upgrade, or a
 * downgrade) is not trained on here: train() starts over from an empty model for a schema it does not
 * know, so this replica's next version dropped everything the newer ones had learned. It routes with
 * it (on the priors, as predict reads another schema) and leaves learning to the replicas that read it.
 */
function refuseNewerFormat(base: StoredState): void {
  const schema: unknown = (base.quality as { schema?: unknown } | null)?.schema;
  if (typeof schema === 'number' && schema > STATE_SCHEMA) {
    throw new Error(`learned state v${base.version} has a newer format (quality schema ${schema}, this gateway reads ${STATE_SCHEMA}): learning is left to the replicas that read it (upgrade this one), unless an admin rolls back or resets to a version this gateway reads (router rollback / router reset)`);
  }
}

/**
 * Folds what is new since `base` into the next version and stores it. `next` null: nothing new, or
 * another replica stored that version first (`raced`: reload it).
 */
export async function trainPass(sql: SqlRunner, base: StoredState, settings: TrainSettings, run: (t: TrainTask) => Promise<TrainResult> | TrainResult, answerReads = ANSWER_READS): Promise<{ next: StoredState | null; raced: boolean; more: boolean }> {
  refuseNewerFormat(base);
  const signals = new Map(settings.qualitySignals.map((s) => [s.metric, s]));
  const earlier = settleSpans(base.feedbackCursor, settings.feedbackSettleMs);
  // Rows are read up to the store's clock, not this replica's: one whose clock ran ahead read the rows
  // it had stamped ahead and moved the shared cursors there, past every row the others then wrote.
  const now = await storeNow(sql);
  const metrics = [...signals.keys()];
  const settledBefore = new Date(now - settings.feedbackSettleMs).toISOString();
  // Rows are read in the order they landed, up to a position nothing can land below any more
  // (src/store/landing.ts): a decision or inference record the writers land late, with its old time,
  // still comes after the cursors, and so does the feedback it completes.
  const below = await landingHorizon(sql);
  // Only a cursor at or past the horizon can have been left behind by a restart (rebasedCursor): the
  // first position not given out is asked for then, not on every pass.
  const atOrPast = (c: Cursor): boolean => c.landed !== undefined && BigInt(c.landed) >= BigInt(below);
  const given = atOrPast(base.feedbackCursor) || atOrPast(base.decisionCursor) ? await nextLanding(sql) : below;
  const fbCursor = rebasedCursor(base.feedbackCursor, below, given) ?? base.feedbackCursor;
  const answerCursor = rebasedCursor(base.decisionCursor, below, given) ?? base.decisionCursor;
  const rebased = fbCursor !== base.feedbackCursor || answerCursor !== base.decisionCursor;
  if (rebased) {
    console.error(`router training: the store's landing positions started again (cursor ${base.feedbackCursor.landed ?? '-'} / ${base.decisionCursor.landed ?? '-'}, horizon ${below}: restored into another PostgreSQL cluster, or an older SQLite file?); learning goes on from rows landing now`);
  }
  const read = await readFeedback(sql, metrics, fbCursor, BATCH, settledBefore, settings.feedbackSettleMs, earlier, { horizon: below, now: new Date(now).toISOString() });
  const fb = read.rows;
  const answers: AnswerJoin[] = [];
  let answersLeft = false;
  for (let read = 0, c = answerCursor; ; read++) {
    const part = await answersSince(sql, c, BATCH, below);
    for (const a of part) answers.push(a);
    if (part.length < BATCH) break;
    if (read === answerReads - 1) { answersLeft = true; break; }
    c = cursorAt(part.at(-1)!.at, part.at(-1)!.id, part.at(-1)!.landed);
  }
  // A re-based cursor is stored even when nothing is new: the next pass would re-base it past the rows landed in between.
  if (fb.length === 0 && answers.length === 0 && !rebased) return { next: null, raced: false, more: false };
  const more = read.full || answersLeft;
  // Evidence decays from the newest time trained on (trainedUntil, the outcomes' times), so no time past
  // the store's clock enters training: a row stamped by a clock running ahead would take it there, and
  // a state trained while the store's clock ran ahead (SQLite: this host's) is already there. Before
  // 2026-11-29 one pass a year ahead decayed every later outcome to ~0 with half_life_days.
  const quality = base.quality.trainedUntil > now ? { ...base.quality, trainedUntil: now } : base.quality;
  const outcomes: Outcome[] = [];
  let learned = 0;
  const trust = new FeedbackTrust(base.feedbackCursor, signals);
  const scales = signalScales(fbCursor, signals);
  const taken = new Set(await fromTrustedKeys(sql, fb, signals));
  for (const f of fb) {
    if (!taken.has(f)) { trust.leftOut(f); continue; }
    const current = signals.get(f.metric)!;
    // A correction is read on the scale its first value was learned with (signal-scales.ts).
    const signal = f.from === undefined ? current : signalWhenFirst(f, scales, current);
    const score = scoreOf(f.value, signal);
    if (score === undefined) continue;
    const o: Outcome = { features: f.features, model: f.canonical, score, time: Math.min(Date.parse(f.firstAt), now), costUsd: f.costUsd, outputTokens: f.outputTokens };
    if (f.from === undefined) { learned++; trust.learned(f); } else {
      // A correction moves what its first value taught; an unchanged value (a repeat) moves nothing.
      // After a rollback or reset the state may not hold the value a change to earlier feedback replaces.
      if (base.restoredAt !== null && f.firstAt <= base.restoredAt) continue;
      // Nor one whose first value taught nothing, its key not trusted when it was read (feedback-trust.ts).
      if (!trust.taught(f)) continue;
      const from = scoreOf(f.from, signal);
      if (from === undefined || from === score) continue;
      o.correction = { from };
    }
    outcomes.push(o);
  }
  const res = await run({
    quality, output: base.output, outcomes,
    answers: answers.map((a) => ({ model: a.canonical, kind: a.kind, outputTokens: a.outputTokens })),
    options: settings.halfLifeDays !== null ? { halfLifeDays: settings.halfLifeDays } : {},
  });
  const lastA = answers.at(-1);
  const next: StoredState = {
    version: base.version + 1, createdAt: new Date(now).toISOString(), quality: res.quality, output: res.output,
    feedbackCursor: nextFeedbackCursor(fbCursor, read.last, settings.feedbackSettleMs, earlier, read.ahead, trust.spans, scales),
    decisionCursor: lastA ? cursorAt(lastA.at, lastA.id, lastA.landed) : answerCursor,
    outcomes: base.outcomes + learned,
    origin: null, restoredAt: base.restoredAt,
  };
  if (!(await saveState(sql, next))) return { next: null, raced: true, more: false };
  return { next, raced: false, more };
}
