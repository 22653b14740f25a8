// CPU the router's worker spends per recorded routing decision: chunks of rows encoded as the gateway
// encodes them (decisions of real requests routed over the whole catalog by RouterService, encoded by
// the checkout's own RowEncoder), then written by the checkout's own InlineBackend.writeDecisions (what
// the gw-router worker runs per chunk: decode, serialise, INSERT, rollup cells) into a store of its
// own (a temporary SQLite file, or with --pg a PostgreSQL schema of its own, dropped at the end). Chunk
// sizes vary around --rows as the rows of a 250 ms flush do. Only the write is timed, after a full
// collection of what encoding left (the worker's heap holds only its own garbage): us per row of this
// thread's CPU (SQLite's work is synchronous on it; on PostgreSQL the server's share is not counted)
// and wall time, median over runs.
// With --baseline DIR (a checkout of another commit with node_modules linked in) the same is measured
// on that checkout's code in the same run, the two taking turns, and printed as a ratio.
// Run: node bench/router-record.ts [--rows N (per chunk, 250)] [--chunks N (per run, 40)] [--runs N (7)]
//      [--keep N|all (candidates listed per group, as router.record_candidates; default 10)] [--baseline DIR] [--pg URL (e.g. postgres://127.0.0.1:5432/test)]; for a CPU profile run it under `node --cpu-prof --cpu-prof-dir DIR` and read DIR with bench/profile-top.ts
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchArgs } from './lib/args.ts';
import v8 from 'node:v8';
import vm from 'node:vm';
import { benchPath } from './lib/child.ts';
import { everyProviderKey } from './lib/repo-config.ts';
import { median } from './lib/stats.ts';
import type { Decision } from '../src/router/decide.ts';
import type { PromptFeatures } from '../src/router/quality/index.ts';
import type { AttemptRecord, Store } from '../src/store/types.ts';
import type { RowChunk } from '../src/router/decision-row.ts';

const { values: f } = benchArgs({ options: {
  rows: { type: 'string', default: '250' }, chunks: { type: 'string', default: '40' }, runs: { type: 'string', default: '7' },
  baseline: { type: 'string' }, pg: { type: 'string' }, keep: { type: 'string' },
} });
// Candidates listed per group in each stored decision (router.record_candidates): absent, the default
// (10); a number, or 'all'. A tree before that option took a boolean there: give --keep to this tree only.
const KEEP = f.keep === undefined ? undefined : f.keep === 'all' ? Number.POSITIVE_INFINITY : Number(f.keep);
const ROWS = Number(f.rows);
const CHUNKS = Number(f.chunks);

type Tree = { name: string; root: string };
const trees: Tree[] = [{ name: 'this', root: benchPath('..') }, ...(f.baseline ? [{ name: 'baseline', root: path.resolve(f.baseline) }] : [])];
const mod = async <T>(t: Tree, p: string): Promise<T> => await import(pathToFileURL(path.join(t.root, p)).href) as T;

type Sample = { features: PromptFeatures; decision: Decision; attempts: AttemptRecord[] };

/** Decisions of varied requests routed by this checkout's RouterService over the whole catalog (with and without the bench policy). */
async function samples(): Promise<Sample[]> {
  const t = trees[0]!;
  const { compileConfig } = await mod<typeof import('../src/config/compile.ts')>(t, 'src/config/compile.ts');
  const { loadConfig } = await mod<typeof import('../src/config/load.ts')>(t, 'src/config/load.ts');
  const { RouterService } = await mod<typeof import('../src/router/service.ts')>(t, 'src/router/service.ts');
  const env = { ...process.env, ...everyProviderKey() };
  const cfg = compileConfig(loadConfig(path.join(t.root, 'bench/gateway.router.yaml'), env), env);
  const all = { ...cfg, router: { ...cfg.router, defaultPolicy: null } };
  const router = new RouterService({ sql: null, settings: () => all.router, isEjected: () => false });
  const bodies: Array<(i: number) => Record<string, unknown>> = [
    (i) => ({ model: 'router', messages: [{ role: 'user', content: `What is the capital of France? (${i})` }] }),
    (i) => ({ model: 'router', willingness_to_pay: 0.01, max_cost: 0.01, messages: [{ role: 'user', content: `${i}: ${'Summarise the following text in two sentences. '.repeat(20)}` }] }),
    (i) => ({ model: 'router', tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }], messages: [{ role: 'user', content: `Weather in Paris? (${i})` }] }),
    (i) => ({ model: 'router', messages: [{ role: 'user', content: `def f(x): return x + ${i}  # fix the bug` }] }),
  ];
  const out: Sample[] = [];
  for (let i = 0; i < 200; i++) {
    const r = router.route(i % 3 === 0 ? cfg : all, bodies[i % bodies.length]!(i), 'openai-chat', null, '/v1/chat/completions', `s${i}`);
    const first = r.decision.plan[0]?.candidate.id ?? 'x/y';
    // Mostly one attempt; some fallbacks after an upstream error.
    const attempts: AttemptRecord[] = i % 7 === 0
      ? [{ provider: first.split('/')[0]!, model: first, status: 503, error: 'upstream returned 503', latencyMs: 120 + i }, { provider: 'openai', model: 'openai/gpt-4o-mini', status: 200, error: null, latencyMs: 340 }]
      : [{ provider: first.split('/')[0]!, model: first, status: 200, error: null, latencyMs: 200 + i }];
    out.push({ features: r.view.features, decision: r.decision, attempts });
  }
  await router.close();
  return out;
}

