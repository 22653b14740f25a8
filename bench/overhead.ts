// Overhead benchmark: the mock upstream direct, through bare http-proxy-3, through a bare undici
// forwarder and through the gateway, each in its own process; prints medians and ratios.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchPath, forkServer, stopChild } from './lib/child.ts';
import { benchPgSchema, dropPgSchema, startGateway } from './lib/gateway.ts';
import { LoadProcess, type LoadResult, type LoadTarget } from './lib/load.ts';
import { computeRatios, printScenario, printSummary, type ScenarioResult, type SystemResult } from './lib/report.ts';
import { ALL_SYSTEMS, BASELINES, SCENARIOS, cpuMs, requestHeaders, type Scenario, type System, type SystemName } from './lib/scenarios.ts';
import { median, summarise } from './lib/stats.ts';

const HELP = `usage: node bench/overhead.ts [flags]
  --rounds N          closed-loop rounds per system (5)
  --duration S        closed-loop seconds per system and round (3)
  --slice MS          closed-loop systems take turns every MS ms within a round (1000); MS >= duration
                      gives each system its whole round in one go
  --instances N       processes started per system (2); its rounds, warm-up and open loop are shared
                      among them and their figures pooled, so one process's luck weighs 1/N
  --warmup S          warm-up seconds per system (3)
  --connections C     closed-loop connections (16)
  --rate R            open-loop requests/s (300)
  --open-duration S   open-loop seconds per system and round (6); systems alternate every 100 ms
  --open-rounds N     open-loop rounds (1)
  --scenarios a,b     subset of: ${SCENARIOS.map((s) => s.name).join(', ')}
  --systems a,b       subset of: ${ALL_SYSTEMS.join(', ')}
  --noagent           add http-proxy-3-noagent (library default agent: false, a new upstream connection per request)
  --auth              add gateway-auth (auth on, rate-limited key from \`keys create\`)
  --pg [--pg-url U]   add gateway-auth-pg (the same with DATABASE_URL=U, default postgres://postgres@127.0.0.1:5432/test)
  --baseline DIR      add gateway-base: the gateway of the checkout in DIR (its src/main.ts and its own
                      bench/gateway.bench.yaml), measured in the same rounds; ratios gateway/gateway-base
  --quick             rounds 2, duration 1.5, open-duration 3
  --json FILE         also write the results as JSON
  --profile DIR       write a V8 CPU profile (.cpuprofile) of each gateway and forwarder process into DIR/<system>`;

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' }, duration: { type: 'string', default: '3' }, slice: { type: 'string', default: '1000' },
    instances: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' }, rate: { type: 'string', default: '300' },
    'open-rounds': { type: 'string', default: '1' }, 'open-duration': { type: 'string', default: '6' },
    scenarios: { type: 'string' }, systems: { type: 'string' }, auth: { type: 'boolean', default: false },
    pg: { type: 'boolean', default: false }, noagent: { type: 'boolean', default: false }, 'pg-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    baseline: { type: 'string' }, quick: { type: 'boolean', default: false }, json: { type: 'string' }, profile: { type: 'string' }, help: { type: 'boolean', default: false },
  },
});
if (flags.help) { console.log(HELP); process.exit(0); }

const opts = {
  rounds: flags.quick ? 2 : Number(flags.rounds), durationMs: (flags.quick ? 1.5 : Number(flags.duration)) * 1000, sliceMs: Number(flags.slice),
  instances: Math.max(1, Math.floor(Number(flags.instances))), warmupMs: Number(flags.warmup) * 1000, connections: Number(flags.connections), rate: Number(flags.rate),
  openRounds: Number(flags['open-rounds']), openDurationMs: (flags.quick ? 3 : Number(flags['open-duration'])) * 1000,
};
const wantedSystems: SystemName[] = flags.systems
  ? flags.systems.split(',').filter((s): s is SystemName => (ALL_SYSTEMS as readonly string[]).includes(s))
  : ['direct', 'http-proxy-3', ...(flags.noagent ? ['http-proxy-3-noagent' as const] : []), 'undici', 'gateway',
    ...(flags.auth ? ['gateway-auth' as const] : []), ...(flags.pg ? ['gateway-auth-pg' as const] : []),
    ...(flags.baseline ? ['gateway-base' as const] : [])];
const scenarios = flags.scenarios ? SCENARIOS.filter((s) => flags.scenarios!.split(',').includes(s.name)) : SCENARIOS;

const pgSchema = benchPgSchema();

/**
 * Starts `--instances` processes of every wanted system (`direct` is listed as many times, all on the
 * upstream, so every system gets the same share of each round); one that fails keeps its reason and
 * the rest still run.
 */
