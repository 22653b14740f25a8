// Speed of the quality model on the request path: feature extraction per prompt (typical, short and
// 16k-character prompts) against JSON.parse of the same request body in the same run (the gateway
// parses every body anyway, and the ratio survives a noisy shared machine), and predict over a
// catalog of candidates (300 by default), with and without the local correction in the same run.
//   node bench/router-quality-speed.ts [--data FILE] [--candidates 300] [--rounds 7]
import { readFileSync } from 'node:fs';
import { benchArgs } from './lib/args.ts';
import { TUNING } from '../src/router/quality/tuning.ts';
import { extractPromptFeatures, predict, train, type ModelRef, type Outcome, type PromptFeatures } from '../src/router/quality/index.ts';

const { values: a } = benchArgs({ options: {
  data: { type: 'string', default: new URL('../../shared/router-bench/routerbench-dev.jsonl', import.meta.url).pathname },
  candidates: { type: 'string', default: '300' },
  rounds: { type: 'string', default: '7' },
} });

// ---- data ----
type Row = { prompt: string; outcomes: Record<string, { score: number; cost_usd: number }> };
const rows = readFileSync(a.data!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Row);
// Short prompts: the first 200 characters of each dev prompt; long: 16,000 characters made of consecutive dev prompts.
const sets: Array<{ name: string; prompts: string[] }> = [
  { name: 'typical (dev prompts)', prompts: rows.map((r) => r.prompt) },
  { name: 'short (200 chars)', prompts: rows.map((r) => r.prompt.slice(0, 200)) },
  { name: 'long (16,000 chars)', prompts: Array.from({ length: 200 }, (_, i) => {
    let s = '';
    for (let j = i % rows.length; s.length < 16_000; j = (j + 1) % rows.length) s += rows[j]!.prompt + '\n\n';
    return s.slice(0, 16_000);
  }) },
];
const feats: PromptFeatures[] = rows.map((r) => extractPromptFeatures({ turns: [r.prompt] }));
const outcomes: Outcome[] = rows.flatMap((r, i) => Object.entries(r.outcomes).map(([model, o]) => ({ features: feats[i]!, model, score: o.score, costUsd: o.cost_usd, time: 0 })));
const state = train(outcomes);
const learned = Object.keys(state.models);
const n = Number(a.candidates);
// The learned models plus unseen catalog-like models (cold-start prior path), built once like the router's candidates.
const refs: ModelRef[] = Array.from({ length: n }, (_, i) => i < learned.length
  ? { id: learned[i]! }
  : { id: `provider-${i % 17}/model-${i}`, family: `family-${i % 40}`, maker: `maker-${i % 17}`, pricePerMillion: 0.05 * (1 + (i % 60)) });

const median = (xs: number[]) => xs.slice().sort((x, y) => x - y)[xs.length >> 1]!;
const pct = (xs: number[], p: number) => xs.slice().sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
let sink = 0;
/**
 * CPU microseconds of this process per call of fn over the items, repeated `reps` times (a pass of
 * about 40 ms: CPU time, not wall-clock, so preemption on a shared machine does not count).
 */
function usPer<T>(items: readonly T[], fn: (x: T) => number, reps: number): number {
  const c = process.cpuUsage();
  for (let r = 0; r < reps; r++) for (const x of items) sink += fn(x);
  const d = process.cpuUsage(c);
  return (d.user + d.system) / (items.length * reps);
}

const rounds = Number(a.rounds);
console.log(`${rows.length} dev prompts (mean ${(rows.reduce((s, r) => s + r.prompt.length, 0) / rows.length).toFixed(0)} chars); CPU per call: the least and the median of ${rounds} interleaved passes of ~40 ms`);
for (const set of sets) {
  const bodies = set.prompts.map((p) => JSON.stringify({ model: 'router', messages: [{ role: 'user', content: p }] }));
  const parseFn = (b: string) => (JSON.parse(b) as { model: string }).model.length;
  const extractFn = (p: string) => extractPromptFeatures({ turns: [p] }).idx.length;
  const reps = Math.max(1, Math.round(40_000 / (usPer(set.prompts, extractFn, 1) * set.prompts.length)));
  usPer(bodies, parseFn, 1);
  const r = { parse: [] as number[], now: [] as number[] };
  for (let k = 0; k < rounds; k++) { r.parse.push(usPer(bodies, parseFn, reps)); r.now.push(usPer(set.prompts, extractFn, reps)); }
  const min = (xs: number[]) => Math.min(...xs);
  console.log(`${set.name.padEnd(22)} extract ${min(r.now).toFixed(1).padStart(6)} us (median ${median(r.now).toFixed(1)})  JSON.parse ${min(r.parse).toFixed(1).padStart(5)} us (median ${median(r.parse).toFixed(1)})  extract / parse ${(min(r.now) / min(r.parse)).toFixed(1)}x`);
}

// predict: wall-clock per call (p50/p99 over every prompt of the timed rounds) and CPU per call,
// with the local correction (TUNING.neighbours) on and off in alternate passes of the same run.
const local = TUNING.neighbours;
const timing = new Map<string, { wall: number[]; cpu: number[] }>([['with the local correction', { wall: [], cpu: [] }], ['without it', { wall: [], cpu: [] }]]);
for (let k = 0; k <= rounds; k++) {
  for (const [name, t] of timing) {
    TUNING.neighbours = name === 'without it' ? 0 : local;
    const c = process.cpuUsage();
    for (const f of feats) {
      const t0 = process.hrtime.bigint();
      sink += predict(state, f, refs)[0]!.q;
      if (k > 0) t.wall.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
    const d = process.cpuUsage(c);
    if (k > 0) t.cpu.push((d.user + d.system) / feats.length);
  }
}
TUNING.neighbours = local;
for (const [name, t] of timing) {
  console.log(`predict over ${n} candidates (${learned.length} learned), ${name.padEnd(25)}: p50 ${pct(t.wall, 0.5).toFixed(1)} us  p99 ${pct(t.wall, 0.99).toFixed(1)} us  CPU ${median(t.cpu).toFixed(1)} us a call (${((median(t.cpu) * 1000) / n).toFixed(0)} ns per candidate)`);
}
if (sink === 0) console.log('');
