// The refresh overlay in the store (tables of migration 10, src/store/catalog-schema.ts), written once
// against store.sql for both backends: versions are allocated in a transaction, so two replicas that
// refresh at once cannot both publish the same version; old versions and runs are pruned.
import type { SqlRunner } from '../store/sql-runner.ts';
import type { CatalogOverlay, SourceReport } from './overlay.ts';
import type { RefreshSources } from './refresh-sources.ts';

/** What a stored overlay holds besides its patches: the normalized source data, reused when a source fails next time. */
export type StoredOverlay = CatalogOverlay & { raw: RefreshSources };

export type RefreshOutcome = 'ok' | 'partial' | 'failed' | 'unchanged';
export type RefreshRun = {
  id: string; startedAt: number; finishedAt: number; outcome: RefreshOutcome; overlayVersion: number | null;
  sources: SourceReport[]; error?: string;
};

const KEEP_OVERLAYS = 20;
const KEEP_RUNS = 200;
const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : Number(v));

/** The newest overlay version, or 0 when none was stored (cheap: replicas poll it). */
export async function latestOverlayVersion(sql: SqlRunner): Promise<number> {
  const rows = await sql.all('SELECT MAX(version) AS v FROM catalog_overlays');
  const v = rows[0]?.v;
  return v === null || v === undefined ? 0 : num(v);
}

/** The newest stored overlay, or null. */
export async function latestOverlay(sql: SqlRunner): Promise<StoredOverlay | null> {
  const rows = await sql.all('SELECT version, created_at, body FROM catalog_overlays ORDER BY version DESC LIMIT 1');
  const r = rows[0];
  if (!r) return null;
  const body = JSON.parse(String(r.body)) as Omit<StoredOverlay, 'version' | 'created_at'>;
  return { ...body, version: num(r.version), created_at: new Date(num(r.created_at)).toISOString() };
}

/** Stores a new overlay as the next version (in one transaction) and prunes old ones; returns its version. */
export async function saveOverlay(sql: SqlRunner, overlay: Omit<StoredOverlay, 'version' | 'created_at'>, at = Date.now()): Promise<number> {
  return sql.tx(async (q) => {
    const rows = await q.all('SELECT MAX(version) AS v FROM catalog_overlays');
    const version = num(rows[0]?.v ?? 0) + 1;
    await q.run('INSERT INTO catalog_overlays (version, created_at, body, report) VALUES (?, ?, ?, ?)',
      [version, at, JSON.stringify(overlay), JSON.stringify(overlay.sources)]);
    await q.run('DELETE FROM catalog_overlays WHERE version <= ?', [version - KEEP_OVERLAYS]);
    return version;
  });
}

export async function recordRun(sql: SqlRunner, run: RefreshRun): Promise<void> {
  await sql.run('INSERT INTO catalog_refresh_runs (id, started_at, finished_at, outcome, overlay_version, report) VALUES (?, ?, ?, ?, ?, ?)',
    [run.id, run.startedAt, run.finishedAt, run.outcome, run.overlayVersion, JSON.stringify({ sources: run.sources, ...(run.error ? { error: run.error } : {}) })]);
  await sql.run(`DELETE FROM catalog_refresh_runs WHERE started_at < (SELECT started_at FROM catalog_refresh_runs ORDER BY started_at DESC LIMIT 1 OFFSET ${KEEP_RUNS - 1})`);
}

/** The newest run (any replica's), or null. */
export async function latestRun(sql: SqlRunner): Promise<RefreshRun | null> {
  const rows = await sql.all('SELECT id, started_at, finished_at, outcome, overlay_version, report FROM catalog_refresh_runs ORDER BY started_at DESC LIMIT 1');
  const r = rows[0];
  if (!r) return null;
  const report = JSON.parse(String(r.report)) as { sources: SourceReport[]; error?: string };
  return {
    id: String(r.id), startedAt: num(r.started_at), finishedAt: num(r.finished_at), outcome: String(r.outcome) as RefreshOutcome,
    overlayVersion: r.overlay_version === null || r.overlay_version === undefined ? null : num(r.overlay_version),
    sources: report.sources, ...(report.error ? { error: report.error } : {}),
  };
}
