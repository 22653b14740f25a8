// Isolating the rows a store refuses: a failed batch write is either an outage (keep the rows, back off)
// or a batch holding a row the store will never take. The latter is written by halves down to single
// rows, so the good rows land and one bad row never blocks the others (see RecordWriter).
import { classifyStoreError } from '../store/errors.ts';
import type { Queue } from './queue.ts';

/** What isolation needs of a writer lane. */
export type IsolationLane<T> = {
  name: 'records' | 'feedback';
  queue: Queue<T>;
  write: (batch: T[]) => Promise<void>;
  /** A reduced row to try once when the store refuses `row` alone (records only). */
  salvage: ((row: T, why: string) => T) | null;
};

/** The writer's counters, told what happened to each row. */
export type IsolationTally = {
  written(n: number): void;
  salvaged(why: string, lane: string): void;
  refused(why: string, lane: string): void;
};

/** Thrown by an isolation pass that met an outage: its unwritten rows are back in the queue, in order. */
export class Unavailable extends Error {
  readonly reason: unknown;
  constructor(reason: unknown) { super('store unavailable'); this.reason = reason; }
}

/**
 * True when a failed batch holds a row the store refuses: a row error by its code, or an unclassified
 * error while the store answers a ping within 2 s (an outage would fail the ping too, or hang it).
 */
export async function storeRefusesRows(err: unknown, ping: () => Promise<void>): Promise<boolean> {
  const cls = classifyStoreError(err);
  if (cls !== 'unknown') return cls === 'row';
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => { timer = setTimeout(() => fail(new Error('ping timeout')), 2000); });
  try { await Promise.race([ping(), late]); return true; } catch { return false; } finally { clearTimeout(timer); }
}

/**
 * Writes a batch the store refused by halves, down to single rows: the good rows land, each row the
 * store refuses alone is salvaged (records) or refused and counted. Rows already written are not sent
 * again; an outage met on the way puts the unwritten rows back, in order, and throws Unavailable.
 */
export async function isolateRefusedRows<T>(lane: IsolationLane<T>, batch: T[], firstErr: unknown, tally: IsolationTally): Promise<void> {
  const parts: T[][] = [batch];
  while (parts.length > 0) {
    const part = parts.shift()!;
    let err = firstErr;
    if (part !== batch) {
      try {
        await lane.write(part);
        tally.written(part.length);
        continue;
      } catch (e) {
        if (classifyStoreError(e) === 'unavailable') { lane.queue.unshift(part.concat(...parts)); throw new Unavailable(e); }
        err = e;
      }
    }
    if (part.length > 1) {
      const mid = part.length >> 1;
      parts.unshift(part.slice(0, mid), part.slice(mid));
      continue;
    }
    try {
      await refused(lane, part[0]!, err, tally);
    } catch (e) {
      if (e instanceof Unavailable) lane.queue.unshift(part.concat(...parts));
      throw e;
    }
  }
}

/** A row the store refuses alone: stored in reduced form when the lane has one, else refused and counted. */
async function refused<T>(lane: IsolationLane<T>, row: T, err: unknown, tally: IsolationTally): Promise<void> {
  const why = (err as Error).message ?? String(err);
  if (lane.salvage) {
    try {
      await lane.write([lane.salvage(row, why)]);
      tally.written(1);
      tally.salvaged(why, lane.name);
      return;
    } catch (e) {
      if (classifyStoreError(e) === 'unavailable') throw new Unavailable(e);
    }
  }
  tally.refused(why, lane.name);
}
