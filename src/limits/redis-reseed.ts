// Re-seeding a budget counter Redis lost, off the request path. While a provisional counter (built
// from the replicas' last views of it) admits requests, this works out the true spend the counter
// should have started from: the store's records of the period up to the loss, this process's records
// not written yet, and its reservations of earlier epochs still open. A few run at a time, retried
// with back-off while the store is down; requests never wait on them.
import type { SqlRunner } from '../store/sql-runner.ts';
import { decimal } from '../store/rows.ts';
import { toNanos } from './limiter.ts';

/** Spend of `keyId` recorded in the store in [since, until) (ISO times), as nanos. Written once for both dialects. */
export async function storedSpend(sql: SqlRunner, keyId: string, since: string, until: string): Promise<bigint> {
  const sum = sql.dialect === 'postgres' ? 'COALESCE(SUM(cost_usd), 0)::text' : 'dec_sum(cost_usd)';
  const rows = await sql.all(`SELECT ${sum} AS s FROM inferences WHERE key_id = ? AND created_at >= ? AND created_at < ?`, [keyId, since, until]);
  return toNanos(decimal(rows[0]?.s));
}

/** A re-seed of one spend counter: the provisional counter's epoch and when it was created. */
export type Reseed = {
  readonly epoch: string;
  readonly t0: number;
  /** Set once this process's unwritten records were counted: settlements before it are in that count. */
  snapshot: boolean;
  /** Actual cost of settlements left out of Redis because the snapshot would count them. */
  skipped: bigint;
};

/** Runs at most `limit` tasks at once (re-seeds after a FLUSHALL of many keys must not flood the store). */
export class Bounded {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) { this.#limit = limit; }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#limit) await new Promise<void>((r) => this.#waiting.push(r));
    this.#running++;
    try { return await task(); } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }
}

export const RESEED_CONCURRENCY = 4;
/** Back-off between attempts while the store (or Redis) fails, doubling up to the maximum. */
export const RESEED_RETRY_MS = 1000;
export const RESEED_RETRY_MAX_MS = 30_000;
/** A provisional counter is re-seeded by the replica that made it for this long; then another takes over. */
export const RESEED_LEASE_MS = 30_000;
