// A Redis limiter replica in a process of its own, for tests that kill it (SIGKILL) or freeze it
// (SIGSTOP, SIGCONT) while it holds budget reservations. Run with `node limiter-replica.ts`; settings
// from the environment: LIMITER_REDIS_URL, LIMITER_PREFIX, LIMITER_PRESENCE_MS, LIMITER_LEASE_MS (and LIMITER_RELEASED_KEEP_MS, optional).
// Takes one JSON command a line on stdin and answers each with one JSON line on stdout:
//   {"id":1,"op":"acquire","key":{...KeyRecord},"costUsd":"0.01"} -> {"id":1,"ok":true} or {"id":1,"ok":false,"error":"..."}
//   {"id":2,"op":"settle","of":1,"costUsd":"0.005"}             -> {"id":2,"ok":true}   (the reservation acquired by command 1)
//   {"id":3,"op":"release","of":1}                              -> {"id":3,"ok":true}
// Prints {"ready":true} once the limiter exists.
import { createInterface } from 'node:readline';
import { RedisLimiter } from '../../src/limits/redis.ts';
import type { Reservation } from '../../src/limits/limiter.ts';
import type { KeyRecord } from '../../src/store/types.ts';

type Command =
  | { id: number; op: 'acquire'; key: KeyRecord; costUsd: string }
  | { id: number; op: 'settle'; of: number; costUsd: string }
  | { id: number; op: 'release'; of: number };

const env = (name: string): string => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
};

const limiter = new RedisLimiter({
  redis: env('LIMITER_REDIS_URL'), prefix: env('LIMITER_PREFIX'), probeMs: 100, onError: () => {},
  presenceMs: Number(env('LIMITER_PRESENCE_MS')), leaseMs: Number(env('LIMITER_LEASE_MS')),
  ...(process.env.LIMITER_RELEASED_KEEP_MS ? { releasedKeepMs: Number(process.env.LIMITER_RELEASED_KEEP_MS) } : {}),
});
const held = new Map<number, Reservation>();
const answer = (o: object): void => { process.stdout.write(`${JSON.stringify(o)}\n`); };

async function run(c: Command): Promise<void> {
  switch (c.op) {
    case 'acquire':
      try {
        held.set(c.id, await limiter.acquire(c.key, { tokens: 1, costUsd: c.costUsd }));
        answer({ id: c.id, ok: true });
      } catch (e) { answer({ id: c.id, ok: false, error: String(e) }); }
      return;
    case 'settle': await held.get(c.of)!.settle({ tokens: 1, costUsd: c.costUsd }); answer({ id: c.id, ok: true }); return;
    case 'release': await held.get(c.of)!.release(); answer({ id: c.id, ok: true }); return;
  }
}

createInterface({ input: process.stdin }).on('line', (line) => { void run(JSON.parse(line) as Command); });
process.stdin.on('end', () => { void limiter.close().then(() => process.exit(0)); });
answer({ ready: true });
