// Router speed: (1) one routing decision over the whole catalog (300+ candidates), timed on this
// process's event loop (p50/p99 per decision, several prompt shapes); (2) router-mode throughput
// against plain pass-through of the same model through the same gateway, in the same run (closed
// loop, the two targets taking turns in slices), reported as a ratio, and the gateway's CPU per
// request (main thread and whole process), each target alone in turn.
// With --baseline DIR (a checkout of another commit, e.g. `git worktree add --detach DIR <commit>`
// with node_modules linked in) the same is measured on that checkout's code in the same run, the two
// taking turns, so "before" and "after" see the same machine.
// Run: npx node bench/router.ts [--decisions N] [--duration S] [--rounds N] [--connections C] [--baseline DIR] [--skip-load]
//      [--skip-decisions] [--record-candidates N|top|all (this tree's router.record_candidates)] [--agent-kb KB]: every request a coding agent's conversation of about KB kilobytes (the same
//      conversation resent, as an agent resends its earlier turns), for pass-through and router alike.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { benchArgs } from './lib/args.ts';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { benchPath, forkServer, stopChild } from './lib/child.ts';
import { startGateway, type Gateway } from './lib/gateway.ts';
import { everyProviderKey } from './lib/repo-config.ts';
import { LoadProcess, type LoadTarget } from './lib/load.ts';
import { cpuMs } from './lib/scenarios.ts';
import { median } from './lib/stats.ts';

const { values: f } = benchArgs({ options: {
  decisions: { type: 'string', default: '3000' }, duration: { type: 'string', default: '4' }, rounds: { type: 'string', default: '3' },
  connections: { type: 'string', default: '16' }, 'skip-load': { type: 'boolean', default: false }, profile: { type: 'string' },
  baseline: { type: 'string' },
  // 'agent': every request (pass-through and routed) carries a coding agent's conversation of about
  // this many KB (system prompt, tools, tool calls and results) instead of one short question.
  'agent-kb': { type: 'string' },
  'skip-decisions': { type: 'boolean', default: false },
  // This tree's gateway stores this many candidates per group with each routed request
  // (router.record_candidates: a number, top or all); a baseline keeps its own config. With
  // --baseline set to this same checkout it measures the setting alone.
  'record-candidates': { type: 'string' },
} });

