// Every script of bench/ run with tiny settings: CI does not run the benchmarks, so they rotted unseen
// (bench/router-feedback.ts stopped running once keyless providers left the router's candidates and
// nobody saw it for four stops; bench/token-estimate.ts, bench/stream-relays.ts and, on small data,
// bench/router-quality-speed.ts were broken too when this file came). Each must exit 0 and print the
// figure it exists for, in its shape with a number (never a value: timings vary). Throughput benches
// only have to complete, not reach a figure. Benches that need PostgreSQL run against the suite's
// server (helpers/pg.ts) and fail, never skip, without it. A new bench/*.ts must get a test here: the
// last test fails until it has one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PG_URL } from './helpers/pg.ts';
import { generate } from './helpers/router-bench-data.ts';

const ROOT = resolve(import.meta.dirname, '..');
const tail = (s: string, n = 3000): string => (s.length > n ? `...${s.slice(-n)}` : s);

type Run = { code: number | null; signal: NodeJS.Signals | null; timedOut: boolean; stdout: string; stderr: string };

/**
 * `node bench/<file> ...args` from the repository's root, in a process group of its own so that a
 * bench which hangs is killed with every gateway, upstream and load process it started.
 */
async function bench(file: string, args: string[], timeoutMs: number): Promise<Run> {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT; // the bench is not a test file of this run
  const child = spawn(process.execPath, [join('bench', file), ...args], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = ''; let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
  child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
  const killGroup = (): void => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ } };
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; killGroup(); }, timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((ok) => child.once('close', (c, s) => ok([c, s])));
  clearTimeout(timer);
  killGroup(); // anything it left behind
  return { code, signal, timedOut, stdout, stderr };
}

/** Runs the bench and asserts exit code 0; returns its stdout. Every failure message ends with the output's tails. */
async function ok(file: string, args: string[], timeoutMs: number): Promise<string> {
  const r = await bench(file, args, timeoutMs);
  const why = r.timedOut ? `timed out after ${timeoutMs} ms` : `exit code ${r.code}${r.signal ? `, signal ${r.signal}` : ''}`;
  assert.equal(r.code, 0, `bench/${file} ${args.join(' ')}: ${why}\n--- stdout (tail)\n${tail(r.stdout)}\n--- stderr (tail)\n${tail(r.stderr)}`);
  return r.stdout;
}

/** Every match of `re` (made global and multiline) in `out`, at least `min` of them. */
function lines(out: string, re: RegExp, min = 1): RegExpExecArray[] {
  const all = [...out.matchAll(new RegExp(re.source, `${re.flags.replace(/[gm]/g, '')}gm`))];
  assert.ok(all.length >= min, `expected ${min}+ lines matching ${re}, found ${all.length}\n--- stdout (tail)\n${tail(out)}`);
  return all;
}
const positive = (m: RegExpExecArray, what: string, out: string): void => {
  assert.ok(Number(m[1]) > 0, `${what}: ${m[0]} (expected a positive figure)\n--- stdout (tail)\n${tail(out)}`);
};

