// Whether a correction of feedback undoes something learned. A correction moves what its first value
// taught, and a first value taught nothing when its signal did not take its key's feedback as the pass
// that read it found the key named (quality_signals[].keys), or its metric was no signal then. A rename
// of the key, or an edit of `keys` or of the signals, can make the correction's key trusted where the
// first value's was not: before 2026-11-29 such a correction took the old value's contribution out of
// the model where it was never put in (three positives wiped by a key renamed into `eval-*`).
//
// The feedback cursor keeps, per metric, from which first value on (its time) every first value was
// learned: of every key (`all`, a signal without `keys`), or of one key (`keys`, a signal with them).
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

  /** A first value was learned (read in order of first values, as the cursor reads them). */
  learned(f: FeedbackJoin): void {
    const t = (this.spans[f.metric] ??= {});
    if (!this.#signals.get(f.metric)?.keys) t.all ??= f.firstAt;
    else if (f.keyId !== null) (t.keys ??= {})[f.keyId] ??= f.firstAt;
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
    return (t?.all !== undefined && f.firstAt >= t.all) || (since !== undefined && f.firstAt >= since);
  }
}
