// A catalog refresh: fetch the live sources, rebuild each provider's models by the sync's rules with
// them, keep what differs from the generated files as per-model patches, drop patches that break an
// invariant, and hand back the overlay to store. Pure of side effects (the caller stores and applies),
// so `catalog diff` shows exactly what `catalog refresh` would publish.
import type { RawConfig } from '../config/load.ts';
import { compileConfig } from '../config/compile.ts';
import type { Config } from '../config/types.ts';
import type { Env } from '../config/env.ts';
import { checkCatalog } from './check.ts';
import type { CatalogOverlay, ModelPatch, SourceReport } from './overlay.ts';
import type { StoredOverlay } from './overlay-store.ts';
import { PROVIDER_SOURCES } from './providers-map.ts';
import { applyOpenRouter, applyProviderList } from './refresh-merge.ts';
import { fetchSources, type RefreshSources } from './refresh-sources.ts';
import { parseDevProvider, type DevModel } from './sources.ts';
import { buildAllCatalogs } from './sync.ts';
import type { CatalogModel } from './types.ts';

export type RefreshPlan = {
  /** Provider id -> patches over its generated file (what the overlay stores). */
  patches: Record<string, ModelPatch[]>;
  raw: RefreshSources;
  reports: SourceReport[];
  /** Patches dropped by validation, withdrawals, and similar lines for the report. */
  notes: string[];
  counts: { added: number; changed: number; withdrawn: number; unpriced: number };
  /** Every source that was read failed (skipped ones aside): nothing should be published. */
  failed: boolean;
};

/** What differs between a generated record and its refreshed version (a whole record for a new model). */
function diffModel(before: CatalogModel | undefined, after: CatalogModel): ModelPatch | null {
  if (!before) return after as ModelPatch;
  const patch: Record<string, unknown> = { name: after.name };
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const k of keys) {
    if (k === 'name' || k === 'created') continue;
    const a = (after as Record<string, unknown>)[k];
    const b = (before as Record<string, unknown>)[k];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    if (a !== undefined) patch[k] = a;
    else if (k === 'status') patch.status = 'active';
  }
  return Object.keys(patch).length > 1 ? patch as ModelPatch : null;
}

/** Each configured provider's models with the live data merged in (sync rules), keyed by provider id. */
function mergeAll(raw: RawConfig, sources: RefreshSources, notes: string[]): Map<string, Map<string, CatalogModel>> {
  const live = sources.modelsDev ? new Map(Object.entries(sources.modelsDev.providers).map(([id, p]) => [id, parseDevProvider(p)])) : undefined;
  const builds = live ? buildAllCatalogs(undefined, live) : null;
  const out = new Map<string, Map<string, CatalogModel>>();
  for (const p of raw.providers) {
    if (p.doc.enabled === false) continue;
    const id = p.doc.id;
    const src = PROVIDER_SOURCES.find((s) => s.id === id) ?? null;
    const base = builds?.get(id)?.file.models ?? (p.catalog?.models ?? []) as unknown as CatalogModel[];
    const models = new Map(base.map((m) => [m.name, m]));
    if (src?.openrouterApi && sources.openrouter) applyOpenRouter(src, models, sources.openrouter.models);
    const list = sources.providers[id];
    if (list) {
      const liveFacts = new Map<string, DevModel>((src?.dev && live?.get(src.dev) || []).map((d) => [d.id, d]));
      const withdrawn = applyProviderList(src, models, list.models, liveFacts);
      if (withdrawn.length > 0) notes.push(`${id}: ${withdrawn.length} model(s) no longer in the provider's list, taken as withdrawn: ${withdrawn.slice(0, 10).join(', ')}${withdrawn.length > 10 ? ', ...' : ''}`);
    }
    out.set(id, models);
  }
  return out;
}

/**
 * Fetches and merges. `cfg` supplies the providers, keys and settings; `raw` the generated files the
 * patches are relative to. A failure of every source read gives `failed` and no patches.
 */
export async function computeRefresh(raw: RawConfig, cfg: Config, previous: StoredOverlay | null, env: Env = process.env, signal?: AbortSignal): Promise<RefreshPlan> {
  const { sources, reports } = await fetchSources(cfg, cfg.catalogSettings, previous?.raw ?? null, signal);
  const read = reports.filter((r) => !r.skipped);
  const failed = read.length > 0 && read.every((r) => !r.ok && !r.kept);
  const notes: string[] = [];
  const counts = { added: 0, changed: 0, withdrawn: 0, unpriced: 0 };
  const patches: Record<string, ModelPatch[]> = {};
  if (failed) return { patches, raw: sources, reports, notes, counts, failed };
  for (const [id, models] of mergeAll(raw, sources, notes)) {
    const offline = new Map(((raw.providers.find((p) => p.doc.id === id)?.catalog?.models ?? []) as unknown as CatalogModel[]).map((m) => [m.name, m]));
    const list: ModelPatch[] = [];
    for (const m of [...models.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const patch = diffModel(offline.get(m.name), m);
      if (patch) list.push(patch);
    }
    if (list.length > 0) patches[id] = list;
  }
  validate(raw, env, patches, notes);
  for (const [id, list] of Object.entries(patches)) {
    const offline = new Set(((raw.providers.find((p) => p.doc.id === id)?.catalog?.models ?? []) as Array<{ name: string }>).map((m) => m.name));
    for (const p of list) {
      if (!offline.has(p.name)) { counts.added++; if (p.unpriced) counts.unpriced++; }
      else if (p.status === 'retired') counts.withdrawn++;
      else counts.changed++;
    }
  }
  return { patches, raw: sources, reports, notes, counts, failed };
}

/**
 * The overlay must compile, and every patched model must pass the catalog's invariants: patches that
 * break one are dropped (and noted), the rest published. Problems of unpatched models are not the
 * refresh's (`catalog check` reports them).
 */
function validate(raw: RawConfig, env: Env, patches: Record<string, ModelPatch[]>, notes: string[]): void {
  for (let round = 0; round < 3; round++) {
    const candidate: CatalogOverlay = { version: 0, created_at: new Date().toISOString(), providers: patches, sources: [] };
    const problems = checkCatalog(compileConfig(raw, env, candidate));
    let dropped = 0;
    for (const p of problems) {
      const slash = p.id.indexOf('/');
      const list = patches[p.id.slice(0, slash)];
      const i = list?.findIndex((x) => x.name === p.id.slice(slash + 1)) ?? -1;
      if (!list || i < 0) continue;
      list.splice(i, 1);
      dropped++;
      notes.push(`dropped the refreshed data of ${p.id}: [${p.check}] ${p.message}`);
    }
    if (dropped === 0) return;
  }
}
