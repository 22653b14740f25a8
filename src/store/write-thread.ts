// Batched writes on a thread of their own: the record writer's inserts and the key ring's last-used
// times (SQLite's synchronous calls, pg's protocol work) leave the event loop that serves requests.
// On SQLite this also keeps the main thread from ever waiting on the write lock: its busy handler
// sleeps in milliseconds while another connection commits. Reads stay on the main store.
import { Worker } from 'node:worker_threads';
import { toWire } from './inference-wire.ts';
import type { OpenStoreOptions } from './open.ts';
import type { FeedbackRow, InferenceRecord, Store } from './types.ts';

type Reply = { id: number; error?: string };

export class WriteThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { ok: () => void; fail: (e: Error) => void }>();
  #next = 0;
  #ready: Promise<void>;
  #dead: Error | null = null;

  constructor(opts: OpenStoreOptions) {
    this.#worker = new Worker(new URL('../workers/store-writer.ts', import.meta.url), { workerData: opts });
    this.#ready = new Promise((ok, fail) => {
      this.#worker.once('message', (m: { ready?: boolean; error?: string }) => (m.ready ? ok() : fail(new Error(m.error))));
      this.#worker.once('error', fail);
    });
    this.#worker.on('message', (m: Reply & { ready?: boolean }) => {
      if (m.ready !== undefined) return;
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (m.error === undefined) p.ok(); else p.fail(new Error(m.error));
    });
    this.#worker.on('error', (e: unknown) => this.#failAll(e instanceof Error ? e : new Error(String(e))));
    this.#worker.on('exit', (code) => this.#failAll(new Error(`store write thread exited (${code})`)));
  }

  /** False once the thread has died; writes then go through the main store (see withWriteThread). */
  get alive(): boolean { return this.#dead === null; }

  /** Resolves once the thread has opened its own connection to the store. */
  ready(): Promise<void> { return this.#ready; }

  #failAll(e: Error): void {
    this.#dead ??= e;
    for (const p of this.#pending.values()) p.fail(e);
    this.#pending.clear();
  }

  #call(kind: 'inferences' | 'feedback' | 'touch' | 'close', rows: unknown[]): Promise<void> {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.#next++;
    return new Promise((ok, fail) => {
      this.#pending.set(id, { ok, fail });
      this.#worker.postMessage({ id, kind, rows });
    });
  }

  /** Records travel as tuples (see inference-wire.ts): the clone is the main thread's share of every write. */
  insertInferences = (recs: InferenceRecord[]): Promise<void> => this.#call('inferences', recs.map(toWire));
  insertFeedback = (rows: FeedbackRow[]): Promise<void> => this.#call('feedback', rows);
  touchKeys = (lastUsed: Array<{ id: string; at: string }>): Promise<void> => this.#call('touch', lastUsed);

  /** Finishes what was sent, closes the thread's connection and ends the thread. */
  async close(): Promise<void> {
    if (this.#dead) return;
    await this.#call('close', []).catch(() => {});
    await this.#worker.terminate();
  }
}

/** `store` for everything, except batched writes (records, feedback, last-used times), which go through `thread` while it lives. */
export function withWriteThread(store: Store, thread: WriteThread): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (thread.alive && prop === 'insertInferences') return thread.insertInferences;
      if (thread.alive && prop === 'insertFeedback') return thread.insertFeedback;
      if (thread.alive && prop === 'touchKeys') return thread.touchKeys;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