/** A coding agent's request body of about `kb` KB in the chat-completions shape: system prompt, 12 tools, tool calls and their results. */
function agentMessages(kb: number): { messages: Array<Record<string, unknown>>; tools: Array<Record<string, unknown>> } {
  const prose = (n: number, seed: number): string => {
    const words = ['read', 'the', 'file', 'then', 'edit', 'function', 'return', 'value', 'test', 'passes', 'const', 'import'];
    let s = ''; let i = seed;
    while (s.length < n) { i = (i * 1103515245 + 12345) % 2147483648; s += words[i % words.length] + ((i >> 8) % 9 === 0 ? ';\n' : ' '); }
    return s;
  };
  const tools = Array.from({ length: 12 }, (_, i) => ({ type: 'function', function: { name: `tool_${i}`, description: prose(600, i), parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path'] } } }));
  const messages: Array<Record<string, unknown>> = [{ role: 'system', content: prose(12_000, 99) }, { role: 'user', content: 'Fix the failing test in src/app.ts' }];
  for (let t = 0; JSON.stringify(messages).length + 8_000 < kb * 1024; t++) {
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${t}`, type: 'function', function: { name: 'tool_1', arguments: JSON.stringify({ path: `src/f${t}.ts` }) } }] });
    messages.push({ role: 'tool', tool_call_id: `call_${t}`, content: prose(4_000, t) });
  }
  return { messages, tools };
}

const pct = (xs: number[], p: number): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]!; };

/**
 * CPU time of the process's threads in ms, grouped: the main thread (its event loop: the thread whose
 * id is the pid), the gateway's named workers (src/workers/thread-name.ts: gw-router, gw-store,
 * gw-convert, ...), V8's helpers (node-V8Worker: parallel scavenges, concurrent marking), the rest.
 */
function threadCpuMs(child: ChildProcess): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${child.pid}/task`)) {
      let stat: string;
      try { stat = readFileSync(`/proc/${child.pid}/task/${tid}/stat`, 'utf8'); } catch { continue; } // a thread that just ended
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const group = tid === String(child.pid) ? 'main' : name.startsWith('gw-') ? name : name === 'node-V8Worker' ? 'gc+jit helpers' : 'other';
      out.set(group, (out.get(group) ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
    }
  } catch { /* the process is gone: nothing to read */ }
  return out;
}

type Route = (cfg: unknown, body: Record<string, unknown>, format: string, key: null, route: string, id: string) => unknown;
type Sliced = (cfg: unknown, body: Record<string, unknown>, format: string, key: null, route: string, id: string) => unknown;
type Tree = { name: string; root: string };
const trees: Tree[] = [{ name: 'this', root: benchPath('..') }, ...(f.baseline ? [{ name: 'baseline', root: path.resolve(f.baseline) }] : [])];

/** A router (and the configs it decides on) built from one checkout's own modules. */
async function routerOf(t: Tree): Promise<{ route: Route; sliced: Sliced | null; all: unknown; withPolicy: unknown; candidates: number; models: number; close(): Promise<void> }> {
  const mod = async <T>(p: string): Promise<T> => await import(pathToFileURL(path.join(t.root, p)).href) as T;
  const { compileConfig } = await mod<typeof import('../src/config/compile.ts')>('src/config/compile.ts');
  const { loadConfig } = await mod<typeof import('../src/config/load.ts')>('src/config/load.ts');
  const { RouterService } = await mod<typeof import('../src/router/service.ts')>('src/router/service.ts');
  const { warmTokenizers } = await mod<typeof import('../src/tokens/index.ts')>('src/tokens/index.ts');
  // Each checkout with its own config and catalog files (a baseline's schema may not know newer fields).
  const env = { ...process.env, ...everyProviderKey() }; // the whole catalog routable (the router routes only to providers with credentials)
  const cfg = compileConfig(loadConfig(path.join(t.root, 'bench/gateway.router.yaml'), env), env);
  // The decision without the bench policy: the whole catalog, every candidate estimated.
  const all = { ...cfg, router: { ...cfg.router, defaultPolicy: null } };
  const router = new RouterService({ sql: null, settings: () => all.router, isEjected: () => false });
  await warmTokenizers();
  const route: Route = (c, b, fmt, k, r, id) => router.route(c as typeof cfg, b, fmt, k, r, id);
  const ranked = await router.rank(all, { model: 'router', messages: [{ role: 'user', content: 'hi' }] }, 'openai-chat', null, '/v1/chat/completions', 'x');
  // routeSliced (long new text counted in slices between turns of the event loop) where the checkout has it.
  const r = router as unknown as { routeSliced?: Sliced };
  const sliced: Sliced | null = typeof r.routeSliced === 'function' ? (c, b, fmt, k, rt, id) => r.routeSliced!.call(router, c, b, fmt, k, rt, id) : null;
  return { route, sliced, all, withPolicy: cfg, candidates: (ranked.body.candidates as unknown[]).length, models: cfg.models.size, close: () => router.close() };
}

async function decisions(): Promise<void> {
  // Every decision gets a prompt of its own (a counter in the last turn): the token-count and estimate
  // caches only help with text seen before, as a conversation's earlier turns and a system prompt are.
  const turns = Array.from({ length: 7 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `Turn ${i}: ${'some detailed prose about the design of a gateway '.repeat(40)}` }));
  const shapes: Array<[string, (i: number) => Record<string, unknown>]> = [
    ['short chat', (i) => ({ model: 'router', messages: [{ role: 'user', content: `What is the capital of France? (${i})` }] })],
    ['W=0.01, max_cost', (i) => ({ model: 'router', willingness_to_pay: 0.01, max_cost: 0.01, messages: [{ role: 'user', content: `${i}: ${'Summarise the following text in two sentences. '.repeat(20)}` }] })],
    ['tools + policy', (i) => ({ model: 'router', tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }], messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: `Weather in Paris? (${i})` }] })],
    ['4k-token conversation', (i) => ({ model: 'router', messages: [...turns, { role: 'user', content: `Turn 7 (${i}): ${'some detailed prose about the design of a gateway '.repeat(40)}` }] })],
  ];
  const routers = await Promise.all(trees.map(routerOf));
  const r0 = routers[0]!;
  console.log(`one decision (route: decode, features, token counts, quality, constraints, utility, plan) over the whole catalog: ${r0.models} models, ${r0.candidates} candidates`);
  const n = Number(f.decisions);
  const BLOCK = 100;
  for (const [name, body] of shapes) {
    const wall = routers.map(() => [] as number[]);
    const cpu = routers.map(() => [] as number[]);
    for (const r of routers) for (let i = 0; i < 300; i++) r.route(name === 'tools + policy' ? r.withPolicy : r.all, body(-i), 'openai-chat', null, '/v1/chat/completions', 'warm');
    // The checkouts take turns in blocks, so a slow phase of the machine falls on both.
    for (let start = 0; start < n; start += BLOCK) {
      routers.forEach((r, k) => {
        const cfg = name === 'tools + policy' ? r.withPolicy : r.all;
        for (let i = start; i < Math.min(n, start + BLOCK); i++) {
          const b = body(i);
          const c0 = process.cpuUsage();
          const t0 = performance.now();
          r.route(cfg, b, 'openai-chat', null, '/v1/chat/completions', 'id');
          wall[k]!.push((performance.now() - t0) * 1000);
          const c = process.cpuUsage(c0);
          cpu[k]!.push(c.user + c.system);
        }
      });
    }
    // Wall time includes the machine's preemption (2 shared cores); CPU time is the decision's own cost
    // (process CPU: it includes GC and JIT threads).
    routers.forEach((_, k) => {
      const ratio = k > 0 ? `  (p50 ${(pct(wall[0]!, 0.5) / pct(wall[k]!, 0.5)).toFixed(2)}x of baseline)` : '';
      console.log(`  ${trees[k]!.name.padEnd(8)} ${name.padEnd(22)} wall p50 ${pct(wall[k]!, 0.5).toFixed(0).padStart(5)} us  p99 ${pct(wall[k]!, 0.99).toFixed(0).padStart(6)} us | cpu p50 ${pct(cpu[k]!, 0.5).toFixed(0).padStart(5)} us  p99 ${pct(cpu[k]!, 0.99).toFixed(0).padStart(5)} us  (n=${n})${ratio}`);
    });
  }
  for (const r of routers) await r.close();
}

