// Shares provider ejections across replicas through Redis (when storage.redis_url is set): an
// ejection one replica decides is published and stored with its expiry, the others apply it, so a
// provider that is down costs the fleet about one failed attempt per ejection window, not one per replica.
// Redis trouble never reaches a request: publishing is fire-and-forget and errors are only logged.
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { UpstreamHealth } from '../engine/health.ts';

type Message = { provider: string; until: number; from: string };

export class HealthShare {
  readonly #pub: Redis;
  readonly #sub: Redis;
  readonly #health: UpstreamHealth;
  readonly #channel: string;
  readonly #prefix: string;
  readonly #me = randomUUID();
  readonly #onError: (e: unknown) => void;

  constructor(url: string, health: UpstreamHealth, opts: { prefix?: string; onError?: (e: unknown) => void } = {}) {
    this.#prefix = opts.prefix ?? 'gw:';
    this.#channel = `${this.#prefix}eject`;
    this.#health = health;
    this.#onError = opts.onError ?? (() => {});
    const o = { maxRetriesPerRequest: 1, commandTimeout: 1000, lazyConnect: true } as const;
    this.#pub = new Redis(url, o);
    this.#sub = new Redis(url, o);
    for (const c of [this.#pub, this.#sub]) c.on('error', (e) => this.#onError(e));
    this.#sub.on('message', (_ch: string, text: string) => this.#receive(text));
  }

  /** Subscribes, applies ejections still in force, and starts publishing this replica's. */
  async start(providers: Iterable<string>): Promise<void> {
    try {
      await Promise.all([this.#pub.connect(), this.#sub.connect()]);
      await this.#sub.subscribe(this.#channel);
      const ids = [...providers];
      if (ids.length > 0) {
        const vals = await this.#pub.mget(...ids.map((p) => `${this.#prefix}eject:${p}`));
        vals.forEach((v, i) => { const until = Number(v); if (v !== null && until > Date.now()) this.#health.ejectUntil(ids[i]!, until); });
      }
    } catch (e) { this.#onError(e); }
    this.#health.onEject = (provider, until) => this.#publish(provider, until);
  }

  #publish(provider: string, until: number): void {
    const ttl = Math.max(1, until - Date.now());
    const msg: Message = { provider, until, from: this.#me };
    this.#pub.set(`${this.#prefix}eject:${provider}`, String(until), 'PX', ttl)
      .then(() => this.#pub.publish(this.#channel, JSON.stringify(msg)))
      .catch((e: unknown) => this.#onError(e));
  }

  #receive(text: string): void {
    let m: Message;
    try { m = JSON.parse(text) as Message; } catch { return; }
    if (m.from === this.#me || typeof m.provider !== 'string' || !Number.isFinite(m.until)) return;
    this.#health.ejectUntil(m.provider, m.until);
  }

  async close(): Promise<void> {
    this.#health.onEject = null;
    this.#pub.disconnect();
    this.#sub.disconnect();
  }
}
