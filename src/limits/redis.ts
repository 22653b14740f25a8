// Redis limiter for several gateway replicas: each check-and-take is one Lua script (redis-scripts.ts),
// so limits hold across processes. Money is integer nano-dollars (INCRBY is exact).
// Redis failing is survivable: a circuit breaker stops requests waiting on it, fail-open admits within
// the limits this process can see (#withoutRedis) and what it admits meanwhile is added back once
// Redis returns, and a budget counter it lost is rebuilt at once from the
// replicas' last views and corrected in the background from the store (redis-reseed.ts): no request
// waits on the database. A minute's request and token counts Redis lost are rebuilt the same way.
// A replica failing is survivable too: its open budget reservations are listed in Redis under a lease
// it renews (#presence), and once the lease lapses another replica returns their estimates: its acquire
// or renewal on the counter, or its sweep of the lease index (#sweep) when the key gets no traffic.
import type { Redis } from 'ioredis';
import type { KeyRecord, Store } from '../store/types.ts';
import {
  FREE_PASS, LimitError, WINDOW_MS, budgetError, budgetOf, hasLimits, loadSpend, minuteOf, periodEnd, rateLimitError, toNanos,
  type Limiter, type LimiterStatus, type Reservation, type Usage,
} from './limiter.ts';
import { Breaker, type BreakerState } from './breaker.ts';
import { SCRIPTS, SHAS, type ScriptName } from './redis-scripts.ts';
import { storedSpend } from '../store/key-spend.ts';
import {
  Bounded, RESEED_CONCURRENCY, RESEED_LEASE_MS, admittedRecord, runReseed, storedWindow, windowTokens,
  type LimitedRecord, type Reseed, type WindowReseed,
} from './redis-reseed.ts';
import { redisClient } from '../util/redis-retry.ts';

/** A budgeted request whose acquire may or may not have reached Redis; settled on recovery. */
type Uncertain = { wk: string; sk: string; token: string; est: bigint; actual: bigint | null };
/** A budgeted settlement whose answer was lost (Redis may have run it): sent again on recovery, applied at most once. */
type Unsettled = { keys: string[]; args: string[] };
/** An open reservation of a budget: its token, estimate and the counter epoch it is in (`under`: admitted without a view). */
type Held = { token: string; est: bigint; epoch: string; under: boolean };
/** An open reservation's share of its minute's window: its estimated tokens and the window's epoch. */
type WindowHeld = { tokens: number; epoch: string };

const NOTHING = (): void => {};

type BudgetPeriod = NonNullable<KeyRecord['budgetPeriod']>;

/** Fail open: after a failed read of a key's spend from the store, how long requests admit it without asking again. */
const STORE_RETRY_MS = 5000;
/** Fail open: how long a request waits on that read (a hung database must not hang requests); it lands for later ones. */
const STORE_WAIT_MS = 1000;

/**
 * The types of the acquire script's keys: window hash, spend counter, spend meta, period mark, window
 * mark, the counter's open reservations, their replicas' leases, and released tokens.
 */
const ACQUIRE_KEY_TYPES = ['hash', 'string', 'hash', 'string', 'string', 'hash', 'zset', 'hash'] as const;

/**
 * How long the token of a reservation released for its replica's lapsed lease is kept (default): a
 * settlement sent again after its first answer was lost applies once while it is. A first settlement
 * after a longer pause still adds its whole cost: its token is missing from a list of the counter's
 * generation (redis-scripts.ts, LISTS).
 */
export const RELEASED_KEEP_MS = 86_400_000;

/** Counters a replica sweeps at most per presence interval (claimed from the index; the others wait for the next). */
export const SWEEP_BATCH = 100;

/** How long a period mark lives: longer than any budget period. */
const MARK_TTL_S = 400 * 86_400;

export type RedisLimiterOptions = {
  redis: Redis | string;   // a client, or a URL (REDIS_URL) for the limiter to own
  prefix?: string;         // default LIMITER_PREFIX, "gw:lim:"
  now?: () => number;
  /** When Redis fails: true (default) admits the request and reports the error; false refuses with 429. Changeable (configure). */
  failOpen?: boolean;
  onError?: (err: unknown) => void;
  /** The circuit breaker's first wait before probing Redis again (doubles up to 5 s). */
  probeMs?: number;
  onBreakerChange?: (state: BreakerState) => void;
  /** This process's records of a key not written to the store yet, created in [since, until) (the record writer). */
  unwritten?: (keyId: string, since: string, until: string) => readonly LimitedRecord[];
  /** How long a re-seed waits before reading the store, so records queued anywhere before the loss are written (default 600 ms). */
  reseedDelayMs?: () => number;
  /**
   * How often this replica marks itself present in Redis and counts the replicas marked within three
   * such intervals (default 5000 ms): fail open gives each replica its share of what it saw was left.
   * The same timer renews this replica's leases on the budget counters where it holds reservations.
   */
  presenceMs?: number;
  /**
   * How long a lease on a counter's open reservations lasts without renewal (default three presence
   * intervals): once it lapses (the replica was killed, lost Redis, or froze that long), the next
   * acquire on the counter from another replica returns the reservations' estimates to the budget.
   */
  leaseMs?: number;
  /** How long released tokens are kept (default RELEASED_KEEP_MS; tests shorten it). */
  releasedKeepMs?: number;
};

const isWrongType = (err: unknown): boolean => String(err).includes('WRONGTYPE');

/** The limiter's key prefix unless told otherwise. */
export const LIMITER_PREFIX = 'gw:lim:';

/**
 * Whether Redis takes writes, which the limiter needs: a PING is answered by a server that refuses every
 * write (out of memory under `noeviction`, a read-only replica), so the check writes a short-lived key.
 */
export const probeWrite = async (redis: Redis, key: string): Promise<void> => { await redis.set(key, '1', 'PX', 10_000); };

/** Error text fit for /health: no credentials from a URL. */
export const describeLimiterError = (e: unknown): string => (e instanceof Error ? e.message : String(e)).replace(/(\w+:\/\/)[^@\s/]*@/g, '$1***@');

