// Redis limiter for several gateway replicas: each check-and-take is one Lua script, so limits hold
// across processes. Money is integer nano-dollars (INCRBY is exact); keys carry a {key id} hash tag for Redis Cluster.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { KeyRecord, Store } from '../store/types.ts';
import {
  FREE_PASS, LimitError, budgetError, budgetOf, hasLimits, loadSpend, minuteOf, periodEnd, rateLimitError, toNanos, type Limiter, type Reservation, type Usage,
} from './limiter.ts';

// Returns {0} when admitted, else {1|2|3, used} for rpm, tpm or budget; nothing is taken on refusal.
const ACQUIRE = `
local r = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
local t = tonumber(redis.call('HGET', KEYS[1], 't') or '0')
local rpm, tpm, budget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local et, en = tonumber(ARGV[4]), tonumber(ARGV[5])
if rpm > 0 and r + 1 > rpm then return {1, tostring(r)} end
if tpm > 0 and t + et > tpm then return {2, tostring(t)} end
if budget >= 0 then
  local s = tonumber(redis.call('GET', KEYS[2]) or '0')
  if s >= budget or s + en > budget then return {3, redis.call('GET', KEYS[2]) or '0'} end
  redis.call('INCRBY', KEYS[2], ARGV[5])
  if tonumber(ARGV[7]) > 0 then redis.call('EXPIRE', KEYS[2], ARGV[7]) end
end
redis.call('HINCRBY', KEYS[1], 'r', 1)
redis.call('HINCRBY', KEYS[1], 't', et)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {0, '0'}`;

// Applies a token and a spend delta to the window and period the request was admitted in, if they still exist.
const ADJUST = `
if redis.call('EXISTS', KEYS[1]) == 1 and ARGV[1] ~= '0' then
  if tonumber(redis.call('HINCRBY', KEYS[1], 't', ARGV[1])) < 0 then redis.call('HSET', KEYS[1], 't', 0) end
end
if ARGV[2] ~= '0' and redis.call('EXISTS', KEYS[2]) == 1 then
  if tonumber(redis.call('INCRBY', KEYS[2], ARGV[2])) < 0 then redis.call('SET', KEYS[2], 0, 'KEEPTTL') end
end
return 0`;

const sha1 = (s: string): string => createHash('sha1').update(s).digest('hex');
const SHAS = { acquire: sha1(ACQUIRE), adjust: sha1(ADJUST) };

export type RedisLimiterOptions = {
  redis: Redis | string;   // a client, or a URL (REDIS_URL) for the limiter to own
  prefix?: string;         // default "gw:lim:"
  now?: () => number;
  /** When Redis fails: true (default) admits the request and reports the error; false refuses with 429. */
  failOpen?: boolean;
  onError?: (err: unknown) => void;
};

export class RedisLimiter implements Limiter {
  readonly #redis: Redis;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #now: () => number;
  readonly #failOpen: boolean;
  readonly #onError: (err: unknown) => void;

  constructor(opts: RedisLimiterOptions) {
    this.#owned = typeof opts.redis === 'string';
    // Bounded waits: a command unanswered within 1 s fails (then failOpen decides), so a request never hangs here.
    this.#redis = typeof opts.redis === 'string'
      ? new Redis(opts.redis, { maxRetriesPerRequest: 1, commandTimeout: 1000 })
      : opts.redis;
    this.#prefix = opts.prefix ?? 'gw:lim:';
    this.#now = opts.now ?? Date.now;
    this.#failOpen = opts.failOpen ?? true;
    this.#onError = opts.onError ?? (() => {});
    if (this.#owned) this.#redis.on('error', (e: unknown) => this.#onError(e));
  }

  #windowKey(id: string, minute: number): string { return `${this.#prefix}{${id}}:w:${minute}`; }
  #spendKey(id: string, period: string, start: number): string { return `${this.#prefix}{${id}}:s:${period}:${start}`; }

  async #script(name: keyof typeof SHAS, keys: string[], args: Array<string | number>): Promise<unknown> {
    const src = name === 'acquire' ? ACQUIRE : ADJUST;
    try {
      return await this.#redis.evalsha(SHAS[name], keys.length, ...keys, ...args);
    } catch (err) {
      if (!String(err).includes('NOSCRIPT')) throw err;
      return await this.#redis.eval(src, keys.length, ...keys, ...args);
    }
  }

  /** Seconds the spend counter of a period should live: to the period's end plus a day, or forever for `total`. */
  #spendTtl(period: NonNullable<KeyRecord['budgetPeriod']>, now: number): number {
    const end = periodEnd(period, now);
    return end === null ? 0 : Math.ceil((end - now) / 1000) + 86_400;
  }

  /** Counters already in Redis win (they include other replicas' open reservations); missing ones start from the store. */
  async seed(store: Store, keys: readonly KeyRecord[]): Promise<void> {
    const now = this.#now();
    for (const s of await loadSpend(store, keys, now)) {
      const period = s.key.budgetPeriod ?? 'month';
      const k = this.#spendKey(s.key.id, period, s.start);
      const ttl = this.#spendTtl(period, now);
      if (ttl > 0) await this.#redis.set(k, s.nanos.toString(), 'EX', ttl, 'NX');
      else await this.#redis.set(k, s.nanos.toString(), 'NX');
    }
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
    let res: unknown;
    try {
      res = await this.#script('acquire', [wk, sk], [key.rpmLimit ?? 0, key.tpmLimit ?? 0, budget ? budget.nanos.toString() : -1,
        tokens, estNanos.toString(), 2 * 60_000, budget ? this.#spendTtl(budget.period, now) : 0]);
    } catch (err) {
      this.#onError(err);
      if (!this.#failOpen) throw new LimitError('rpm', 'Rate limiter unavailable; retry shortly.', { 'retry-after': '1' });
      return FREE_PASS;
    }
    const [code, used] = res as [number, string];
    if (code === 1) throw rateLimitError('rpm', key.rpmLimit!, Number(used), 1, now);
    if (code === 2) throw rateLimitError('tpm', key.tpmLimit!, Number(used), tokens, now);
    if (code === 3) throw budgetError(key, BigInt(used), estNanos, now);

    let done = false;
    const adjust = async (tokenDelta: number, nanoDelta: bigint): Promise<void> => {
      if (done) return;
      done = true;
      if (tokenDelta === 0 && nanoDelta === 0n) return;
      try { await this.#script('adjust', [wk, sk], [String(tokenDelta), nanoDelta.toString()]); } catch (err) { this.#onError(err); }
    };
    return {
      settle: (actual) => adjust(Math.max(0, Math.ceil(actual.tokens)) - tokens, budget ? toNanos(actual.costUsd) - estNanos : 0n),
      release: () => adjust(-tokens, -estNanos),
    };
  }

  /** Spend (including open reservations) of a key in its current period, as nanos. */
  async spentNanos(key: KeyRecord): Promise<bigint> {
    const b = budgetOf(key, this.#now());
    if (!b) return 0n;
    return BigInt((await this.#redis.get(this.#spendKey(key.id, b.period, b.start))) ?? '0');
  }

  async close(): Promise<void> {
    if (this.#owned) await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
