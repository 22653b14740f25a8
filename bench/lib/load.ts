// Load generator, run in its own process: closed-loop max throughput (C connections, D seconds)
// and open-loop fixed rate (R req/s, D seconds) with latency and time-to-first-token percentiles.
import { fork, type ChildProcess } from 'node:child_process';
import { Pool } from 'undici';
import { isMainModule } from './child.ts';
import { summarise, type Percentiles } from './stats.ts';

export type LoadTarget = { origin: string; path: string; headers: Record<string, string>; body: string };
export type ClosedJob = LoadTarget & { mode: 'closed'; connections: number; durationMs: number };
/**
 * Closed loop over several targets in turn: time is cut in `sliceMs` slices given to the targets
 * round-robin (the order rotating every pass), each slice running `connections` workers against
 * one target, until every target ran `durationMs` in all.
 */
export type SlicedJob = {
  mode: 'sliced'; targets: LoadTarget[]; connections: number; durationMs: number; sliceMs: number;
  /** Shifts the turn order (a run of rounds passes its round number, so with one slice per round the first place rotates). */
  offset?: number;
  /** Return every latency sample (to pool targets that are instances of one system). */
  keepSamples?: boolean;
};
/**
 * Open loop at `rate` req/s in total; time is cut in `sliceMs` slices given to the targets in
 * turn, so each target sees the full rate while it is served and runs `durationMs` in all.
 */
export type OpenJob = { mode: 'open'; targets: LoadTarget[]; rate: number; durationMs: number; sliceMs?: number; keepSamples?: boolean };
export type LoadJob = ClosedJob | OpenJob | SlicedJob;

/**
 * latency: request start -> last body byte. ttft: request start -> first body chunk (for a
 * stream, the first SSE event). Both in milliseconds; rps counts successful (2xx) responses.
 */
export type LoadResult = {
  mode: LoadJob['mode']; ok: number; errors: number; errorSample?: string; durationMs: number; rps: number;
  latency: Percentiles; ttft: Percentiles; latencies?: number[]; ttfts?: number[];
};

type Recorder = { lat: number[]; ttft: number[]; ok: number; errors: number; errorSample?: string };

function sendOne(pool: Pool, t: LoadTarget, rec: Recorder): Promise<void> {
  const start = performance.now();
  return pool.request({ method: 'POST', path: t.path, headers: t.headers, body: t.body }).then(({ statusCode, body }) =>
    new Promise<void>((resolve) => {
      let first = -1;
      const bad = statusCode < 200 || statusCode >= 300;
      let errText = '';
      body.on('data', (c: Buffer) => {
        if (first < 0) first = performance.now();
        if (bad && errText.length < 300) errText += c.toString('utf8');
      });
      body.on('error', (e: Error) => { rec.errors++; rec.errorSample ??= e.message; resolve(); });
      body.on('end', () => {
        const end = performance.now();
        if (bad) {
          rec.errors++;
          rec.errorSample ??= `HTTP ${statusCode}: ${errText.slice(0, 300)}`;
        } else {
          rec.ok++;
          rec.lat.push(end - start);
          rec.ttft.push((first < 0 ? end : first) - start);
        }
        resolve();
      });
    }), (e: unknown) => {
    rec.errors++;
    rec.errorSample ??= e instanceof Error ? e.message : String(e);
  });
}

function result(job: LoadJob, rec: Recorder, durationMs: number): LoadResult {
  const r: LoadResult = {
    mode: job.mode, ok: rec.ok, errors: rec.errors, durationMs, rps: rec.ok / (durationMs / 1000),
    latency: summarise(rec.lat), ttft: summarise(rec.ttft),
  };
  if (rec.errorSample !== undefined) r.errorSample = rec.errorSample;
  if (job.mode !== 'closed' && job.keepSamples) { r.latencies = rec.lat; r.ttfts = rec.ttft; }
  return r;
}

const closedPool = (origin: string, connections: number): Pool =>
  new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });

/** C workers each send a request as soon as their previous one finished, for `ms`; returns the elapsed ms. */
async function closedRun(pool: Pool, t: LoadTarget, connections: number, ms: number, rec: Recorder): Promise<number> {
  const start = performance.now();
  const deadline = start + ms;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) await sendOne(pool, t, rec);
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return performance.now() - start;
}

export async function runClosedLoop(job: ClosedJob): Promise<LoadResult> {
  const pool = closedPool(job.origin, job.connections);
  const rec: Recorder = { lat: [], ttft: [], ok: 0, errors: 0 };
  const elapsed = await closedRun(pool, job, job.connections, job.durationMs, rec);
  await pool.close();
  return result(job, rec, elapsed);
}

