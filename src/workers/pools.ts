// The worker pools sized by workers.threads (conversion of large inference bodies, flattening of
// large feedback batches), resized when a config reload changes the thread count. The request path
// never reads this object: src/serve.ts copies `convert` and `flatten` into the Services fields the
// handlers read, so picking a pool stays a property read.
import { createConvertPool, type ConvertPool } from '../engine/convert-pool.ts';
import { createFlattenPool, type FlattenPool } from '../feedback/pool.ts';

export class WorkerPools {
  #threads: number;
  #convert: ConvertPool | null;
  #flatten: FlattenPool | null;
  /** Replaced pools still finishing the tasks submitted to them, one entry per resize. */
  #retiring = new Set<Promise<void>>();
  #closed = false;

  /** `threads` 0: no pools, all work is done inline on the main thread. */
  constructor(threads: number) {
    this.#threads = threads;
    this.#convert = threads > 0 ? createConvertPool({ threads }) : null;
    try {
      this.#flatten = threads > 0 ? createFlattenPool({ maxThreads: threads }) : null;
    } catch (e) { void this.#convert?.close(); throw e; }
  }

  /** The thread count the pools in service were built for (0: none). */
  get threads(): number { return this.#threads; }
  get convert(): ConvertPool | null { return this.#convert; }
  get flatten(): FlattenPool | null { return this.#flatten; }
  /** How many replaced generations of pools are still finishing their tasks. */
  get retiring(): number { return this.#retiring.size; }

  /**
   * Builds pools of `threads` (none for 0) and retires the current ones: they take no new work and
   * close once every task already submitted to them has answered (see ConvertPool.close and
   * FlattenPool.close). Returns false, touching nothing, when the count is unchanged or after close().
   * Throws (keeping the current pools) when a new pool cannot be created.
   */
  resize(threads: number): boolean {
    if (this.#closed || threads === this.#threads) return false;
    const next = new WorkerPools(threads);
    const old = [this.#convert, this.#flatten];
    this.#threads = threads;
    this.#convert = next.#convert;
    this.#flatten = next.#flatten;
    const retired: Promise<void> = Promise.allSettled(old.map((p) => p?.close()))
      .then(() => { this.#retiring.delete(retired); });
    this.#retiring.add(retired);
    return true;
  }

  /** Closes the pools in service (after their submitted tasks) and waits for the retiring ones. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([this.#convert?.close(), this.#flatten?.close(), ...this.#retiring]);
  }
}