/** The tree's bench config, or for this tree with --record-candidates a copy of it (in a temporary directory) setting router.record_candidates. */
function configFor(tree: Tree): string {
  const file = path.join(tree.root, 'bench/gateway.router.yaml');
  const v = f['record-candidates'];
  if (v === undefined || tree.name !== 'this') return file;
  const doc = parseYaml(readFileSync(file, 'utf8')) as { providers_dir: string; router: Record<string, unknown> };
  doc.providers_dir = path.resolve(path.dirname(file), doc.providers_dir);
  doc.router.record_candidates = /^\d+$/.test(v) ? Number(v) : v;
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'gw-bench-cfg-')), 'gateway.yaml');
  writeFileSync(out, stringifyYaml(doc));
  return out;
}

/** CPU per request (us) by thread group, one entry per round. */
type Cpu = Map<string, number[]>;
type Side = { tree: Tree; gw: Gateway; plain: LoadTarget; routed: LoadTarget; named: LoadTarget; cpu: Record<'plain' | 'router' | 'named', Cpu>; ratios: number[] };

async function throughput(): Promise<void> {
  const upstream = await forkServer(benchPath('lib/upstream.ts'));
  const origin = `http://127.0.0.1:${upstream.port}`;
  const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };
  const agent = f['agent-kb'] ? agentMessages(Number(f['agent-kb'])) : null;
  const msg = agent ? agent.messages : [{ role: 'user', content: 'Hello, how are you today?' }];
  const extra = agent ? { tools: agent.tools } : {};
  if (agent) console.log(`agent-shaped bodies: ${(JSON.stringify({ model: 'router', messages: msg, ...extra }).length / 1024).toFixed(0)} KB`);
  const sides: Side[] = [];
  const load = new LoadProcess();
  try {
    for (const tree of trees) {
      const prof = f.profile ? { profileDir: path.join(f.profile, tree.name) } : {};
      const gw = await startGateway({ config: configFor(tree), upstream: origin, withKey: false, repo: tree.root, env: everyProviderKey(), ...prof });
      const t = (body: Record<string, unknown>): LoadTarget => ({ origin: gw.origin, path: '/v1/chat/completions', headers, body: JSON.stringify(body) });
      sides.push({
        tree, gw, plain: t({ model: 'openai/gpt-4o-mini', messages: msg, ...extra }), routed: t({ model: 'router', messages: msg, ...extra }),
        // The common client shape: a few models named, bare names (every OpenAI offer of each).
        named: t({ model: 'router', models: ['gpt-4o-mini', 'gpt-4.1-mini', 'gpt-4o'], messages: msg, ...extra }),
        cpu: { plain: new Map(), router: new Map(), named: new Map() }, ratios: [],
      });
      const probe = await fetch(gw.origin + '/v1/chat/completions', { method: 'POST', headers, body: sides.at(-1)!.routed.body });
      console.log(`${tree.name}: router-mode probe: HTTP ${probe.status}, chose ${probe.headers.get('x-router-model')} among ${probe.headers.get('x-router-candidates')} candidates`);
      await probe.text();
    }
    const targets = sides.flatMap((s) => [s.plain, s.routed]);
    await load.sliced({ targets, connections: Number(f.connections), durationMs: 2000, sliceMs: 500 });
    for (let r = 0; r < Number(f.rounds); r++) {
      const res = await load.sliced({ targets, connections: Number(f.connections), durationMs: Number(f.duration) * 1000, sliceMs: 1000, offset: r });
      sides.forEach((s, k) => {
        const p = res[2 * k]!; const q = res[2 * k + 1]!;
        s.ratios.push(q.rps / p.rps);
        console.log(`  round ${r + 1} ${s.tree.name}: pass-through ${p.rps.toFixed(0)} rps (p99 ${p.latency.p99.toFixed(2)} ms), router ${q.rps.toFixed(0)} rps (p99 ${q.latency.p99.toFixed(2)} ms, errors ${q.errors}${q.errorSample ? `: ${q.errorSample}` : ''}), ratio ${(q.rps / p.rps).toFixed(3)}`);
      });
    }
    for (const s of sides) console.log(`${s.tree.name}: router-mode throughput / pass-through: median ${median(s.ratios).toFixed(3)}x over ${s.ratios.length} rounds`);
    // Gateway CPU per request, each target alone in turn: steadier than rps on a shared machine. The
    // main thread's (the event loop, which bounds throughput), the whole process's, and each thread
    // group's (the store writer, the router's worker, GC helpers) are read separately.
    for (let r = 0; r < Number(f.rounds); r++) {
      for (const s of sides) {
        for (const [name, t] of [['plain', s.plain], ['router', s.routed], ['named', s.named]] as const) {
          const c0 = cpuMs(s.gw.child); const t0 = threadCpuMs(s.gw.child);
          const res = await load.closed({ ...t, connections: Number(f.connections), durationMs: Number(f.duration) * 1000 });
          const perRequest = (ms: number): number => (ms * 1000) / Math.max(1, res.ok);
          const push = (group: string, us: number): void => { const l = s.cpu[name].get(group); if (l) l.push(us); else s.cpu[name].set(group, [us]); };
          push('all', perRequest(cpuMs(s.gw.child) - c0));
          for (const [group, ms] of threadCpuMs(s.gw.child)) push(group, perRequest(ms - (t0.get(group) ?? 0)));
        }
      }
    }
    for (const s of sides) {
      const errTail = s.gw.stderrTail().trim();
      if (errTail) console.log(`${s.tree.name} gateway stderr (last lines):\n${errTail.split('\n').slice(-5).join('\n')}`);
      const med = (c: Cpu, k: string): number => median(c.get(k) ?? [0]);
      for (const k of ['main', 'all'] as const) {
        const p = med(s.cpu.plain, k); const q = med(s.cpu.router, k); const m = med(s.cpu.named, k);
        console.log(`${s.tree.name}: gateway CPU per request (${k === 'main' ? 'main thread' : 'all threads'}): pass-through ${p.toFixed(0)} us, router over the catalog ${q.toFixed(0)} us (+${(q - p).toFixed(0)} us, CPU-bound throughput ratio ${(p / q).toFixed(3)}x), router over 3 named models ${m.toFixed(0)} us (+${(m - p).toFixed(0)} us, ratio ${(p / m).toFixed(3)}x)`);
      }
      // Where the difference goes, by thread: on a 2-core machine a worker's CPU is the gateway's too.
      const groups = [...new Set([...s.cpu.plain.keys(), ...s.cpu.router.keys()])].filter((g) => g !== 'all' && g !== 'main').sort();
      console.log(`${s.tree.name}: by thread, us per request (pass-through / router over the catalog / 3 named): ${groups.map((g) => `${g} ${med(s.cpu.plain, g).toFixed(1)} / ${med(s.cpu.router, g).toFixed(1)} / ${med(s.cpu.named, g).toFixed(1)}`).join(', ')}`);
    }
  } finally {
    load.close();
    for (const s of sides) await stopChild(s.gw.child);
    await stopChild(upstream.child);
  }
}

