// What a routed request costs the main thread in process, per request: CPU (this thread only, so
// V8's GC helper threads are left out) and bytes allocated (V8's sampling heap profiler, collected
// objects included), with the top allocation sites. The request path as the HTTP layer runs it:
// RouterService.routeSliced on a short chat body (whole catalog, or three named models), the headers
// read out as routeInference sets them, and completed() (the decision writer left out: no store).
// With --baseline DIR (a checkout with node_modules linked in) the same runs on that checkout's code
// in the same process, the two taking turns, so "before" and "after" see the same machine.
// Run: node bench/router-alloc.ts [--baseline DIR] [--calls N] [--rounds R] [--top K] [--interval BYTES] [--shape catalog|named]
import { Session } from 'node:inspector/promises';
import { getHeapStatistics } from 'node:v8';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchArgs } from './lib/args.ts';
import { benchPath } from './lib/child.ts';
import { everyProviderKey } from './lib/repo-config.ts';
import { median } from './lib/stats.ts';

const { values: f } = benchArgs({ options: {
  baseline: { type: 'string' }, calls: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '5' },
  top: { type: 'string', default: '25' }, interval: { type: 'string', default: '256' }, shape: { type: 'string' },
} });

type Tree = { name: string; root: string };
const trees: Tree[] = [{ name: 'this', root: benchPath('..') }, ...(f.baseline ? [{ name: 'baseline', root: path.resolve(f.baseline) }] : [])];

type Call = (body: Record<string, unknown>) => void;

/** One checkout's router and the request path over it, built from that checkout's own modules. */
async function requestPathOf(t: Tree): Promise<Call> {
  const mod = async <T>(p: string): Promise<T> => await import(pathToFileURL(path.join(t.root, p)).href) as T;
  const { compileConfig } = await mod<typeof import('../src/config/compile.ts')>('src/config/compile.ts');
  const { loadConfig } = await mod<typeof import('../src/config/load.ts')>('src/config/load.ts');
  const { RouterService } = await mod<typeof import('../src/router/service.ts')>('src/router/service.ts');
  const { warmTokenizers } = await mod<typeof import('../src/tokens/index.ts')>('src/tokens/index.ts');
  const env = { ...process.env, ...everyProviderKey() };
  // The gateway bench's config (its policy keeps the choice on one provider), as bench/router.ts serves it.
  const cfg = compileConfig(loadConfig(path.join(t.root, 'bench/gateway.router.yaml'), env), env);
  const router = new RouterService({ sql: null, settings: () => cfg.router, isEjected: () => false });
  await warmTokenizers();
  // The response's headers as routeInference sets them (a reused list: the bench's own allocation stays out of the figures).
  const set: string[] = [];
  const res = { setHeader(k: string, v: string) { set.push(k, v); } };
  const attempts = [{ provider: 'x', model: 'y', status: 200, latencyMs: 100 }];
  const outcome = (entry: unknown) => ({ status: 200, served: entry, attempts });
  return (body) => {
    const r = router.routeSliced(cfg, body, 'openai-chat', null, '/v1/chat/completions', 'id');
    if (r instanceof Promise) throw new Error('a short prompt is routed synchronously');
    set.length = 0;
    for (const k in r.headers) res.setHeader(k, r.headers[k]!);
    router.completed('id', r, outcome(r.targets[0]!.entry) as never, '0.000012');
  };
}

const msg = [{ role: 'user', content: 'Hello, how are you today?' }];
const shapes: Record<string, () => Record<string, unknown>> = {
  catalog: () => ({ model: 'router', messages: msg }),
  named: () => ({ model: 'router', models: ['gpt-4o-mini', 'gpt-4.1-mini', 'gpt-4o'], messages: msg }),
};

/** Main-thread CPU us per call over `n` calls, and bytes allocated per call (V8's exact count, the bodies' own included). */
function perCall(call: Call, body: () => Record<string, unknown>, n: number): { cpu: number; bytes: number } {
  const a0 = getHeapStatistics().total_allocated_bytes;
  const c0 = process.threadCpuUsage();
  for (let i = 0; i < n; i++) call(body());
  const c = process.threadCpuUsage(c0);
  return { cpu: (c.user + c.system) / n, bytes: (getHeapStatistics().total_allocated_bytes - a0) / n };
}

type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] };

/** Bytes allocated per call (sampled), and the sites (function, file:line) allocating the most. */
async function allocation(s: Session, call: Call, body: () => Record<string, unknown>, n: number): Promise<{ perCall: number; sites: Array<[string, number]> }> {
  const bodies = Array.from({ length: n }, body); // made before sampling: the client's body is not the router's
  await s.post('HeapProfiler.startSampling', { samplingInterval: Number(f.interval), includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  for (let i = 0; i < n; i++) call(bodies[i]!);
  const { profile } = await s.post('HeapProfiler.stopSampling') as unknown as { profile: { head: Node } };
  const sites = new Map<string, number>();
  let total = 0;
  const where = (n: Node): string => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
  // A builtin (Map, push, entries...) is named with the function that called it.
  const walk = (node: Node, caller: string): void => {
    const here = node.callFrame.url ? where(node) : `${node.callFrame.functionName} <- ${caller}`;
    if (node.selfSize > 0) {
      sites.set(here, (sites.get(here) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const c of node.children) walk(c, node.callFrame.url ? here : caller);
  };
  walk(profile.head, '(root)');
  return { perCall: total / n, sites: [...sites].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / n]) };
}

const paths = await Promise.all(trees.map(requestPathOf));
const session = new Session();
session.connect();
const calls = Number(f.calls);
for (const [shape, body] of Object.entries(shapes)) {
  if (f.shape && f.shape !== shape) continue;
  for (const p of paths) for (let i = 0; i < 3000; i++) p(body()); // warm (JIT, caches)
  const cpu = paths.map(() => [] as number[]);
  const bytes = paths.map(() => [] as number[]);
  for (let r = 0; r < Number(f.rounds); r++) paths.forEach((p, k) => { const m = perCall(p, body, calls); cpu[k]!.push(m.cpu); bytes[k]!.push(m.bytes); });
  for (const [k, p] of paths.entries()) {
    const a = await allocation(session, p, body, Math.min(calls, 10000));
    const ratio = k > 0 ? `  (${(median(cpu[0]!) / median(cpu[k]!)).toFixed(2)}x of baseline)` : '';
    console.log(`${shape.padEnd(8)} ${trees[k]!.name.padEnd(8)} main-thread cpu ${median(cpu[k]!).toFixed(1).padStart(5)} us/request (median of ${cpu[k]!.length})${ratio}  allocated ${(median(bytes[k]!) / 1024).toFixed(2)} KB/request (sampled: ${(a.perCall / 1024).toFixed(2)} KB)`);
    if (k === 0 || Number(f.top) > 0) for (const [site, b] of a.sites.slice(0, Number(f.top))) console.log(`    ${b.toFixed(0).padStart(6)} B  ${site}`);
  }
}
session.disconnect();
