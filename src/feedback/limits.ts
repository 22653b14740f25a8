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
 * poolMinBytes, measured with bench/feedback-flatten.ts on the 2-CPU build machine (Node 26.10,
 * piscina 5.3.2, 2 workers, machine shared with other jobs: load average ~9). Events of ~240
 * bytes with five metrics (nested, {score, reason}, comment) and two tags. Medians in ms;
 * "event loop" is main-thread time: inline = parse + flatten; pool = copy, dispatch and
 * unpacking the worker's packed columns (the worker's own parse + flatten runs elsewhere).
 *
 *   events   bytes   event loop: inline  pool   wall: inline  pool
 *      100    24 KB               0.23   0.07         0.23   0.57
 *      300    72 KB               0.68   0.18         0.70   1.33
 *      500   121 KB               1.31   0.27         1.21   2.33
 *     1000   241 KB               5.31   0.50         4.10   5.53
 *     3000   724 KB              13.48   1.61         9.39  16.21
 *    10000   2.4 MB              52.31  13.34       102.00  80.07
 *
 * The pool takes ~4/5 of the work off the event loop at every size but adds about 1 ms of
 * latency to the feedback request itself. The crossover (inline stalls the loop for 1 ms or
 * more and the pool at least halves that) is ~500 events, 121 KB: we take 128 KiB.
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
  poolMinBytes: 128 * 1024,
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
