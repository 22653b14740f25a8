// A background pass on a timer that catches up: each pass is bounded (so it never holds the store or
// a thread for long) and says whether it stopped at its bound with work left; then the next pass
// comes after `againMs` instead of `everyMs`, until one finishes. Retention and the router's training
// use it: a bounded number of rows an hour (or every 30 s) falls behind, for good, any traffic that
// writes more.

export type CatchUpTiming = { firstMs: number; everyMs: number; againMs: number };

/** Runs `pass` after `firstMs`, then `everyMs` after each pass, or `againMs` after one that returned true (work left). A pass that throws counts as done. */
export function catchUpTimer(pass: () => Promise<boolean>, t: CatchUpTiming): { stop(): void } {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const schedule = (ms: number): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      pass().then((more) => more, () => false).then((more) => schedule(more ? t.againMs : t.everyMs));
    }, ms);
    timer.unref();
  };
  schedule(t.firstMs);
  return { stop: () => { stopped = true; if (timer) clearTimeout(timer); timer = null; } };
}

/**
 * One bounded pass of chunked statements: `step` runs one (resolving with the rows it touched) until
 * one touches fewer than `chunk` rows or `maxChunks` have run. `more`: it stopped at maxChunks with
 * every chunk full, so rows may be left for the next pass. `between` runs between statements (a turn
 * of the event loop, where the pass runs on it).
 */
export async function chunkedPass(step: () => Promise<number>, chunk: number, maxChunks: number, between?: () => Promise<void>): Promise<{ rows: number; more: boolean }> {
  let rows = 0;
  for (let i = 0; i < maxChunks; i++) {
    const n = await step();
    rows += n;
    if (n < chunk) return { rows, more: false };
    if (between && i < maxChunks - 1) await between();
  }
  return { rows, more: maxChunks > 0 };
}
