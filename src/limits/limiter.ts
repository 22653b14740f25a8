// The per-key limits contract shared by the in-process and Redis limiters: requests and tokens per
// fixed UTC minute, and spend per budget period, reserved at the start of a request and settled after.
import { compareDecimal, shiftDecimal } from '../catalog/decimal.ts';
import { estimateMaxCost, type MaxCostOptions } from '../catalog/cost.ts';
import type { Pricing } from '../catalog/types.ts';
import { GatewayError } from '../gateway-error.ts';
import type { KeyRecord, Store } from '../store/types.ts';

/** What a request may use: tokens (input + max output) and the maximum cost as an exact decimal. */
export type Usage = { tokens: number; costUsd: string };

/**
 * The reservation for the attempts a request may make (each with its prices, output bound and, when
 * it prices the prompt apart, its own input bound: tokenizers differ by target): the largest input plus
 * output, and the costliest attempt's worst case, since a fallback to a pricier model bills at its
 * prices. The cost (exact decimal arithmetic) is only worked out for a key with a budget.
 */
export function worstUsage(key: KeyRecord, attempts: ReadonlyArray<{ pricing: Pricing; maxOutputTokens: number; inputTokens?: number }>, inputTokens: number, opts: MaxCostOptions = {}): Usage {
  let tokens = 0;
  let costUsd = '0';
  for (const a of attempts) {
    const input = a.inputTokens ?? inputTokens;
    tokens = Math.max(tokens, input + a.maxOutputTokens);
    if (key.budgetUsd === null) continue;
    const c = estimateMaxCost(a.pricing, input, a.maxOutputTokens, opts);
    if (compareDecimal(c, costUsd) > 0) costUsd = c;
  }
  return { tokens, costUsd };
}

/**
 * A granted request. Exactly one of settle/release should follow; later calls are ignored. Neither
 * ever rejects (a Redis failure is reported through the limiter's onError), so callers need not await.
 */
export interface Reservation {
  /** Replaces the estimate with what the request really used. */
  settle(actual: Usage): Promise<void>;
  /** Returns the estimated tokens and cost (the request failed before using them); the request still counts for rpm. */
  release(): Promise<void>;
}

/** What /health shows of the limiter (no secrets): the backend, and for Redis its breaker and re-seeds. */
export type LimiterStatus =
  | { backend: 'memory' }
  | {
    backend: 'redis'; failOpen: boolean;
    breaker: { state: 'closed' | 'open' | 'half-open'; since: string; lastError: string | null; lastErrorAt: string | null; opened: number };
    /** Budget counters Redis lost being corrected from the store in the background. */
    reseeding: number;
    /** Replicas sharing the counters, as last counted in Redis: fail open gives each 1/replicas of the room it sees. */
    replicas: number;
  };

export interface Limiter {
  /** Checks and takes rpm, tpm and budget in one atomic step; throws LimitError (429 or 402). */
  acquire(key: KeyRecord, est: Usage): Promise<Reservation>;
  /** The same without a promise, for a limiter that never waits (in-process); absent when it must. */
  acquireSync?(key: KeyRecord, est: Usage): Reservation;
  /** Loads each budgeted key's spend in its current period from the store, so a restart does not reset budgets. */
  seed(store: Store, keys: readonly KeyRecord[]): Promise<void>;
  status(): LimiterStatus;
  /** Applies settings a reload may change (storage.redis_fail_open). */
  configure?(o: { failOpen: boolean }): void;
  close(): Promise<void>;
}

export type LimitReason = 'rpm' | 'tpm' | 'budget';

/** A GatewayError that also says which limit refused, for the rate_limited_total{reason} metric. */
export class LimitError extends GatewayError {
  readonly reason: LimitReason;
  constructor(reason: LimitReason, message: string, headers: Record<string, string>) {
    super(reason === 'budget' ? 'budget_exceeded' : 'rate_limited', message, { headers });
    this.reason = reason;
  }
}

/** The reservation for a key without limits: nothing to take, nothing to give back. */
export const FREE_PASS: Reservation = { settle: async () => {}, release: async () => {} };
export const hasLimits = (k: KeyRecord): boolean => k.rpmLimit !== null || k.tpmLimit !== null || k.budgetUsd !== null;

export const WINDOW_MS = 60_000;
export const minuteOf = (now: number): number => Math.floor(now / WINDOW_MS);