async function startSystems(upstream: string): Promise<System[]> {
  const names = wantedSystems.flatMap((name) => Array.from({ length: opts.instances }, () => name));
  return Promise.all(names.map(async (name): Promise<System> => {
    try {
      if (name === 'direct') return { name, origin: upstream };
      if (name === 'http-proxy-3' || name === 'http-proxy-3-noagent' || name === 'undici') {
        const prof = flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(flags.profile, name)}`] : [];
        const { child, port } = await forkServer(benchPath('lib/forwarders.ts'), [name, upstream], undefined, prof);
        return { name, origin: `http://127.0.0.1:${port}`, child };
      }
      if (name === 'gateway-base') {
        if (!flags.baseline) throw new Error('--baseline DIR not given');
        const repo = path.resolve(flags.baseline);
        const gw = await startGateway({ config: path.join(repo, 'bench/gateway.bench.yaml'), upstream, withKey: false, repo,
          ...(flags.profile ? { profileDir: path.resolve(flags.profile, name) } : {}) });
        return { name, origin: gw.origin, child: gw.child };
      }
      const auth = name !== 'gateway';
      const gw = await startGateway({ config: auth ? 'gateway.bench-auth.yaml' : 'gateway.bench.yaml', upstream, withKey: auth,
        ...(name === 'gateway-auth-pg' ? { databaseUrl: flags['pg-url'], pgSchema } : {}),
        ...(flags.profile ? { profileDir: path.resolve(flags.profile, name) } : {}) });
      return { name, origin: gw.origin, child: gw.child, ...(gw.apiKey ? { apiKey: gw.apiKey } : {}) };
    } catch (e) {
      return { name, origin: '', reason: e instanceof Error ? e.message : String(e) };
    }
  }));
}