function tempDir(t: { after(f: () => void): void }, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Router-bench data in the shared format (not the shared dev file, which a checkout may not have next to it). */
function benchData(t: { after(f: () => void): void }): string {
  const file = join(tempDir(t, 'bench-smoke-data-'), 'bench.jsonl');
  writeFileSync(file, generate(150, 1, 'smoke'));
  return file;
}

const NUM = String.raw`-?\d+(?:\.\d+)?`;
const covered = new Set<string>();
function benchTest(file: string, name: string, fn: (t: { after(f: () => void): void }) => Promise<void>): void {
  covered.add(file);
  test(`bench/${file}: ${name}`, fn);
}

benchTest('overhead.ts', 'every system serves both scenarios (PostgreSQL gateway included) and the ratios print', async (t) => {
  const json = join(tempDir(t, 'bench-smoke-overhead-'), 'overhead.json');
  const scenarios = ['chat-stream', 'messages-to-openai'];
  const out = await ok('overhead.ts', ['--rounds', '1', '--duration', '0.4', '--slice', '200', '--instances', '1', '--warmup', '0.2',
    '--connections', '2', '--rate', '50', '--open-duration', '0.4', '--scenarios', scenarios.join(','), '--auth', '--pg', '--pg-url', PG_URL, '--json', json], 90_000);
  assert.doesNotMatch(out, /not available/, tail(out)); // a system that cannot start is only reported, and the bench exits 0
  for (const sc of scenarios) {
    for (const sys of ['gateway', 'gateway-auth', 'gateway-auth-pg']) {
      positive(lines(out, new RegExp(`^${sc}\\s+${sys}/http-proxy-3 rps\\s+(${NUM})\\s+target`))[0]!, `${sc} ${sys}`, out);
    }
  }
  lines(out, new RegExp(`^=== ratios of CPU us per request`));
  const written = JSON.parse(readFileSync(json, 'utf8')) as { results: unknown[] };
  assert.equal(written.results.length, scenarios.length);
});

benchTest('router.ts', 'decisions over the catalog, and router-mode throughput against pass-through', async () => {
  const out = await ok('router.ts', ['--decisions', '200', '--rounds', '1', '--duration', '1', '--connections', '2'], 90_000);
  lines(out, new RegExp(`^  this\\s+(short chat|W=0.01, max_cost|tools \\+ policy|4k-token conversation)\\s+wall p50\\s+\\d+ us\\s+p99\\s+\\d+ us \\| cpu p50`), 4);
  lines(out, /^\s+\d+ chars: route\(\) hold p50\s+\d+ us p99\s+\d+ us \| routeSliced\(\) longest hold p50\s+\d+ us/, 8);
  lines(out, /^this: router-mode probe: HTTP 200, chose openai\//);
  positive(lines(out, new RegExp(`^this: router-mode throughput / pass-through: median (${NUM})x over 1 rounds`))[0]!, 'router/pass-through', out);
  lines(out, /^this: gateway CPU per request \(main thread\): pass-through \d+ us, router over the catalog \d+ us/);
  lines(out, /^this: by thread, us per request .*gw-router/);
});

benchTest('router-profile.ts', 'one CPU profile per kind of traffic', async (t) => {
  const dir = tempDir(t, 'bench-smoke-profile-');
  const out = await ok('router-profile.ts', ['--seconds', '0.5', '--warmup', '0.2', '--connections', '2', '--out', dir], 60_000);
  for (const kind of ['plain', 'router', 'named']) {
    positive(lines(out, new RegExp(`^${kind}: (\\d+) requests \\(0 errors\\) in 0.5 s`))[0]!, kind, out);
    assert.ok(readdirSync(join(dir, kind)).some((f) => f.endsWith('.cpuprofile')), `no .cpuprofile in ${kind}/`);
  }
});

benchTest('profile-top.ts', 'summarises a CPU profile by function and by file', async (t) => {
  const dir = tempDir(t, 'bench-smoke-cpuprof-');
  const prof = await new Promise<number | null>((done) => spawn(process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, '-e', 'let s = 0; for (let i = 0; i < 3e7; i++) s += Math.sqrt(i); console.log(s)'], { stdio: 'ignore' }).once('close', done));
  assert.equal(prof, 0);
  const out = await ok('profile-top.ts', [dir], 30_000);
  lines(out, new RegExp(`\\.cpuprofile: \\d+ ms sampled, \\d+ ms busy`));
  lines(out, /^ {2}self time by function$/);
  lines(out, /^ {2}self time by file$/);
  lines(out, new RegExp(`^\\s+${NUM}%\\s+\\d+ ms\\s+\\S`));
});

benchTest('dashboard.ts', 'admin-API calls at two sizes on SQLite and PostgreSQL, the write path under each rollup design', async () => {
  const out = await ok('dashboard.ts', ['--sizes', '100,200', '--reps', '1', '--write-rows', '200', '--write-rate', '2000', '--write-rounds', '1', '--skip-browser',
    '--backends', 'sqlite,postgres', '--pg-url', PG_URL], 60_000);
  lines(out, /^== (sqlite|postgres)$/, 2);
  for (const b of ['sqlite', 'postgres']) lines(out, new RegExp(`^  write path \\(${b}\\): 200 records`));
  lines(out, /^ {4}(none|triggers|fold-1|fold-N)\s+\d+ rows\/s\s+CPU\/row here\s+[\d.]+ us/, 8);
  lines(out, new RegExp(`^ {4}usage 7 d by model \\(page default\\)\\s+p50\\s+${NUM} ms\\s+p95\\s+${NUM} ms`), 4);
  lines(out, new RegExp(`^ {4}router overview 7 d \\(page default\\)\\s+p50\\s+${NUM} ms`), 4);
  lines(out, /^ {2}growth 100 -> 200 records \(p95 ratio\):$/, 2);
});

benchTest('dashboard.ts', 'page loads in chromium', async () => {
  const out = await ok('dashboard.ts', ['--sizes', '100', '--reps', '1', '--backends', 'sqlite', '--skip-write'], 60_000);
  // The bench leaves the page loads out when /usr/bin/chromium is missing; the browser tests need it too (.ci/run installs it).
  lines(out, /^ {4}page loads in chromium \(median of 4, to data-ready\): usage \d+ ms, requests \d+ ms, request detail \d+ ms, keys \d+ ms, models \d+ ms, router \d+ ms$/);
});

benchTest('router-overview.ts', 'the Router page call per window on SQLite and PostgreSQL, and migration 22 backfill', async () => {
  const out = await ok('router-overview.ts', ['--decisions', '2000', '--reps', '2', '--pg-url', PG_URL], 60_000);
  lines(out, /^== (sqlite|postgres): 2000 decisions stored in chunks of 500 in [\d.]+ s/, 2);
  for (const m of lines(out, new RegExp(`^  7 days \\(page default, day buckets\\)\\s+p50\\s+${NUM} ms\\s+p95\\s+${NUM} ms\\s+\\(routed (\\d+),`), 2)) positive(m, 'routed decisions', out);
  lines(out, /^  migration 22 backfill of 2000 decisions: [\d.]+ s$/, 2);
});

benchTest('router-record.ts', "the router worker's write per recorded decision, SQLite and PostgreSQL", async () => {
  for (const args of [[], ['--pg', PG_URL]]) {
    const out = await ok('router-record.ts', ['--rows', '50', '--chunks', '2', '--runs', '1', ...args], 60_000);
    const [m] = lines(out, new RegExp(`^this\\s+write per row: thread CPU median (${NUM}) us .* wall median (${NUM}) us`));
    assert.ok(Number(m![2]) > 0, `wall time per row: ${m![0]}\n--- stdout (tail)\n${tail(out)}`);
  }
});

benchTest('router-alloc.ts', 'main-thread CPU and bytes allocated per routed request, with allocation sites', async () => {
  const out = await ok('router-alloc.ts', ['--calls', '300', '--rounds', '1', '--top', '3'], 60_000);
  for (const m of lines(out, new RegExp(`^(?:catalog|named)\\s+this\\s+main-thread cpu\\s+${NUM} us/request .* allocated (${NUM}) KB/request`), 2)) positive(m, 'bytes per request', out);
});

benchTest('router-gc.ts', 'main-thread bytes allocated per request in a serving gateway', async () => {
  // Allocation is read between young-generation collections: half a second under a loaded suite could
  // pass without one (a pass-through then read 0.0 KB in two full runs); 1.5 s holds several.
  const out = await ok('router-gc.ts', ['--seconds', '1.5', '--rounds', '1', '--connections', '2'], 90_000);
  for (const m of lines(out, new RegExp(`^this\\s+(?:pass-through|router \\(catalog\\)|router \\(3 named\\))\\s+median (${NUM}) KB allocated per request`), 3)) positive(m, 'bytes per request', out);
});

benchTest('router-same.ts', 'two checkouts route identically (here: this tree and a copy of it)', async (t) => {
  // A copy, not the tree itself: the two sides must not share modules (and so caches of counted text).
  const copy = tempDir(t, 'bench-smoke-same-');
  for (const d of ['src', 'bench', 'providers', 'schema']) cpSync(join(ROOT, d), join(copy, d), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  const out = await ok('router-same.ts', ['--baseline', copy, '--rounds', '1'], 60_000);
  const [m] = lines(out, /^(\d+) decisions compared, 0 different/);
  assert.ok(Number(m![1]) > 100, m![0]);
});

benchTest('router-feedback.ts', 'negative feedback moves traffic off a model', async () => {
  // What docs/router.md quotes for how fast feedback moves decisions; it checks the claim itself too:
  // negative feedback on the preferred model lowers its predicted quality at every step, and enough
  // of it moves all the traffic away.
  const out = await ok('router-feedback.ts', [], 60_000);
  const rows = lines(out, /^\s*(\d+) \|\s+([\d.]+) \|\s+(\d+)%$/, 5).map((m) => ({ negatives: Number(m[1]), q: Number(m[2]), share: Number(m[3]) }));
  assert.equal(rows[0]!.negatives, 0);
  assert.equal(rows[0]!.share, 100, 'with only positive feedback the model takes every prompt');
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i]!.q < rows[i - 1]!.q, `q falls with each step: ${JSON.stringify(rows)}`);
  assert.equal(rows.at(-1)!.share, 0, 'enough negatives move all the traffic away');
});

