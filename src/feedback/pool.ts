// The piscina pool that parses and flattens large feedback batches off the event loop.
// The worker entry is the .ts file itself: Node 26 strips the types in worker threads too.
import { isMarkedAsUntransferable } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { flattenBatchBytes, type BatchResult } from './batch.ts';
import type { FeedbackLimits } from './limits.ts';
import { unpackEvents } from './packed.ts';
import { createDrain } from '../workers/drain.ts';
import type { FlattenTask, FlattenTaskResult } from '../workers/feedback-flatten.ts';

export type FlattenPool = {
  /** The most worker threads this pool runs. */
  readonly threads: number;
  /**
   * Parses and flattens `bytes` in a worker. The bytes are transferred when they own their whole
   * ArrayBuffer (the caller must not use them afterwards), copied otherwise. After close() it
   * flattens inline instead (same result).
   */
  run(bytes: Uint8Array, limits: FeedbackLimits): Promise<BatchResult>;
  /**
   * Takes no more work: every run already submitted finishes in its worker, then the threads exit
   * and the promise resolves. Safe to call more than once (same promise).
   */
  close(): Promise<void>;
};

// piscina infers its transfer-list type from the last postMessage overload of @types/node,
// which is the options-object form; the array form is what it passes on at run time.
type TransferList = NonNullable<NonNullable<Parameters<Piscina['run']>[1]>['transferList']>;

export type FlattenPoolOptions = {
  /** Worker threads; defaults to piscina's (CPU count based). */
  minThreads?: number;
  maxThreads?: number;
  /** Milliseconds an idle worker above minThreads lives. */
  idleTimeout?: number;
};

export const FLATTEN_WORKER_FILE = new URL('../workers/feedback-flatten.ts', import.meta.url).href;

export function createFlattenPool(opts: FlattenPoolOptions = {}): FlattenPool {
  const pool = new Piscina<FlattenTask, FlattenTaskResult>({
    filename: FLATTEN_WORKER_FILE,
    ...(opts.minThreads !== undefined && { minThreads: opts.minThreads }),
    ...(opts.maxThreads !== undefined && { maxThreads: opts.maxThreads }),
    ...(opts.idleTimeout !== undefined && { idleTimeout: opts.idleTimeout }),
  });
  const drain = createDrain(() => pool.close());
  return {
    threads: pool.maxThreads,
    async run(bytes, limits) {
      // A caller that read this pool just before a reload swapped it out still gets its answer.
      if (drain.closed) return flattenBatchBytes(bytes, limits);
      return drain.track(async () => {
        const buffer = ownedBuffer(bytes);
        const r = await pool.run({ bytes: buffer, limits }, { transferList: [buffer] as unknown as TransferList });
        return r.kind === 'packed' ? { kind: 'ok', events: unpackEvents(r.packed) } : r;
      });
    },
    close: drain.close,
  };
}

/**
 * An ArrayBuffer holding exactly `bytes`. Small Node Buffers are slices of a shared slab;
 * transferring the slab would detach memory other Buffers still use (and Node refuses it), so
 * those are copied, as is any buffer Node marked untransferable.
 */
function ownedBuffer(bytes: Uint8Array): ArrayBuffer {
  const b = bytes.buffer;
  if (b instanceof ArrayBuffer && !b.resizable && bytes.byteOffset === 0 && bytes.byteLength === b.byteLength
    && !isMarkedAsUntransferable(b)) return b;
  // new Uint8Array(view) copies; Buffer#slice would only make another view of the slab.
  return new Uint8Array(bytes).buffer;
}
