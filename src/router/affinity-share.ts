// Shares conversation affinity across replicas through Redis (when storage.redis_url is set): what a
// replica remembers is published, batched every 50 ms in one message, and applied by the others, so
// a follow-up that a load balancer sends to another replica still finds the model whose prompt cache
// holds its prefix (the cache is the provider's, not the replica's). Lookups stay local and
// synchronous: no Redis round trip on the request path. A follow-up arriving within the batch window
// (plus the publish) on another replica misses; Redis trouble is logged, never seen by a request.
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { Affinity, SharedEntry } from './affinity.ts';

type Message = { from: string; entries: SharedEntry[] };
/** Entries published per message at most (a burst is sent in several). */
const MAX_BATCH = 2000;

export class AffinityShare {
  readonly #pub: Redis;
  readonly #sub: Redis;
  readonly #affinity: Affinity;
  readonly #channel: string;
  readonly #me = randomUUID();
  readonly #onError: (e: unknown) => void;
  readonly #flushMs: number;
  #queue: SharedEntry[] = [];
  #timer: NodeJS.Timeout | null = null;

  constructor(url: string, affinity: Affinity, opts: { prefix?: string; flushMs?: number; onError?: (e: unknown) => void } = {}) {
    this.#channel = `${opts.prefix ?? 'gw:'}affinity`;
    this.#affinity = affinity;
    this.#flushMs = opts.flushMs ?? 50;
    this.#onError = opts.onError ?? (() => {});
    const o = { maxRetriesPerRequest: 1, commandTimeout: 1000, lazyConnect: true } as const;
    this.#pub = new Redis(url, o);
    this.#sub = new Redis(url, o);
    for (const c of [this.#pub, this.#sub]) c.on('error', (e) => this.#onError(e));
    this.#sub.on('message', (_ch: string, text: string) => this.#receive(text));
  }

  async start(): Promise<void> {
    try {
      await Promise.all([this.#pub.connect(), this.#sub.connect()]);
      await this.#sub.subscribe(this.#channel);
    } catch (e) { this.#onError(e); }
    this.#affinity.onRemember = (e) => {
      this.#queue.push(e);
      this.#timer ??= setTimeout(() => this.#flush(), this.#flushMs);
    };
  }

  #flush(): void {
    this.#timer = null;
    while (this.#queue.length > 0) {
      const msg: Message = { from: this.#me, entries: this.#queue.splice(0, MAX_BATCH) };
      this.#pub.publish(this.#channel, JSON.stringify(msg)).catch((e: unknown) => this.#onError(e));
    }
  }

  #receive(text: string): void {
    let m: Message;
    try { m = JSON.parse(text) as Message; } catch { return; }
    if (!m || m.from === this.#me || !Array.isArray(m.entries)) return;
    for (const e of m.entries) {
      if (Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'string' && Number.isFinite(e[2]) && Number.isFinite(e[3])) this.#affinity.apply(e);
    }
  }

  async close(): Promise<void> {
    this.#affinity.onRemember = null;
    if (this.#timer) { clearTimeout(this.#timer); this.#flush(); }
    this.#pub.disconnect();
    this.#sub.disconnect();
  }
}
