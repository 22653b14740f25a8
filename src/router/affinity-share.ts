// Shares conversation affinity across replicas through Redis (when storage.redis_url is set): what a
// replica remembers is published, batched every 50 ms in one message, and applied by the others, so
// a follow-up that a load balancer sends to another replica still finds the model whose prompt cache
// holds its prefix (the cache is the provider's, not the replica's). Lookups stay local and
// synchronous: no Redis round trip on the request path. A follow-up arriving within the batch window
// (plus the publish) on another replica misses; Redis trouble is logged, never seen by a request.
import type { Affinity, SharedEntry } from './affinity.ts';
import { ReplicaChannel } from './replica-channel.ts';

/** Entries published per message at most (a burst is sent in several). */
const MAX_BATCH = 2000;

export class AffinityShare {
  readonly #ch: ReplicaChannel;
  readonly #affinity: Affinity;
  readonly #onError: (e: unknown) => void;
  readonly #flushMs: number;
  #queue: SharedEntry[] = [];
  #timer: NodeJS.Timeout | null = null;

  constructor(url: string, affinity: Affinity, opts: { prefix?: string; flushMs?: number; onError?: (e: unknown) => void } = {}) {
    this.#affinity = affinity;
    this.#flushMs = opts.flushMs ?? 50;
    this.#onError = opts.onError ?? (() => {});
    this.#ch = new ReplicaChannel(url, `${opts.prefix ?? 'gw:'}affinity`, (m) => this.#receive(m), this.#onError);
  }

  async start(): Promise<void> {
    try { await this.#ch.start(); } catch (e) { this.#onError(e); }
    this.#affinity.onRemember = (e) => {
      this.#queue.push(e);
      this.#timer ??= setTimeout(() => this.#flush(), this.#flushMs);
    };
  }

  #flush(): void {
    this.#timer = null;
    while (this.#queue.length > 0) this.#ch.publish({ entries: this.#queue.splice(0, MAX_BATCH) });
  }

  #receive(m: Record<string, unknown>): void {
    if (!Array.isArray(m.entries)) return;
    for (const e of m.entries as unknown[]) {
      if (Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'string' && Number.isFinite(e[2]) && Number.isFinite(e[3])) this.#affinity.apply(e as SharedEntry);
    }
  }

  async close(): Promise<void> {
    this.#affinity.onRemember = null;
    if (this.#timer) { clearTimeout(this.#timer); this.#flush(); }
    this.#ch.close();
  }
}
