// Re-seeding a counter Redis lost (a budget's spend, a minute's requests and tokens), off the request
// path. While a provisional counter (built from the replicas' last views of it) admits requests, this
// works out the true value the counter should have started from: the store's records up to the loss,
// this process's records not written yet, and its reservations of earlier epochs still open. A few run
// at a time, retried with back-off while the store is down; requests never wait on them.
import { setTimeout as sleep } from 'node:timers/promises';
import type { SqlRunner } from '../store/sql-runner.ts';
import type { InferenceRecord } from '../store/types.ts';

/** What a record holds of a request for the limiter (the record writer's queued rows have these fields). */
export type LimitedRecord = Pick<InferenceRecord, 'costUsd' | 'status' | 'errorCode' | 'servedModel' | 'attempts' | 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens'>;

/**
 * Whether the limiter took the request: a request refused before it was admitted (bad input, a limit)
 * is recorded with an error, no served model and no attempt; every admitted one reaches dispatch. (An
 * admitted request that failed before its first attempt, an internal error, looks refused: not counted.)
 */
export const admittedRecord = (r: LimitedRecord): boolean => !(r.errorCode !== null && r.servedModel === null && r.attempts.length === 0);
/** The tokens a settled reservation put in its minute's window (as bookkeeping settles them). */
export const windowTokens = (r: LimitedRecord): number => r.inputTokens + r.cacheReadTokens + r.cacheWriteTokens + r.outputTokens;

/** A minute's requests and tokens. */
export type WindowCount = { requests: number; tokens: number };

/** Requests of `keyId` the limiter admitted, and their tokens, recorded in the store in [since, until): one indexed range read. */
export async function storedWindow(sql: SqlRunner, keyId: string, since: string, until: string): Promise<WindowCount> {
  const rows = await sql.all(
    'SELECT COUNT(*) AS n, COALESCE(SUM(input_tokens + cache_read_tokens + cache_write_tokens + output_tokens), 0) AS t FROM inferences' +
    " WHERE key_id = ? AND created_at >= ? AND created_at < ? AND NOT (error_code IS NOT NULL AND served_model IS NULL AND attempts = '[]')",
    [keyId, since, until]);
  return { requests: Number(rows[0]?.n ?? 0), tokens: Number(rows[0]?.t ?? 0) };
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

/** A re-seed of one minute's window: the same, with requests and tokens left out of Redis. */
export type WindowReseed = {
  readonly epoch: string;
  readonly t0: number;
  readonly minute: number;
  snapshot: boolean;
  skipped: WindowCount;
};

/**
 * The loop every re-seed runs: wait `delayMs` (records any replica queued before the loss are written
 * by then), then `attempt` (count this process's unwritten records once, read the store, correct the
 * counter) until it succeeds, backing off from 1 s to 30 s while it fails. Stops when `stop()` says the
 * counter no longer matters (the limiter closed, the minute is over).
 */
export async function runReseed(o: { delayMs: number; stop: () => boolean; attempt: () => Promise<void>; onError: (err: unknown) => void }): Promise<void> {
  await sleep(o.delayMs, undefined, { ref: false });
  let wait = RESEED_RETRY_MS;
  for (;;) {
    if (o.stop()) return;
    try { await o.attempt(); return; } catch (err) {
      o.onError(err);
      await sleep(wait, undefined, { ref: false });
      wait = Math.min(RESEED_RETRY_MAX_MS, wait * 2);
    }
  }
}

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
