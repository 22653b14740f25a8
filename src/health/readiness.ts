// Readiness: whether this gateway can serve and keep what it serves. Probes each dependency (database,
// Redis, the record writer, the key ring, draining) with short timeouts, in the background every few
// seconds and on demand (coalesced, cached for a second), so /health stays cheap and /health/ready
// answers 503 when a dependency the gateway needs is down.
import type { Redis } from 'ioredis';
import type { WriterStats } from '../records/writer.ts';
import { LIMITER_PREFIX, probeWrite } from '../limits/redis.ts';
import { redisClient } from '../util/redis-retry.ts';

export type Check = { ok: boolean; required: boolean; latency_ms?: number; error?: string; detail?: Record<string, unknown> };
export type ReadinessReport = { ready: boolean; checked_at: string; checks: Record<string, Check> };

export type ReadinessOptions = {
  /** The store's trivial query (Store.ping). */
  ping: () => Promise<void>;
  /** Redis URL for the shared limiter; empty: in-process limits, nothing to probe. */
  redisUrl: string;
  /** The key Redis's check writes (a server that answers PING may refuse every write the limiter needs). */
  redisProbeKey?: string;
  /** With fail-open, Redis down degrades limits but requests are served: not required then. */
  redisFailOpen: () => boolean;
  writer: () => WriterStats;
  draining: () => boolean;
  /** False while auth is on and the key ring has not loaded (every keyed request gets 503). */
  authReady: () => boolean;
  timeoutMs?: number;
  intervalMs?: number;
  /** A writer that dropped a row within this window is reported not ready (records are being lost). */
  dropWindowMs?: number;
  now?: () => number;
  /** Called with every new report (the gateway sets its dependency gauges from it). */
  onReport?: (r: ReadinessReport) => void;
};

/** Rejects after `ms`: a probe never hangs the report on a dependency that does not answer. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, fail) => { timer = setTimeout(() => fail(new Error(`${what}: no answer within ${ms} ms`)), ms); }),
  ]);
}

export class Readiness {
  readonly #o: Required<Omit<ReadinessOptions, 'now' | 'onReport' | 'redisProbeKey'>> & Pick<ReadinessOptions, 'onReport'> & { now: () => number; redisProbeKey: string };
  #redis: Redis | null = null;
  #last: ReadinessReport | null = null;
  #lastAt = 0;
  #running: Promise<ReadinessReport> | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(opts: ReadinessOptions) {
    this.#o = { timeoutMs: 1000, intervalMs: 5000, dropWindowMs: 60_000, now: Date.now, redisProbeKey: `${LIMITER_PREFIX}ready`, ...opts };
    if (opts.redisUrl) {
      // A connection of its own, never queueing: a probe while disconnected fails at once. Retried as
      // often as the limiter's (before: every 2 s, so Redis back was reported down up to 2 s longer
      // than the limiter served through it, and a fail-closed gateway answered 503 meanwhile).
      this.#redis = redisClient(opts.redisUrl, {
        lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: this.#o.timeoutMs,
      });
      this.#redis.on('error', () => { /* reported by the probe */ });
    }
  }

  /** Probes every intervalMs in the background (unref'd), so /health can show recent states for free. */
  start(): void {
    void this.check();
    this.#timer = setInterval(() => { void this.check(true); }, this.#o.intervalMs);
    this.#timer.unref();
  }

  /** The last report, or null before the first probe finished. */
  get last(): ReadinessReport | null { return this.#last; }

  /** A fresh report (or one at most a second old); probes in flight are shared by every caller. */
  check(force = false): Promise<ReadinessReport> {
    if (!force && this.#last && this.#o.now() - this.#lastAt < 1000) return Promise.resolve(this.#last);
    this.#running ??= this.#probe().finally(() => { this.#running = null; });
    return this.#running;
  }

  async #probe(): Promise<ReadinessReport> {
    const [database, redis] = await Promise.all([this.#timed(this.#o.ping, 'database'), this.#probeRedis()]);
    const checks: Record<string, Check> = { database: { ...database, required: true } };
    if (redis) checks.redis = { ...redis, required: !this.#o.redisFailOpen(), detail: { fail_open: this.#o.redisFailOpen() } };
    const w = this.#o.writer();
    const droppedRecently = w.lastDropAt > 0 && this.#o.now() - w.lastDropAt < this.#o.dropWindowMs;
    checks.writer = {
      ok: !droppedRecently && w.consecutiveFailures < 3, required: true,
      ...(droppedRecently ? { error: `rows dropped in the last ${this.#o.dropWindowMs / 1000} s` } : w.consecutiveFailures >= 3 ? { error: `${w.consecutiveFailures} consecutive failed writes` } : {}),
      detail: { queued: w.queued, queued_bytes: w.queuedBytes, dropped: w.dropped, rejected: w.rejected, consecutive_failures: w.consecutiveFailures },
    };
    checks.auth = { ok: this.#o.authReady(), required: true, ...(this.#o.authReady() ? {} : { error: 'the key ring is loading' }) };
    checks.draining = { ok: !this.#o.draining(), required: true, ...(this.#o.draining() ? { error: 'shutting down' } : {}) };
    const report = { ready: Object.values(checks).every((c) => c.ok || !c.required), checked_at: new Date(this.#o.now()).toISOString(), checks };
    this.#last = report;
    this.#lastAt = this.#o.now();
    this.#o.onReport?.(report);
    return report;
  }

  async #probeRedis(): Promise<Omit<Check, 'required'> | null> {
    const r = this.#redis;
    if (!r) return null;
    if (r.status === 'wait') r.connect().catch(() => { /* the ping below reports it */ });
    return this.#timed(() => probeWrite(r, this.#o.redisProbeKey), 'redis');
  }

  async #timed(fn: () => Promise<void>, what: string): Promise<Omit<Check, 'required'>> {
    const t0 = performance.now();
    try {
      await within(fn(), this.#o.timeoutMs, what);
      return { ok: true, latency_ms: Math.round(performance.now() - t0) };
    } catch (e) {
      // The message only: a driver error never carries the URL's password, and the URL itself is never shown.
      return { ok: false, latency_ms: Math.round(performance.now() - t0), error: (e as Error).message.slice(0, 200) };
    }
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#redis?.disconnect();
  }
}
