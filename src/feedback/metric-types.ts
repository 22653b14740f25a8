// In-memory cache of metric types in front of the Store. A metric's type is fixed by its first
// value and never changes, so a cached type is final and no request needs the database twice.
import type { MetricType, Store } from '../store/types.ts';

export type MetricTypeStore = Pick<Store, 'ensureMetric' | 'getMetricTypes'>;

/** Names beyond this are evicted oldest first: metric names come from clients, memory must not. */
export const METRIC_CACHE_MAX = 50_000;

// One cache per store object, so tests (and several stores in one process) never share types.
const caches = new WeakMap<MetricTypeStore, Map<string, MetricType>>();

function cacheOf(store: MetricTypeStore): Map<string, MetricType> {
  let c = caches.get(store);
  if (!c) { c = new Map(); caches.set(store, c); }
  return c;
}

function remember(cache: Map<string, MetricType>, name: string, type: MetricType): void {
  if (cache.size >= METRIC_CACHE_MAX && !cache.has(name)) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(name, type);
}

/**
 * The request's view of metric types: what the cache and one `getMetricTypes` call know, plus
 * what `claim` fixes while the request runs (so later events of the batch see earlier ones).
 */
export class MetricTypes {
  readonly #store: MetricTypeStore;
  readonly #known = new Map<string, MetricType>();

  private constructor(store: MetricTypeStore) { this.#store = store; }

  /** Loads the types of `names`: cache first, then one store query for the misses. */
  static async load(store: MetricTypeStore, names: Iterable<string>): Promise<MetricTypes> {
    const view = new MetricTypes(store);
    const cache = cacheOf(store);
    const misses: string[] = [];
    for (const n of names) {
      const t = cache.get(n);
      if (t) view.#known.set(n, t);
      else misses.push(n);
    }
    if (misses.length > 0) {
      for (const [n, t] of await store.getMetricTypes(misses)) {
        view.#known.set(n, t);
        remember(cache, n, t);
      }
    }
    return view;
  }

  get(name: string): MetricType | undefined { return this.#known.get(name); }

  /**
   * Fixes the types of new metrics (atomic in the store: concurrent first uses agree on one
   * winner) and returns the type each metric has now.
   */
  async claim(wanted: Array<{ metric: string; type: MetricType }>): Promise<Map<string, MetricType>> {
    const won = await Promise.all(wanted.map((w) => this.#store.ensureMetric(w.metric, w.type)));
    const cache = cacheOf(this.#store);
    const out = new Map<string, MetricType>();
    wanted.forEach((w, i) => {
      const t = won[i]!;
      this.#known.set(w.metric, t);
      remember(cache, w.metric, t);
      out.set(w.metric, t);
    });
    return out;
  }
}

/** Forgets every cached type of `store` (tests, or after an operator edits metrics by hand). */
export function clearMetricTypeCache(store: MetricTypeStore): void {
  caches.delete(store);
}