export class RedisLimiter implements Limiter {
  readonly #redis: Redis;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #now: () => number;
  #failOpen: boolean;
  readonly #onError: (err: unknown) => void;
  readonly #breaker: Breaker;
  readonly #unwritten: (keyId: string, since: string, until: string) => readonly LimitedRecord[];
  readonly #reseedDelayMs: () => number;
  /** Where budgets are seeded from (set by seed()); without one a missing counter starts at 0. */
  #store: Store | null = null;
  /** Spend (nanos) admitted and settled while Redis was unreachable, by spend counter (of `keyId`'s period from `start`): added back on recovery. */
  readonly #pending = new Map<string, { nanos: bigint; keyId: string; period: BudgetPeriod; start: number }>();
  readonly #uncertain: Uncertain[] = [];
  readonly #unsettled: Unsettled[] = [];
  #reconciling: Promise<void> | null = null;
  #again = false;
  /**
   * The last value of each key's spend counter this process saw: the base of a counter Redis lost.
   * `drift`: what this process's own settlements have moved the counter since (actual - estimate, in
   * the view's epoch), which only fail-open reads: a view holds the reservations open when it was taken.
   */
  readonly #views = new Map<string, { sk: string; nanos: bigint; epoch: string; drift: bigint; without: bigint }>();
  /**
   * Fail open's reads of a key's spend from the store, by spend counter, for a key with no view of it
   * (concurrent requests share one; `failedAt`: a read that failed is not tried again for STORE_RETRY_MS).
   */
  readonly #storeReads = new Map<string, { read: Promise<void> | null; since: number; failedAt: number }>();
  /** Estimates of the requests admitted fail-open and still running, by spend counter: a budget's room while Redis is away. */
  readonly #heldWithout = new Map<string, bigint>();
  /** Requests and estimated tokens admitted fail-open in a key's current minute (one entry a key, replaced when the minute turns). */
  readonly #windowWithout = new Map<string, { wk: string; requests: number; tokens: number }>();
  /** Open reservations per spend counter (budgeted keys, with a store): a re-seed counts those of earlier epochs. */
  readonly #open = new Map<string, Set<Held>>();
  readonly #reseeds = new Map<string, Reseed>();
  /** The last requests and tokens of each key's current window this process saw: the base of a window Redis lost. */
  readonly #windowViews = new Map<string, { wk: string; requests: number; tokens: number; epoch: string }>();
  /** Open reservations per window (with a store): a window's re-seed counts those of earlier epochs. */
  readonly #openWindows = new Map<string, Set<WindowHeld>>();
  readonly #windowReseeds = new Map<string, WindowReseed>();
  readonly #bounded = new Bounded(RESEED_CONCURRENCY);
  #closed = false;
  /** Reservation tokens: unique per limiter instance (several replicas share the hashes). */
  readonly #instance = Math.random().toString(36).slice(2, 8);
  #seq = 0;
  /** Replicas sharing these counters, as last counted in Redis (this one included): fail open takes 1/this of the room it sees. */
  #replicas = 1;
  readonly #presenceMs: number;
  readonly #presenceTimer: NodeJS.Timeout;
  readonly #leaseMs: number;
  /** Budgeted reservations this replica holds open in Redis, by spend counter: the leases it renews. */
  readonly #leased = new Map<string, number>();
  readonly #releasedKeepMs: number;
  /** When (performance.now()) this replica last put each counter in the lease index: an acquire puts it again only when that is a lease old. */
  readonly #indexed = new Map<string, number>();
  /**
   * Redis's clock minus this process's (ms), as of the last sweep's answer: an acquire's index write is a
   * plain ZADD on Redis's time. Undefined until an answer told it (#index then runs the INDEX script).
   */
  #clockOffset: number | undefined;

  constructor(opts: RedisLimiterOptions) {
    this.#owned = typeof opts.redis === 'string';
    // Bounded waits: a command unanswered within 1 s fails (then failOpen decides), so a request never hangs here.
    this.#redis = typeof opts.redis === 'string'
      ? redisClient(opts.redis, { maxRetriesPerRequest: 1, commandTimeout: 1000 })
      : opts.redis;
    this.#prefix = opts.prefix ?? LIMITER_PREFIX;
    this.#now = opts.now ?? Date.now;
    this.#failOpen = opts.failOpen ?? true;
    this.#onError = opts.onError ?? (() => {});
    this.#unwritten = opts.unwritten ?? (() => []);
    this.#reseedDelayMs = opts.reseedDelayMs ?? (() => 600);
    // Closed, it reconciles once more: what was admitted without Redis while the probe's reconciliation
    // ran (the breaker half-open) is added now (before, nothing added it until Redis failed again).
    const onChange = opts.onBreakerChange;
    this.#breaker = new Breaker({
      baseMs: opts.probeMs ?? 250, probe: () => this.#recover(), describe: describeLimiterError,
      onChange: (state) => { onChange?.(state); if (state === 'closed') this.#reconcileSoon(); },
    });
    if (this.#owned) this.#redis.on('error', (e: unknown) => this.#onError(e));
    // A dropped connection opens the breaker at once (requests stop queueing behind reconnects); a
    // restored one is probed at once.
    this.#redis.on('close', () => this.#breaker.trip(new Error('connection to Redis closed')));
    this.#redis.on('ready', () => this.#breaker.probeSoon());
    this.#presenceMs = opts.presenceMs ?? 5000;
    this.#leaseMs = opts.leaseMs ?? 3 * this.#presenceMs;
    this.#releasedKeepMs = opts.releasedKeepMs ?? RELEASED_KEEP_MS;
    this.#presenceTimer = setInterval(() => { void this.#presence(); }, this.#presenceMs);
    this.#presenceTimer.unref();
    void this.#presence();
  }

