// The Router page's one call (routerOverview: models, versions, constraints, feedback, all requests, the
// time series and the breakdown by prompt kind) at 100 000 routed decisions over 7 days, on SQLite and
// PostgreSQL: decisions stored through insertDecisions (the router rollups written with them, as the
// router's worker does), then median and p95 call times per window, and migration 22's backfill of the
// same decisions. `npm test` runs it only in miniature (test/bench-smoke.test.ts).
//   node bench/router-overview.ts [--decisions 100000] [--reps 15] [--backends sqlite,postgres]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './lib/args.ts';
import pg from 'pg';
import { existsSync } from 'node:fs';
import { routerOverview } from '../src/dashboard/router-overview.ts';
import { routerKinds } from '../src/dashboard/router-kinds.ts';
import { insertDecisions, type DecisionRow } from '../src/router/store.ts';
import { routerKindRollupDdl } from '../src/store/router-rollup.ts';
import { PostgresStore } from '../src/store/postgres.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { rng } from './lib/dashboard-data.ts';

const { values: o } = benchArgs({ options: {
  decisions: { type: 'string', default: '100000' }, reps: { type: 'string', default: '15' }, backends: { type: 'string', default: 'sqlite,postgres' },
  'pg-url': { type: 'string', default: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
} });
const N = Number(o.decisions);
const REPS = Number(o.reps);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const KEYS = Array.from({ length: 7 }, (_, i) => `benchkey${i}`);
const CHOSEN = ['openai/gpt-5', 'openai/gpt-5-mini', 'anthropic/claude-sonnet-4', 'google/gemini-2.5-flash', 'mistral/mistral-small', null];
const KINDS = ['code', 'math', 'chat', 'writing', 'extraction', 'reasoning', 'summarization', 'translation'];

function decisions(end: number): DecisionRow[] {
  const r = rng(7);
  const out: DecisionRow[] = [];
  for (let i = 0; i < N; i++) {
    const at = end - 7 * DAY + Math.floor((i / N) * 7 * DAY);
    const chosen = CHOSEN[Math.floor(r() * CHOSEN.length)]!;
    const kind = KINDS[Math.floor(r() * KINDS.length)]!;
    const status = chosen === null ? 400 : r() < 0.03 ? 502 : 200;
    out.push({
      inferenceId: uuidv7(at), createdAt: new Date(at).toISOString(), keyId: KEYS[i % KEYS.length]!, servedModel: chosen, canonical: chosen, kind,
      status, costUsd: chosen ? `0.000${Math.floor(r() * 9000) + 1000}` : '0', features: { schema: 1, kind, stats: {}, idx: [], val: [] } as never,
      decision: {
        w: 1, policy: null, state_version: 1 + Math.floor((i / N) * 4), kind, explored: r() < 0.05, affinity: null, chosen, chosen_quality: chosen ? 0.8 : null,
        chosen_cost_usd: chosen ? 0.001 : null, input_tokens: 100, token_method: 'exact', expected_output_tokens: 300, plan: [], candidates: 12,
        excluded_by: r() < 0.5 ? { max_cost: 2 } : {}, included: [], excluded: {}, attempts: [{}],
      },
    });
  }
  return out;
}

const quantile = (xs: number[], q: number): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]!; };

