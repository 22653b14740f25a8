// Main-thread cost of adopting a new learned state (what every replica pays once per new version):
// receiving it (the worker's message deserialised, or the store's JSON parsed) and building the
// predictor's tables (prepareState), for the full state against the packed one (src/router/quality/
// portable.ts: stored prompts left in the worker, their index built there and transferred). All
// forms interleaved in the same run; medians of wall time. Predictions of both are compared.
// Then the same state through the router's backends on a SQLite store in a temporary directory: the
// longest event-loop gap (a 1 ms timer's lateness) while the worker backend's load delivers it, and
// while the inline one (workers.threads 0) reads and parses it on the main thread.
//   node bench/router-quality-adopt.ts [--data FILE] [--rounds 15]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './lib/args.ts';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { readBench } from '../src/router/bench/data.ts';
import { trainFromRows } from '../src/router/bench/evaluate.ts';
import { InlineBackend, WorkerBackend, type RouterBackend } from '../src/router/backend.ts';
import { saveState } from '../src/router/store.ts';
import { emptyStored } from '../src/router/train-pass.ts';
import { openStore } from '../src/store/open.ts';
import { packState, predict, prepareState, type QualityState } from '../src/router/quality/index.ts';

const { values: a } = benchArgs({ options: {
  data: { type: 'string', default: new URL('../../shared/router-bench/routerbench-dev.jsonl', import.meta.url).pathname },
  rounds: { type: 'string', default: '15' },
} });
const rows = readBench(a.data!);
const full = trainFromRows(rows);
const json = JSON.stringify(full);
const { port1, port2 } = new MessageChannel();

type Timing = Record<string, number[]>;
const t: Timing = {};
const time = <T>(name: string, f: () => T): T => { const t0 = performance.now(); const r = f(); (t[name] ??= []).push(performance.now() - t0); return r; };
const receive = (): QualityState => (receiveMessageOnPort(port2)!.message as QualityState);

let packed: QualityState | undefined;
for (let r = 0; r < Number(a.rounds); r++) {
  // Before: the full state from the worker (structured clone) or from the store (JSON).
  time('full: worker posts (worker thread)', () => port1.postMessage(full));
  const cloned = time('full: message deserialised (main)', receive);
  time('full: prepareState (main)', () => prepareState(cloned));
  const parsed = time('full: JSON.parse of the stored row (main)', () => JSON.parse(json) as QualityState);
  time('full parsed: prepareState (main)', () => prepareState(parsed));
  // After: packed in the worker, index buffers transferred.
  const p = time('packed: packState (worker thread)', () => packState(full));
  time('packed: worker posts, transfer (worker thread)', () => port1.postMessage(p.state, p.transfer));
  packed = time('packed: message deserialised (main)', receive);
  time('packed: prepareState (main)', () => prepareState(packed!));
}
port1.close();

const median = (xs: number[]) => xs.slice().sort((x, y) => x - y)[xs.length >> 1]!;
console.log(`state trained on ${rows.length} prompts: ${(json.length / 1e6).toFixed(2)} MB of JSON; without the stored prompts ${(JSON.stringify({ ...full, learned: { ...full.learned, exemplars: [] } }).length / 1e6).toFixed(2)} MB`);
for (const [name, xs] of Object.entries(t)) console.log(`${name.padEnd(50)} ${median(xs).toFixed(2).padStart(7)} ms (min ${Math.min(...xs).toFixed(2)}, max ${Math.max(...xs).toFixed(2)})`);
const m = (k: string) => median(t[k]!);
const before = m('full: message deserialised (main)') + m('full: prepareState (main)');
const beforeJson = m('full: JSON.parse of the stored row (main)') + m('full parsed: prepareState (main)');
const after = m('packed: message deserialised (main)') + m('packed: prepareState (main)');
console.log(`main thread to adopt: full from the worker ${before.toFixed(2)} ms, full from JSON ${beforeJson.toFixed(2)} ms, packed ${after.toFixed(2)} ms (${(after / before).toFixed(3)}x of the worker's full state)`);

// Same predictions from the full and the packed state (every dev prompt, every model).
const models = Object.keys(full.models);
let maxDiff = 0;
for (const row of rows) {
  const x = predict(full, row.features, models, { priors: null }), y = predict(packed!, row.features, models, { priors: null });
  for (let i = 0; i < x.length; i++) maxDiff = Math.max(maxDiff, Math.abs(x[i]!.q - y[i]!.q));
}
console.log(`largest |q(full) - q(packed)| over ${rows.length} prompts x ${models.length} models: ${maxDiff}`);

// Through the backends: the longest gap of a 1 ms ticker while load() runs (includes adopting: prepareState).
const dir = mkdtempSync(join(tmpdir(), 'gw-adopt-'));
const opts = { sqlitePath: join(dir, 'r.db') };
const store = await openStore(opts);
await saveState(store.sql, { ...emptyStored(), version: 1, quality: full });
const worker = new WorkerBackend(opts), inline = new InlineBackend(store.sql);
async function gap(b: RouterBackend): Promise<number> {
  let last = performance.now(), worst = 0;
  const tick = setInterval(() => { const n = performance.now(); worst = Math.max(worst, n - last); last = n; }, 1);
  await new Promise((res) => setTimeout(res, 20));
  worst = 0; last = performance.now();
  const s = await b.load(0);
  prepareState(s!.quality);
  await new Promise((res) => setTimeout(res, 5));
  clearInterval(tick);
  return worst;
}
const gaps: Record<string, number[]> = { 'worker backend (packed)': [], 'inline backend (JSON.parse)': [] };
await gap(worker); // the worker's first load opens its store and reads the row
for (let r = 0; r < Math.min(9, Number(a.rounds)); r++) {
  gaps['worker backend (packed)']!.push(await gap(worker));
  gaps['inline backend (JSON.parse)']!.push(await gap(inline));
}
for (const [name, xs] of Object.entries(gaps)) console.log(`longest event-loop gap while loading, ${name.padEnd(28)} median ${median(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`);
await worker.close(); await store.close();
rmSync(dir, { recursive: true, force: true });