export async function runSlicedLoop(job: SlicedJob): Promise<LoadResult[]> {
  const k = job.targets.length;
  const pools = job.targets.map((t) => closedPool(t.origin, job.connections));
  const recs: Recorder[] = job.targets.map(() => ({ lat: [], ttft: [], ok: 0, errors: 0 }));
  const elapsed = job.targets.map(() => 0);
  const passes = Math.max(1, Math.round(job.durationMs / job.sliceMs));
  const sliceMs = job.durationMs / passes;
  for (let pass = 0; pass < passes; pass++) {
    for (let j = 0; j < k; j++) {
      const i = (pass + (job.offset ?? 0) + j) % k;
      elapsed[i] += await closedRun(pools[i]!, job.targets[i]!, job.connections, sliceMs, recs[i]!);
    }
  }
  await Promise.all(pools.map((p) => p.close()));
  return recs.map((rec, i) => result(job, rec, elapsed[i]!));
}

/**
 * Sends at a fixed rate regardless of responses (no coordinated omission): request n is due at
 * start + n/R and goes to the target owning that instant's slice, so the targets alternate
 * every `sliceMs` and a noise burst on the shared machine spreads over all of them. A 1 ms
 * ticker fires whatever is due; latency is timed from the actual send.
 */
export async function runOpenLoop(job: OpenJob): Promise<LoadResult[]> {
  const k = job.targets.length;
  const sliceMs = job.sliceMs ?? 100;
  const pools = job.targets.map((t) => new Pool(t.origin, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 }));
  const recs: Recorder[] = job.targets.map(() => ({ lat: [], ttft: [], ok: 0, errors: 0 }));
  const total = Math.round((job.rate * k * job.durationMs) / 1000);
  const inflight = new Set<Promise<void>>();
  const start = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * job.rate) / 1000) + 1);
      while (sent < due) {
        const i = Math.floor((sent++ * 1000) / job.rate / sliceMs) % k;
        const p: Promise<void> = sendOne(pools[i]!, job.targets[i]!, recs[i]!).finally(() => inflight.delete(p));
        inflight.add(p);
      }
      if (sent >= total) { clearInterval(timer); resolve(); }
    }, 1);
  });
  await Promise.race([Promise.all(inflight), new Promise((r) => setTimeout(r, 10_000))]);
  const elapsed = performance.now() - start;
  await Promise.all(pools.map((p) => p.destroy()));
  return recs.map((rec) => result(job, rec, elapsed / k));
}

type JobMessage = { id: number; job: LoadJob };
type ResultMessage = { id: number; results?: LoadResult[]; error?: string };

/** Parent-side handle on a forked load-generator process; runs one job at a time. */
export class LoadProcess {
  #child: ChildProcess;
  #next = 1;
  #waiting = new Map<number, { resolve: (r: LoadResult[]) => void; reject: (e: Error) => void }>();

  constructor() {
    this.#child = fork(new URL(import.meta.url).pathname, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.#child.on('message', (msg: unknown) => {
      const m = msg as ResultMessage;
      const w = this.#waiting.get(m.id);
      if (!w) return;
      this.#waiting.delete(m.id);
      if (m.results) w.resolve(m.results);
      else w.reject(new Error(m.error ?? 'load generator failed'));
    });
    this.#child.on('exit', (code) => {
      for (const w of this.#waiting.values()) w.reject(new Error(`load generator exited with ${code}`));
      this.#waiting.clear();
    });
  }

  async closed(job: Omit<ClosedJob, 'mode'>): Promise<LoadResult> {
    return (await this.#run({ mode: 'closed', ...job }))[0]!;
  }

  /** One result per target, in the order given. */
  sliced(job: Omit<SlicedJob, 'mode'>): Promise<LoadResult[]> {
    return this.#run({ mode: 'sliced', ...job });
  }

  /** One result per target, in the order given. */
  open(job: Omit<OpenJob, 'mode'>): Promise<LoadResult[]> {
    return this.#run({ mode: 'open', ...job });
  }

  #run(job: LoadJob): Promise<LoadResult[]> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#child.send({ id, job } satisfies JobMessage);
    });
  }

  close(): void {
    this.#child.disconnect();
  }
}

// Child-process entry: receives jobs over IPC, answers each with its result.
if (isMainModule(import.meta.url)) {
  process.on('message', (msg: unknown) => {
    const { id, job } = msg as JobMessage;
    const run = job.mode === 'closed' ? runClosedLoop(job).then((r) => [r]) : job.mode === 'sliced' ? runSlicedLoop(job) : runOpenLoop(job);
    run.then((results) => process.send!({ id, results } satisfies ResultMessage),
      (e: unknown) => process.send!({ id, error: e instanceof Error ? e.message : String(e) } satisfies ResultMessage));
  });
  process.on('disconnect', () => process.exit(0));
}
