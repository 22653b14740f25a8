// The catalog refresh in a running gateway: every replica applies the newest overlay stored (polled,
// and at start before serving); when `catalog.refresh.enabled`, one refresh per interval across the
// replicas (a replica skips its turn when any stored or tried one recently) runs on a worker thread,
// is stored as the next version and published through the reload path. Its state shows in /health
// and /metrics; a failed or partial refresh keeps the last good catalog.
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { ConfigHolder } from '../config/reload.ts';
import type { Env } from '../config/env.ts';
import type { Registry } from '../metrics/registry.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { latestOverlay, latestOverlayVersion, latestRun, recordRun, saveOverlay, type RefreshOutcome, type RefreshRun, type StoredOverlay } from './overlay-store.ts';
import type { RefreshPlan } from './refresh.ts';

/** Stores a refresh's plan: a new overlay version unless nothing changed or every source failed; the run is recorded either way. */
export async function publishRefresh(sql: SqlRunner, plan: RefreshPlan, previous: StoredOverlay | null, startedAt: number): Promise<RefreshRun> {
  const base = { id: randomUUID(), startedAt, sources: plan.reports };
  let outcome: RefreshOutcome;
  let version: number | null = previous?.version ?? null;
  if (plan.failed) outcome = 'failed';
  else if (previous && JSON.stringify(previous.providers) === JSON.stringify(plan.patches)) outcome = 'unchanged';
  else {
    version = await saveOverlay(sql, { providers: plan.patches, sources: plan.reports, raw: plan.raw });
    outcome = plan.reports.some((r) => !r.ok) ? 'partial' : 'ok';
  }
  const run: RefreshRun = { ...base, finishedAt: Date.now(), outcome, overlayVersion: version, ...(plan.failed ? { error: 'every source failed; the last good catalog stays' } : {}) };
  await recordRun(sql, run);
  return run;
}

export type RefresherStatus = {
  overlay_version: number | null;
  overlay_created_at: string | null;
  refresh_enabled: boolean;
  running: boolean;
  last_run: { at: string; outcome: RefreshOutcome; failed_sources: Array<{ source: string; error: string; kept?: string }> } | null;
  last_error: string | null;
};

export class CatalogRefresher {
  readonly #holder: ConfigHolder;
  readonly #sql: SqlRunner;
  readonly #file: string;
  readonly #env: Env;
  readonly #log: (line: string) => void;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<RefreshRun | null> | null = null;
  #worker: Worker | null = null;
  #lastRun: RefreshRun | null = null;
  #lastError: string | null = null;
  #applied: StoredOverlay | null = null;
  #closed = false;
  #runs = { ok: 0, partial: 0, failed: 0, unchanged: 0 };

  constructor(holder: ConfigHolder, sql: SqlRunner, opts: { file: string; env?: Env; log?: (line: string) => void; registry?: Registry }) {
    this.#holder = holder;
    this.#sql = sql;
    this.#file = opts.file;
    this.#env = opts.env ?? process.env;
    this.#log = opts.log ?? ((l) => console.log(l));
    if (opts.registry) this.#metrics(opts.registry);
  }