type Side = { tree: Tree; store: Store; write: (c: RowChunk) => Promise<void>; encode: () => InstanceType<typeof import('../src/router/decision-row.ts').RowEncoder>; cpu: number[]; wall: number[]; close(): Promise<void> };

async function side(t: Tree, k: number): Promise<Side> {
  const { openStore } = await mod<typeof import('../src/store/open.ts')>(t, 'src/store/open.ts');
  const { InlineBackend } = await mod<typeof import('../src/router/backend.ts')>(t, 'src/router/backend.ts');
  const { RowEncoder } = await mod<typeof import('../src/router/decision-row.ts')>(t, 'src/router/decision-row.ts');
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-rrec-'));
  const schema = `bench_rrec_${process.pid}_${k}`;
  const store = await openStore(f.pg ? { sqlitePath: '', databaseUrl: f.pg, pgSchema: schema } : { sqlitePath: path.join(dir, 'gw.db') });
  const backend = new InlineBackend(store.sql);
  return {
    tree: t, store, write: (c) => backend.writeDecisions(c), encode: () => new RowEncoder(), cpu: [], wall: [],
    close: async () => {
      if (f.pg) await store.sql.run(`DROP SCHEMA ${schema} CASCADE`);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** This thread's CPU time in us: the scheduler's nanosecond count where Linux gives it (getrusage counts in ticks of 1-10 ms). */
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const cpuNow = (): number => {
  try { return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1000; } catch { const c = process.threadCpuUsage(); return c.user + c.system; }
};

const data = await samples();
const sides = await Promise.all(trees.map(side));
console.log(`${data.length} routed decisions (whole catalog, ${data[0]!.decision.candidates} candidates), ${CHUNKS} chunks of about ${ROWS} rows per run, ${f.pg ? 'PostgreSQL' : 'SQLite'}`);
let seq = 0;
const hour0 = Date.UTC(2026, 10, 28, 9, 50);
const runs = Number(f.runs);
for (let run = -1; run < runs; run++) { // run -1 warms up
  // The checkouts take turns, the order alternating, so a slow phase of the machine falls on both.
  for (const s of run % 2 ? sides : [...sides].reverse()) {
    const chunks: RowChunk[] = [];
    let rows = 0;
    for (let c = 0; c < CHUNKS; c++) {
      const enc = s.encode();
      const size = Math.round(ROWS * (0.6 + 0.8 * ((c * 7 + run) % 11) / 10)); // 0.6x to 1.4x, the same for both checkouts
      rows += size;
      for (let i = 0; i < size; i++) {
        const x = data[seq % data.length]!;
        const at = hour0 + (seq % 40_000) * 37; // ~25 min of rows: an hour boundary within
        enc.add({
          inferenceId: `r${seq}`, createdAt: new Date(at).toISOString(), keyId: seq % 5 === 0 ? null : `key-${seq % 4}`,
          servedModel: x.decision.chosen?.id ?? null, canonical: x.decision.chosen?.canonical ?? null, kind: x.features.kind,
          status: seq % 23 === 0 ? 502 : 200, costUsd: seq % 23 === 0 ? '0' : `0.000${(seq * 7919) % 100000}`,
        }, x.features, x.decision, x.attempts, KEEP);
        seq++;
      }
      chunks.push(structuredClone(enc.seal())); // as piscina posts it (a copy before 2026-11-30; shared memory since)
    }
    gc();
    const c0 = cpuNow(); const t0 = performance.now();
    for (const c of chunks) await s.write(c);
    const cpu = (cpuNow() - c0) / rows; const wall = ((performance.now() - t0) * 1000) / rows;
    if (run >= 0) { s.cpu.push(cpu); s.wall.push(wall); }
  }
}
const base = sides[1];
for (const s of sides) {
  const ratio = base && s !== base ? `  (CPU ${(median(base.cpu) / median(s.cpu)).toFixed(2)}x less than baseline, wall ${(median(base.wall) / median(s.wall)).toFixed(2)}x)` : '';
  console.log(`${s.tree.name.padEnd(8)} write per row: thread CPU median ${median(s.cpu).toFixed(1)} us (min ${Math.min(...s.cpu).toFixed(1)}), wall median ${median(s.wall).toFixed(1)} us over ${s.cpu.length} runs${ratio}`);
}
for (const s of sides) await s.close();
