// Lets a worker pool close without failing work already given to it: piscina's own close() refuses
// new tasks at once (a conversion's follow-up task is submitted after its first answer) and gives up
// on what is left after its closeTimeout. Calls are counted here; close() waits for the count to
// reach zero, then closes the pool, and callers that arrive after close() do their work inline.
export type Drain = {
  /** True once close() was called: the caller should do the work inline. */
  readonly closed: boolean;
  /** Runs `f` as one call in progress (close() waits for it). */
  track<T>(f: () => Promise<T>): Promise<T>;
  /** Waits for the calls in progress, then runs `closePool`; the same promise on every call. */
  close(): Promise<void>;
};

export function createDrain(closePool: () => Promise<void>): Drain {
  let active = 0;
  let idle: (() => void) | null = null;
  let closing: Promise<void> | null = null;
  return {
    get closed() { return closing !== null; },
    async track(f) {
      active++;
      try { return await f(); } finally { if (--active === 0) idle?.(); }
    },
    close: () => (closing ??= (async () => {
      if (active > 0) await new Promise<void>((ok) => { idle = ok; });
      await closePool();
    })()),
  };
}