  #metrics(r: Registry): void {
    r.collected('gateway_catalog_overlay_version', 'Catalog refresh overlay version this replica serves (0: the generated catalog only).', 'gauge', () => this.#applied?.version ?? 0);
    for (const outcome of ['ok', 'partial', 'failed', 'unchanged'] as const) {
      r.collected(`gateway_catalog_refresh_${outcome}_total`, `Catalog refreshes run by this replica that ended ${outcome}.`, 'counter', () => this.#runs[outcome]);
    }
    r.collected('gateway_catalog_refresh_failing_sources', 'Sources that failed in the last catalog refresh this replica saw (their last good data is kept).', 'gauge',
      () => (this.#lastRun ? this.#lastRun.sources.filter((s) => !s.ok).length : null));
  }

  /** Applies the newest stored overlay (before the server listens), then polls for newer ones and refreshes when due. */
  async start(): Promise<void> {
    await this.#applyLatest().catch((e: unknown) => { this.#lastError = `reading the stored catalog overlay failed: ${(e as Error).message}`; });
    this.#lastRun = await latestRun(this.#sql).catch(() => null);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => { void this.#tick().finally(() => this.#schedule()); }, this.#holder.current.catalogSettings.refresh.pollMs);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    try {
      const v = await latestOverlayVersion(this.#sql);
      if (v > (this.#applied?.version ?? 0)) await this.#applyLatest();
      const s = this.#holder.current.catalogSettings.refresh;
      if (!s.enabled || this.#running) return;
      const last = await latestRun(this.#sql);
      if (last) this.#lastRun = last;
      // One refresh per interval across replicas: any replica's recent run (stored or failed) counts.
      if (!last || Date.now() - last.startedAt >= s.intervalMs) await this.refreshNow();
    } catch (e) {
      this.#lastError = (e as Error).message;
    }
  }

  async #applyLatest(): Promise<void> {
    const o = await latestOverlay(this.#sql);
    if (!o || o.version === this.#applied?.version) return;
    const r = await this.#holder.setCatalogOverlay(o);
    if (!r.ok) { this.#lastError = `catalog overlay v${o.version} not applied: ${r.error}`; return; }
    this.#applied = o;
    this.#log(`catalog overlay v${o.version} applied (config version ${r.version})`);
  }

  /** Runs one refresh now (on a worker thread), stores and applies it; concurrent calls share the run. */
  refreshNow(): Promise<RefreshRun | null> {
    this.#running ??= this.#refresh().finally(() => { this.#running = null; });
    return this.#running;
  }

  async #refresh(): Promise<RefreshRun | null> {
    const startedAt = Date.now();
    try {
      const previous = await latestOverlay(this.#sql);
      const plan = await this.#inWorker(previous);
      const run = await publishRefresh(this.#sql, plan, previous, startedAt);
      this.#runs[run.outcome]++;
      this.#lastRun = run;
      this.#lastError = null;
      const failed = run.sources.filter((s) => !s.ok);
      this.#log(`catalog refresh ${run.outcome}: overlay v${run.overlayVersion ?? 0}; +${plan.counts.added} new, ${plan.counts.changed} changed, ${plan.counts.withdrawn} withdrawn`
        + (failed.length ? `; failed: ${failed.map((s) => `${s.source} (${s.error})`).join('; ')}` : ''));
      if (run.outcome === 'ok' || run.outcome === 'partial') await this.#applyLatest();
      return run;
    } catch (e) {
      this.#runs.failed++;
      this.#lastError = `catalog refresh failed: ${(e as Error).message}`;
      this.#log(this.#lastError);
      const run: RefreshRun = { id: randomUUID(), startedAt, finishedAt: Date.now(), outcome: 'failed', overlayVersion: this.#applied?.version ?? null, sources: [], error: (e as Error).message };
      this.#lastRun = run;
      await recordRun(this.#sql, run).catch(() => {});
      return run;
    }
  }

  #inWorker(previous: StoredOverlay | null): Promise<RefreshPlan> {
    return new Promise((ok, fail) => {
      const w = new Worker(new URL('./refresh-worker.ts', import.meta.url), { workerData: { file: this.#file, env: { ...this.#env }, previous } });
      this.#worker = w;
      w.once('message', (m: { ok: true; plan: RefreshPlan } | { ok: false; message: string }) => (m.ok ? ok(m.plan) : fail(new Error(m.message))));
      w.once('error', fail);
      w.once('exit', (code) => { this.#worker = null; fail(new Error(`refresh worker exited (${code})`)); });
    });
  }

  status(): RefresherStatus {
    const last = this.#lastRun;
    return {
      overlay_version: this.#applied?.version ?? null,
      overlay_created_at: this.#applied?.created_at ?? null,
      refresh_enabled: this.#holder.current.catalogSettings.refresh.enabled,
      running: this.#running !== null,
      last_run: last ? {
        at: new Date(last.finishedAt).toISOString(), outcome: last.outcome,
        failed_sources: last.sources.filter((s) => !s.ok).map((s) => ({ source: s.source, error: s.error ?? 'failed', ...(s.kept ? { kept: s.kept } : {}) })),
      } : null,
      last_error: this.#lastError,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#worker?.terminate();
    await this.#running?.catch(() => null);
  }
}
