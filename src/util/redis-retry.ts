// The gateway's Redis connections (limiter, replica channel, readiness probe) and how often a lost one is retried.
// ioredis's default waits 50 ms more after each failed attempt, up to 2 s: after a Redis outage of
// seconds the gateway noticed Redis back up to that late, and a fail-open limiter served without limits
// meanwhile (test/reliability/deps.rel.ts: 855 ms to the first refusal after a restart under load).
// Capped at 250 ms, the breaker's own first probe wait: a connect to a refused port every 250 ms per
// connection costs nothing worth saving.
import { Redis, type RedisOptions } from 'ioredis';

export const RECONNECT_CAP_MS = 250;

/** ioredis `retryStrategy`: 50 ms more per attempt, at most RECONNECT_CAP_MS; never gives up. */
export const reconnectDelay = (times: number): number => Math.min(times * 50, RECONNECT_CAP_MS);

/** A connection to `url` that retries as above when lost; `options` as ioredis takes them. */
export const redisClient = (url: string, options: RedisOptions): Redis => new Redis(url, { retryStrategy: reconnectDelay, ...options });
