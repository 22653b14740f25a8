// How long a config reload stalls the event loop that serves requests, with the repository's own config
// (gateway.yaml, providers/*.yaml and their catalogs) under a steady trickle of requests. Alternates
// the two ways of reloading in one run: "inline" reads, parses, validates and compiles on the main thread
// (what a reload did before); "threaded" is ConfigHolder.reload(): read/parse/validate on the loader
// thread, compile here. Prints the longest event-loop delay per reload (the larger of
// monitorEventLoopDelay's max and the longest gap of a 1 ms ticker), the medians, and their ratio.
//   node_modules/.bin/node bench/reload-stall.ts [--rounds 8]
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../src/config/load.ts';
import { startGateway } from '../src/serve.ts';
import { copyRepoConfig } from './lib/repo-config.ts';

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 8;
const copy = copyRepoConfig();
const { file, env } = copy;
const gw = await startGateway(file, env);
const holder = gw.services.holder;

// A steady trickle of cheap requests, so the loop has work to be late for.
let stop = false;
const load = Array.from({ length: 4 }, async () => { while (!stop) await (await fetch(`${gw.url}/health`)).arrayBuffer(); });

const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
const results = { inline: [] as number[], threaded: [] as number[] };
const took_ = { inline: [] as number[], threaded: [] as number[] };
// A 1 ms ticker as a second witness: its longest gap is the longest time the loop could not run a timer.
let gap = 0;
let last = performance.now();
const ticker = setInterval(() => { const now = performance.now(); gap = Math.max(gap, now - last); last = now; }, 1);
const touch = copy.touch;
await holder.reload(); // warm the loader thread (ajv compiles its schemas once per thread)
for (let i = 0; i < rounds; i++) {
  for (const way of (i % 2 ? ['threaded', 'inline'] : ['inline', 'threaded']) as Array<'inline' | 'threaded'>) {
    touch();
    await new Promise((r) => setTimeout(r, 50));
    h.reset();
    gap = 0; last = performance.now();
    const t0 = performance.now();
    const r = way === 'inline' ? holder.apply(loadConfig(file, env)) : await holder.reload();
    const took = performance.now() - t0;
    if (!r.ok || !r.changed) throw new Error(`reload ${way} did not apply: ${JSON.stringify(r)}`);
    await new Promise((x) => setTimeout(x, 20));
    results[way].push(Math.max(h.max / 1e6, gap));
    took_[way].push(took);
  }
}
stop = true;
clearInterval(ticker);
await Promise.all(load);
await gw.stop();
copy.remove();
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const [k, v] of Object.entries(results)) {
  console.log(`${k.padEnd(8)} longest event-loop delay per reload (ms): ${v.map((x) => x.toFixed(0)).join(' ')}; median ${median(v).toFixed(0)}; reload took (ms, wall) median ${median(took_[k as 'inline']).toFixed(0)}`);
}
console.log(`ratio threaded/inline (medians): ${(median(results.threaded) / median(results.inline)).toFixed(2)}`);
process.exit(0);
