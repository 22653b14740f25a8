// Bytes the gateway's main thread allocates per request, pass-through against router mode (whole
// catalog, three named models), read off V8's --trace-gc lines: between two young-generation
// collections the heap grows by what was allocated, so the sum of (heap before a collection - heap
// after the previous one) over the run, divided by the requests served, is the allocation per request
// (objects allocated straight into the old generation show up the same way; the resolution is one
// young generation, so runs need a few collections). Main isolate only; with --baseline DIR the same
// on that checkout, the two taking turns.
// Run: node bench/router-gc.ts [--baseline DIR] [--seconds S] [--rounds R] [--connections C] [--verbose]
import path from 'node:path';
import { benchArgs } from './lib/args.ts';
import { benchPath, forkServer, stopChild } from './lib/child.ts';
import { startGateway } from './lib/gateway.ts';
import { LoadProcess } from './lib/load.ts';
import { everyProviderKey } from './lib/repo-config.ts';
import { median } from './lib/stats.ts';

const { values: f } = benchArgs({ options: {
  baseline: { type: 'string' }, seconds: { type: 'string', default: '4' }, rounds: { type: 'string', default: '3' }, connections: { type: 'string', default: '16' }, verbose: { type: 'boolean', default: false },
} });
const trees = [{ name: 'this', root: benchPath('..') }, ...(f.baseline ? [{ name: 'baseline', root: path.resolve(f.baseline) }] : [])];
const msg = [{ role: 'user', content: 'Hello, how are you today?' }];
const kinds = {
  'pass-through': { model: 'openai/gpt-4o-mini', messages: msg },
  'router (catalog)': { model: 'router', messages: msg },
  'router (3 named)': { model: 'router', models: ['gpt-4o-mini', 'gpt-4.1-mini', 'gpt-4o'], messages: msg },
};
const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };

const GC_LINE = /^\[\d+:(0x[0-9a-f]+)\][^\]]*?\s(?:Scavenge|Mark-Compact|Minor Mark-Sweep|Mark-Sweep)[^\d]*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/;

/**
 * MB the main isolate allocated between its collections in log[from...]: `[pid:isolate] ... Scavenge
 * A (B) -> C (D) MB` lines. The main isolate is told apart by its address: created on the main
 * thread, it comes from the process heap, below the workers' thread arenas (glibc's layout: a
 * heuristic, which the per-isolate counts printed with --verbose let one check).
 */
function allocatedMb(log: string, from: number): number {
  const lines = log.split('\n');
  const isolates = new Map<string, number>();
  for (const line of lines) { const m = GC_LINE.exec(line); if (m) isolates.set(m[1]!, (isolates.get(m[1]!) ?? 0) + 1); }
  if (f.verbose) console.log('  collections per isolate:', Object.fromEntries(isolates));
  const main = [...isolates.keys()].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))[0];
  let after: number | null = null, sum = 0, at = 0, counted = 0;
  for (const line of lines) {
    const lineAt = at;
    at += line.length + 1;
    const m = GC_LINE.exec(line);
    if (!m || m[1] !== main) continue;
    if (after !== null && lineAt >= from) { sum += Math.max(0, Number(m[2]) - after); counted++; }
    after = Number(m[3]);
  }
  // No collection in the window reads nothing, not "nothing allocated": NaN, printed as such.
  return counted > 0 ? sum : NaN;
}

const upstream = await forkServer(benchPath('lib/upstream.ts'));
const origin = `http://127.0.0.1:${upstream.port}`;
const load = new LoadProcess();
const per = new Map<string, number[]>();
try {
  for (let r = 0; r < Number(f.rounds); r++) {
    for (const [kind, body] of Object.entries(kinds)) {
      for (const tree of trees) {
        const gw = await startGateway({ config: path.join(tree.root, 'bench/gateway.router.yaml'), upstream: origin, withKey: false, repo: tree.root, env: everyProviderKey(), nodeFlags: ['--trace-gc'] });
        let log = '';
        gw.child.stdout!.on('data', (c: Buffer) => { log += c.toString('utf8'); });
        const t = { origin: gw.origin, path: '/v1/chat/completions', headers, body: JSON.stringify(body) };
        await load.closed({ ...t, connections: Number(f.connections), durationMs: 1500 }); // warm (JIT, caches)
        const from = log.length;
        const res = await load.closed({ ...t, connections: Number(f.connections), durationMs: Number(f.seconds) * 1000 });
        const kb = (allocatedMb(log, from) * 1024 * 1024) / res.ok / 1024;
        await stopChild(gw.child);
        const k = `${tree.name}\t${kind}`;
        per.set(k, [...(per.get(k) ?? []), kb]);
        console.log(`round ${r + 1} ${tree.name.padEnd(8)} ${kind.padEnd(17)} ${res.ok} requests (${res.errors} errors): ${Number.isFinite(kb) ? `${kb.toFixed(1)} KB allocated per request` : 'no collection in the window to read (run longer)'}`);
      }
    }
  }
} finally {
  load.close();
  await stopChild(upstream.child);
}
for (const [k, v] of per) { const [tree, kind] = k.split('\t'); console.log(`${tree!.padEnd(8)} ${kind!.padEnd(17)} median ${median(v.filter(Number.isFinite)).toFixed(1)} KB allocated per request (main thread, ${v.filter(Number.isFinite).length} of ${v.length} rounds had a collection to read)`); }