/**
 * A long new prompt under max_cost (the bound near for some candidates, so it is counted exactly):
 * how long one decision holds the event loop. route() counts at once (the hold is the whole
 * decision); routeSliced() counts in slices between turns of the loop, timed by a setImmediate chain
 * (the hold is the longest gap between turns, the first synchronous part included).
 */
async function longPrompts(): Promise<void> {
  const r = await routerOf(trees[0]!);
  if (!r.sliced) { await r.close(); return; }
  const words = 'the gateway routes each prompt to the model that answers best within the budget while providers fail and recover'.split(' ');
  let seq = 0;
  const text = (chars: number): string => {
    let s = `${++seq} ${Date.now()} `;
    let i = seq;
    while (s.length < chars) { i = (i * 1103515245 + 12345) % 2147483648; s += words[i % words.length] + ((i >> 8) % 11 === 0 ? '.\n' : ' '); }
    return s;
  };
  let maxCost: number | null = 0.05;
  const body = (chars: number) => JSON.parse(JSON.stringify({ model: 'router', willingness_to_pay: 0.01, ...(maxCost !== null ? { max_cost: maxCost } : {}), messages: [{ role: 'user', content: text(chars) }] }));
  const N = 100;
  for (const mc of [0.05, null]) {
  maxCost = mc;
  console.log(`long new prompt, W=0.01, ${mc === null ? 'no max_cost' : `max_cost ${mc}`}, whole catalog: longest event-loop hold per decision`);
  for (const chars of [4_000, 16_000, 32_000, 64_000]) {
    for (let i = 0; i < 5; i++) { r.route(r.all, body(chars), 'openai-chat', null, '/v1/chat/completions', 'w'); await r.sliced(r.all, body(chars), 'openai-chat', null, '/v1/chat/completions', 'w'); }
    const atOnce: number[] = []; const held: number[] = []; const total: number[] = [];
    for (let i = 0; i < N; i++) {
      const b1 = body(chars); const b2 = body(chars);
      const t0 = performance.now();
      r.route(r.all, b1, 'openai-chat', null, '/v1/chat/completions', 'a');
      atOnce.push((performance.now() - t0) * 1000);
      let last = performance.now(); let longest = 0; let ticking = true;
      const tick = (): void => { const t = performance.now(); longest = Math.max(longest, t - last); last = t; if (ticking) setImmediate(tick); };
      const s0 = performance.now();
      last = s0;
      setImmediate(tick);
      const p = r.sliced(r.all, b2, 'openai-chat', null, '/v1/chat/completions', 'b');
      const sync = performance.now() - s0;
      await p;
      ticking = false;
      longest = Math.max(longest, sync, performance.now() - last);
      held.push(longest * 1000);
      total.push((performance.now() - s0) * 1000);
    }
    console.log(`  ${String(chars).padStart(6)} chars: route() hold p50 ${pct(atOnce, 0.5).toFixed(0).padStart(5)} us p99 ${pct(atOnce, 0.99).toFixed(0).padStart(5)} us | routeSliced() longest hold p50 ${pct(held, 0.5).toFixed(0).padStart(5)} us p99 ${pct(held, 0.99).toFixed(0).padStart(5)} us, until decided p50 ${pct(total, 0.5).toFixed(0).padStart(5)} us  (n=${N})`);
  }
  }
  await r.close();
}

if (!f['skip-decisions']) { await decisions(); await longPrompts(); }
if (!f['skip-load']) await throughput();
