// Recorded decisions go to the store in batches off the request path (a timer, never awaited by a
// request; the router's worker rebuilds, serialises and inserts them). Rows are encoded as they come
// into chunks of up to 500 (decision-row.ts), bounded in memory: past the bound the oldest chunk is
// dropped and its rows counted. A chunk written is kept (a few) for its buffers: the next chunks are
// encoded into them instead of into new memory (decision-row.ts, RowEncoder).
import type { AttemptRecord } from '../store/types.ts';
import type { Decision } from './decide.ts';
import { RowEncoder, type RowChunk, type RowHead } from './decision-row.ts';
import type { PromptFeatures } from './quality/index.ts';

const CHUNK_ROWS = 500;
/** Written chunks kept for their buffers: about the chunks one flush writes under heavy traffic. */
const SPARE_CHUNKS = 4;

export class DecisionWriter {
  #queue: RowChunk[] = [];
  #queued = 0;
  #open = new RowEncoder();
  /** Chunks written, whose buffers the next encoders take. */
  readonly #spare: RowChunk[] = [];
  #dropped = 0;
  #writing: Promise<void> | null = null;
  readonly #timer: NodeJS.Timeout;
  readonly #write: (chunk: RowChunk) => Promise<void>;
  readonly #max: number;
  readonly #onError: (e: unknown) => void;

  /** `write` reads the chunk before its promise settles: once it resolves, the chunk's memory is reused. */
  constructor(write: (chunk: RowChunk) => Promise<void>, opts: { flushMs?: number; maxQueue?: number; onError?: (e: unknown) => void } = {}) {
    this.#write = write;
    this.#max = opts.maxQueue ?? 20_000;
    this.#onError = opts.onError ?? (() => {});
    this.#timer = setInterval(() => { void this.flush(); }, opts.flushMs ?? 250);
    this.#timer.unref();
  }

  get dropped(): number { return this.#dropped; }
  /** Rows waiting to be written. */
  get pending(): number { return this.#queued + this.#open.rows; }

  enqueue(head: RowHead, features: PromptFeatures, d: Decision, attempts: readonly AttemptRecord[], keep: number): void {
    this.#open.add(head, features, d, attempts, keep);
    if (this.#open.rows >= CHUNK_ROWS) this.#seal();
    this.#bound();
  }

  #seal(): void {
    if (this.#open.rows === 0) return;
    const c = this.#open.seal();
    this.#open = new RowEncoder(this.#spare.pop());
    this.#queue.push(c);
    this.#queued += c.rows;
  }

  #bound(): void {
    while (this.#queued + this.#open.rows > this.#max && this.#queue.length > 0) {
      const c = this.#queue.shift()!;
      this.#queued -= c.rows;
      this.#dropped += c.rows;
    }
  }

  /** Writes what is queued, a chunk per statement; a failed chunk goes back to the front. */
  flush(): Promise<void> {
    if (this.#writing) return this.#writing;
    this.#seal();
    if (this.#queue.length === 0) return Promise.resolve();
    // Assigned before the loop can finish: a write that completes without awaiting must not leave a settled promise behind.
    const run = this.#drain();
    this.#writing = run;
    void run.finally(() => { if (this.#writing === run) this.#writing = null; });
    return run;
  }

  async #drain(): Promise<void> {
    await Promise.resolve();
    while (this.#queue.length > 0) {
      const c = this.#queue.shift()!;
      this.#queued -= c.rows;
      try {
        await this.#write(c);
        if (this.#spare.length < SPARE_CHUNKS) this.#spare.push(c);
      } catch (e) {
        this.#queue.unshift(c);
        this.#queued += c.rows;
        this.#bound();
        this.#onError(e);
        return;
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#writing;
    await this.flush();
  }
}
