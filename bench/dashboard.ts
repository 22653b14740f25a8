// Dashboard at scale: seeds inference records (with feedback and router decisions) into SQLite and
// PostgreSQL, times every admin-API call the pages make at each size (p50/p95 over --reps calls, in a
// gateway process of its own), the page loads in chromium, and the record write path under each rollup
// design (bench/lib/dashboard-write.ts). Prints how each figure grows from one size to the next.
// `npm test` runs it only in miniature (test/bench-smoke.test.ts).
//   node bench/dashboard.ts [--sizes 100000,1000000] [--backends sqlite,postgres] [--reps 15]
//     [--write-rows 20000] [--write-rate 1000] [--write-rounds 2] [--skip-write] [--skip-browser]
//     [--keep DIR]  (seed into DIR's SQLite file and a fixed PostgreSQL schema, keep them, reuse them next run)
//     [--seed-only] (with --keep: seed and stop)
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { benchArgs } from './lib/args.ts';
import pg from 'pg';
import { stringify } from 'yaml';
import { Users } from '../src/dashboard/users.ts';
import { startGateway } from '../src/serve.ts';
import { foldAll, foldSettings } from '../src/store/rollup-fold.ts';
import { openStore, type OpenStoreOptions } from '../src/store/open.ts';
import type { Store } from '../src/store/types.ts';
import { KEYS, decisionsFor, feedbackFor, records } from './lib/dashboard-data.ts';
import { VARIANTS, writePath } from './lib/dashboard-write.ts';

const { values: o } = benchArgs({ options: {
  sizes: { type: 'string', default: '100000,1000000' }, backends: { type: 'string', default: 'sqlite,postgres' },
  reps: { type: 'string', default: '15' }, 'write-rows': { type: 'string', default: '20000' }, 'write-rate': { type: 'string', default: '1000' },
  'write-rounds': { type: 'string', default: '2' }, 'skip-write': { type: 'boolean', default: false }, 'skip-browser': { type: 'boolean', default: false },
  'seed-only': { type: 'boolean', default: false },
  keep: { type: 'string' }, 'pg-url': { type: 'string', default: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
} });
const SIZES = o.sizes.split(',').map(Number);
const REPS = Number(o.reps);
const DAY = 86_400_000;
const ADMIN_KEY = 'bench-admin-key-0123456789abcdef0123456789';
const BENCH_USER = 'bench-admin@example.com';
const BENCH_PASSWORD = 'bench admin password 0123';
const pct = (xs: number[], q: number): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]!; };
const median = (xs: number[]): number => pct(xs, 0.5);

/** Seeds records [from, to) of a `total`-record data set spread over the 30 days before `end` (records, feedback, decisions). */
async function seed(store: Store, from: number, to: number, end: number): Promise<number> {
  const t0 = performance.now();
  let i = 0;
  for (const batch of records(to - from, end, 17 + from, 30 * DAY)) {
    await store.insertInferences(batch);
    await store.insertFeedback(feedbackFor(batch, from + i++));
    const d = decisionsFor(batch);
    await store.sql.run(`INSERT INTO router_decisions (inference_id, created_at, key_id, served_model, canonical, kind, features, decision)
      VALUES ${d.map(() => "(?, ?, ?, ?, NULL, 'chat', '{}', ?)").join(', ')}`, d.flat());
  }
  return performance.now() - t0;
}

/** The admin-API calls the pages make (one per view, plus the detail and an export of a day), and what a filtered or zoned view adds. */
function calls(sampleId: string, now: number): Array<[string, string]> {
  const to = new Date(now).toISOString();
  const from = (ms: number): string => `${new Date(now - ms).toISOString()}&to=${to}`;
  return [
    ['usage 7 d by model (page default)', `/usage?group=model&from=${from(7 * DAY)}`],
    ['usage 7 d by model, New York days', `/usage?group=model&tz=America/New_York&from=${from(7 * DAY)}`],
    ['usage 30 d by key', `/usage?group=key&from=${from(30 * DAY)}`],
    ['usage 30 d by key, New York days', `/usage?group=key&tz=America/New_York&from=${from(30 * DAY)}`],
    ['usage 30 d by model, one key', `/usage?group=model&key=${KEYS[3]}&from=${from(30 * DAY)}`],
    ['usage 24 h hourly by provider', `/usage?group=provider&bucket=hour&from=${from(DAY)}`],
    ['keys (with stats)', '/keys'],
    ['requests, page 1 (24 h)', `/requests?limit=50&from=${from(DAY)}`],
    ['requests: model + errors', `/requests?limit=50&model=openai/gpt-5&status=error&from=${from(DAY)}`],
    ['requests: router decisions', `/requests?limit=50&routed=true&from=${from(DAY)}`],
    ['requests: partial', `/requests?limit=50&partial=true&from=${from(DAY)}`],
    ['request detail', `/requests/${sampleId}`],
    ['models (catalog)', '/models'],
    ['models/compare 30 d', `/models/compare?from=${from(30 * DAY)}`],
    ['router overview 7 d (page default)', `/router?from=${from(7 * DAY)}`],
    ['usage export 1 d by key, CSV', `/usage/export?format=csv&bucket=hour&group=key&from=${from(DAY)}`],
  ];
}

