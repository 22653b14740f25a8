// The router's learned state, shared by every replica through the store: each replica polls for a
// newer version and loads it; on a timer it folds new feedback (joined to the recorded decisions)
// and new answers into the next version, and on another it applies the retention of decisions and
// states. The work runs in the router's backend (src/router/backend.ts: a worker thread with its
// own store connection in the gateway), never on the request path.
import type { RouterBackend } from './backend.ts';
import type { RouterSettings } from './settings.ts';
import type { PruneResult, StoredState } from './store.ts';
import { catchUpTimer } from '../util/catch-up.ts';
import { emptyStored } from './train-pass.ts';
import { prepareState } from './quality/index.ts';
import { outputTableProblem } from './output-stats.ts';

export { emptyStored, scoreOf } from './train-pass.ts';

/** Retention runs this often (and once shortly after start); a pass that stopped at its bound with decisions left is followed by another after PRUNE_AGAIN_MS. */
const PRUNE_EVERY_MS = 3_600_000;
const FIRST_PRUNE_MS = 60_000;
const PRUNE_AGAIN_MS = 1_000;
/** After a training pass that stopped at its bound (5,000 feedback rows or 50,000 answers) with more to fold. */
const TRAIN_AGAIN_MS = 1_000;

/** A training pass's result: stored a new version, found nothing new, lost the race to another replica, or failed. */
export type TrainOutcome = 'stored' | 'nothing_new' | 'raced' | 'failed';

export type LearningOptions = {
  backend: RouterBackend | null;
  settings: () => RouterSettings;
  onError?: (what: string, e: unknown) => void;
  /** Each training pass that ran (a closed or store-less router runs none). */
  onTrained?: (result: TrainOutcome) => void;
  /** A state an operator stored (rollback or reset) adopted: operators see in the log when each replica routes with it. */
  onRestored?: (s: StoredState) => void;
};

export class RouterLearning {
  #state: StoredState = emptyStored();
  readonly #o: LearningOptions;
  #timers: NodeJS.Timeout[] = [];
  #pruning: { stop(): void } | null = null;
  #trainingTimer: { stop(): void } | null = null;
  /** The pass running, if any: `more` when it stopped at its bound with feedback or answers left. */
  #training: Promise<{ stored: boolean; more: boolean }> | null = null;
  #refreshing: Promise<boolean> | null = null;
  #closed = false;

  constructor(o: LearningOptions) { this.#o = o; }

  /** The state requests route with (replaced whole, never mutated). */
  get state(): StoredState { return this.#state; }

  /** Loads the newest stored state, then keeps polling, training and pruning on the configured intervals. */
  async start(): Promise<void> {
    await this.refresh();
    const s = this.#o.settings();
    const poll = setInterval(() => { void this.refresh(); }, s.statePollMs);
    poll.unref();
    this.#timers.push(poll);
    // A pass that stopped at its bound with feedback or answers left is followed by the next soon.
    this.#trainingTimer = catchUpTimer(async () => (await this.#pass()).more, { firstMs: s.trainIntervalMs, everyMs: s.trainIntervalMs, againMs: TRAIN_AGAIN_MS });
    this.#pruning = catchUpTimer(async () => (await this.prune())?.more ?? false, { firstMs: FIRST_PRUNE_MS, everyMs: PRUNE_EVERY_MS, againMs: PRUNE_AGAIN_MS });
  }

  #adopt(s: StoredState | null): boolean {
    if (!s || s.version <= this.#state.version) return false;
    // The per-state tables are built here, off any request, not by the first request that routes with
    // it: about 1 ms for a state from the worker (packed: the stored prompts' index was built there and
    // transferred), about 10 ms for a full state (inline backend, workers.threads 0). A state they
    // cannot be built for (a row written by hand, or damaged) is not adopted: every routed request
    // would fail on it (a 500 each, until the next version, before 2026-11-29); this replica keeps
    // routing with the state it has, and says so on each poll until an admin rolls back or resets.
    try {
      const problem = outputTableProblem(s.output);
      if (problem !== null) throw new Error(problem);
      prepareState(s.quality);
    } catch (e) {
      this.#o.onError?.('state refresh', new Error(`learned state v${s.version} cannot be routed with (${(e as Error).message}); still routing with v${this.#state.version}: roll back or reset (router rollback / router reset)`));
      return false;
    }
    this.#state = s;
    if (s.origin) this.#o.onRestored?.(s);
    return true;
  }

  /** Loads a newer stored version if there is one; true when it changed. */
  refresh(): Promise<boolean> {
    const b = this.#o.backend;
    if (!b || this.#closed) return Promise.resolve(false);
    this.#refreshing ??= b.load(this.#state.version)
      .then((s) => this.#adopt(s), (e: unknown) => { this.#o.onError?.('state refresh', e); return false; })
      .finally(() => { this.#refreshing = null; });
    return this.#refreshing;
  }

  /** One training pass (one at a time per replica); true when this replica stored a new version. */
  async trainOnce(): Promise<boolean> { return (await this.#pass()).stored; }

  #pass(): Promise<{ stored: boolean; more: boolean }> {
    this.#training ??= this.#train().finally(() => { this.#training = null; });
    return this.#training;
  }

  async #train(): Promise<{ stored: boolean; more: boolean }> {
    const b = this.#o.backend;
    if (!b || this.#closed) return { stored: false, more: false };
    try {
      await this.refresh();
      const s = this.#o.settings();
      const base = this.#state;
      const r = await b.learn(base, { qualitySignals: s.qualitySignals, halfLifeDays: s.halfLifeDays, feedbackSettleMs: s.feedbackSettleMs });
      // After a lost race the winner's state comes back: adopted, but not counted as trained here.
      this.#adopt(r.state);
      this.#o.onTrained?.(r.stored ? 'stored' : r.state ? 'raced' : 'nothing_new');
      return { stored: r.stored, more: r.more };
    } catch (e) { this.#o.onError?.('training', e); this.#o.onTrained?.('failed'); return { stored: false, more: false }; }
  }

  /** The retention pass: decisions older than router.retention.decisions_days (a bounded number: `more` says some are left), states but the newest router.retention.states and the last of each of daily_states days. */
  async prune(): Promise<PruneResult | null> {
    const b = this.#o.backend;
    if (!b || this.#closed) return null;
    const r = this.#o.settings().retention;
    try {
      return await b.prune(r.decisionsDays, { states: r.states, days: r.dailyStates });
    } catch (e) { this.#o.onError?.('retention', e); return null; }
  }

  /** The state for an explicit value (tests and the dry run of a given version). */
  setState(s: StoredState): void { this.#state = s; }

  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    this.#pruning?.stop();
    this.#trainingTimer?.stop();
    await this.#training?.catch(() => {});
    await this.#refreshing?.catch(() => {});
  }
}
