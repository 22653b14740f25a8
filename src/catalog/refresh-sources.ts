// Reads every live source of a refresh at once, each with its own timeout: the configured providers'
// model lists (with their keys), OpenRouter's public models API and the models.dev API. A source that
// fails keeps the data it gave last time (from the previous overlay), and the report says so.
import type { Config, Provider } from '../config/types.ts';
import { DiscoveryError, getJson, hasCredentials } from './discovery/http.ts';
import { PROVIDER_LISTERS, type ListedModel } from './discovery/provider-lists.ts';
import type { SourceReport } from './overlay.ts';
import { PROVIDER_SOURCES } from './providers-map.ts';
import type { CatalogSettings } from './settings.ts';

/** Normalized source data, stored with each overlay so that a failing source can fall back to it. */
export type RefreshSources = {
  /** models.dev provider id -> its provider object (the API's shape, models only). */
  modelsDev?: { fetchedAt: string; providers: Record<string, unknown> };
  /** OpenRouter's `data` items. */
  openrouter?: { fetchedAt: string; models: unknown[] };
  /** Gateway provider id -> what its own list endpoint returned. */
  providers: Record<string, { fetchedAt: string; models: ListedModel[] }>;
};

const OPENROUTER_FIELDS = ['id', 'name', 'created', 'context_length', 'architecture', 'pricing', 'top_provider', 'supported_parameters', 'expiration_date'] as const;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const failure = (e: unknown): string => (e instanceof DiscoveryError ? `${e.kind}: ${e.message}` : (e as Error).message);

async function timed<T>(source: string, run: () => Promise<{ data: T; models: number; pages?: number }>): Promise<{ report: SourceReport; data?: T }> {
  const t0 = performance.now();
  try {
    const r = await run();
    return { report: { source, ok: true, models: r.models, ...(r.pages ? { pages: r.pages } : {}), ms: Math.round(performance.now() - t0) }, data: r.data };
  } catch (e) {
    return { report: { source, ok: false, models: 0, error: failure(e), ms: Math.round(performance.now() - t0) } };
  }
}

function listableProviders(cfg: Config): Provider[] {
  return [...cfg.providers.values()].filter((p) => PROVIDER_LISTERS[p.format] !== undefined);
}

/**
 * Fetches the sources `settings.sources` names. Providers without credentials are skipped (reported,
 * not failed). `previous` supplies the data of sources that fail this time.
 */
export async function fetchSources(cfg: Config, settings: CatalogSettings, previous: RefreshSources | null, signal?: AbortSignal): Promise<{ sources: RefreshSources; reports: SourceReport[] }> {
  const timeoutMs = settings.refresh.timeoutMs;
  const now = new Date().toISOString();
  const sources: RefreshSources = { providers: {} };
  const tasks: Array<Promise<SourceReport>> = [];
  const want = new Set(settings.refresh.sources);

  if (want.has('models.dev')) {
    tasks.push(timed('models.dev', async () => {
      const body = await getJson(settings.refresh.modelsDevUrl, { timeoutMs, ...(signal ? { signal } : {}) });
      if (!isObj(body)) throw new DiscoveryError('invalid', 'models.dev: the answer is not an object of providers');
      const ours = new Set(PROVIDER_SOURCES.map((s) => s.dev).filter((d): d is string => d !== null));
      const providers = Object.fromEntries(Object.entries(body).filter(([id, p]) => ours.has(id) && isObj(p) && isObj(p.models)));
      if (Object.keys(providers).length === 0) throw new DiscoveryError('invalid', 'models.dev: none of the synced providers is in the answer');
      const models = Object.values(providers).reduce<number>((n, p) => n + Object.keys((p as { models: object }).models).length, 0);
      return { data: { fetchedAt: now, providers }, models };
    }).then(({ report, data }) => { if (data) sources.modelsDev = data; return report; }));
  }
  if (want.has('openrouter')) {
    tasks.push(timed('openrouter', async () => {
      const body = await getJson(settings.refresh.openrouterUrl, { timeoutMs, ...(signal ? { signal } : {}) });
      const items = isObj(body) && Array.isArray(body.data) ? body.data.filter(isObj) : null;
      if (!items) throw new DiscoveryError('invalid', 'openrouter: the answer has no "data" list');
      // Kept with the overlay for the next refresh: only the fields the merge reads (descriptions are most of the bytes).
      const models = items.map((m) => Object.fromEntries(OPENROUTER_FIELDS.filter((k) => m[k] !== undefined).map((k) => [k, m[k]])));
      return { data: { fetchedAt: now, models }, models: models.length };
    }).then(({ report, data }) => { if (data) sources.openrouter = data; return report; }));
  }
  if (want.has('providers')) {
    for (const p of listableProviders(cfg)) {
      const source = `provider:${p.id}`;
      if (!hasCredentials(p)) { tasks.push(Promise.resolve({ source, ok: true, models: 0, skipped: 'no key configured' })); continue; }
      tasks.push(timed(source, async () => {
        const list = await PROVIDER_LISTERS[p.format]!(p, { timeoutMs, ...(signal ? { signal } : {}) });
        return { data: { fetchedAt: now, models: list.models }, models: list.models.length, pages: list.pages };
      }).then(({ report, data }) => { if (data) sources.providers[p.id] = data; return report; }));
    }
  }
  const reports = await Promise.all(tasks);
  // A failed source keeps what it gave last time: one bad key or timeout never empties a provider.
  for (const r of reports) {
    if (r.ok || !previous) continue;
    if (r.source === 'models.dev' && previous.modelsDev) { sources.modelsDev = previous.modelsDev; r.kept = previous.modelsDev.fetchedAt; }
    if (r.source === 'openrouter' && previous.openrouter) { sources.openrouter = previous.openrouter; r.kept = previous.openrouter.fetchedAt; }
    const id = r.source.startsWith('provider:') ? r.source.slice('provider:'.length) : null;
    if (id && previous.providers[id]) { sources.providers[id] = previous.providers[id]!; r.kept = previous.providers[id]!.fetchedAt; }
  }
  reports.sort((a, b) => (a.source < b.source ? -1 : 1));
  return { sources, reports };
}


