// The batched record writer: the request path enqueues inference records and feedback rows in memory
// and returns at once; batches reach the store by size or by time, with retries, a hard memory bound
// (rows and bytes), and isolation of rows the store refuses so one bad row never blocks the others.
import { Unavailable, isolateRefusedRows, storeRefusesRows, type IsolationLane, type IsolationTally } from './isolate.ts';
import { feedbackParams } from '../store/rows.ts';
import type { FeedbackRow, InferenceRecord, InferenceRef, Store } from '../store/types.ts';
import { salvaged, storableRecord } from './boundary.ts';
import { Queue, feedbackBytes, recordBytes, type QueueRoom } from './queue.ts';

export type RecordWriterOptions = {
  store: Store;
  maxQueue?: number;      // rows per queue (records, feedback); beyond it the OLDEST queued rows are dropped (default 20000)
  maxQueueBytes?: number; // estimated bytes per queue, the same way (default 256 MiB): bodies logged in full make rows large
  batchSize?: number;     // rows per store call; a full batch flushes at once (default 200)
  flushMs?: number;       // a partial batch waits at most this long (default 1000)
  maxBackoffMs?: number;  // retry delay doubles from flushMs up to this (default 30000)
  onError?: (err: unknown) => void;
};

/**
 * `dropped` counts every row lost (queue bound, closed writer, refused by the store, left at shutdown);
 * `rejected` is the part the store refused even when isolated; `repaired` counts records whose values
 * were repaired at the boundary; `salvaged` records stored in reduced form after the store refused them.
 */
export type WriterStats = {
  queued: number; queuedBytes: number; dropped: number; flushed: number; failures: number;
  rejected: number; repaired: number; salvaged: number;
  /** Consecutive failed writes of the lane that is failing (0 when writes succeed). */
  consecutiveFailures: number;
  /** When a row was last dropped (ms since epoch), 0 never. */
  lastDropAt: number;
};

/** What close() could not write: rows the caller must report as lost. */
export type CloseResult = { written: number; dropped: number };

type Lane<T> = IsolationLane<T> & {
  /** The batch being written (still unknown to the store until it commits). */
  inFlight: T[] | null;
  retryAt: number;
  consecutiveFailures: number;
};