/** One request through a system; returns a reason when the answer is not a usable 2xx. */
async function smoke(system: System, sc: Scenario): Promise<string | undefined> {
  try {
    const res = await fetch(system.origin + sc.request.path, { method: 'POST', body: sc.request.body,
      headers: requestHeaders(system, sc.request.wire), signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    if (!res.ok) return `HTTP ${res.status}: ${text.replace(/\s+/g, ' ').slice(0, 200)}`;
    if (sc.stream && !text.includes('data:')) return `expected an SSE stream, got: ${text.slice(0, 120)}`;
    if (!sc.stream) JSON.parse(text);
    return undefined;
  } catch (e) {
    return e instanceof Error ? `${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ''}` : String(e);
  }
}

function target(system: System, sc: Scenario): LoadTarget {
  return { origin: system.origin, path: sc.request.path, headers: requestHeaders(system, sc.request.wire), body: sc.request.body };
}

/** The closed-loop results of one system's instances in one round, as one: counts and samples pooled. */
function pooled(rs: LoadResult[]): LoadResult {
  const ok = rs.reduce((n, r) => n + r.ok, 0);
  const durationMs = rs.reduce((n, r) => n + r.durationMs, 0);
  const out: LoadResult = {
    mode: rs[0]!.mode, ok, errors: rs.reduce((n, r) => n + r.errors, 0), durationMs, rps: ok / (durationMs / 1000),
    latency: summarise(rs.flatMap((r) => r.latencies ?? [])), ttft: summarise(rs.flatMap((r) => r.ttfts ?? [])),
  };
  const sample = rs.find((r) => r.errorSample)?.errorSample;
  if (sample !== undefined) out.errorSample = sample;
  return out;
}

async function runScenario(sc: Scenario, all: System[], load: LoadProcess): Promise<ScenarioResult> {
  const results = new Map<SystemName, SystemResult>();
  for (const s of all) {
    const reason = s.reason ?? (await smoke(s, sc));
    const res = results.get(s.name);
    if (!res) results.set(s.name, { name: s.name, rps: [], rpsMedian: NaN, cpuUsPerReq: NaN, closedP50: NaN, closedP99: NaN, errors: 0, ...(reason ? { reason } : {}) });
    else if (reason && !res.reason) res.reason = reason;
  }
  // A system is measured only when every one of its instances answered the smoke request.
  const live = all.filter((s) => !results.get(s.name)!.reason);
  const share = (ms: number): number => ms / opts.instances;
  process.stderr.write(`${sc.name}: warm-up`);
  for (const s of live) await load.closed({ ...target(s, sc), connections: opts.connections, durationMs: share(opts.warmupMs) });
  const closed = new Map<SystemName, { runs: LoadResult[]; cpu: number[] }>(live.map((s) => [s.name, { runs: [], cpu: [] }]));
  for (let round = 0; round < opts.rounds; round++) {
    process.stderr.write(`, round ${round + 1}`);
    // The systems take turns in slices (see bench/README.md): the machine's slow phases last seconds
    // and fell on whichever system ran its whole round then. CPU is read over the whole round, so
    // work a system defers past its slice (a record batch written on the next tick) is still its own.
    const cpu0 = live.map((s) => cpuMs(s.child));
    const rs = await load.sliced({ targets: live.map((s) => target(s, sc)), connections: opts.connections,
      durationMs: share(opts.durationMs), sliceMs: opts.sliceMs, offset: round, keepSamples: true });
    for (const [name, c] of closed) {
      const mine = live.flatMap((s, i) => (s.name === name ? [i] : []));
      const r = pooled(mine.map((i) => rs[i]!));
      const cpu = mine.reduce((t, i) => t + cpuMs(live[i]!.child) - cpu0[i]!, 0);
      c.runs.push(r);
      c.cpu.push(r.ok ? (cpu * 1000) / r.ok : NaN);
    }
  }
  process.stderr.write(`, open loop at ${opts.rate}/s`);
  const open = new Map<SystemName, LoadResult[]>(live.map((s) => [s.name, []]));
  for (let round = 0; round < opts.openRounds; round++) {
    // All systems in one open-loop job, alternating every 100 ms; each gets `rate` req/s while served.
    const rs = await load.open({ targets: live.map((s) => target(s, sc)), rate: opts.rate, durationMs: share(opts.openDurationMs), keepSamples: true });
    live.forEach((s, i) => open.get(s.name)!.push(rs[i]!));
  }
  process.stderr.write('\n');
  for (const [name, { runs, cpu }] of closed) {
    const res = results.get(name)!;
    const opens = open.get(name)!;
    res.rps = runs.map((r) => r.rps);
    res.rpsMedian = median(res.rps);
    res.cpuUsPerReq = median(cpu);
    res.closedP50 = median(runs.map((r) => r.latency.p50));
    res.closedP99 = median(runs.map((r) => r.latency.p99));
    res.open = {
      latency: summarise(opens.flatMap((r) => r.latencies ?? [])), ttft: summarise(opens.flatMap((r) => r.ttfts ?? [])),
      achievedRps: median(opens.map((r) => r.rps)),
    };
    res.errors = [...runs, ...opens].reduce((n, r) => n + r.errors, 0);
    const sample = [...runs, ...opens].find((r) => r.errorSample)?.errorSample;
    if (sample) res.errorSample = sample;
  }
  const direct = results.get('direct')?.open;
  for (const res of results.values()) {
    if (!res.open || !direct) continue;
    res.added = { p50: res.open.latency.p50 - direct.latency.p50, p99: res.open.latency.p99 - direct.latency.p99,
      ttftP50: res.open.ttft.p50 - direct.ttft.p50, ttftP99: res.open.ttft.p99 - direct.ttft.p99 };
  }
  const systems = [...results.values()];
  return { scenario: { name: sc.name, stream: sc.stream, translated: sc.translated, description: sc.description }, systems,
    ratios: computeRatios(systems, 'rpsMedian'), cpuRatios: computeRatios(systems, 'cpuUsPerReq') };
}

async function main(): Promise<void> {
  const upstream = await forkServer(benchPath('lib/upstream.ts'));
  const systems = await startSystems(`http://127.0.0.1:${upstream.port}`);
  const load = new LoadProcess();
  console.log(`overhead bench: node ${process.version}, ${os.cpus().length} cpus, ${opts.rounds} rounds x ${opts.durationMs / 1000}s closed loop ` +
    `in ${opts.sliceMs} ms slices, ${opts.instances} process(es) per system ` +
    `(${opts.connections} connections), ${opts.openRounds} x ${opts.openDurationMs / 1000}s open loop at ${opts.rate}/s per system; latencies in ms`);
  // A busy shared machine makes every figure noisier; say how busy it was.
  const loadBefore = os.loadavg()[0]!;
  console.log(`  load average (1 min) at start: ${loadBefore.toFixed(2)}`);
  for (const s of systems) console.log(`  ${s.name.padEnd(21)} ${s.reason ? `not available: ${s.reason}` : s.origin}`);
  const gatewayUp = systems.some((s) => !s.reason && !BASELINES.includes(s.name));
  const results: ScenarioResult[] = [];
  try {
    for (const sc of scenarios) {
      if (sc.translated && !gatewayUp && !flags.scenarios) {
        console.log(`\n=== ${sc.name}: skipped (no gateway running; name it in --scenarios to measure the baselines anyway)`);
        continue;
      }
      const r = await runScenario(sc, systems, load);
      printScenario(r, opts.rate);
      results.push(r);
    }
    printSummary(results);
    const loadAfter = os.loadavg()[0]!;
    console.log(`\nload average (1 min): ${loadBefore.toFixed(2)} at start, ${loadAfter.toFixed(2)} at end (${os.cpus().length} cpus)`);
    if (flags.json) {
      writeFileSync(flags.json, JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, opts, loadavg: [loadBefore, loadAfter],
        systems: systems.map((s) => ({ name: s.name, available: !s.reason, reason: s.reason })), results }, null, 2));
      console.log(`\nresults written to ${flags.json}`);
    }
  } finally {
    load.close();
    await Promise.all([upstream.child, ...systems.map((s) => s.child)].flatMap((c) => (c ? [stopChild(c)] : [])));
    if (wantedSystems.includes('gateway-auth-pg')) await dropPgSchema(flags['pg-url'], pgSchema);
  }
}

await main();
