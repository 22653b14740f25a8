// Inline vs worker-pool conversion of inference bodies, to place workers.convert_threshold_bytes.
// Run: node_modules/.bin/node bench/convert-threshold.ts  (prints a table and the crossover)
//      [--sizes 1,4,16,...] body sizes in KiB; [--reps N] runs per size instead of 200/40/15 by size
//
// The body is an OpenAI chat request translated for an Anthropic model of the real catalog
// (gateway.yaml + providers/), the common translated path. "event-loop ms" is the main thread's
// CPU time for one request: the whole parse + validate + convert + serialise inline; for the pool,
// the dispatch (with the per-config target table), the transfers and the answer's handling.
// "wall ms" is the latency of one conversion; "x8" is 8 conversions started together.
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchArgs } from './lib/args.ts';
import { compileConfig } from '../src/config/compile.ts';
import { loadConfig } from '../src/config/load.ts';
import { createConvertPool, targetOf } from '../src/engine/convert-pool.ts';
import { encodeForTarget, parseAndValidate } from '../src/workers/convert-core.ts';
import { median } from './lib/stats.ts';
import { concurrentMs, syncMs } from './lib/timing.ts';

const { values: o } = benchArgs({ options: { sizes: { type: 'string', default: '1,4,16,64,128,256,512,1024,2048,4096,8192' }, reps: { type: 'string' } } });
const SIZES = o.sizes.split(',').map((k) => Number(k) * 1024);
const CONCURRENT = 8;
/** An event-loop stall shorter than this is not worth a thread hop (same rule as bench/feedback-flatten.ts). */
const STALL_MS = 1;

const cfg = compileConfig(loadConfig(fileURLToPath(new URL('../gateway.yaml', import.meta.url))));
const entry = [...cfg.models.values()].find((e) => e.provider.format === 'anthropic-messages');
if (!entry) throw new Error('the catalog has no anthropic-messages model');

/** A chat request of about `bytes` bytes: a system prompt, many turns with tool calls, tools. */
function body(bytes: number): Buffer {
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful assistant. Answer briefly.' }];
  const para = 'The travellers compared notes on the weather, the trains and the food in each city they visited. ';
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const text = `${i}: ${para.repeat(1 + (i % 4))}`;
    if (i % 6 === 5) {
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'get_weather', arguments: `{"city":"Paris ${i}"}` } }] });
      messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: `sunny, ${i % 30} degrees` });
    } else messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: text });
    size += text.length + 60;
  }
  if ((messages.at(-1) as { role: string }).role !== 'user') messages.push({ role: 'user', content: 'And tomorrow?' });
  return Buffer.from(JSON.stringify({ model: entry!.id, max_tokens: 512, temperature: 0.7, tools, messages }));
}

const cpuMs = (): number => { const u = process.threadCpuUsage(); return (u.user + u.system) / 1000; };

function inline(buf: Buffer): Buffer {
  const b = parseAndValidate(buf, 'openai-chat', cfg.server.jsonMaxDepth);
  const enc = encodeForTarget('openai-chat', b, { value: null }, targetOf(entry!), entry!.provider.mapping);
  return Buffer.from(JSON.stringify(enc.body));
}

const threads = Math.max(1, availableParallelism());
const pool = createConvertPool({ threads });
async function pooled(buf: Buffer): Promise<Buffer> {
  const p = await pool.prepare(buf, 'openai-chat', cfg);
  return (await p.encodeFor(entry!)).body;
}

/** Median wall ms and median main-thread CPU ms of one awaited run (the loop is idle while the worker works). */
async function asyncMs(run: () => Promise<unknown>, reps: number): Promise<{ wall: number; main: number }> {
  for (let i = 0; i < 3; i++) await run();
  const wall: number[] = []; const main: number[] = [];
  for (let i = 0; i < reps; i++) {
    const c0 = cpuMs(); const t0 = performance.now();
    await run();
    wall.push(performance.now() - t0); main.push(cpuMs() - c0);
  }
  return { wall: median(wall), main: median(main) };
}

// Same bytes both ways, or the comparison means nothing.
{
  const b = body(64 * 1024);
  if (!inline(b).equals(await pooled(b))) throw new Error('pool and inline conversions differ');
}

console.log(`Node ${process.version}, ${threads} CPU(s), pool of ${threads} worker(s), ${cfg.models.size} models in the target table; target ${entry.id}; medians in ms`);
console.log('  body  |  event-loop ms   |     wall ms      | x8 concurrent wall ms');
console.log('        | inline     pool  | inline     pool  | inline     pool');
const rows: Array<{ bytes: number; inlineMain: number; poolMain: number }> = [];
for (const size of SIZES) {
  const buf = body(size);
  const reps = o.reps ? Number(o.reps) : size >= 2 << 20 ? 15 : size >= 256 << 10 ? 40 : 200;
  const inlineMain = syncMs(() => inline(buf), reps);
  // The pool takes ownership of (transfers) each buffer, so every run gets its own copy, made
  // outside the measured section: a server hands the pool the request's own buffer.
  const copy = (): Buffer => Buffer.from(new Uint8Array(buf));
  const copies = Array.from({ length: reps + 3 }, copy);
  const p = await asyncMs(() => pooled(copies.pop()!), reps);
  const inlineX8 = await concurrentMs(async () => inline(buf), Math.max(5, reps >> 3), CONCURRENT);
  const poolX8 = await concurrentMs(() => pooled(copy()), Math.max(5, reps >> 3), CONCURRENT);
  rows.push({ bytes: buf.length, inlineMain, poolMain: p.main });
  const f = (x: number, w: number, d = 3) => x.toFixed(d).padStart(w);
  const kb = buf.length >= 1 << 20 ? `${(buf.length / (1 << 20)).toFixed(1)}M` : `${Math.round(buf.length / 1024)}K`;
  console.log(`${kb.padStart(7)} | ${f(inlineMain, 6)} ${f(p.main, 8)}  | ${f(inlineMain, 6)} ${f(p.wall, 8)}  | ${f(inlineX8, 7, 2)} ${f(poolX8, 8, 2)}`);
}
await pool.close();

// Crossover: the smallest body whose inline conversion stalls the event loop for STALL_MS or more
// while the pool keeps at least half of that work off it, for that size and every larger one.
const idx = rows.findIndex((_, i) => rows.slice(i).every((x) => x.inlineMain >= STALL_MS && x.poolMain <= x.inlineMain / 2));
const cheaper = rows.find((r) => r.poolMain < r.inlineMain);
console.log(cheaper ? `pool cheaper for the event loop from ~${Math.round(cheaper.bytes / 1024)} KiB` : 'pool never cheaper for the event loop in the measured sizes');
if (idx < 0) console.log('crossover: none in the measured sizes (keep convert_threshold_bytes above the largest body)');
else {
  // Where inline time reaches STALL_MS, interpolated between the two measured sizes around it, rounded up to 16 KiB.
  const hi = rows[idx]!; const lo = rows[idx - 1];
  const at = lo ? lo.bytes + (hi.bytes - lo.bytes) * (STALL_MS - lo.inlineMain) / (hi.inlineMain - lo.inlineMain) : hi.bytes;
  const threshold = Math.ceil(Math.max(lo?.bytes ?? 0, at) / 16384) * 16384;
  console.log(`crossover: inline conversion stalls the loop ${STALL_MS} ms at ~${Math.round(at / 1024)} KiB (measured ${Math.round(hi.bytes / 1024)} KiB) -> convert_threshold_bytes ≈ ${threshold}`);
}