export class RecordWriter {
  readonly #store: Store;
  #o: Required<Omit<RecordWriterOptions, 'store' | 'onError'>>;
  readonly #onError: (err: unknown) => void;
  readonly #records: Lane<InferenceRecord>;
  readonly #feedback: Lane<FeedbackRow>;
  #timer: NodeJS.Timeout;
  #flushing: Promise<void> | null = null;
  #flushAgain: Promise<void> | null = null;
  #closed = false;
  #dropped = 0;
  #flushed = 0;
  #failures = 0;
  #rejected = 0;
  #repaired = 0;
  #salvaged = 0;
  #lastDropAt = 0;
  #repairReportedAt = 0;
  #repairedReported = 0;
  /** What an isolation pass reports back (rows written, salvaged, refused). */
  readonly #tally: IsolationTally = {
    written: (n) => { this.#flushed += n; },
    salvaged: (why, lane) => { this.#salvaged++; this.#onError(new Error(`${lane}: the store refused a row (${why}); stored in reduced form`)); },
    refused: (why, lane) => { this.#rejected++; this.#drop(1); this.#onError(new Error(`${lane}: the store refused a row, dropped: ${why}`)); },
  };

  constructor(opts: RecordWriterOptions) {
    this.#store = opts.store;
    this.#o = {
      maxQueue: opts.maxQueue ?? 20_000, maxQueueBytes: opts.maxQueueBytes ?? 256 * 1024 * 1024, batchSize: opts.batchSize ?? 200,
      flushMs: opts.flushMs ?? 1000, maxBackoffMs: opts.maxBackoffMs ?? 30_000,
    };
    this.#onError = opts.onError ?? (() => {});
    this.#records = {
      name: 'records', queue: new Queue(recordBytes), inFlight: null, write: (b) => this.#store.insertInferences(b),
      salvage: salvaged, retryAt: 0, consecutiveFailures: 0,
    };
    this.#feedback = {
      name: 'feedback', queue: new Queue<FeedbackRow>(feedbackBytes), inFlight: null, write: (b) => this.#store.insertFeedback(b),
      salvage: null, retryAt: 0, consecutiveFailures: 0,
    };
    this.#timer = this.#startTimer();
  }

  #startTimer(): NodeJS.Timeout {
    // A tick while a write runs does nothing: a repeat pass would follow a failed write at once, past its back-off.
    const t = setInterval(() => { if (this.#flushing === null) void this.flush(); }, this.#o.flushMs);
    t.unref();
    return t;
  }

  /** Applies new limits (a config reload): the bounds at once (dropping oldest if now over), the timer's period on its next tick. */
  configure(opts: Pick<RecordWriterOptions, 'maxQueue' | 'maxQueueBytes' | 'batchSize' | 'flushMs'>): void {
    const flushChanged = opts.flushMs !== undefined && opts.flushMs !== this.#o.flushMs;
    this.#o = { ...this.#o, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) };
    this.#trim(this.#records);
    this.#trim(this.#feedback);
    if (flushChanged && !this.#closed) { clearInterval(this.#timer); this.#timer = this.#startTimer(); }
  }

  get limits(): Readonly<Required<Omit<RecordWriterOptions, 'store' | 'onError'>>> { return this.#o; }

  /** Queues a record; never blocks or throws. Values no column can hold are repaired here (see boundary.ts). */
  enqueue(rec: InferenceRecord): void {
    try {
      const s = storableRecord(rec);
      if (s.repaired) this.#reportRepair(rec.id, s.rec.extra?.repaired);
      this.#push(this.#records, s.rec);
    } catch (err) {
      this.#drop(1);
      this.#onError(err);
    }
  }

  /**
   * Feedback the queue takes now without dropping queued rows, in rows and estimated bytes (its two
   * bounds): POST /v1/feedback answers 503 for an event past either, rather than acknowledge rows the
   * bound would drop (oldest first) at once.
   */
  feedbackRoom(): QueueRoom {
    if (this.#closed) return { rows: 0, bytes: 0 };
    return {
      rows: Math.max(0, this.#o.maxQueue - this.#feedback.queue.length),
      bytes: Math.max(0, this.#o.maxQueueBytes - this.#feedback.queue.bytes),
    };
  }

  enqueueFeedback(rows: FeedbackRow[]): void {
    for (const row of rows) {
      try { feedbackParams(row); this.#push(this.#feedback, row); } catch (err) { this.#drop(1); this.#onError(err); }
    }
  }

  /**
   * Counted always; reported at most once per 10 s with the number since the last report, so an
   * upstream that sends odd usage on every answer cannot flood the log.
   */
  #reportRepair(id: string, what: unknown): void {
    this.#repaired++;
    const now = Date.now();
    if (now - this.#repairReportedAt < 10_000) return;
    const since = this.#repaired - this.#repairedReported;
    this.#repairReportedAt = now;
    this.#repairedReported = this.#repaired;
    this.#onError(new Error(`${since} record(s) had values no column can hold, repaired before storing (originals in extra.repaired); latest ${id}: ${JSON.stringify(what)}`));
  }

  #push<T>(lane: Lane<T>, x: T): void {
    if (this.#closed) throw new Error('record writer is closed');
    lane.queue.push(x);
    this.#trim(lane);
    if (lane.queue.length >= this.#o.batchSize && this.#flushing === null && Date.now() >= lane.retryAt) void this.#run(false);
  }

  #drop(n: number): void {
    if (n <= 0) return;
    this.#dropped += n;
    this.#lastDropAt = Date.now();
  }

  /** Enforces both bounds by dropping the oldest queued rows: memory stays flat however long the store is down. */
  #trim<T>(lane: Lane<T>): void {
    const over = lane.queue.length - this.#o.maxQueue;
    if (over > 0) this.#drop(lane.queue.take(over).length);
    // Bytes: at least the newest row stays, however large it is.
    while (lane.queue.bytes > this.#o.maxQueueBytes && lane.queue.length > 1) this.#drop(lane.queue.take(1).length);
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

  /**
   * `keyId`'s records not written yet (queued, or in the batch being written) created in [since, until)
   * (ISO times): a budget or a minute's window the limiter seeds again from the store adds them, since
   * the store cannot see them. A scan, run only then (never per request).
   */
  unwrittenRecords(keyId: string, since: string, until: string): InferenceRecord[] {
    const out: InferenceRecord[] = [];
    const take = (x: InferenceRecord): boolean => {
      if (x.keyId === keyId && x.createdAt >= since && x.createdAt < until) out.push(x);
      return false; // visit every row
    };
    this.#records.queue.findLast(take);
    this.#records.inFlight?.forEach(take);
    return out;
  }

  /**
   * Unwritten records first, then the store: null when the id is unknown; throws when the store could
   * not answer, so a caller never mistakes an outage for "does not exist".
   */
  async lookup(id: string): Promise<InferenceRef | null> {
    const r = this.recent(id);
    if (r) return r;
    return this.#store.getInference(id);
  }

  stats(): WriterStats {
    const r = this.#records; const f = this.#feedback;
    return {
      queued: r.queue.length + (r.inFlight?.length ?? 0) + f.queue.length + (f.inFlight?.length ?? 0),
      queuedBytes: r.queue.bytes + f.queue.bytes,
      dropped: this.#dropped, flushed: this.#flushed, failures: this.#failures, rejected: this.#rejected,
      repaired: this.#repaired, salvaged: this.#salvaged,
      consecutiveFailures: Math.max(r.consecutiveFailures, f.consecutiveFailures), lastDropAt: this.#lastDropAt,
    };
  }

  /**
   * Writes everything queued at the call (and full batches that fill meanwhile) in lanes not backing
   * off; a lane stops at a failed write and backs off alone. A call while a write runs makes one more pass after it.
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
   * Each lane runs on its own: a failing records lane never holds the feedback rows back.
   */
  async #drain(all: boolean): Promise<void> {
    for (const lane of [this.#records, this.#feedback] as unknown as Array<Lane<unknown>>) {
      if (Date.now() < lane.retryAt) continue;
      let partial = all ? lane.queue.length : 0;
      while (lane.queue.length >= this.#o.batchSize || (partial > 0 && lane.queue.length > 0)) {
        const batch = lane.queue.take(this.#o.batchSize);
        partial -= batch.length;
        if (!(await this.#writeBatch(lane, batch))) break;
      }
    }
  }

  /** True when the batch is settled (written, or its refused rows isolated); false when the lane backs off. */
  async #writeBatch<T>(lane: Lane<T>, batch: T[]): Promise<boolean> {
    lane.inFlight = batch;
    try {
      await lane.write(batch);
      this.#flushed += batch.length;
      this.#succeeded(lane);
      return true;
    } catch (err) {
      this.#failures++;
      this.#onError(err);
      if (await storeRefusesRows(err, () => this.#store.ping())) {
        try {
          await isolateRefusedRows(lane, batch, err, this.#tally);
          this.#succeeded(lane);
          return true;
        } catch (e) {
          if (!(e instanceof Unavailable)) throw e;
          // The isolation put its unwritten rows back already: back off without queueing the batch twice.
          this.#onError(e.reason);
          this.#backOff(lane, []);
          return false;
        }
      }
      this.#backOff(lane, batch);
      return false;
    } finally {
      lane.inFlight = null;
    }
  }

  #succeeded(lane: { consecutiveFailures: number; retryAt: number }): void {
    lane.consecutiveFailures = 0;
    lane.retryAt = 0;
  }

  #backOff<T>(lane: Lane<T>, rest: T[]): void {
    lane.consecutiveFailures++;
    lane.retryAt = Date.now() + Math.min(this.#o.maxBackoffMs, this.#o.flushMs * 2 ** (lane.consecutiveFailures - 1));
    lane.queue.unshift(rest);
    this.#trim(lane);
  }

  /**
   * Stops the timer and writes everything still queued (used on SIGTERM), retrying failed writes until
   * `timeoutMs` passes; whatever is still queued then is counted as dropped and returned, so the caller
   * can say so. Never rejects, and never waits on a hung write past the deadline.
   */
  async close(timeoutMs = 10_000): Promise<CloseResult> {
    clearInterval(this.#timer);
    const deadline = Date.now() + timeoutMs;
    const flushedBefore = this.#flushed;
    const droppedBefore = this.#dropped;
    for (;;) {
      // The lanes' back-off must not hold a shutdown: each round retries at once, then waits briefly.
      this.#records.retryAt = 0; this.#feedback.retryAt = 0;
      const left = deadline - Date.now();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.flush(), new Promise((r) => { timer = setTimeout(r, Math.max(0, left)); })]);
      clearTimeout(timer);
      const { queued } = this.stats();
      if (queued === 0 || Date.now() >= deadline) {
        this.#closed = true;
        // Rows in a write that has not answered by the deadline are counted as lost too: nothing says they landed.
        const lost = this.#records.queue.take(Infinity).length + this.#feedback.queue.take(Infinity).length
          + (this.#records.inFlight?.length ?? 0) + (this.#feedback.inFlight?.length ?? 0);
        this.#drop(lost);
        return { written: this.#flushed - flushedBefore, dropped: this.#dropped - droppedBefore };
      }
      await new Promise((r) => setTimeout(r, Math.min(Math.max(10, this.#o.flushMs), Math.max(10, deadline - Date.now()))));
    }
  }
}
