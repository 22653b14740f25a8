// `gateway catalog sync | refresh | diff | check`: regenerate the files, refresh the live overlay,
// show what a refresh would change, and report the catalog's invariants (docs/catalog.md).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, type RawConfig } from '../config/load.ts';
import { compileConfig } from '../config/compile.ts';
import type { Config } from '../config/types.ts';
import type { Store } from '../store/types.ts';
import { checkCatalog, formatProblems } from './check.ts';
import type { CatalogOverlay, SourceReport } from './overlay.ts';
import { latestOverlay, type StoredOverlay } from './overlay-store.ts';
import { computeRefresh, type RefreshPlan } from './refresh.ts';
import { publishRefresh } from './refresher.ts';

type Out = (line: string) => void;
export const CATALOG_USAGE = `  catalog sync          regenerate providers/catalog/*.yaml from the pinned open data (docs/catalog.md)
  catalog refresh       read the providers' model lists, OpenRouter and models.dev; store the overlay every replica serves
  catalog diff          show what a refresh would change in the served catalog, without storing it
  catalog check         report the catalog's invariants (prices, limits, dates, zero prices, callability)`;

function sourceLine(r: SourceReport): string {
  if (r.skipped) return `  - ${r.source}: skipped (${r.skipped})`;
  if (r.ok) return `  + ${r.source}: ${r.models} models${r.pages && r.pages > 1 ? ` in ${r.pages} pages` : ''} (${r.ms} ms)`;
  return `  ! ${r.source}: FAILED ${r.error}${r.kept ? `; kept its data of ${r.kept}` : ''}`;
}

/** The served catalog's differences between two overlays: models added, removed and the facts that changed. */
export function catalogDiff(before: Config, after: Config): string[] {
  const lines: string[] = [];
  const fields = (e: Config['models'] extends Map<string, infer E> ? E : never): Record<string, string> => ({
    status: e.status, prompt: e.model.pricing.prompt, completion: e.model.pricing.completion, context: String(e.model.context_window),
    output: String(e.model.max_completion_tokens), priced: String(e.priced),
  });
  for (const [id, e] of after.models) {
    const b = before.models.get(id);
    if (!b) { lines.push(`+ ${id}${e.priced ? ` ($${e.model.pricing.prompt} / $${e.model.pricing.completion} per token)` : ' (unpriced)'}`); continue; }
    const [fb, fa] = [fields(b), fields(e)];
    const changed = Object.keys(fa).filter((k) => fa[k] !== fb[k]).map((k) => `${k} ${fb[k]} -> ${fa[k]}`);
    if (changed.length > 0) lines.push(`~ ${id}: ${changed.join(', ')}`);
  }
  for (const id of before.models.keys()) if (!after.models.has(id)) lines.push(`- ${id}${after.catalog.retired.has(id) ? ' (withdrawn)' : ''}`);
  return lines.sort((a, b) => (a.slice(2) < b.slice(2) ? -1 : 1));
}

/**
 * `fn` with the configured store, or with null when `read` only and the SQLite file does not exist yet:
 * it holds no overlay, and `catalog check` or `diff` (which store nothing) created an empty database
 * file where none was, without a word.
 */
async function withStore<T>(cfg: Config, read: boolean, fn: (store: Store | null) => Promise<T>): Promise<T> {
  if (read && !cfg.storage.databaseUrl && !existsSync(resolve(cfg.storage.sqlitePath))) return fn(null);
  const { openStoreFor } = await import('../serve.ts');
  const store = await openStoreFor(cfg);
  try { return await fn(store); } finally { await store.close(); }
}

async function plan(raw: RawConfig, cfg: Config, previous: StoredOverlay | null, out: Out): Promise<RefreshPlan> {
  const p = await computeRefresh(raw, cfg, previous);
  out('sources:');
  for (const r of p.reports) out(sourceLine(r));
  for (const n of p.notes) out(`note: ${n}`);
  return p;
}

export async function runCatalogCommand(args: string[], file: string, out: Out = console.log, err: Out = console.error): Promise<number> {
  const sub = args[0];
  const known = sub === 'sync' || sub === 'refresh' || sub === 'diff' || sub === 'check';
  // No subcommand takes options: `catalog sync --dry-run` wrote every catalog file, the flag ignored.
  if (!known || args.length > 1) {
    const why = sub === undefined ? 'name a subcommand' : !known ? `unknown subcommand "${sub}"` : `catalog ${sub} takes no arguments, got "${args[1]}"`;
    err(`${why}\nusage:\n${CATALOG_USAGE}`);
    return 2;
  }
  if (sub === 'sync') {
    const { syncCatalog } = await import('./sync.ts');
    const cfg = compileConfig(loadConfig(file));
    const r = await syncCatalog({ outDir: resolve(cfg.providersDir, 'catalog') });
    out(`catalog sync: ${r.written.length} files written, ${r.changed.length} changed${r.changed.length ? `: ${r.changed.join(', ')}` : ''}`);
    return 0;
  }
  const raw = loadConfig(file);
  const files = compileConfig(raw);
  return withStore(files, sub !== 'refresh', async (store) => {
    const stored = store === null ? null : await latestOverlay(store.sql);
    const served = compileConfig(raw, process.env, stored);
    if (sub === 'check') {
      const problems = checkCatalog(served);
      for (const n of served.catalog.notes) out(`note: ${n}`);
      if (problems.length === 0) { out(`catalog OK: ${served.models.size} models${stored ? ` (overlay v${stored.version})` : ''}, every invariant holds`); return 0; }
      err(`catalog: ${problems.length} problem${problems.length === 1 ? '' : 's'}:`);
      for (const line of formatProblems(problems)) err(line);
      return 1;
    }
    const started = Date.now();
    const p = await plan(raw, files, stored, out);
    if (p.failed) { err('every source failed: nothing to change, the last good catalog stays'); return 1; }
    const next: CatalogOverlay = { version: (stored?.version ?? 0) + 1, created_at: new Date().toISOString(), providers: p.patches, sources: p.reports };
    const changes = catalogDiff(served, compileConfig(raw, process.env, next));
    if (sub === 'diff') {
      out(changes.length === 0 ? 'no change to the served catalog' : `${changes.length} change${changes.length === 1 ? '' : 's'} to the served catalog:`);
      for (const line of changes) out(line);
      return 0;
    }
    const run = await publishRefresh(store!.sql, p, stored, started);
    out(`catalog refresh ${run.outcome}: overlay v${run.overlayVersion ?? 0}; ${p.counts.added} new (${p.counts.unpriced} unpriced), ${p.counts.changed} changed, ${p.counts.withdrawn} withdrawn; ${changes.length} change(s) to the served catalog`);
    out('running gateways apply it within catalog.refresh.poll_seconds');
    return run.outcome === 'failed' ? 1 : 0;
  });
}
