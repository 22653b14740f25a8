// Whether a correction of feedback undoes something learned. A correction moves what its first value
// taught, and a first value taught nothing when its signal did not take its key's feedback as the pass
// that read it found the key named (quality_signals[].keys), or its metric was no signal then. A rename
// of the key, or an edit of `keys` or of the signals, can make the correction's key trusted where the
// first value's was not: before 2026-11-29 such a correction took the old value's contribution out of
// the model where it was never put in (three positives wiped by a key renamed into `eval-*`).
//
// The feedback cursor keeps, per metric, from which first value on every first value was learned: of
// every key (`all`, a signal without `keys`), or of one key (`keys`, a signal with them). Since
// 2026-11-29 a span starts at a landing position, the order the cursor reads first values in
// (src/router/landing-order.ts); it started at a time, and a first value landing late, created
// before that time, was learned but its changes were not (or, once the span had been cut by rows left
// out and started again at such a value, changes of first values left out were). A span read by
// time (rows from before migration 24, or stored so) keeps its time.
// A key's rows left out end its span, and the next first value learned starts another. A correction
// of a first value before the span it falls in is not learned (a later value of feedback passed for
// good, as after a rollback), never learned as a first value: where the span is lost only by a change
// of settings (a signal that gains `keys`), its first value was learned and would count twice.
import type { QualitySignal } from './quality/index.ts';
import { START, type Cursor, type FeedbackJoin, type TrustSpans } from './store.ts';

export class FeedbackTrust {
  readonly spans: TrustSpans = {};
  readonly #signals: ReadonlyMap<string, QualitySignal>;

  /**
   * The spans a pass starts from: the cursor's, for the metrics that are still signals (a metric that
   * stopped being one had its rows passed unread). A cursor stored before spans were kept (or by a
   * rollback) starts signals without `keys` at the beginning, as every first value of theirs was learned
   * then, and those with `keys` empty: corrections of their earlier first values are not learned.
   */
  constructor(c: Cursor, signals: ReadonlyMap<string, QualitySignal>) {
    this.#signals = signals;
    for (const [metric, s] of signals) {
      const kept = c.trusted === undefined ? (s.keys ? {} : { all: START.at }) : c.trusted[metric];
      if (kept) this.spans[metric] = { ...kept, ...(kept.keys ? { keys: { ...kept.keys } } : {}) };
    }
  }

  /** A first value was learned (read in landing order, as the cursor reads them). */
  learned(f: FeedbackJoin): void {
    const t = (this.spans[f.metric] ??= {});
    const from = f.landed === '0' ? f.firstAt : f.landed;
    if (!this.#signals.get(f.metric)?.keys) t.all ??= from;
    else if (f.keyId !== null) (t.keys ??= {})[f.keyId] ??= from;
  }

  /** A row its signal does not take from its key (now): that key's first values from here on may be unlearned. */
  leftOut(f: FeedbackJoin): void {
    const t = this.spans[f.metric];
    if (!t) return;
    delete t.all;
    if (f.keyId !== null && t.keys) delete t.keys[f.keyId];
  }

  /** Whether the first value a correction changes was learned. */
  taught(f: FeedbackJoin): boolean {
    const t = this.spans[f.metric];
    const since = f.keyId === null ? undefined : t?.keys?.[f.keyId];
    return (t?.all !== undefined && within(f, t.all)) || (since !== undefined && within(f, since));
  }
}

/**
 * Whether correction `f`'s first value is in the span starting at `from`. A first value stamped ahead
 * of the store's clock and read late (readFeedback's `ahead`) lies below a span started after it was
 * passed: its changes are then not learned, the safe way (what it taught stays).
 */
function within(f: FeedbackJoin, from: string): boolean {
  return /^\d+$/.test(from) ? BigInt(f.firstLanded) >= BigInt(from) : f.firstAt >= from;
}
