// Chooses the limiter: Redis when REDIS_URL is set (limits shared by every replica), else in-process.
import type { Limiter } from './limiter.ts';
import { MemoryLimiter } from './memory.ts';
import { RedisLimiter, type RedisLimiterOptions } from './redis.ts';

export type OpenLimiterOptions = {
  redisUrl?: string;
  prefix?: string;
  failOpen?: boolean;
  onError?: (err: unknown) => void;
} & Pick<RedisLimiterOptions, 'onBreakerChange' | 'unwritten' | 'reseedDelayMs'>;

export function openLimiter(opts: OpenLimiterOptions = {}): Limiter {
  if (!opts.redisUrl) return new MemoryLimiter();
  const o: ConstructorParameters<typeof RedisLimiter>[0] = { redis: opts.redisUrl };
  if (opts.prefix !== undefined) o.prefix = opts.prefix;
  if (opts.failOpen !== undefined) o.failOpen = opts.failOpen;
  if (opts.onError !== undefined) o.onError = opts.onError;
  if (opts.onBreakerChange !== undefined) o.onBreakerChange = opts.onBreakerChange;
  if (opts.unwritten !== undefined) o.unwritten = opts.unwritten;
  if (opts.reseedDelayMs !== undefined) o.reseedDelayMs = opts.reseedDelayMs;
  return new RedisLimiter(o);
}