benchTest('router-agent.ts', "router mode's main-thread work per turn of a growing agent conversation", async () => {
  const out = await ok('router-agent.ts', [], 60_000);
  lines(out, /^(50000|300000|1000000) chars \(\d+ B\): parse [\d.]+ ms, route [\d.]+ ms, lookup [\d.]+ ms, remember [\d.]+ ms, decode [\d.]+ ms$/, 3);
});

benchTest('router-quality.ts', "cross-validated AIQ of the router's quality predictor for every split", async (t) => {
  const out = await ok('router-quality.ts', ['--data', benchData(t), '--folds', '2'], 60_000);
  lines(out, /^== split by (prompts|tasks|models|newmodels): \d+ folds$/, 4);
  for (const m of lines(out, /^router AIQ\s+([\d.]+) ± [\d.]+ \(min [\d.]+, max [\d.]+\)$/, 4)) positive(m, 'router AIQ', out);
  lines(out, /^router - knn\s+-?[\d.]+ ±/, 4);
});

benchTest('router-quality-methods.ts', 'each variant against the single-model hull and variant #0', async (t) => {
  const out = await ok('router-quality-methods.ts', ['--data', benchData(t)], 60_000);
  lines(out, new RegExp(`^(prompts|tasks)\\s+#[01] \\S.*AIQ (${NUM}) ± ${NUM}\\s+vs single ${NUM} ± ${NUM}\\s+vs #0 [+-]${NUM} ± ${NUM}`), 4);
});

