// Limits of POST /v1/feedback in one overridable object, and the body size above which a batch
// is parsed and flattened in the worker pool instead of on the event loop.

export type FeedbackLimits = {
  /** Events in one request; more is a 400 for the whole request. */
  maxEventsPerRequest: number;
  /** Flattened entries (metrics) in one event. */
  maxEntriesPerEvent: number;
  /** Nesting levels of `feedback`: `{a: 1}` is depth 1, `{a: {b: 1}}` depth 2. */
  maxDepth: number;
  /** Characters of one key segment and of the flattened key (`a.b.c`). */
  maxKeyLength: number;
  /** Characters of a comment (string value or string score). */
  maxCommentLength: number;
  /** Characters of a `reason`. */
  maxReasonLength: number;
  maxTags: number;
  maxTagKeyLength: number;
  maxTagValueLength: number;
  /** Raw bodies of at least this many bytes go to the worker pool (when one is configured). */
  poolMinBytes: number;
};

/*
 * poolMinBytes, measured by bench/feedback-flatten.ts on the 2-core CI machine (Node 26.10,
 * piscina 5.3.2, 2 workers, events of ~190 bytes with 6 metrics, nested and {score, reason}).
 * Median wall time per batch, inline = JSON.parse + flatten on the main thread, pool = transfer
 * the bytes, parse + flatten in a worker, clone the results back:
 *
 *   events   bytes      inline ms  pool ms   main-thread ms blocked (pool)
 *       10     1.9 KB     0.02      0.11      0.01
 *      100    19 KB       0.14      0.38      0.04
 *     1000   190 KB       1.5       2.3       0.5
 *     5000   950 KB       7.9       9.6       2.4
 *    10000   1.9 MB      16.1     19.3       4.9
 *
 * The pool never wins on wall time for one batch (the results are cloned back, which costs about
 * a third of the work), but above ~1000 events it frees the event loop for 2/3 of the time, and
 * under concurrent batches both cores work. The crossover where main-thread time saved (about
 * 1 ms) outweighs the added latency is near 1000 events, i.e. ~200 KB; we take 256 KiB.
 */
export const DEFAULT_FEEDBACK_LIMITS: Readonly<FeedbackLimits> = Object.freeze({
  maxEventsPerRequest: 10_000,
  maxEntriesPerEvent: 256,
  maxDepth: 8,
  maxKeyLength: 128,
  maxCommentLength: 16_384,
  maxReasonLength: 4_096,
  maxTags: 32,
  maxTagKeyLength: 128,
  maxTagValueLength: 1_024,
  poolMinBytes: 256 * 1024,
});

/** Merges overrides onto the defaults; refuses values that are not positive integers. */
export function resolveLimits(overrides: Partial<FeedbackLimits> = {}): FeedbackLimits {
  const out: FeedbackLimits = { ...DEFAULT_FEEDBACK_LIMITS };
  for (const [k, v] of Object.entries(overrides) as Array<[keyof FeedbackLimits, number | undefined]>) {
    if (v === undefined) continue;
    if (!(k in DEFAULT_FEEDBACK_LIMITS)) throw new RangeError(`unknown feedback limit '${k}'`);
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`feedback limit ${k} must be a positive integer; got ${v}`);
    out[k] = v;
  }
  return out;
}
