// Writes on a thread of their own: the record writer's inserts, the key ring's last-used times, new
// feedback metric definitions, stored responses and the records' retention chunks (SQLite's synchronous calls, with a busy handler that sleeps while another
// connection commits; pg's protocol work) leave the event loop that serves requests. Reads stay on the main store.
import { Worker } from 'node:worker_threads';
import type { MetricClaim, MetricDef } from '../feedback/metric-store.ts';
import { StoreError, type StoreErrorFields } from './errors.ts';
import { toWire } from './inference-wire.ts';
import type { OpenStoreOptions } from './open.ts';
import type { FeedbackRow, InferenceRecord, Store } from './types.ts';
import type { StoredResponseRow } from '../responses/rows.ts';

export type WriteKind = 'inferences' | 'feedback' | 'touch' | 'claimMetrics' | 'storedResponse' | 'pruneRecords' | 'clearBodies' | 'close';
export type WriteMessage = { id: number; kind: WriteKind; args: unknown[] };
type Reply = { id: number; value?: unknown; error?: StoreErrorFields };

export class WriteThread {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
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
      if (m.error === undefined) p.ok(m.value); else p.fail(new StoreError(m.error));
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

  #call<T>(kind: WriteKind, args: unknown[]): Promise<T> {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.#next++;
    return new Promise((ok, fail) => {
      this.#pending.set(id, { ok: ok as (v: unknown) => void, fail });
      this.#worker.postMessage({ id, kind, args } satisfies WriteMessage);
    });
  }

  /** Records travel as tuples (see inference-wire.ts): the clone is the main thread's share of every write. */
  insertInferences = (recs: InferenceRecord[]): Promise<void> => this.#call('inferences', recs.map(toWire));
  insertFeedback = (rows: FeedbackRow[]): Promise<void> => this.#call('feedback', rows);
  touchKeys = (lastUsed: Array<{ id: string; at: string }>): Promise<void> => this.#call('touch', lastUsed);
  /** One stored response (src/responses/rows.ts): its request body, when sent, is parsed on the thread. */
  insertStoredResponse = (row: StoredResponseRow): Promise<void> => this.#call('storedResponse', [row]);
  /**
   * Retention's chunks (src/dashboard/retention.ts), one message each: the records written meanwhile
   * are queued behind one chunk, not behind a whole pass.
   */
  pruneRecords = (bound: string): Promise<number> => this.#call('pruneRecords', [bound]);
  clearBodies = (bound: string): Promise<number> => this.#call('clearBodies', [bound]);
  /** claimMetricDefs (src/feedback/metric-store.ts) on the thread's connection. */
  claimMetrics = async (scope: string, wanted: MetricClaim[]): Promise<Map<string, MetricDef>> =>
    new Map(await this.#call<Array<[string, MetricDef]>>('claimMetrics', [scope, wanted]));

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