benchTest('router-quality-speed.ts', 'feature extraction against JSON.parse, and predict over a catalog', async (t) => {
  const out = await ok('router-quality-speed.ts', ['--data', benchData(t), '--candidates', '30', '--rounds', '1'], 60_000);
  lines(out, /^(typical \(dev prompts\)|short \(200 chars\)|long \(16,000 chars\))\s+extract\s+[\d.]+ us .* extract \/ parse [\d.]+x$/, 3);
  lines(out, /^predict over 30 candidates \(\d+ learned\), (with the local correction|without it)\s*: p50 [\d.]+ us\s+p99 [\d.]+ us\s+CPU [\d.]+ us a call/, 2);
});

benchTest('router-quality-adopt.ts', 'adopting a learned state, full against packed, and through both backends', async (t) => {
  const out = await ok('router-quality-adopt.ts', ['--data', benchData(t), '--rounds', '1'], 60_000);
  lines(out, /^main thread to adopt: full from the worker [\d.]+ ms, full from JSON [\d.]+ ms, packed [\d.]+ ms \([\d.]+x of the worker's full state\)$/);
  const same = lines(out, /^largest \|q\(full\) - q\(packed\)\| over \d+ prompts x \d+ models: (\S+)$/)[0]!;
  assert.equal(Number(same[1]), 0, 'the packed state predicts what the full one does');
  lines(out, /^longest event-loop gap while loading, (worker backend \(packed\)|inline backend \(JSON\.parse\))\s+median [\d.]+ ms/, 2);
});

benchTest('token-estimate.ts', "the estimate's held-out error against o200k_base, shipped and fitted", async () => {
  const out = await ok('token-estimate.ts', [], 60_000);
  positive(lines(out, /^samples: (\d+) \(train \d+, held out \d+\); truth: o200k_base$/)[0]!, 'samples', out);
  lines(out, /^fitted coefficients: \{"words":/);
  lines(out, new RegExp(`^(shipped|fitted|chars/4)\\s+all \\(\\d+\\): mean ${NUM}% \\|err\\| median ${NUM}% p90 ${NUM}%`), 3);
});

benchTest('convert-threshold.ts', 'inline against pool conversion, and the crossover', async () => {
  const out = await ok('convert-threshold.ts', ['--sizes', '1,64,512', '--reps', '5'], 60_000);
  lines(out, /^\s+[\d.]+[KM] \|\s+[\d.]+\s+[\d.]+\s+\|\s+[\d.]+\s+[\d.]+\s+\|\s+[\d.]+\s+[\d.]+$/, 3);
  lines(out, /^crossover: (inline conversion stalls the loop 1 ms at ~\d+ KiB .* -> convert_threshold_bytes ≈ \d+|none in the measured sizes)/);
});

benchTest('reservation-estimate.ts', 'us per budget reservation for each kind of prompt', async () => {
  const out = await ok('reservation-estimate.ts', [], 90_000);
  for (const m of lines(out, /^.+ median ([\d.]+) us {2}min [\d.]+ {2}cost \$[\d.]+$/, 4)) positive(m, 'us', out);
});

benchTest('pool-inline-images.ts', "the prepare task without and with the budget reservation's read", async () => {
  const out = await ok('pool-inline-images.ts', ['--reps', '2'], 60_000);
  for (const ratio of lines(out, /^\| [^|\n]+ \| [^|\n]+ \| [\d.]+ \| [\d.]+ \| ([\d.]+) \|$/, 12)) positive(ratio, 'ratio', out);
});

benchTest('feedback-flatten.ts', 'inline against pool flattening, and the crossover', async () => {
  const out = await ok('feedback-flatten.ts', ['--sizes', '10,1000,3000', '--reps', '5'], 60_000);
  lines(out, /^\s+\d+\s+\d+K\s+\|\s+[\d.]+\s+[\d.]+\s+\|\s+[\d.]+\s+[\d.]+\s+\|\s+[\d.]+\s+[\d.]+$/, 3);
  lines(out, /^crossover: (~\d+ events \(\d+ KiB\) -> poolMinBytes ≈ \d+ bytes|none in the measured sizes)/);
});

benchTest('stream-relays.ts', 'CPU per stream of each relay, two trees compared', async () => {
  // The same tree twice: the comparison path (alternated processes, B/A of the medians) runs too.
  const out = await ok('stream-relays.ts', ['--trees', '.,.', '--rounds', '1', '--streams', '2000'], 60_000);
  lines(out, new RegExp(`^  (chat-stream \\(pass-through\\)|messages-stream \\(pass-through\\)|chat-to-anthropic-stream|messages-to-openai-stream|chat-to-gemini-stream|chat-to-bedrock-stream)\\s+A ${NUM}\\s+B ${NUM}\\s+B/A \\S+$`), 6);
});

benchTest('reload-stall.ts', 'event-loop stall of an inline and a threaded reload', async () => {
  const out = await ok('reload-stall.ts', ['--rounds', '1'], 60_000);
  lines(out, /^(inline|threaded)\s+longest event-loop delay per reload \(ms\): [\d, ]+; median [\d.]+; reload took \(ms, wall\) median [\d.]+$/, 2);
  positive(lines(out, /^ratio threaded\/inline \(medians\): ([\d.]+)$/)[0]!, 'ratio', out);
});

benchTest('responses-stall.ts', 'event-loop stall of one large body per route', async () => {
  const out = await ok('responses-stall.ts', ['--mb', '0.2', '--rounds', '1'], 60_000);
  lines(out, /^(chat|responses|responses\+store|responses inline|router)\s+longest stall ms: [\d, ]+\s+median [\d.]+ \(x chat [\d.]+\)\s+loop busy ms median [\d.]+/, 5);
});

benchTest('responses-store-write.ts', "a stored response's insert, on the main connection and through the write thread", async () => {
  const out = await ok('responses-store-write.ts', ['--rounds', '1'], 60_000);
  lines(out, /^\s+\d+ KB request: main-thread ms inline [\d.]+\s+via write thread [\d.]+\s+ratio [\d.]+x$/, 3);
});

benchTest('retention-stall.ts', "the records' retention pass on the main connection and on the write thread", async () => {
  const out = await ok('retention-stall.ts', ['--records', '3000', '--rounds', '1'], 60_000);
  lines(out, /^round 1 (main|thread)\s+longest stall [\d.]+ ms, pass \d+ ms$/, 2);
  positive(lines(out, /^ratio write thread \/ main thread: longest stall ([\d.]+)x, pass time [\d.]+x$/)[0]!, 'ratio', out);
});

benchTest('models-listing.ts', 'GET /v1/models built and cached, against GET /health', async () => {
  const out = await ok('models-listing.ts', ['--rounds', '1', '--requests', '5'], 60_000);
  positive(lines(out, /^ratio listing \/ health: ([\d.]+)x; gzip \/ health: [\d.]+x; filtered \/ health: [\d.]+x$/)[0]!, 'ratio', out);
});

benchTest('reservation-margin.ts', "the reservation's text figure against o200k_base per kind of text, before and after the class margins", async () => {
  const out = await ok('reservation-margin.ts', [], 60_000);
  const all = lines(out, /^o200k\s+all\s+\(\s*\d+\) before min ([\d.]+) median [\d.]+\s+after min ([\d.]+) median [\d.]+$/)[0]!;
  assert.ok(Number(all[2]) >= 1, `a reservation under the real count: ${all[0]}`);
  lines(out, /^o200k\s+(emoji|lang:cjk|lang:other)\s+\(\s*\d+\) before min [\d.]+ median [\d.]+\s+after min [\d.]+ median [\d.]+$/, 3);
});

benchTest('router-encode.ts', "the decision record's encoding per routed request, over the catalog and three named models", async () => {
  // 20,000 rows (its default): the thread's CPU clock counts in scheduler ticks here, and 1,000 rows
  // (about 3 ms) read 0.00 us/row in one run of three.
  const out = await ok('router-encode.ts', ['--rows', '20000', '--rounds', '1'], 60_000);
  for (const m of lines(out, /^(?:catalog|named)\s+this\s+encode\s+([\d.]+) us\/row \(median of 1\)$/, 2)) positive(m, 'us', out);
});

/** Scripts deliberately not run here, each with its reason (none at present). */
const NOT_RUN: Record<string, string> = {};

test('every bench/*.ts has a smoke test here (or a reason in NOT_RUN)', () => {
  const scripts = readdirSync(join(ROOT, 'bench')).filter((f) => f.endsWith('.ts'));
  const missing = scripts.filter((f) => !covered.has(f) && !(f in NOT_RUN));
  assert.deepEqual(missing, [], 'add a benchTest for each new bench script');
  for (const f of [...covered, ...Object.keys(NOT_RUN)]) assert.ok(existsSync(join(ROOT, 'bench', f)), `bench/${f} is gone: drop its test`);
});

test('every bench script that takes flags answers --help with its opening comment and a mistyped flag with exit 2', async () => {
  // They threw Node's ERR_PARSE_ARGS_UNKNOWN_OPTION stack on --help, except overhead.ts (its own text).
  const scripts = readdirSync(join(ROOT, 'bench')).filter((f) => f.endsWith('.ts') && readFileSync(join(ROOT, 'bench', f), 'utf8').includes('benchArgs('));
  assert.ok(scripts.length >= 15, `bench scripts using benchArgs: ${scripts.join(', ')}`);
  for (const f of scripts) {
    const help = await bench(f, ['--help'], 30_000);
    assert.equal(help.code, 0, `${f} --help: ${tail(help.stderr)}`);
    assert.ok(help.stdout.split('\n').length >= 2 && !/^\/\//m.test(help.stdout), `${f} --help printed: ${help.stdout}`);
    const bad = await bench(f, ['--no-such-flag'], 30_000);
    assert.equal(bad.code, 2, `${f} --no-such-flag: ${tail(bad.stderr)}`);
    assert.match(bad.stderr, /no-such-flag[\s\S]*--help/);
  }
});