  /**
   * Marks this replica present (a sorted set of instance -> when its mark lapses: three of its own
   * intervals on, on Redis's clock) and counts the replicas whose marks have not lapsed; renews its leases on the counters where it holds reservations (RENEW).
   * Not on any request's path; a failure leaves the last count (1 until the first count: one
   * replica's fail open as before) and the leases to the next interval.
   */
  async #presence(): Promise<void> {
    if (this.#closed || this.#breaker.isOpen) return;
    const k = `${this.#prefix}replicas`, ttl = 3 * this.#presenceMs;
    try {
      // Awaited together: a renewal failing while the count is under way is never left unhandled.
      const holders = [...this.#leaseHolders()];
      const [res] = await Promise.all([
        // Each mark lapses after its own replica's three intervals, on Redis's clock (PRESENCE).
        this.#script('presence', [k], [this.#instance, ttl]),
        ...holders.map((sk) => this.#script('renew', [sk, `${sk}:l`, `${sk}:m`, ...this.#openKeys(sk)], [
          this.#instance, this.#leaseMs, this.#releasedKeepMs, `${this.#instance}.g${++this.#seq}`,
        ])),
        this.#sweep(holders),
      ]);
      const n = Number(res);
      if (Number.isInteger(n) && n >= 1) this.#replicas = n;
    } catch (err) {
      // Redis unreachable: the requests' own calls report it and open the breaker; the last count stays.
      // A lease key of the wrong type is reported (the next acquire on its counter replaces it).
      if (isWrongType(err)) this.#onError(err);
    }
  }

  /**
   * The counters where this replica may hold reservations in Redis: open ones, ones whose acquire's
   * answer was lost, and ones whose settlement waits to be sent.
   */
  #leaseHolders(): Set<string> {
    const out = new Set(this.#leased.keys());
    for (const u of this.#uncertain) out.add(u.sk);
    for (const a of this.#unsettled) out.add(a.keys[1]!);
    return out;
  }

  /**
   * The lease index (`<prefix>leases`): counters that may hold open reservations, each due for a sweep
   * once its holders stop renewing (a lease and a presence interval after the last). This replica pushes
   * the counters where it holds reservations, claims up to SWEEP_BATCH due ones and sweeps them (SWEEP:
   * lapsed leases of other replicas released, as an acquire would), and drops from the index those left
   * with nothing open. A dead replica's reservations go back within a lease and two presence intervals
   * of its last renewal, whether or not the key gets traffic.
   */
  async #sweep(holders: readonly string[]): Promise<void> {
    const idx = `${this.#prefix}leases`;
    const at = performance.now();
    for (const sk of holders) this.#indexed.set(sk, at);
    for (const [sk, t] of this.#indexed) if (at - t > this.#leaseMs) this.#indexed.delete(sk);
    const [claim, ...due] = await this.#script('index', [idx], [this.#leaseMs + this.#presenceMs, this.#presenceMs, SWEEP_BATCH, ...holders]) as string[];
    this.#clockOffset = Number(claim) - this.#presenceMs - Date.now();
    if (due.length === 0) return;
    const open = await Promise.all(due.map((sk) => this.#correction('sweep', [sk, `${sk}:m`, `${sk}:o`, `${sk}:l`, `${sk}:r`], [
      this.#instance, this.#releasedKeepMs, `${this.#instance}.g${++this.#seq}`,
    ])));
    const empty = due.filter((_, i) => open[i] !== 1);
    if (empty.length > 0) await this.#script('unindex', [idx], [claim!, ...empty]);
  }

  /**
   * Puts a counter in the lease index before this replica's first reservation on it (sent ahead of the
   * acquire on the same connection, so it lands first), unless it did within a lease: then it is not due
   * before the next presence interval, which pushes it again while the reservation is open. A plain ZADD
   * (GT) on Redis's time as this process last learnt it, not a script: it is on the request's path.
   */
  #index(sk: string): void {
    if ((this.#leased.get(sk) ?? 0) > 0) return;
    const at = performance.now(), last = this.#indexed.get(sk);
    if (last !== undefined && at - last < this.#leaseMs) return;
    this.#indexed.set(sk, at);
    const failed = (err: unknown): void => { this.#indexed.delete(sk); if (isWrongType(err)) this.#onError(err); };
    if (this.#clockOffset === undefined) {
      // Redis's time not learnt yet (an acquire before the first sweep's answer, or every sweep failing
      // since start): this process's clock could be far from Redis's, and a GT score an hour ahead would
      // keep the counter from its sweep for that hour. The script takes Redis's own time (and teaches it).
      this.#script('index', [`${this.#prefix}leases`], [this.#leaseMs + this.#presenceMs, this.#presenceMs, 0, sk])
        .then((out) => { this.#clockOffset ??= Number((out as string[])[0]) - this.#presenceMs - Date.now(); }, failed);
      return;
    }
    const until = Math.round(Date.now() + this.#clockOffset + this.#leaseMs + this.#presenceMs);
    this.#redis.zadd(`${this.#prefix}leases`, 'GT', until, sk).catch(failed);
  }

  #lease(sk: string, by: 1 | -1): void {
    const n = (this.#leased.get(sk) ?? 0) + by;
    if (n > 0) this.#leased.set(sk, n); else this.#leased.delete(sk);
  }

  /** The keys of a spend counter's open reservations and released tokens (after window, counter, meta). */
  #openKeys(sk: string): [string, string] { return [`${sk}:o`, `${sk}:r`]; }

  /** Redis's answer for a key's spend counter: the view fail open starts from, with nothing since (updated in place). */
  #see(keyId: string, sk: string, nanos: bigint, epoch: string): void {
    const view = this.#views.get(keyId);
    if (view && view.sk === sk) { view.nanos = nanos; view.epoch = epoch; view.drift = 0n; view.without = 0n; }
    else this.#views.set(keyId, { sk, nanos, epoch, drift: 0n, without: 0n });
  }

  /** Replicas sharing this limiter's counters, as last counted (fail open's divisor). */
  get replicas(): number { return this.#replicas; }

  /** True while Redis is considered down (requests take the fail-open/closed path without waiting on it). */
  get unavailable(): boolean { return this.#breaker.isOpen; }

  /** Applies a reload: storage.redis_fail_open takes effect for the next request. */
  configure(o: { failOpen: boolean }): void { this.#failOpen = o.failOpen; }

  status(): LimiterStatus {
    const b = this.#breaker.status();
    return {
      backend: 'redis', failOpen: this.#failOpen,
      breaker: { state: b.state, since: new Date(b.since).toISOString(), lastError: b.lastError, lastErrorAt: b.lastErrorAt === null ? null : new Date(b.lastErrorAt).toISOString(), opened: b.opened },
      reseeding: this.#reseeds.size + this.#windowReseeds.size,
      replicas: this.#replicas,
    };
  }

  /**
   * Redis answers again: add back what was spent meanwhile, then let requests use it. Answering is
   * taking a write (before, a PING closed the breaker while every script failed on a Redis out of
   * memory or read-only, and each request opened it again).
   */
  async #recover(): Promise<void> {
    await probeWrite(this.#redis, `${this.#prefix}probe`);
    await this.#reconcile();
  }

  /**
   * One reconciliation at a time (the probe's, one after the breaker closes, one after a settlement):
   * a call while one runs waits for it and has it run once more, so nothing is sent to Redis twice.
   */
  #reconcile(): Promise<void> {
    if (this.#reconciling) { this.#again = true; return this.#reconciling; }
    const run = async (): Promise<void> => {
      try { do { this.#again = false; await this.#reconcileOnce(); } while (this.#again); } finally { this.#reconciling = null; }
    };
    return (this.#reconciling = run());
  }

  async #reconcileOnce(): Promise<void> {
    // A period that began while Redis was away has no counter yet: the first of its spend creates it
    // (before, it was dropped, and the period's first acquire started the counter at 0 without it).
    for (const [sk, p] of [...this.#pending]) {
      const { nanos } = p;
      await this.#correction('reconcile', [sk, `${sk}:m`, `${this.#prefix}{${p.keyId}}:p`, `${sk}:o`], [
        nanos.toString(), p.start, `${this.#instance}.r${++this.#seq}`, this.#spendTtl(p.period, this.#now()), MARK_TTL_S,
      ]);
      p.nanos -= nanos; // spend remembered during the call stays for the next reconciliation
      if (p.nanos === 0n && this.#pending.get(sk) === p) this.#pending.delete(sk);
    }
    // Requests admitted without Redis go into their minute's window: where Redis still has it, or where
    // the minute began while Redis was away (created holding them). A window Redis lost is rebuilt from
    // this replica's view, so they go into the view (the re-seed from the store's records, which hold
    // them, lands later: before, the window was rebuilt without them and admitted them again until it
    // did; a minute that began meanwhile started again at 0). Past minutes limit nothing.
    const m = minuteOf(this.#now());
    const minute = `:w:${m}`;
    for (const [id, w] of [...this.#windowWithout]) {
      if (w.wk.endsWith(minute)) {
        const { requests, tokens } = w;
        if (requests > 0 || tokens > 0) {
          const kept = await this.#correction('reconcileWindow', [w.wk, `${this.#prefix}{${id}}:wm`], [
            requests, tokens, m, `x:${this.#instance}:${++this.#seq}`, 2 * 60_000, MARK_TTL_S,
          ]);
          if (kept !== 1) {
            const view = this.#windowViews.get(id);
            if (view && view.wk === w.wk) { view.requests += requests; view.tokens += tokens; }
            else this.#windowViews.set(id, { wk: w.wk, requests, tokens, epoch: '' });
          }
        }
        w.requests -= requests; w.tokens -= tokens;
        if (w.requests > 0 || w.tokens > 0) continue; // admitted during the call: the next reconciliation adds them
      }
      if (this.#windowWithout.get(id) === w) this.#windowWithout.delete(id);
    }
    // Requests still running keep their entry until they settle (which reconciles again).
    for (const u of [...this.#uncertain]) {
      if (u.actual === null) continue;
      await this.#correction('uncertain', [u.wk, u.sk, `${u.sk}:m`, ...this.#openKeys(u.sk)], [u.token, (u.actual - u.est).toString(), u.actual.toString()]);
      this.#uncertain.splice(this.#uncertain.indexOf(u), 1);
    }
    for (const a of [...this.#unsettled]) {
      await this.#correction('adjust', a.keys, a.args);
      this.#unsettled.splice(this.#unsettled.indexOf(a), 1);
    }
  }

  #failed(err: unknown): void {
    this.#onError(err);
    this.#breaker.trip(err);
  }

  #reconcileSoon(): void {
    // Redis may be back already: reconcile now, else the breaker's probe will.
    if (!this.#breaker.isOpen) this.#reconcile().catch((err: unknown) => this.#failed(err));
  }

  #remember(spendKey: string, key: KeyRecord, now: number, nanos: bigint): void {
    if (nanos === 0n) return;
    const p = this.#pending.get(spendKey);
    if (p) p.nanos += nanos;
    else {
      const b = budgetOf(key, now)!;
      this.#pending.set(spendKey, { nanos, keyId: key.id, period: b.period, start: b.start });
    }
    this.#reconcileSoon();
  }

  #windowKey(id: string, minute: number): string { return `${this.#prefix}{${id}}:w:${minute}`; }
  #spendKey(id: string, period: string, start: number): string { return `${this.#prefix}{${id}}:s:${period}:${start}`; }

  async #script(name: ScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
    try {
      return await this.#redis.evalsha(SHAS[name], keys.length, ...keys, ...args);
    } catch (err) {
      if (!String(err).includes('NOSCRIPT')) throw err;
      return await this.#redis.eval(SCRIPTS[name], keys.length, ...keys, ...args);
    }
  }

  /**
   * A script correcting counters (a settlement, a reconciliation). A key of the wrong type where a
   * counter belongs (WRONGTYPE) holds nothing to correct: reported, and the correction is done (the next
   * acquire replaces the key). Before, it was taken for Redis failing: a settlement opened the breaker,
   * and the probe's reconciliation failed on it again, so the breaker stayed open for every key for as
   * long as the bad key stayed.
   */
  async #correction(name: ScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
    try {
      return await this.#script(name, keys, args);
    } catch (err) {
      if (!isWrongType(err)) throw err;
      this.#onError(err);
      return 0;
    }
  }

  /** Seconds the spend counter of a period should live: to the period's end plus a day, or forever for `total`. */
  #spendTtl(period: BudgetPeriod, now: number): number {
    const end = periodEnd(period, now);
    return end === null ? 0 : Math.ceil((end - now) / 1000) + 86_400;
  }

  /**
   * Counters already in Redis win (they include other replicas' open reservations); missing ones start
   * from the store, or after a loss from this process's last view when larger, and are re-seeded (SEED).
   * The store is kept for re-seeding counters Redis loses later. Redis failing here is reported, not thrown.
   */
  async seed(store: Store, keys: readonly KeyRecord[]): Promise<void> {
    this.#store = store;
    const now = this.#now();
    let spends: Awaited<ReturnType<typeof loadSpend>>;
    try { spends = await loadSpend(store, keys, now); } catch (err) { this.#onError(err); return; }
    let redisDown = false;
    for (const s of spends) {
      const period = s.key.budgetPeriod ?? 'month';
      const sk = this.#spendKey(s.key.id, period, s.start);
      const view = this.#views.get(s.key.id);
      if (!redisDown) {
        const epoch = `${this.#instance}.s${++this.#seq}`;
        // The re-seed reads up to and including this millisecond, as the store's spend above did.
        const t0 = now + 1;
        try {
          const [v, reseed, e] = await this.#script('seed', [sk, `${sk}:m`, `${this.#prefix}{${s.key.id}}:p`, `${sk}:o`], [
            s.nanos.toString(), this.#spendTtl(period, now), epoch, String(s.start), MARK_TTL_S,
            view && view.sk === sk ? view.nanos.toString() : '', t0, RESEED_LEASE_MS,
          ]) as [string | null, number, string];
          this.#see(s.key.id, sk, BigInt(v ?? s.nanos.toString()), e);
          if (reseed === 1) this.#startReseed(s.key, budgetOf(s.key, now)!, sk, e, t0);
          continue;
        } catch (err) { this.#onError(err); redisDown = true; }
      }
      // Redis did not answer (the rest are not asked): fail open starts from the store's figure.
      if (!view || view.sk !== sk) this.#storeView(s.key.id, sk, s.nanos);
    }
  }

  /** A view of a key's counter taken from the store's records (no Redis epoch), where this process had none of it. */
  #storeView(keyId: string, sk: string, nanos: bigint): void {
    this.#views.set(keyId, { sk, nanos, epoch: '', drift: 0n, without: 0n });
  }

  /**
   * Fail open meets a budgeted key with no view of its counter for this period (Redis was away when
   * the key was seeded or its budget set, or the period turned while Redis was away): its spend in
   * the period is read from the store, once (concurrent requests wait on the same read), and becomes
   * the view, so the budget holds at what the records show. A store that fails leaves the key admitted
   * as before (nothing known) and is asked again after STORE_RETRY_MS; one that has not answered
   * within STORE_WAIT_MS of the read's start leaves the requests admitted the same way (none waits
   * on it again), and its answer, if it comes, serves the later ones.
   */
  async #viewFromStore(key: KeyRecord, sk: string, start: number): Promise<void> {
    const store = this.#store;
    const seen = this.#views.get(key.id);
    // Failing closed refuses without a view: nothing to read.
    if (!this.#failOpen || store === null || (seen && seen.sk === sk)) return;
    const r = this.#storeReads.get(sk);
    if (r?.read) return this.#waitOn(r);
    if (r && performance.now() - r.failedAt < STORE_RETRY_MS) return;
    const entry = r ?? { read: null, since: 0, failedAt: 0 };
    this.#storeReads.set(sk, entry);
    entry.since = performance.now();
    entry.read = (async () => {
      try {
        const nanos = toNanos(await store.keySpend(key.id, new Date(start).toISOString()));
        const now = this.#views.get(key.id);
        if (!now || now.sk !== sk) this.#storeView(key.id, sk, nanos);
        this.#storeReads.delete(sk);
      } catch (err) {
        this.#onError(err);
        entry.read = null; entry.failedAt = performance.now();
      }
    })();
    return this.#waitOn(entry);
  }

  /** Waits on a store read until STORE_WAIT_MS after it started (a read still hanging past that is not waited on again). */
  async #waitOn(r: { read: Promise<void> | null; since: number }): Promise<void> {
    const left = STORE_WAIT_MS - (performance.now() - r.since);
    if (r.read === null || left <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => { timer = setTimeout(resolve, left); });
    try { await Promise.race([r.read, late]); } finally { clearTimeout(timer); }
  }

  /**
   * Redis did not answer: refused (fail closed), or admitted uncounted (fail open), in which case what
   * the request spends is remembered and added to the counter once Redis is back. Fail open still
   * holds a budget this process can see is spent: its last view of the counter (spent or reserved when
   * Redis last answered it), plus what it admitted and settled since, plus the estimates of what it
   * admitted that is still running, leaves no room for this estimate: refused as Redis would have.
   * A key this process has no view of (acquire reads one from the store first) is admitted only when
   * the store did not answer either (nothing known). Several replicas see the same
   * counter, so each takes its share of the room its view leaves (1/replicas, #presence).
   * `budget`: the key's budget in nanos (null: none), `est` this request's estimate against it, `token`
   * its reservation token when its acquire was sent and the answer lost (budgeted keys).
   */
  #withoutRedis(key: KeyRecord, now: number, wk: string, tokens: number, spendKey: string, budget: bigint | null, est: bigint, token?: string): Reservation {
    const sent = token === undefined ? undefined : { wk, sk: spendKey, token, est };
    // A refusal the client sent anyway may have been taken: give it back once Redis answers.
    const giveBack = (): void => { if (sent) { this.#uncertain.push({ ...sent, actual: 0n }); this.#reconcileSoon(); } };
    if (!this.#failOpen) {
      giveBack();
      throw new LimitError('rpm', 'Rate limiter unavailable; retry shortly.', { 'retry-after': '1' });
    }
    const count = this.#windowRoom(key, now, wk, tokens, giveBack);
    if (budget === null) {
      const tokensUsed = count();
      if (key.tpmLimit === null) return FREE_PASS;
      let over = false;
      const end = (used: number): void => { if (!over) { over = true; tokensUsed(used); } };
      return { settle: async (actual) => end(Math.max(0, Math.ceil(actual.tokens))), release: async () => end(0) };
    }
    const keyId = key.id;
    const seen = this.#views.get(keyId);
    const running = this.#heldWithout.get(spendKey) ?? 0n;
    if (seen && seen.sk === spendKey) {
      // What the counter held when Redis last answered (with this replica's own settlements since), and
      // what this replica took without Redis: what it settled and the estimates still running.
      const atView = seen.nanos - seen.without + seen.drift;
      const base = atView > 0n ? atView : 0n;
      const mine = seen.without + running;
      // The acquire script's own test (redis-scripts.ts), against this replica's share of the room
      // left: every replica sees the same counter, so each takes 1/replicas of it.
      const share = (budget - base) / BigInt(this.#replicas);
      if (base >= budget || mine >= share || mine + est > share) {
        giveBack();
        throw budgetError(key, base + mine, est, now);
      }
    }
    const tokensUsed = count();
    this.#heldWithout.set(spendKey, running + est);
    const unhold = (): void => {
      const left = (this.#heldWithout.get(spendKey) ?? 0n) - est;
      if (left > 0n) this.#heldWithout.set(spendKey, left); else this.#heldWithout.delete(spendKey);
    };
    let done = false;
    // What it spends goes into this process's view too: if Redis lost the counter meanwhile, the
    // provisional one rebuilt from the view holds it at once, not only after the store re-seed lands.
    const spent = (nanos: bigint): void => {
      const view = this.#views.get(keyId);
      if (view && view.sk === spendKey) { view.nanos += nanos; view.without += nanos; }
    };
    if (sent) {
      // The acquire was sent and its answer lost: whether it was taken is settled on recovery.
      const u: Uncertain = { ...sent, actual: null };
      this.#uncertain.push(u);
      const end = (nanos: bigint, used: number): void => { if (done) return; done = true; unhold(); tokensUsed(used); u.actual = nanos; spent(nanos); this.#reconcileSoon(); };
      return { settle: async (actual) => end(toNanos(actual.costUsd), Math.max(0, Math.ceil(actual.tokens))), release: async () => end(0n, 0) };
    }
    return {
      settle: async (actual) => { if (done) return; done = true; unhold(); tokensUsed(Math.max(0, Math.ceil(actual.tokens))); spent(toNanos(actual.costUsd)); this.#remember(spendKey, key, now, toNanos(actual.costUsd)); },
      release: async () => { if (done) return; done = true; unhold(); tokensUsed(0); },
    };
  }

  /**
   * Fail open, a key's rpm and tpm as this process can see them: its last view of the minute's window
   * (when it is still this minute) plus what it admitted without Redis in the minute; refused as the
   * acquire script would (redis-scripts.ts). Returns what counts the request once it is admitted, which
   * returns what puts its actual tokens in place of the estimate when it settles (0 when released), as
   * the adjust script does with Redis.
   */
  #windowRoom(key: KeyRecord, now: number, wk: string, need: number, giveBack: () => void): () => (usedTokens: number) => void {
    if (key.rpmLimit === null && key.tpmLimit === null) return () => NOTHING;
    let mine = this.#windowWithout.get(key.id);
    if (!mine || mine.wk !== wk) this.#windowWithout.set(key.id, (mine = { wk, requests: 0, tokens: 0 }));
    const seen = this.#windowViews.get(key.id);
    const seenRequests = seen?.wk === wk ? seen.requests : 0, seenTokens = seen?.wk === wk ? seen.tokens : 0;
    // Each replica takes its share of what is left of the minute (the view, or all of a new minute).
    const r = this.#replicas;
    const over = (limit: number, used: number, mine: number, add: number): boolean => used + mine + add > limit || mine + add > Math.floor((limit - used) / r);
    if (key.rpmLimit !== null && key.rpmLimit > 0 && over(key.rpmLimit, seenRequests, mine.requests, 1)) { giveBack(); throw rateLimitError('rpm', key.rpmLimit, seenRequests + mine.requests, 1, now); }
    if (key.tpmLimit !== null && key.tpmLimit > 0 && over(key.tpmLimit, seenTokens, mine.tokens, need)) { giveBack(); throw rateLimitError('tpm', key.tpmLimit, seenTokens + mine.tokens, need, now); }
    return () => {
      mine.requests++; mine.tokens += need;
      // Already sent to Redis by a reconciliation, the estimate stays there (more, never less, than used).
      return (used) => { mine.tokens = Math.max(0, mine.tokens + used - need); };
    };
  }

  async acquire(key: KeyRecord, est: Usage): Promise<Reservation> {
    if (!hasLimits(key)) return FREE_PASS; // no round trip for unlimited keys
    const now = this.#now();
    const minute = minuteOf(now);
    const tokens = Math.max(0, Math.ceil(est.tokens));
    const budget = budgetOf(key, now);
    const estNanos = budget ? toNanos(est.costUsd) : 0n;
    const wk = this.#windowKey(key.id, minute);
    const sk = budget ? this.#spendKey(key.id, budget.period, budget.start) : `${this.#prefix}{${key.id}}:s:none`;
    // The breaker is open: Redis is down or hung, so this request does not wait on it.
    if (this.#breaker.isOpen) {
      if (budget) await this.#viewFromStore(key, sk, budget.start);
      return this.#withoutRedis(key, now, wk, tokens, sk, budget?.nanos ?? null, estNanos);
    }
    const token = `x:${this.#instance}:${++this.#seq}`;
    // With a store, a missing counter or window is rebuilt in the script from this process's last view of it.
    const tracked = budget !== null && this.#store !== null;
    const windowed = (key.rpmLimit !== null || key.tpmLimit !== null) && this.#store !== null;
    const view = tracked ? this.#views.get(key.id) : undefined;
    const wview = windowed ? this.#windowViews.get(key.id) : undefined;
    let res: [number, string, string, number, number, string, string, number, string, string, string];
    if (budget) this.#index(sk);
    try {
      res = await this.#acquireScript([wk, sk, `${sk}:m`, `${this.#prefix}{${key.id}}:p`, `${this.#prefix}{${key.id}}:wm`, `${sk}:o`, `${sk}:l`, `${sk}:r`], [
        key.rpmLimit ?? 0, key.tpmLimit ?? 0, budget ? budget.nanos.toString() : -1, tokens, estNanos.toString(), 2 * 60_000,
        budget ? this.#spendTtl(budget.period, now) : 0, tracked ? '1' : '0', token, budget ? String(budget.start) : '',
        view && view.sk === sk ? view.nanos.toString() : '', now, RESEED_LEASE_MS, MARK_TTL_S,
        wview && wview.wk === wk ? `${wview.requests}:${wview.tokens}` : '', minute, windowed ? '1' : '0',
        wview?.epoch ?? '', view?.epoch ?? '', this.#instance, this.#leaseMs, this.#releasedKeepMs,
      ]) as typeof res;
    } catch (err) {
      this.#failed(err);
      if (budget) await this.#viewFromStore(key, sk, budget.start);
      return this.#withoutRedis(key, now, wk, tokens, sk, budget?.nanos ?? null, estNanos, budget ? token : undefined);
    }
    const [code, used, epoch, reseed, under, t0, wepoch, wreseed, wt0, requests, windowTokensNow] = res;
    if (tracked && (code === 0 || code === 3)) this.#see(key.id, sk, BigInt(used), epoch);
    if (windowed && code !== 6) {
      if (wview && wview.wk === wk) { wview.requests = Number(requests); wview.tokens = Number(windowTokensNow); wview.epoch = wepoch; }
      else this.#windowViews.set(key.id, { wk, requests: Number(requests), tokens: Number(windowTokensNow), epoch: wepoch });
    }
    if (reseed === 1) this.#startReseed(key, budget!, sk, epoch, Number(t0));
    if (wreseed === 1) this.#startWindowReseed(key, wk, minute, wepoch, Number(wt0));
    if (code === 1) throw rateLimitError('rpm', key.rpmLimit!, Number(requests), 1, now);
    if (code === 2) throw rateLimitError('tpm', key.tpmLimit!, Number(windowTokensNow), tokens, now);
    if (code === 3) throw budgetError(key, BigInt(used), estNanos, now);
    if (code === 6) {
      throw new LimitError('rpm', 'This API key\'s budget is being re-checked (the shared limiter lost its counters); retry shortly.', { 'retry-after': '1' });
    }
    if (budget) this.#lease(sk, 1);
    return this.#reservation(key.id, wk, sk, budget ? token : '', tokens, budget !== null, estNanos,
      tracked ? { token, est: estNanos, epoch, under: under === 1 } : null, { tokens, epoch: wepoch }, windowed);
  }

  /**
   * The acquire script. A key of another type where one of the API key's counters belongs (something
   * else sharing this Redis wrote it: WRONGTYPE) is not Redis failing: it is reported and deleted, and
   * the script runs again, which rebuilds what it held as after a loss (from this replica's view,
   * re-seeded from the store). Before, the error opened the breaker, so every limited key was refused
   * (fail closed) or served without Redis (fail open), again after each probe, for as long as the key stayed.
   */
  async #acquireScript(keys: string[], args: Array<string | number>): Promise<unknown> {
    try {
      return await this.#script('acquire', keys, args);
    } catch (err) {
      if (!isWrongType(err)) throw err;
      this.#onError(err);
      const types = await Promise.all(keys.map((k) => this.#redis.type(k)));
      const wrong = keys.filter((_, i) => types[i] !== 'none' && types[i] !== ACQUIRE_KEY_TYPES[i]);
      if (wrong.length > 0) await this.#redis.del(...wrong);
      return await this.#script('acquire', keys, args);
    }
  }

  #reservation(keyId: string, wk: string, sk: string, token: string, tokens: number, budgeted: boolean, estNanos: bigint, held: Held | null, wheld: WindowHeld, trackWindow: boolean): Reservation {
    if (held) {
      let set = this.#open.get(sk);
      if (!set) this.#open.set(sk, (set = new Set()));
      set.add(held);
    }
    if (trackWindow) {
      let set = this.#openWindows.get(wk);
      if (!set) this.#openWindows.set(wk, (set = new Set()));
      set.add(wheld);
    }
    let done = false;
    const adjust = async (tokenDelta: number, actual: bigint, actualTokens: number): Promise<void> => {
      if (done) return;
      done = true;
      if (budgeted) this.#lease(sk, -1);
      let nanoDelta = budgeted ? actual - estNanos : 0n;
      let whole = budgeted ? actual : 0n;
      // Counted whole in a window rebuilt without it, unless this process's re-seed will count its record.
      let wholeRequest = true;
      if (trackWindow) {
        const set = this.#openWindows.get(wk);
        set?.delete(wheld);
        if (set?.size === 0) this.#openWindows.delete(wk);
        const rs = this.#windowReseeds.get(wk);
        if (rs && !rs.snapshot && wheld.epoch !== rs.epoch) { rs.skipped.requests += 1; rs.skipped.tokens += actualTokens; wholeRequest = false; }
      }
      if (held) {
        const set = this.#open.get(sk);
        set?.delete(held);
        if (set?.size === 0) this.#open.delete(sk);
        const rs = this.#reseeds.get(sk);
        // A reservation of an earlier epoch settling before this process counts its unwritten records
        // for a re-seed: its record (queued right after this call) is in that count; Redis must not add it too.
        if (rs && !rs.snapshot && held.epoch !== rs.epoch) { rs.skipped += actual; nanoDelta = 0n; whole = 0n; }
      }
      // A budgeted reservation is always settled in Redis, even for its estimate: its token leaves the
      // counter's open list there (else, once this replica's lease lapsed, it would be released again).
      if (!budgeted && tokenDelta === 0) return;
      const keys = [wk, sk, `${sk}:m`, ...this.#openKeys(sk)];
      const args = [
        String(tokenDelta), nanoDelta.toString(), token, held?.epoch ?? '', whole.toString(), held?.under ? '1' : '0',
        wheld.epoch, String(actualTokens), wholeRequest ? '1' : '0',
      ];
      if (this.#breaker.isOpen) {
        // Sent once Redis answers, as the settlement it is: its estimate may have been released
        // meanwhile (this replica's lease lapsed while it could not renew it), then its whole cost applies.
        // (Before, its delta was added to the counter blindly: an estimate released by then came off twice.)
        if (budgeted) { this.#unsettled.push({ keys, args: [...args, '0'] }); this.#reconcileSoon(); }
        this.#windowDrift(keyId, wk, tokenDelta);
        return;
      }
      try {
        await this.#correction('adjust', keys, args);
        // The counter moved by the correction: fail open reads it with the view it was taken in.
        const view = held && nanoDelta !== 0n ? this.#views.get(keyId) : undefined;
        if (view && view.sk === sk && view.epoch === held!.epoch) view.drift += nanoDelta;
        this.#windowDrift(keyId, wk, tokenDelta);
      } catch (err) {
        // The correction is not lost: Redis may have run it (a timeout, a connection lost after the
        // send), so it is sent again once Redis answers, to apply only if its token is still in the
        // window (before, its delta was added again: run twice, a settlement for less than its estimate
        // took the difference off the counter twice). Without a token (no budget) nothing is owed.
        this.#failed(err);
        if (budgeted) this.#unsettled.push({ keys, args: [...args, '1'] });
        this.#windowDrift(keyId, wk, tokenDelta);
      }
    };
    return {
      settle: (actual) => {
        const used = Math.max(0, Math.ceil(actual.tokens));
        return adjust(used - tokens, budgeted ? toNanos(actual.costUsd) : 0n, used);
      },
      release: () => adjust(-tokens, 0n, 0),
    };
  }

  /**
   * A settlement's tokens (actual - estimate) in this process's view of the minute's window, which only
   * fail open reads: the view holds the estimates of the requests open when it was taken. Replies on the
   * one connection come in order, so a view taken after the adjust script already holds it. While Redis
   * is away the window there keeps the estimate (more than used, never less).
   */
  #windowDrift(keyId: string, wk: string, tokenDelta: number): void {
    if (tokenDelta === 0) return;
    const view = this.#windowViews.get(keyId);
    if (view && view.wk === wk) view.tokens = Math.max(0, view.tokens + tokenDelta);
  }

  /** Starts (once per counter) the background re-seed of a provisional counter this process must correct. */
  #startReseed(key: KeyRecord, budget: NonNullable<ReturnType<typeof budgetOf>>, sk: string, epoch: string, t0: number): void {
    // One per counter; a counter lost again while its re-seed runs gets a new one (the old one's correction finds another epoch).
    if (this.#reseeds.get(sk)?.epoch === epoch || !this.#store) return;
    const rs: Reseed = { epoch, t0: Number.isFinite(t0) && t0 > 0 ? t0 : this.#now(), snapshot: false, skipped: 0n };
    this.#reseeds.set(sk, rs);
    void this.#bounded.run(() => this.#reseed(key, budget.start, sk, rs))
      .catch((err: unknown) => this.#onError(err))
      .finally(() => { if (this.#reseeds.get(sk) === rs) this.#reseeds.delete(sk); });
  }

  async #reseed(key: KeyRecord, start: number, sk: string, rs: Reseed): Promise<void> {
    const since = new Date(start).toISOString();
    const until = new Date(rs.t0).toISOString();
    let queued = 0n;
    await runReseed({
      delayMs: this.#reseedDelayMs(), stop: () => this.#closed || this.#reseeds.get(sk) !== rs, onError: this.#onError,
      attempt: async () => {
        if (!rs.snapshot) {
          for (const r of this.#unwritten(key.id, since, until)) queued += toNanos(r.costUsd);
          rs.snapshot = true;
        }
        const stored = toNanos(await storedSpend(this.#store!.sql, key.id, since, until));
        const earlier = [...this.#open.get(sk) ?? []].filter((h) => h.epoch !== rs.epoch);
        let open = 0n;
        for (const h of earlier) open += h.est;
        const done = await this.#script('correct', [sk, `${sk}:m`, `${sk}:o`, `${sk}:l`], [
          rs.epoch, (stored + queued + open).toString(), this.#instance, this.#leaseMs, ...earlier.flatMap((h) => [h.token, h.est.toString()]),
        ]);
        if (done === 1) {
          // Their estimates are in the counter now (listed open there, under this replica's lease): they settle as reservations of this epoch.
          for (const h of earlier) { h.epoch = rs.epoch; h.under = false; }
        } else if (rs.skipped > 0n) {
          // Corrected by another replica (or lost again): what was left out of Redis goes back where the counter still stands.
          await this.#script('reconcile', [sk], [rs.skipped.toString()]);
        }
      },
    });
  }

  /** Starts (once per window) the background re-seed of a provisional minute window this process must correct. */
  #startWindowReseed(key: KeyRecord, wk: string, minute: number, epoch: string, t0: number): void {
    if (this.#windowReseeds.get(wk)?.epoch === epoch || !this.#store) return;
    const rs: WindowReseed = { epoch, minute, t0: Number.isFinite(t0) && t0 > 0 ? t0 : this.#now(), snapshot: false, skipped: { requests: 0, tokens: 0 } };
    this.#windowReseeds.set(wk, rs);
    void this.#bounded.run(() => this.#reseedWindow(key, wk, rs))
      .catch((err: unknown) => this.#onError(err))
      .finally(() => { if (this.#windowReseeds.get(wk) === rs) this.#windowReseeds.delete(wk); });
  }

  /**
   * The minute's requests and tokens up to the loss: the store's records of the key admitted in the
   * minute, this process's unwritten ones, and its reservations of the window's earlier epochs still
   * open. Given up once the minute is over (the window no longer limits anything).
   */
  async #reseedWindow(key: KeyRecord, wk: string, rs: WindowReseed): Promise<void> {
    const since = new Date(rs.minute * WINDOW_MS).toISOString();
    const until = new Date(rs.t0).toISOString();
    const queued = { requests: 0, tokens: 0 };
    await runReseed({
      delayMs: this.#reseedDelayMs(), stop: () => this.#closed || this.#windowReseeds.get(wk) !== rs || minuteOf(this.#now()) > rs.minute, onError: this.#onError,
      attempt: async () => {
        if (!rs.snapshot) {
          for (const r of this.#unwritten(key.id, since, until)) if (admittedRecord(r)) { queued.requests++; queued.tokens += windowTokens(r); }
          rs.snapshot = true;
        }
        const stored = await storedWindow(this.#store!.sql, key.id, since, until);
        const earlier = [...this.#openWindows.get(wk) ?? []].filter((h) => h.epoch !== rs.epoch);
        let tokens = stored.tokens + queued.tokens;
        for (const h of earlier) tokens += h.tokens;
        const done = await this.#script('correctWindow', [wk], [rs.epoch, stored.requests + queued.requests + earlier.length, tokens]);
        if (done === 1) for (const h of earlier) h.epoch = rs.epoch;
        else if (rs.skipped.requests > 0) await this.#script('reconcileWindow', [wk], [rs.skipped.requests, rs.skipped.tokens]);
      },
    });
  }

  /** Spend (including open reservations) of a key in its current period, as nanos. */
  async spentNanos(key: KeyRecord): Promise<bigint> {
    const b = budgetOf(key, this.#now());
    if (!b) return 0n;
    return BigInt((await this.#redis.get(this.#spendKey(key.id, b.period, b.start))) ?? '0');
  }

  /** Re-seeds in progress (tests). */
  get reseeding(): number { return this.#reseeds.size + this.#windowReseeds.size; }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#presenceTimer);
    // Leaving: the others' share grows at their next count instead of three intervals later.
    if (!this.#breaker.isOpen) await this.#redis.zrem(`${this.#prefix}replicas`, this.#instance).catch(() => {});
    this.#breaker.close();
    if (this.#owned) await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