async function timeCalls(url: string, sampleId: string, end: number): Promise<Map<string, { p50: number; p95: number }>> {
  const out = new Map<string, { p50: number; p95: number }>();
  for (const [name, path] of calls(sampleId, end)) {
    const times: number[] = [];
    for (let i = 0; i < REPS + 2; i++) {
      const t0 = performance.now();
      const res = await fetch(`${url}/admin/api/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${path}: ${res.status}`);
      if (i >= 2) times.push(performance.now() - t0);
    }
    out.set(name, { p50: pct(times, 0.5), p95: pct(times, 0.95) });
  }
  return out;
}

/**
 * Page loads as a signed-in admin (a real session cookie: intercepting requests to add the admin key
 * would turn the browser's HTTP cache off), median of 4 after a first load that fills the cache.
 */
async function pageLoads(url: string, sampleId: string): Promise<Map<string, number> | null> {
  if (o['skip-browser'] || !existsSync('/usr/bin/chromium')) return null;
  const { launchBrowser } = await import('../test/helpers/browser.ts');
  const b = await launchBrowser();
  const page = b.context.pages()[0] ?? await b.context.newPage();
  const signIn = await fetch(`${url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: BENCH_USER, password: BENCH_PASSWORD }) });
  if (!signIn.ok) throw new Error(`bench sign-in: ${signIn.status}`);
  const [name, value] = signIn.headers.get('set-cookie')!.split(';')[0]!.split('=') as [string, string];
  await b.context.addCookies([{ name, value, url }]);
  const out = new Map<string, number>();
  for (const path of ['usage', 'requests', `requests/${sampleId}`, 'keys', 'models', 'router']) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await page.goto(`${url}/dashboard/${path}`);
      await page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
      if (i > 0) times.push(performance.now() - t0);
    }
    out.set(path.startsWith('requests/') ? 'request detail' : path, median(times));
  }
  await b.close();
  return out;
}

function printWrite(kind: string, runs: Awaited<ReturnType<typeof writePath>>): void {
  const base = runs.filter((r) => r.variant === 'none');
  const b = { cpu: median(base.map((r) => r.cpuUsPerRow)), srv: median(base.map((r) => r.serverUsPerRow ?? 0)) };
  console.log(`  write path (${kind}): ${o['write-rows']} records at ${o['write-rate']}/s stamped, batches of 200, fold every ${foldSettings.delayMs / 1000} s of records; median of ${o['write-rounds']} runs`);
  for (const v of VARIANTS) {
    const rs = runs.filter((r) => r.variant === v);
    const cpu = median(rs.map((r) => r.cpuUsPerRow)); const srv = rs[0]!.serverUsPerRow === null ? null : median(rs.map((r) => r.serverUsPerRow!));
    console.log(`    ${v.padEnd(9)} ${String(Math.round(median(rs.map((r) => r.rowsPerS)))).padStart(6)} rows/s   CPU/row here ${cpu.toFixed(1).padStart(5)} us (+${(cpu - b.cpu).toFixed(1)})` +
      (srv === null ? '' : `   server ${srv.toFixed(1).padStart(5)} us (+${(srv - b.srv).toFixed(1)})`));
  }
}

async function dropSchema(s: string): Promise<void> {
  const c = new pg.Client({ connectionString: o['pg-url'] }); await c.connect(); await c.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`); await c.end();
}