/** Seconds until the current minute window closes, at least 1 (used as retry-after). */
export const retryAfterSeconds = (now: number): number => Math.max(1, Math.ceil(((minuteOf(now) + 1) * WINDOW_MS - now) / 1000));

export function rateLimitError(reason: 'rpm' | 'tpm', limit: number, used: number, need: number, now: number): LimitError {
  const retry = retryAfterSeconds(now);
  const what = reason === 'rpm'
    ? `${limit} requests per minute`
    : `${limit} tokens per minute (${used} used this minute, this request needs up to ${need}${need > limit ? '; lower max_tokens' : ''})`;
  return new LimitError(reason, `Rate limit exceeded: this API key allows ${what}. Retry after ${retry} s.`,
    { 'retry-after': String(retry), 'x-ratelimit-limit': String(limit), 'x-ratelimit-reset': String(retry) });
}

export function budgetError(key: KeyRecord, spentNanos: bigint, estNanos: bigint, now: number): LimitError {
  const period = key.budgetPeriod ?? 'month';
  const end = periodEnd(period, now);
  const per = period === 'total' ? 'in total' : `per ${period}`;
  return new LimitError('budget', `Budget exceeded: this API key's budget is $${key.budgetUsd} ${per}; $${fromNanos(spentNanos)} is spent or reserved` +
    ` and this request may cost up to $${fromNanos(estNanos)}.${end === null ? '' : ` The budget resets at ${new Date(end).toISOString()}.`}`, {});
}

/** Start of the UTC budget period containing `now` (weeks start on Monday; `total` starts at the epoch). */
export function periodStart(period: NonNullable<KeyRecord['budgetPeriod']>, now: number): number {
  const d = new Date(now);
  const y = d.getUTCFullYear(); const m = d.getUTCMonth(); const day = d.getUTCDate();
  switch (period) {
    case 'day': return Date.UTC(y, m, day);
    case 'week': return Date.UTC(y, m, day - ((d.getUTCDay() + 6) % 7));
    case 'month': return Date.UTC(y, m, 1);
    case 'total': return 0;
  }
}

/** End of the period containing `now`, or null for `total`. */
export function periodEnd(period: NonNullable<KeyRecord['budgetPeriod']>, now: number): number | null {
  const s = new Date(periodStart(period, now));
  switch (period) {
    case 'day': return Date.UTC(s.getUTCFullYear(), s.getUTCMonth(), s.getUTCDate() + 1);
    case 'week': return Date.UTC(s.getUTCFullYear(), s.getUTCMonth(), s.getUTCDate() + 7);
    case 'month': return Date.UTC(s.getUTCFullYear(), s.getUTCMonth() + 1, 1);
    case 'total': return null;
  }
}

/**
 * Exact decimal USD to integer nano-dollars, rounded up: limits count money as integers (exact in
 * Redis and in Lua up to 2^53 nanos, about $9 million), and rounding up never lets spend slip past a budget.
 */
export function toNanos(usd: string): bigint {
  const shifted = shiftDecimal(usd, 9);
  const dot = shifted.indexOf('.');
  if (dot < 0) return BigInt(shifted);
  const whole = BigInt(shifted.slice(0, dot));
  return shifted.startsWith('-') ? whole : whole + 1n;
}

export const fromNanos = (n: bigint): string => shiftDecimal(n.toString(), -9);

/** The budget in nanos and the period start for a key, or null when the key has no budget. */
export function budgetOf(key: KeyRecord, now: number): { nanos: bigint; start: number; period: NonNullable<KeyRecord['budgetPeriod']> } | null {
  if (key.budgetUsd === null) return null;
  const period = key.budgetPeriod ?? 'month';
  return { nanos: toNanos(key.budgetUsd), start: periodStart(period, now), period };
}

/** Store spend of every budgeted key in its current period, fetched a few at a time. */
export async function loadSpend(store: Store, keys: readonly KeyRecord[], now: number): Promise<Array<{ key: KeyRecord; start: number; nanos: bigint }>> {
  const out: Array<{ key: KeyRecord; start: number; nanos: bigint }> = [];
  const budgeted = keys.filter((k) => k.budgetUsd !== null && k.revokedAt === null);
  for (let i = 0; i < budgeted.length; i += 8) {
    await Promise.all(budgeted.slice(i, i + 8).map(async (key) => {
      const b = budgetOf(key, now)!;
      out.push({ key, start: b.start, nanos: toNanos(await store.keySpend(key.id, new Date(b.start).toISOString())) });
    }));
  }
  return out;
}
