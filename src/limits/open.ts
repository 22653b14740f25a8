// Chooses the limiter: Redis when REDIS_URL is set (limits shared by every replica), else in-process.
import type { Limiter } from './limiter.ts';
import { MemoryLimiter } from './memory.ts';
import { RedisLimiter } from './redis.ts';

export type OpenLimiterOptions = {
  redisUrl?: string;
  prefix?: string;
  failOpen?: boolean;
  onError?: (err: unknown) => void;
};

export function openLimiter(opts: OpenLimiterOptions = {}): Limiter {
  if (!opts.redisUrl) return new MemoryLimiter();
  const o: ConstructorParameters<typeof RedisLimiter>[0] = { redis: opts.redisUrl };
  if (opts.prefix !== undefined) o.prefix = opts.prefix;
  if (opts.failOpen !== undefined) o.failOpen = opts.failOpen;
  if (opts.onError !== undefined) o.onError = opts.onError;
  return new RedisLimiter(o);
}
