// In-process limiter: exact for a single gateway process (each check-and-take runs without yielding,
// so concurrent requests cannot interleave). Several replicas need the Redis limiter instead.
import type { KeyRecord, Store } from '../store/types.ts';
import {
  FREE_PASS, budgetError, budgetOf, hasLimits, loadSpend, minuteOf, rateLimitError, toNanos, type Limiter, type LimiterStatus, type Reservation, type Usage,
} from './limiter.ts';

type Window = { minute: number; requests: number; tokens: number };
type Spend = { start: number; nanos: bigint };

export class MemoryLimiter implements Limiter {
  readonly #now: () => number;
  readonly #windows = new Map<string, Window>();
  readonly #spend = new Map<string, Spend>();
  /**
   * The store's spend of each seeded key for the period it was seeded in: a counter created for that
   * period starts from it. Kept apart from #spend so a request still holding the key's previous record
   * (another period) cannot replace the seeded counter before the new record is in use.
   */
  readonly #seeded = new Map<string, Spend>();

  constructor(opts: { now?: () => number } = {}) {
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Seeds at start and whenever the key ring sees a budget added or changed. A counter of the same
   * period already here keeps what it counted when that is more (open reservations, records not
   * written yet) and is raised to the store's spend otherwise; the same object, so open reservations
   * still settle on it.
   */
  async seed(store: Store, keys: readonly KeyRecord[]): Promise<void> {
    for (const s of await loadSpend(store, keys, this.#now())) {
      this.#seeded.set(s.key.id, { start: s.start, nanos: s.nanos });
      const cur = this.#spend.get(s.key.id);
      if (cur && cur.start === s.start && cur.nanos < s.nanos) cur.nanos = s.nanos;
    }
  }

  async acquire(key: KeyRecord, est: Usage): Promise<Reservation> {
    return this.acquireSync(key, est);
  }

  /** The synchronous core: checks every limit first, then takes all of them, so a refusal takes nothing. */
  acquireSync(key: KeyRecord, est: Usage): Reservation {
    if (!hasLimits(key)) return FREE_PASS;
    const now = this.#now();
    const minute = minuteOf(now);
    let w = this.#windows.get(key.id);
    if (!w || w.minute !== minute) { w = { minute, requests: 0, tokens: 0 }; this.#windows.set(key.id, w); }
    if (key.rpmLimit !== null && w.requests + 1 > key.rpmLimit) throw rateLimitError('rpm', key.rpmLimit, w.requests, 1, now);
    const tokens = Math.max(0, Math.ceil(est.tokens));
    if (key.tpmLimit !== null && w.tokens + tokens > key.tpmLimit) throw rateLimitError('tpm', key.tpmLimit, w.tokens, tokens, now);

    const budget = budgetOf(key, now);
    const estNanos = budget ? toNanos(est.costUsd) : 0n;
    let s: Spend | undefined;
    if (budget) {
      s = this.#spend.get(key.id);
      if (!s || s.start !== budget.start) {
        const seeded = this.#seeded.get(key.id);
        s = { start: budget.start, nanos: seeded?.start === budget.start ? seeded.nanos : 0n };
        this.#spend.set(key.id, s);
      }
      if (s.nanos >= budget.nanos || s.nanos + estNanos > budget.nanos) throw budgetError(key, s.nanos, estNanos, now);
      s.nanos += estNanos;
    }
    w.requests += 1;
    w.tokens += tokens;

    const window = w;
    const spend = s;
    let done = false;
    const adjust = (tokenDelta: number, nanoDelta: bigint): void => {
      if (done) return;
      done = true;
      // Only the window and period the request was admitted in are adjusted; once they are over they no longer matter.
      if (this.#windows.get(key.id) === window) window.tokens = Math.max(0, window.tokens + tokenDelta);
      if (spend && this.#spend.get(key.id) === spend) spend.nanos = spend.nanos + nanoDelta < 0n ? 0n : spend.nanos + nanoDelta;
    };
    return {
      settle: async (actual) => adjust(Math.max(0, Math.ceil(actual.tokens)) - tokens, spend ? toNanos(actual.costUsd) - estNanos : 0n),
      release: async () => adjust(-tokens, -estNanos),
    };
  }

  status(): LimiterStatus { return { backend: 'memory' }; }

  /** Spend (including open reservations) of a key in its current period, as nanos; for tests and /health. */
  spentNanos(key: KeyRecord): bigint {
    const b = budgetOf(key, this.#now());
    const s = this.#spend.get(key.id);
    return b && s && s.start === b.start ? s.nanos : 0n;
  }

  async close(): Promise<void> {
    this.#windows.clear();
    this.#spend.clear();
    this.#seeded.clear();
  }
}
