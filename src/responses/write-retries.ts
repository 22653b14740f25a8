// Stored-response rows whose write failed, written again in the background: a database outage must not
// lose a response a client will chain from (previous_response_id). The rows wait in a bounded FIFO, as
// the record writer's do (src/records/writer.ts): one write at a time, the delay doubling while the
// store keeps failing, the oldest row dropped past the bound. A row the store refuses for its values
// (classifyStoreError: 'row') would never be taken and is dropped at once. The insert is idempotent
// (ON CONFLICT DO NOTHING, rows.ts), so a write that committed but reported a failure is safe to repeat.
import { classifyStoreError } from '../store/errors.ts';
import type { StoredResponseRow } from './rows.ts';

export type WriteRetryOptions = {
  /** Rows waiting at most (default 10,000); beyond it the oldest is dropped. */
  maxRows?: number;
  /** Estimated bytes waiting at most (default 64 MiB), the same way; the newest row always stays. */
  maxBytes?: number;
  /** First delay after a failure (default 1000 ms), doubled per failure in a row up to maxDelayMs (default 30,000). */
  delayMs?: number;
  maxDelayMs?: number;
};

export type WriteRetryStats = {
  /** Rows waiting for a write. */
  waiting: number;
  /** Failed writes of stored responses, first attempts and retries. */
  failures: number;
  /** Rows given up: past the bound, or refused by the store. */
  dropped: number;
};

export type WriteRetryEvents = {
  written(id: string): void;
  dropped(id: string, why: string): void;
  failed(e: unknown): void;
};

const rowBytes = (r: StoredResponseRow): number => 200 + r.responseJson.length + (r.inputJson?.length ?? 0) + (r.body?.byteLength ?? 0);

export class WriteRetries {
  readonly #write: (row: StoredResponseRow) => Promise<void>;
  readonly #on: WriteRetryEvents;
  readonly #o: Required<WriteRetryOptions>;
  #rows: StoredResponseRow[] = [];
  #bytes = 0;
  #failures = 0;
  #dropped = 0;
  #inRow = 0;
  #timer: NodeJS.Timeout | null = null;
  #writing = false;
  /** After close(): no retry is scheduled. */
  #closed = false;
  /** The row being written and its write, settled either way. */
  #current: { id: string; done: Promise<unknown> } | null = null;

  constructor(write: (row: StoredResponseRow) => Promise<void>, on: WriteRetryEvents, opts: WriteRetryOptions = {}) {
    this.#write = write;
    this.#on = on;
    this.#o = { maxRows: opts.maxRows ?? 10_000, maxBytes: opts.maxBytes ?? 64 * 1024 * 1024, delayMs: opts.delayMs ?? 1000, maxDelayMs: opts.maxDelayMs ?? 30_000 };
  }

  /** Counts a failed first write (the caller's own), then queues its row unless the store refuses it for good. */
  add(row: StoredResponseRow, err: unknown): void {
    this.#failures++;
    this.#on.failed(err);
    if (classifyStoreError(err) === 'row') { this.#drop(row, 'the store refuses it'); return; }
    this.#rows.push(row);
    this.#bytes += rowBytes(row);
    while (this.#rows.length > 1 && (this.#rows.length > this.#o.maxRows || this.#bytes > this.#o.maxBytes)) this.#drop(this.#shift()!, 'too many stored responses waiting for the database');
    this.#schedule();
  }

  /**
   * Takes a waiting row out (its response is being deleted); true when it was waiting. A row being
   * written is waited for first, so a deletion that follows this call comes after its insert.
   */
  async cancel(id: string): Promise<boolean> {
    if (this.#current?.id === id) await this.#current.done;
    return this.#remove(id);
  }

  #remove(id: string): boolean {
    const i = this.#rows.findIndex((r) => r.id === id);
    if (i < 0) return false;
    this.#bytes -= rowBytes(this.#rows[i]!);
    this.#rows.splice(i, 1);
    return true;
  }

  stats(): WriteRetryStats { return { waiting: this.#rows.length, failures: this.#failures, dropped: this.#dropped }; }

  /**
   * Shutdown: the waiting rows written now, without waiting out the back-off, until one fails; then no
   * more retries. Resolves with the rows still waiting, which are lost (each reported as dropped).
   */
  async close(): Promise<number> {
    if (this.#timer !== null) { clearTimeout(this.#timer); this.#timer = null; }
    while (this.#writing) await (this.#current?.done ?? new Promise((r) => setImmediate(r)));
    this.#closed = true;
    if (this.#rows.length > 0) await this.#run();
    const lost = this.#rows.splice(0);
    this.#bytes = 0;
    for (const r of lost) this.#drop(r, 'the gateway stopped before the database took it');
    return lost.length;
  }

  #shift(): StoredResponseRow | undefined {
    const r = this.#rows.shift();
    if (r) this.#bytes -= rowBytes(r);
    return r;
  }

  #drop(row: StoredResponseRow, why: string): void {
    this.#dropped++;
    this.#on.dropped(row.id, why);
  }

  #schedule(): void {
    if (this.#closed || this.#timer !== null || this.#writing || this.#rows.length === 0) return;
    const delay = Math.min(this.#o.maxDelayMs, this.#o.delayMs * 2 ** Math.max(0, this.#inRow - 1));
    this.#timer = setTimeout(() => { this.#timer = null; void this.#run(); }, delay);
    this.#timer.unref(); // rows still waiting at exit are lost, as the record writer's are after close()
  }

  /** Writes the waiting rows oldest first until one fails (then waits longer) or none are left. */
  async #run(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#rows.length > 0) {
        const row = this.#rows[0]!;
        let write: Promise<void>;
        try { write = this.#write(row); } catch (e) { write = Promise.reject(e); }
        this.#current = { id: row.id, done: write.catch(() => {}) };
        try { await write; } catch (e) {
          this.#failures++;
          this.#inRow++;
          this.#on.failed(e);
          if (classifyStoreError(e) === 'row' && this.#remove(row.id)) this.#drop(row, 'the store refuses it');
          return;
        } finally { this.#current = null; }
        this.#inRow = 0;
        this.#remove(row.id);
        this.#on.written(row.id);
      }
    } finally {
      this.#writing = false;
      this.#schedule();
    }
  }
}
