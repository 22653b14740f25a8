// Where the router's storage and learning work runs. With the store's options (the gateway): in a
// piscina worker of its own with its own store connection, so on SQLite neither the decision inserts,
// the retention deletes, nor the training reads and writes (synchronous calls there) touch the event
// loop, and on PostgreSQL the rows are serialised off it too. Without them (tests with a store,
// workers.threads 0): inline on the given SqlRunner.
import { Piscina } from 'piscina';
import type { OpenStoreOptions } from '../store/open.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { readChunk, type RowChunk } from './decision-row.ts';
import { pruneRouterData, storeDecisions, type KeepStates, type PruneResult, type StoredState } from './store.ts';
import { newerState, trainPass, type TrainSettings } from './train-pass.ts';
import { runTrain, type RouterTask, type WorkerData } from '../workers/router-train.ts';

/** `more`: the pass stopped at its bound with feedback or answers left (the next comes soon). */
export type LearnResult = { state: StoredState | null; stored: boolean; more: boolean };

export interface RouterBackend {
  writeDecisions(chunk: RowChunk): Promise<void>;
  /** Deletes decisions created before `before` (null: none) and states but the newest `keep.states` and the last of each of `keep.days` days. */
  prune(decisionsDays: number | null, keep: KeepStates): Promise<PruneResult>;
  /** The newest stored state when its version is above `after`, else null. */
  load(after: number): Promise<StoredState | null>;
  /**
   * A training pass on top of `base` (inline) or of the newest stored state (worker). `stored`: this
   * pass stored `state`; else `state` is a newer version another replica stored first, or null.
   */
  learn(base: StoredState, settings: TrainSettings): Promise<LearnResult>;
  close(): Promise<void>;
}

export class InlineBackend implements RouterBackend {
  readonly #sql: SqlRunner;
  constructor(sql: SqlRunner) { this.#sql = sql; }
  writeDecisions(chunk: RowChunk): Promise<void> { return storeDecisions(this.#sql, readChunk(chunk)); }
  prune(decisionsDays: number | null, keep: KeepStates): Promise<PruneResult> { return pruneRouterData(this.#sql, decisionsDays, keep); }
  load(after: number): Promise<StoredState | null> { return newerState(this.#sql, after); }
  async learn(base: StoredState, settings: TrainSettings): Promise<LearnResult> {
    const r = await trainPass(this.#sql, base, settings, runTrain);
    if (r.next) return { state: r.next, stored: true, more: r.more };
    return { state: r.raced ? await newerState(this.#sql, base.version) : null, stored: false, more: false };
  }
  async close(): Promise<void> {}
}

const WORKER = new URL('../workers/router-train.ts', import.meta.url).href;

export class WorkerBackend implements RouterBackend {
  readonly #pool: Piscina;
  constructor(store: OpenStoreOptions) {
    // One thread: its connection serves every task in order; it stays while the timers keep it busy.
    this.#pool = new Piscina({ filename: WORKER, maxThreads: 1, minThreads: 1, idleTimeout: 60_000, workerData: { store } satisfies WorkerData });
  }
  #run<T>(t: RouterTask): Promise<T> { return this.#pool.run(t) as Promise<T>; }
  async writeDecisions(chunk: RowChunk): Promise<void> { await this.#run({ op: 'decisions', chunk }); }
  prune(decisionsDays: number | null, keep: KeepStates): Promise<PruneResult> { return this.#run({ op: 'prune', decisionsDays, keep }); }
  load(after: number): Promise<StoredState | null> { return this.#run({ op: 'load', after }); }
  learn(_base: StoredState, settings: TrainSettings): Promise<LearnResult> { return this.#run({ op: 'learn', settings }); }
  async close(): Promise<void> {
    await this.#run({ op: 'close' }).catch(() => {});
    await this.#pool.destroy();
  }
}