async function runBackend(name: 'sqlite' | 'postgres'): Promise<void> {
  const dir = o.keep ?? mkdtempSync(join(tmpdir(), 'gw-dash-bench-'));
  mkdirSync(dir, { recursive: true });
  const schema = o.keep ? `gw_dash_bench_${basename(o.keep).toLowerCase().replace(/[^a-z0-9]/g, '_')}` : `gw_dash_bench_${process.pid}`;
  const opts: OpenStoreOptions = name === 'sqlite' ? { sqlitePath: join(dir, 'gateway.db') } : { sqlitePath: '', databaseUrl: o['pg-url'], pgSchema: schema };
  const figures = new Map<number, Map<string, { p50: number; p95: number }>>();
  const loads = new Map<number, Map<string, number>>();
  try {
    console.log(`\n== ${name}`);
    if (!o['skip-write']) {
      const w = name === 'sqlite' ? 'sqlite' : 'postgres';
      const period = (Number(o['write-rate']) * foldSettings.delayMs) / 1000 / 200;
      printWrite(w, await writePath(w, Number(o['write-rows']), 200, Number(o['write-rate']), Math.max(1, Math.round(period)), Number(o['write-rounds']), dir, o['pg-url'], `${schema}_w`));
    }
    const store = await openStore(opts);
    const have = Number((await store.sql.all('SELECT COUNT(*) AS n FROM inferences'))[0]!.n);
    // A kept data set ends where it was seeded; the calls ask for ranges ending there.
    const last = (await store.sql.all('SELECT MAX(created_at) AS t FROM inferences'))[0]?.t;
    const end = have > 0 ? Date.parse(last instanceof Date ? last.toISOString() : String(last)) + 1 : Date.now();
    if (have === 0) {
      await store.insertKey({ id: 'benchadmin00', name: 'x', hash: 'x', createdAt: new Date().toISOString(), lastUsedAt: null, expiresAt: null, revokedAt: null, allowedModels: [], budgetUsd: null, budgetPeriod: null, rpmLimit: null, tpmLimit: null });
      for (const [i, k] of KEYS.entries()) await store.insertKey({ id: k, name: `bench key ${i}`, hash: `h${i}`, createdAt: new Date().toISOString(), lastUsedAt: null, expiresAt: null, revokedAt: null, allowedModels: [], budgetUsd: i % 3 === 0 ? '500' : null, budgetPeriod: i % 3 === 0 ? 'month' : i % 7 === 0 ? 'total' : null, rpmLimit: null, tpmLimit: null });
    }
    const users = new Users(store.sql);
    if (!(await users.list()).some((u) => u.email === BENCH_USER)) await users.create({ email: BENCH_USER, role: 'admin', password: BENCH_PASSWORD });
    let at = have;
    for (const size of SIZES) {
      if (at < size) {
        const ms = await seed(store, at, size, end);
        await foldAll(store.sql); // the seeding loop never yields to the fold timers (SQLite's calls are synchronous)
        console.log(`  seeded records ${at}-${size} in ${(ms / 1000).toFixed(0)} s (${Math.round((size - at) / (ms / 1000))} records/s with feedback, decisions and rollups)`);
        at = size;
      } else if (at > size) { console.log(`  ${size}: the kept data set holds ${at} records already; skipped`); continue; }
      if (o['seed-only']) continue;
      const cells = await store.sql.all("SELECT span, COUNT(*) AS n FROM usage_rollup GROUP BY span ORDER BY span");
      console.log(`  ${size} records: usage_rollup ${cells.map((c) => `${c.n} ${c.span === 'h' ? 'hour' : 'day'} rows`).join(', ')}`);
      const sample = String((await store.sql.all('SELECT inference_id AS id FROM router_decisions ORDER BY inference_id DESC LIMIT 1'))[0]!.id);
      const cfgDir = mkdtempSync(join(tmpdir(), 'gw-dash-cfg-'));
      writeFileSync(join(cfgDir, 'gateway.yaml'), stringify({
        version: 1, providers_dir: join(process.cwd(), 'providers'), server: { host: '127.0.0.1', port: 0 }, reload: { watch: false },
        auth: { enabled: true, admin_key: ADMIN_KEY }, storage: { sqlite_path: opts.sqlitePath || join(dir, 'unused.db'), database_url: opts.databaseUrl ?? '' },
        workers: { threads: 0 },
      }));
      const gw = await startGateway(join(cfgDir, 'gateway.yaml'), { ...process.env, ...(name === 'postgres' ? { GATEWAY_PG_SCHEMA: schema } : {}) });
      try {
        const f = await timeCalls(gw.url, sample, end);
        figures.set(size, f);
        for (const [n, r] of f) console.log(`    ${n.padEnd(36)} p50 ${r.p50.toFixed(1).padStart(7)} ms   p95 ${r.p95.toFixed(1).padStart(7)} ms${r.p95 > 300 ? '   OVER 300 ms' : ''}`);
        const l = await pageLoads(gw.url, sample);
        if (l) { loads.set(size, l); console.log(`    page loads in chromium (median of 4, to data-ready): ${[...l].map(([p, ms]) => `${p} ${ms.toFixed(0)} ms`).join(', ')}`); }
      } finally {
        await gw.stop();
        rmSync(cfgDir, { recursive: true, force: true });
      }
    }
    await store.close();
    printGrowth(figures, loads);
  } finally {
    if (!o.keep) { rmSync(dir, { recursive: true, force: true }); if (name === 'postgres') await dropSchema(schema).catch(() => {}); }
  }
}

function printGrowth(figures: Map<number, Map<string, { p50: number; p95: number }>>, loads: Map<number, Map<string, number>>): void {
  const sizes = [...figures.keys()].sort((a, b) => a - b);
  if (sizes.length < 2) return;
  const [a, b] = [sizes[0]!, sizes[sizes.length - 1]!];
  console.log(`  growth ${a} -> ${b} records (p95 ratio):`);
  for (const [n, r] of figures.get(b)!) console.log(`    ${n.padEnd(36)} x${(r.p95 / figures.get(a)!.get(n)!.p95).toFixed(2)}`);
  const la = loads.get(a); const lb = loads.get(b);
  if (la && lb) console.log(`    page loads: ${[...lb].map(([p, ms]) => `${p} x${(ms / la.get(p)!).toFixed(2)}`).join(', ')}`);
}

for (const b of o.backends.split(',')) await runBackend(b as 'sqlite' | 'postgres');
