// In-memory cache of metric definitions (type and optimize direction, per scope: the API key) in front
// of the store. A definition is fixed by a metric's first value in its scope and never changes, so a
// cached one is final and no request needs the database twice for it.
import type { MetricClaim, MetricDef } from './metric-store.ts';

/** Where definitions live: `load` reads, `claim` fixes new ones (the gateway runs it on the write thread). */
export type MetricTypeStore = {
  load(scope: string, names: string[]): Promise<Map<string, MetricDef>>;
  claim(scope: string, wanted: MetricClaim[]): Promise<Map<string, MetricDef>>;
};

/** Entries beyond this are evicted oldest first: metric names come from clients, memory must not. */
export const METRIC_CACHE_MAX = 50_000;

// One cache per store object, so tests (and several stores in one process) never share definitions.
const caches = new WeakMap<MetricTypeStore, Map<string, MetricDef>>();

function cacheOf(store: MetricTypeStore): Map<string, MetricDef> {
  let c = caches.get(store);
  if (!c) { c = new Map(); caches.set(store, c); }
  return c;
}

const cacheKey = (scope: string, name: string): string => `${scope}\u0000${name}`;

function remember(cache: Map<string, MetricDef>, key: string, def: MetricDef): void {
  if (cache.size >= METRIC_CACHE_MAX && !cache.has(key)) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(key, def);
}

/**
 * One request's view of one scope's metrics: what the cache and one `load` know, plus what `claim`
 * fixes while the request runs (so later events of the batch see earlier ones).
 */
export class MetricTypes {
  readonly #store: MetricTypeStore;
  readonly #scope: string;
  readonly #known = new Map<string, MetricDef>();

  private constructor(store: MetricTypeStore, scope: string) { this.#store = store; this.#scope = scope; }

  /** Loads the definitions of `names` in `scope`: cache first, then one store query for the misses. */
  static async load(store: MetricTypeStore, scope: string, names: Iterable<string>): Promise<MetricTypes> {
    const view = new MetricTypes(store, scope);
    const cache = cacheOf(store);
    const misses: string[] = [];
    for (const n of names) {
      const d = cache.get(cacheKey(scope, n));
      if (d) view.#known.set(n, d);
      else misses.push(n);
    }
    if (misses.length > 0) {
      for (const [n, d] of await store.load(scope, misses)) {
        view.#known.set(n, d);
        remember(cache, cacheKey(scope, n), d);
      }
    }
    return view;
  }

  get(name: string): MetricDef | undefined { return this.#known.get(name); }

  /** Fixes new metrics' definitions and returns the definition each has now (another replica's, if it won). */
  async claim(wanted: MetricClaim[]): Promise<Map<string, MetricDef>> {
    const won = await this.#store.claim(this.#scope, wanted);
    const cache = cacheOf(this.#store);
    for (const [n, d] of won) {
      this.#known.set(n, d);
      remember(cache, cacheKey(this.#scope, n), d);
    }
    return won;
  }
}

/** Forgets every cached definition of `store` (tests, or after an operator edits metric_types by hand). */
export function clearMetricTypeCache(store: MetricTypeStore): void {
  caches.delete(store);
}
