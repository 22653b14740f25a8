// Speed of the quality model on the request path: feature extraction per prompt and predict over
// a whole catalog of candidates, against JSON.parse of the same request body in the same run (the
// gateway parses every body anyway), so the ratio survives a noisy shared machine.
//   node bench/router-quality-speed.ts [--data FILE] [--candidates 700] [--rounds 5]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { extractPromptFeatures, predict, train, type ModelRef, type Outcome, type PromptFeatures } from '../src/router/quality/index.ts';

const { values: a } = parseArgs({ options: {
  data: { type: 'string', default: '../shared/router-bench/routerbench-dev.jsonl' },
  candidates: { type: 'string', default: '700' },
  rounds: { type: 'string', default: '5' },
} });

type Row = { prompt: string; outcomes: Record<string, { score: number; cost_usd: number }> };
const rows = readFileSync(a.data!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Row);
const bodies = rows.map((r) => JSON.stringify({ model: 'router', messages: [{ role: 'user', content: r.prompt }] }));
const feats: PromptFeatures[] = rows.map((r) => extractPromptFeatures({ turns: [r.prompt] }));
const outcomes: Outcome[] = rows.flatMap((r, i) => Object.entries(r.outcomes).map(([model, o]) => ({ features: feats[i]!, model, score: o.score, costUsd: o.cost_usd, time: 0 })));
const state = train(outcomes);
const learned = Object.keys(state.models);
const n = Number(a.candidates);
// The learned models plus unseen catalog-like models (cold-start prior path), built once like the router's candidates.
const refs: ModelRef[] = Array.from({ length: n }, (_, i) => i < learned.length
  ? { id: learned[i]! }
  : { id: `provider-${i % 17}/model-${i}`, family: `family-${i % 40}`, maker: `maker-${i % 17}`, pricePerMillion: 0.05 * (1 + (i % 60)) });

const pct = (xs: number[], p: number) => xs.slice().sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const ext: number[] = [], parse: number[] = [], pred: number[] = [];
const cpu = { parse: 0, ext: 0, pred: 0 };
let sink = 0;
// CPU time per phase over whole passes (wall-clock percentiles include preemption on a busy machine).
function cpuPass(): void {
  let c = process.cpuUsage();
  for (const b of bodies) JSON.parse(b);
  let d = process.cpuUsage(c); cpu.parse += d.user + d.system; c = process.cpuUsage();
  for (const r of rows) extractPromptFeatures({ turns: [r.prompt] });
  d = process.cpuUsage(c); cpu.ext += d.user + d.system; c = process.cpuUsage();
  for (const f of feats) sink += predict(state, f, refs)[0]!.q;
  d = process.cpuUsage(c); cpu.pred += d.user + d.system;
}
for (let round = 0; round < Number(a.rounds); round++) {
  for (let i = 0; i < rows.length; i++) {
    let t = process.hrtime.bigint();
    const body = JSON.parse(bodies[i]!) as { messages: Array<{ content: string }> };
    const t1 = process.hrtime.bigint();
    const f = extractPromptFeatures({ turns: [body.messages[0]!.content] });
    const t2 = process.hrtime.bigint();
    const e = predict(state, f, refs);
    const t3 = process.hrtime.bigint();
    sink += e[0]!.q + f.idx.length;
    if (round > 0) { parse.push(Number(t1 - t) / 1e3); ext.push(Number(t2 - t1) / 1e3); pred.push(Number(t3 - t2) / 1e3); }
    t = t3;
  }
}
for (let round = 0; round < Number(a.rounds); round++) cpuPass();
const per = (x: number) => x / (rows.length * Number(a.rounds));
const chars = rows.reduce((s, r) => s + r.prompt.length, 0) / rows.length;
console.log(`${rows.length} prompts (mean ${chars.toFixed(0)} chars), ${n} candidates (${learned.length} learned), ${Number(a.rounds) - 1} timed rounds`);
console.log(`JSON.parse of the request body  p50 ${pct(parse, 0.5).toFixed(1)} us  p99 ${pct(parse, 0.99).toFixed(1)} us`);
console.log(`extractPromptFeatures           p50 ${pct(ext, 0.5).toFixed(1)} us  p99 ${pct(ext, 0.99).toFixed(1)} us  (${(pct(ext, 0.5) / pct(parse, 0.5)).toFixed(1)}x the parse)`);
console.log(`predict over ${n} candidates      p50 ${pct(pred, 0.5).toFixed(1)} us  p99 ${pct(pred, 0.99).toFixed(1)} us  (${((pct(pred, 0.5) * 1000) / n).toFixed(0)} ns per candidate at p50)`);
console.log(`CPU per call (mean of ${a.rounds} passes): JSON.parse ${per(cpu.parse).toFixed(1)} us, extract ${per(cpu.ext).toFixed(1)} us (${(cpu.ext / cpu.parse).toFixed(1)}x), predict ${per(cpu.pred).toFixed(1)} us (${((per(cpu.pred) * 1000) / n).toFixed(0)} ns per candidate)`);
if (sink === 0) console.log('');
