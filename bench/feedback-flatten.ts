// Inline vs worker-pool parsing and flattening of feedback batches, to place poolMinBytes.
// Run: node_modules/.bin/node bench/feedback-flatten.ts  (prints a table and the crossover)
//      [--sizes 10,100,...] events per batch; [--reps N] runs per size instead of 400/100/30 by size
import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import { benchArgs } from './lib/args.ts';
import { flattenBatchBytes } from '../src/feedback/batch.ts';
import { resolveLimits } from '../src/feedback/limits.ts';
import { unpackEvents } from '../src/feedback/packed.ts';
import { createFlattenPool } from '../src/feedback/pool.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import flattenTask from '../src/workers/feedback-flatten.ts';
import { median } from './lib/stats.ts';
import { concurrentMs, syncMs } from './lib/timing.ts';

const { values: o } = benchArgs({ options: { sizes: { type: 'string', default: '10,100,200,300,500,1000,2000,3000,10000' }, reps: { type: 'string' } } });
const SIZES = o.sizes.split(',').map(Number);
const CONCURRENT = 8; // batches in flight at once for the throughput columns
/** An event-loop stall shorter than this is not worth a thread hop. */
const STALL_MS = 1;
const limits = resolveLimits();

/** A realistic event: five metrics, nesting, a {score, reason}, a comment, tags. */
function batch(n: number): Uint8Array {
  const events = Array.from({ length: n }, (_, i) => ({
    id: uuidv7(),
    tags: { user: `u${i % 97}`, env: 'prod' },
    feedback: {
      thumbs: i % 2 === 0,
      rating: i % 5,
      quality: { accuracy: { score: (i % 100) / 100, reason: 'checked against the reference' }, fluency: 0.8 },
      comment: 'clear and to the point',
    },
  }));
  return new TextEncoder().encode(JSON.stringify(events));
}


/** Median wall ms of an async run (includes the worker's time and any scheduling noise). */
async function wallMs(run: () => Promise<unknown>, reps: number): Promise<number> {
  for (let i = 0; i < 5; i++) await run();
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await run();
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

const threads = Math.max(1, availableParallelism());
const pool = createFlattenPool({ minThreads: threads, maxThreads: threads });
console.log(`Node ${process.version}, ${threads} CPU(s), pool of ${threads} worker(s); medians in ms`);
console.log('                 |  event-loop ms  |    wall ms      | x8 concurrent wall ms');
console.log('events    bytes  | inline    pool  | inline    pool  | inline     pool');

const rows: Array<{ n: number; bytes: number; inlineMain: number; poolMain: number }> = [];
for (const n of SIZES) {
  const bytes = batch(n);
  const reps = o.reps ? Number(o.reps) : n >= 3000 ? 30 : n >= 300 ? 100 : 400;
  const inlineRun = async () => flattenBatchBytes(bytes, limits);
  // The pool may take ownership of the buffer, so each run hands it a fresh copy (as a server would).
  const poolRun = () => pool.run(new Uint8Array(bytes), limits);

  // Event-loop time of the pool path: the copy and dispatch (the synchronous part of run),
  // then unpacking the worker's answer. The worker's own parse and flatten run elsewhere.
  const packed = flattenTask({ bytes: new Uint8Array(bytes).buffer, limits });
  if (packed.kind !== 'packed') throw new Error(`bench batch did not flatten: ${packed.kind}`);
  const pending: Array<Promise<unknown>> = [];
  const dispatch = syncMs(() => pending.push(poolRun()), Math.min(reps, 50));
  await Promise.all(pending);
  const inlineMain = syncMs(() => flattenBatchBytes(bytes, limits), reps);
  const poolMain = dispatch + syncMs(() => unpackEvents(packed.packed), reps);

  const inlineWall = await wallMs(inlineRun, reps);
  const poolWall = await wallMs(poolRun, reps);
  const inlineX8 = await concurrentMs(inlineRun, Math.max(5, reps >> 3), CONCURRENT);
  const poolX8 = await concurrentMs(poolRun, Math.max(5, reps >> 3), CONCURRENT);
  rows.push({ n, bytes: bytes.byteLength, inlineMain, poolMain });
  const kb = `${(bytes.byteLength / 1024).toFixed(0)}K`;
  const f = (x: number, w: number, d = 2) => x.toFixed(d).padStart(w);
  console.log(`${String(n).padStart(6)} ${kb.padStart(8)}  | ${f(inlineMain, 6)} ${f(poolMain, 7)}  | ${f(inlineWall, 6)} ${f(poolWall, 7)}  | ${f(inlineX8, 6, 1)} ${f(poolX8, 8, 1)}`);
}
await pool.close();

// Crossover: the smallest batch whose inline parse stalls the event loop for STALL_MS or more
// and where the pool keeps at least half of that work off it. The wall columns are context:
// the pool's extra latency falls on the feedback request only, never on proxied traffic.
const cross = rows.find((r) => r.inlineMain >= STALL_MS && r.poolMain <= r.inlineMain / 2);
console.log(cross
  ? `crossover: ~${cross.n} events (${Math.round(cross.bytes / 1024)} KiB) -> poolMinBytes ≈ ${cross.bytes} bytes`
  : 'crossover: none in the measured sizes (keep poolMinBytes above the largest body)');
