// The scale a quality signal's values are read with. A float signal maps its values to a score through
// `min`, `max` and `optimize` (quality/feedback.ts), and an operator may change them. A correction
// takes out what the value before it taught and puts in the new value's score: before 2026-11-29 both
// were scored on the scale as it is now, so a first value of 80 learned on 0-100 (score 0.8) and
// corrected to 90 after the range became 0-200 took out 0.4 where 0.8 was put in (the model kept
// 0.4 of a score no answer had).
//
// Now every value of one answer's feedback on a metric (its first value and each correction) is read on
// the scale its first value was learned with, so what its corrections take out is what was put in and
// they telescope to its latest value on that scale; a new scale applies to answers whose first value
// is learned after the change. The feedback cursor keeps, per metric, the scales in force with the
// position each started after (a landing position, or a time for a cursor read by time), as the settle
// windows are kept (settleSpans). A cursor stored before scales were kept starts with the scale of now
// for every earlier first value (what it did before). At most MAX_SCALES are kept per metric: older
// first values take the oldest kept.
import type { QualitySignal } from './quality/index.ts';
import type { Cursor, FeedbackJoin } from './store.ts';

/** A signal's scale from the first value after `after` on ('': from the start). */
export type SignalScale = { after: string; min?: number; max?: number; optimize: 'max' | 'min' };
/** Per metric, its scales oldest first. */
export type ScaleHistory = Record<string, SignalScale[]>;

const MAX_SCALES = 16;

const sameScale = (a: SignalScale, s: QualitySignal): boolean => a.min === s.min && a.max === s.max && a.optimize === s.optimize;

function scaleOf(s: QualitySignal, after: string): SignalScale {
  return { after, optimize: s.optimize, ...(s.min !== undefined ? { min: s.min } : {}), ...(s.max !== undefined ? { max: s.max } : {}) };
}

/**
 * The scales a pass reading from cursor `c` learns with: the cursor's, and for a signal whose scale
 * changed since, a new one from the cursor's position on (every first value after it is read by this
 * pass or a later one). Only the metrics that are signals now are kept.
 */
export function signalScales(c: Cursor, signals: ReadonlyMap<string, QualitySignal>): ScaleHistory {
  const out: ScaleHistory = {};
  const at = c.landed ?? c.at;
  for (const [metric, s] of signals) {
    const stored = c.scales?.[metric];
    const kept = Array.isArray(stored) ? stored : [];
    const last = kept.at(-1);
    if (last && sameScale(last, s)) { out[metric] = kept; continue; }
    const next = [...kept, scaleOf(s, kept.length === 0 ? '' : at)].slice(-MAX_SCALES);
    out[metric] = next[0]!.after === '' ? next : [{ ...next[0]!, after: '' }, ...next.slice(1)];
  }
  return out;
}

/** Whether first value `f` came after position (or time) `after`. */
function cameAfter(f: FeedbackJoin, after: string): boolean {
  if (after === '') return true;
  return /^\d+$/.test(after) ? BigInt(f.firstLanded) > BigInt(after) : f.firstAt > after;
}

/** The signal as it reads correction `f`: on the scale its first value was learned with (`now` where none is kept). */
export function signalWhenFirst(f: FeedbackJoin, scales: ScaleHistory, now: QualitySignal): QualitySignal {
  const kept = scales[f.metric];
  if (!kept) return now;
  for (let i = kept.length - 1; i >= 0; i--) {
    const s = kept[i]!;
    if (cameAfter(f, s.after)) {
      if (sameScale(s, now)) return now;
      const { min, max, optimize } = s;
      return { metric: now.metric, optimize, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
    }
  }
  return now;
}
