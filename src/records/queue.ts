// The writer's FIFO: O(1) push and shift (compacted lazily), a newest-first scan for unwritten ids, and
// a running estimate of the bytes its rows hold, so the writer can bound memory by size as well as count.
import type { FeedbackRow, InferenceRecord } from '../store/types.ts';

/**
 * Approximate bytes a record holds: its free text (bodies, metadata, extra, attempts) plus a fixed part
 * for the rest. Strings count one byte per UTF-16 unit (V8 keeps ASCII in one byte; the bound is an
 * estimate, not an accounting). Objects are not serialised here (this runs on the request path): the
 * client's `metadata` and `extra` are walked once each (objectBytes). They were counted as 256 and 128
 * bytes whatever they held, so requests carrying megabytes of `extra` kept a store outage's queue far
 * past max_queue_bytes.
 */
export function recordBytes(r: InferenceRecord): number {
  return 400 + (r.requestBody?.length ?? 0) + (r.responseBody?.length ?? 0) + r.requestedModel.length
    + objectBytes(r.metadata) + objectBytes(r.extra) + r.attempts.length * 96;
}

/** Estimated bytes per object walked: a queue sizes a row when it is pushed, taken and put back (each retry of an outage). */
const walked = new WeakMap<object, number>();

function objectBytes(o: object | null): number {
  if (o === null) return 0;
  let n = walked.get(o);
  if (n === undefined) { n = jsonBytes(o); walked.set(o, n); }
  return n;
}

/** About the length of `v` as JSON (strings by their length, other scalars 8); JSON from a request is depth-limited. */
function jsonBytes(v: unknown): number {
  if (typeof v === 'string') return v.length + 2;
  if (v === null || typeof v !== 'object') return 8;
  let n = 2;
  if (Array.isArray(v)) { for (const x of v) n += jsonBytes(x) + 1; return n; }
  for (const k in v) n += k.length + 4 + jsonBytes((v as Record<string, unknown>)[k]);
  return n;
}

/** Room left in a bounded queue: rows and estimated bytes (each row sized as the queue sizes it). */
export type QueueRoom = { rows: number; bytes: number };

export function feedbackBytes(f: Pick<FeedbackRow, 'metric' | 'value' | 'reason' | 'tags'>): number {
  return 200 + f.metric.length + f.value.length + (f.reason?.length ?? 0) + Object.keys(f.tags).length * 64;
}

export class Queue<T> {
  #items: T[] = [];
  #head = 0;
  #bytes = 0;
  readonly #size: (x: T) => number;

  constructor(size: (x: T) => number) { this.#size = size; }

  get length(): number { return this.#items.length - this.#head; }
  /** Estimated bytes of the queued rows. */
  get bytes(): number { return this.#bytes; }

  push(x: T): void {
    this.#items.push(x);
    this.#bytes += this.#size(x);
  }

  /** Removes and returns up to `n` rows from the front. */
  take(n: number): T[] {
    const out = this.#items.slice(this.#head, this.#head + n);
    this.#head += out.length;
    for (const x of out) this.#bytes -= this.#size(x);
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) { this.#items = this.#items.slice(this.#head); this.#head = 0; }
    if (this.length === 0) this.#bytes = 0;
    return out;
  }

  /** The newest queued item matching `pred`. */
  findLast(pred: (x: T) => boolean): T | undefined {
    for (let i = this.#items.length - 1; i >= this.#head; i--) if (pred(this.#items[i]!)) return this.#items[i];
    return undefined;
  }

  /** Puts rows back in front (a failed batch), keeping order. */
  unshift(xs: T[]): void {
    if (xs.length === 0) return;
    this.#items = xs.concat(this.#items.slice(this.#head));
    this.#head = 0;
    for (const x of xs) this.#bytes += this.#size(x);
  }
}
