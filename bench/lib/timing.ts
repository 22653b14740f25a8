// Timing helpers shared by the micro-benchmarks (convert-threshold, feedback-flatten): medians of
// synchronous sections, and of batches run concurrently.
import { performance } from 'node:perf_hooks';
import { median } from './stats.ts';

/**
 * Median ms of a synchronous section (= event-loop ms: it blocks the loop throughout). Medians of
 * synchronous work are robust to other processes: most runs are not preempted.
 */
export function syncMs(fn: () => unknown, reps: number, warmup = 5): number {
  for (let i = 0; i < warmup; i++) fn();
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) { const t0 = performance.now(); fn(); xs.push(performance.now() - t0); }
  return median(xs);
}

/** Median wall ms for `concurrent` runs started together (what a busy gateway sees). */
export async function concurrentMs(run: () => Promise<unknown>, reps: number, concurrent: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrent }, run));
    xs.push(performance.now() - t0);
  }
  return median(xs);
}
