// The record write path under each rollup design, on a fresh store per run (bench/dashboard.ts):
//   none        no rollups at all (the floor)
//   triggers    migration 41's database triggers (SQLite row triggers with dec_add, PostgreSQL statement triggers)
//   fold-1      the writer journals each batch's hour cells in its own transaction and every batch is folded
//               at once into every grain and span: the cost of aggregating per batch in the writer
//   fold-N      the same, folded every N batches (what the gateway does: a fold a few seconds after writes)
// Batches of the record writer's default size, records stamped at `rate` per second (so batches and folds
// span the time they would in production), alternated over rounds; figures: rows/s, this process's CPU per row (folds included)
// and, on PostgreSQL, the server backend's CPU per row (from /proc, for the one connection the store uses).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dashboardRollupsDdl } from '../../src/store/dashboard-schema.ts';
import { PostgresStore } from '../../src/store/postgres.ts';
import { foldAll, foldSettings } from '../../src/store/rollup-fold.ts';
import { rollupBench } from '../../src/store/rollup-write.ts';
import { SqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { records } from './dashboard-data.ts';

export const VARIANTS = ['none', 'triggers', 'fold-1', 'fold-N'] as const;
export type Variant = (typeof VARIANTS)[number];
export type WriteFigures = { variant: Variant; rowsPerS: number; cpuUsPerRow: number; serverUsPerRow: number | null };

const TICKS = 100; // USER_HZ: /proc/<pid>/stat counts CPU in 1/100 s

function procCpuUs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) / TICKS) * 1e6;
}

async function open(kind: 'sqlite' | 'postgres', dir: string, pgUrl: string, schema: string): Promise<{ store: Store; backend: number | null }> {
  if (kind === 'sqlite') {
    const store = new SqliteStore({ path: join(dir, `write-${Math.random().toString(36).slice(2)}.db`) });
    await store.migrate();
    return { store, backend: null };
  }
  const store = new PostgresStore({ url: pgUrl, schema, max: 1 });
  await store.sql.run(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await store.migrate();
  const backend = Number((await store.sql.all('SELECT pg_backend_pid() AS p'))[0]!.p);
  return { store, backend };
}

async function once(kind: 'sqlite' | 'postgres', variant: Variant, n: number, batch: number, rate: number, foldEvery: number, dir: string, pgUrl: string, schema: string): Promise<WriteFigures> {
  const { store, backend } = await open(kind, dir, pgUrl, schema);
  const auto = { ...foldSettings };
  try {
    if (variant === 'triggers') for (const s of dashboardRollupsDdl(kind)) await store.sql.run(s);
    rollupBench.enabled = variant === 'fold-1' || variant === 'fold-N';
    // The folds run where the bench says, inside the timed loop.
    foldSettings.delayMs = 1e9; foldSettings.maxEntries = 1e9;
    const every = variant === 'fold-1' ? 1 : foldEvery;
    const recs = [...records(n, Date.now(), 99, (n / rate) * 1000, n)][0]!;
    const cpu0 = process.cpuUsage(); const srv0 = backend === null ? 0 : procCpuUs(backend); const t0 = performance.now();
    for (let i = 0, b = 1; i < recs.length; i += batch, b++) {
      await store.insertInferences(recs.slice(i, i + batch));
      if (rollupBench.enabled && (b % every === 0 || i + batch >= recs.length)) await foldAll(store.sql);
    }
    const wall = performance.now() - t0; const cpu = process.cpuUsage(cpu0);
    const server = backend === null ? null : (procCpuUs(backend) - srv0) / n;
    return { variant, rowsPerS: n / (wall / 1000), cpuUsPerRow: (cpu.user + cpu.system) / n, serverUsPerRow: server };
  } finally {
    rollupBench.enabled = true; Object.assign(foldSettings, auto);
    if (kind === 'postgres') await store.sql.run(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await store.close();
  }
}

/** Every variant `rounds` times, in a rotating order; returns the runs (the caller prints medians). */
export async function writePath(kind: 'sqlite' | 'postgres', n: number, batch: number, rate: number, foldEvery: number, rounds: number, dir: string, pgUrl: string, schema: string): Promise<WriteFigures[]> {
  const out: WriteFigures[] = [];
  for (let r = 0; r < rounds; r++) {
    const order = VARIANTS.map((_, i) => VARIANTS[(i + r) % VARIANTS.length]!);
    for (const v of order) out.push(await once(kind, v, n, batch, rate, foldEvery, dir, pgUrl, schema));
  }
  return out;
}