async function run(backend: 'sqlite' | 'postgres'): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'router-bench-'));
  const schema = `gw_router_bench_${process.pid}`;
  if (backend === 'postgres') { const c = new pg.Client(o['pg-url']); await c.connect(); await c.query(`CREATE SCHEMA ${schema}`); await c.end(); }
  const store = backend === 'sqlite' ? new SqliteStore({ path: join(dir, 'gw.db') }) : new PostgresStore({ url: o['pg-url'], schema });
  try {
    await store.migrate();
    const end = Math.floor(Date.now() / HOUR) * HOUR;
    const rows = decisions(end);
    let t0 = performance.now();
    for (let i = 0; i < rows.length; i += 500) await insertDecisions(store.sql, rows.slice(i, i + 500));
    console.log(`\n== ${backend}: ${N} decisions stored in chunks of 500 in ${((performance.now() - t0) / 1000).toFixed(2)} s (with the rollups)`);
    const kindRows = Number((await store.sql.all('SELECT COUNT(*) AS n FROM router_rollup_kind'))[0]!.n);
    const modelRows = Number((await store.sql.all('SELECT COUNT(*) AS n FROM router_rollup'))[0]!.n);
    console.log(`  router_rollup ${modelRows} rows, router_rollup_kind ${kindRows} rows`);
    const admin = { role: 'admin' as const, userId: null };
    const member = { role: 'member' as const, userId: 'u1', keyIds: [KEYS[0]!] };
    const windows: Array<[string, number, object, object]> = [
      ['1 day (hour buckets)', DAY, {}, admin], ['7 days (page default, day buckets)', 7 * DAY, {}, admin],
      ['7 days, hour buckets', 7 * DAY, { bucket: 'hour' }, admin], ['7 days, New York days', 7 * DAY, { tz: 'America/New_York' }, admin],
      ['30 days', 30 * DAY, {}, admin], ['7 days, one member key', 7 * DAY, {}, member],
    ];
    for (const [name, span, extra, access] of windows) {
      const q = { from: end - span + 1, to: end + 1, top: 10, qualitySignals: [], ...extra };
      for (let i = 0; i < 2; i++) await routerOverview(store.sql, q, access as never);
      const ms: number[] = [];
      let last: Awaited<ReturnType<typeof routerOverview>> | null = null;
      for (let i = 0; i < REPS; i++) { const a = performance.now(); last = await routerOverview(store.sql, q, access as never); ms.push(performance.now() - a); }
      console.log(`  ${name.padEnd(36)} p50 ${quantile(ms, 0.5).toFixed(1).padStart(6)} ms  p95 ${quantile(ms, 0.95).toFixed(1).padStart(6)} ms  (routed ${last!.routed}, ${last!.series.length} buckets, ${last!.kinds.length} kinds)`);
    }
    // The kinds read alone, and (when a copy of the overview before the series and kinds is put at
    // src/dashboard/_old-router-overview.ts) the call without them, under the same load.
    const q7 = { from: end - 7 * DAY + 1, to: end + 1, top: 10, qualitySignals: [] };
    const w7 = { from: new Date(end - 7 * DAY).toISOString(), to: new Date(end + HOUR).toISOString(), keys: null };
    const timed = async (name: string, f: () => Promise<unknown>): Promise<void> => {
      for (let i = 0; i < 2; i++) await f();
      const ms: number[] = [];
      for (let i = 0; i < REPS; i++) { const a = performance.now(); await f(); ms.push(performance.now() - a); }
      console.log(`  ${name.padEnd(36)} p50 ${quantile(ms, 0.5).toFixed(1).padStart(6)} ms  p95 ${quantile(ms, 0.95).toFixed(1).padStart(6)} ms`);
    };
    await timed('7 days: the kinds read alone', () => routerKinds(store.sql, w7));
    const old = join(import.meta.dirname, '..', 'src', 'dashboard', '_old-router-overview.ts');
    if (existsSync(old)) {
      const before = (await import(old)) as { routerOverview: typeof routerOverview };
      await timed('7 days: the call before (no series, kinds)', () => before.routerOverview(store.sql, q7, admin));
      await timed('7 days: the call now', () => routerOverview(store.sql, q7, admin));
    }
    // Migration 22's backfill over the same decisions (no inference records here: every cost and status comes out empty).
    await store.sql.run('DROP TABLE router_rollup_kind');
    t0 = performance.now();
    for (const st of routerKindRollupDdl(backend)) await store.sql.run(st);
    console.log(`  migration 22 backfill of ${N} decisions: ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    if (backend === 'postgres') { const c = new pg.Client(o['pg-url']); await c.connect(); await c.query(`DROP SCHEMA ${schema} CASCADE`); await c.end(); }
  }
}

for (const b of o.backends.split(',')) await run(b as 'sqlite' | 'postgres');
