// The batched record writer: the request path enqueues inference records and feedback rows in memory
// and returns at once; batches reach the store by size or by time, with retries and a hard memory bound.
import { assertStorable, feedbackParams } from '../store/rows.ts';
import type { FeedbackRow, InferenceRecord, InferenceRef, Store } from '../store/types.ts';

export type RecordWriterOptions = {
  store: Store;
  maxQueue?: number;      // per queue (records, feedback); beyond it the OLDEST queued items are dropped (default 20000)
  batchSize?: number;     // rows per store call; a full batch flushes at once (default 200)
  flushMs?: number;       // a partial batch waits at most this long (default 1000)
  maxBackoffMs?: number;  // retry delay doubles from flushMs up to this (default 30000)
  onError?: (err: unknown) => void;
};

export type WriterStats = { queued: number; dropped: number; flushed: number; failures: number };

/** A FIFO with O(1) push and shift, compacted lazily. */
class Queue<T> {
  #items: T[] = [];
  #head = 0;
  get length(): number { return this.#items.length - this.#head; }
  push(x: T): void { this.#items.push(x); }
  take(n: number): T[] {
    const out = this.#items.slice(this.#head, this.#head + n);
    this.#head += out.length;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) { this.#items = this.#items.slice(this.#head); this.#head = 0; }
    return out;
  }
  /** The newest queued item matching `pred`. */
  findLast(pred: (x: T) => boolean): T | undefined {
    for (let i = this.#items.length - 1; i >= this.#head; i--) if (pred(this.#items[i]!)) return this.#items[i];
    return undefined;
  }
  /** Puts a failed batch back in front, keeping order. */
  unshift(xs: T[]): void { this.#items = xs.concat(this.#items.slice(this.#head)); this.#head = 0; }
}

/** `inFlight` is the batch being written (still unknown to the store until it commits). */
type Lane<T> = { queue: Queue<T>; inFlight: T[] | null; write: (batch: T[]) => Promise<void> };

export class RecordWriter {
  readonly #store: Store;
  readonly #o: Required<Omit<RecordWriterOptions, 'store' | 'onError'>>;
  readonly #onError: (err: unknown) => void;
  readonly #records: Lane<InferenceRecord>;
  readonly #feedback: Lane<FeedbackRow>;
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> | null = null;
  #flushAgain: Promise<void> | null = null;
  #closed = false;
  #retryAt = 0;
  #consecutiveFailures = 0;
  #dropped = 0;
  #flushed = 0;
  #failures = 0;

  constructor(opts: RecordWriterOptions) {
    this.#store = opts.store;
    this.#o = {
      maxQueue: opts.maxQueue ?? 20_000, batchSize: opts.batchSize ?? 200, flushMs: opts.flushMs ?? 1000,
      maxBackoffMs: opts.maxBackoffMs ?? 30_000,
    };
    this.#onError = opts.onError ?? (() => {});
    this.#records = { queue: new Queue(), inFlight: null, write: (b) => this.#store.insertInferences(b) };
    this.#feedback = { queue: new Queue(), inFlight: null, write: (b) => this.#store.insertFeedback(b) };
    // A tick while a write runs does nothing: a repeat pass would follow a failed write at once, past its back-off.
    this.#timer = setInterval(() => { if (this.#flushing === null && Date.now() >= this.#retryAt) void this.flush(); }, this.#o.flushMs);
    this.#timer.unref();
  }

  /** Queues a record; never blocks or throws. A record the store could never accept (bad timestamp or cost) is dropped now. */
  enqueue(rec: InferenceRecord): void {
    try {
      assertStorable(rec);
      this.#push(this.#records, rec);
    } catch (err) {
      this.#dropped++;
      this.#onError(err);
    }
  }

  enqueueFeedback(rows: FeedbackRow[]): void {
    for (const row of rows) {
      try { feedbackParams(row); this.#push(this.#feedback, row); } catch (err) { this.#dropped++; this.#onError(err); }
    }
  }

  #push<T>(lane: Lane<T>, x: T): void {
    if (this.#closed) throw new Error('record writer is closed');
    lane.queue.push(x);
    this.#trim(lane);
    if (lane.queue.length >= this.#o.batchSize && this.#flushing === null && Date.now() >= this.#retryAt) void this.#run(false);
  }

  /** Enforces the bound by dropping the oldest queued items: memory stays flat however long the store is down. */
  #trim<T>(lane: Lane<T>): void {
    const over = lane.queue.length - this.#o.maxQueue;
    if (over > 0) { lane.queue.take(over); this.#dropped += over; }
  }

  /**
   * An enqueued inference whose write has not completed yet (queued or in the batch being written).
   * Found by scanning, newest first: the request path pays nothing for it (an id index cost 1-3 us
   * per request) and a feedback lookup scans at most the queue, usually a batch or two.
   */
  recent(id: string): InferenceRef | undefined {
    const r = this.#records.queue.findLast((x) => x.id === id) ?? this.#records.inFlight?.find((x) => x.id === id);
    return r ? { id: r.id, keyId: r.keyId, servedModel: r.servedModel, createdAt: r.createdAt } : undefined;
  }

  /** Unwritten records first, then the store (null when unknown or the store fails). */
  async lookup(id: string): Promise<InferenceRef | null> {
    const r = this.recent(id);
    if (r) return r;
    try { return await this.#store.getInference(id); } catch (err) { this.#onError(err); return null; }
  }

  stats(): WriterStats {
    const queued = this.#records.queue.length + (this.#records.inFlight?.length ?? 0) + this.#feedback.queue.length + (this.#feedback.inFlight?.length ?? 0);
    return { queued, dropped: this.#dropped, flushed: this.#flushed, failures: this.#failures };
  }

  /**
   * Writes everything queued at the call (and full batches that fill meanwhile), stopping at a failed
   * write (then backs off). A call while a write runs makes one more pass after it.
   */
  flush(): Promise<void> {
    return this.#run(true);
  }

  /** `all` false (a batch filled up) writes full batches only; the timer and close write partial ones too. */
  #run(all: boolean): Promise<void> {
    if (this.#flushing === null) {
      this.#flushing = this.#drain(all).finally(() => { this.#flushing = null; });
      return this.#flushing;
    }
    if (!all) return this.#flushing;
    this.#flushAgain ??= this.#flushing.then(() => { this.#flushAgain = null; return this.#run(true); });
    return this.#flushAgain;
  }

  /**
   * A partial flush takes only what was queued when it started. Draining until the queue is empty
   * instead chased the records that arrive during each write: under steady load the timer's flush
   * became a stream of commits of a few rows each (measured: a commit every 10 ms of 4-30 rows at
   * 8000 req/s), and every commit pays the transaction, its WAL frames or COPY, and a thread hop.
   */
  async #drain(all: boolean): Promise<void> {
    for (const lane of [this.#records, this.#feedback] as Array<Lane<unknown>>) {
      let partial = all ? lane.queue.length : 0;
      while (lane.queue.length >= this.#o.batchSize || (partial > 0 && lane.queue.length > 0)) {
        const batch = lane.queue.take(this.#o.batchSize);
        partial -= batch.length;
        lane.inFlight = batch;
        try {
          await lane.write(batch);
          this.#flushed += batch.length;
          this.#consecutiveFailures = 0;
          this.#retryAt = 0;
        } catch (err) {
          this.#failures++;
          this.#consecutiveFailures++;
          this.#retryAt = Date.now() + Math.min(this.#o.maxBackoffMs, this.#o.flushMs * 2 ** (this.#consecutiveFailures - 1));
          lane.queue.unshift(batch);
          this.#trim(lane);
          this.#onError(err);
          return;
        } finally {
          lane.inFlight = null;
        }
      }
    }
  }

  /**
   * Stops the timer and writes everything still queued (used on SIGTERM), retrying failed writes until
   * `timeoutMs` passes; whatever is still queued then is counted as dropped. Never rejects.
   */
  async close(timeoutMs = 10_000): Promise<void> {
    clearInterval(this.#timer);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.flush();
      const { queued } = this.stats();
      if (queued === 0) { this.#closed = true; return; }
      const wait = Math.min(this.#retryAt, deadline) - Date.now();
      if (Date.now() >= deadline) {
        this.#closed = true;
        this.#dropped += queued;
        this.#records.queue.take(queued);
        this.#feedback.queue.take(queued);
        return;
      }
      await new Promise((r) => setTimeout(r, Math.max(10, wait)));
    }
  }
}
