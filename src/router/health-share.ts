// Shares provider ejections across replicas through Redis (when storage.redis_url is set): an
// ejection one replica decides is published and stored with its expiry, the others apply it, so a
// provider that is down costs the fleet about one failed attempt per ejection window, not one per replica.
// Redis trouble never reaches a request: publishing is fire-and-forget and errors are only logged.
import type { UpstreamHealth } from '../engine/health.ts';
import { ReplicaChannel } from './replica-channel.ts';

export class HealthShare {
  readonly #ch: ReplicaChannel;
  readonly #health: UpstreamHealth;
  readonly #prefix: string;
  readonly #onError: (e: unknown) => void;
  /** The providers whose stored ejections are read at start and after a resubscription: the current config's (a reload may add some). */
  #providers: () => Iterable<string> = () => [];

  constructor(url: string, health: UpstreamHealth, opts: { prefix?: string; onError?: (e: unknown) => void } = {}) {
    this.#prefix = opts.prefix ?? 'gw:';
    this.#health = health;
    this.#onError = opts.onError ?? (() => {});
    // Back after Redis was lost: ejections published meanwhile were missed, their keys were not.
    this.#ch = new ReplicaChannel(url, `${this.#prefix}eject`, (m) => this.#receive(m), this.#onError, () => { this.#applyStored().catch((e: unknown) => this.#onError(e)); });
  }

  /** Subscribes, applies ejections still in force, and starts publishing this replica's. */
  async start(providers: () => Iterable<string>): Promise<void> {
    this.#providers = providers;
    try {
      await this.#ch.start();
      await this.#applyStored();
    } catch (e) { this.#onError(e); }
    this.#health.onEject = (provider, until) => this.#publish(provider, until);
  }

  /** Applies the ejections stored in Redis that are still in force. */
  async #applyStored(): Promise<void> {
    const ids = [...this.#providers()];
    if (ids.length === 0) return;
    const vals = await this.#ch.redis.mget(...ids.map((p) => `${this.#prefix}eject:${p}`));
    vals.forEach((v, i) => { const until = Number(v); if (v !== null && until > Date.now()) this.#health.ejectUntil(ids[i]!, until); });
  }

  #publish(provider: string, until: number): void {
    const ttl = Math.max(1, until - Date.now());
    this.#ch.redis.set(`${this.#prefix}eject:${provider}`, String(until), 'PX', ttl)
      .then(() => this.#ch.publish({ provider, until }))
      .catch((e: unknown) => this.#onError(e));
  }

  #receive(m: Record<string, unknown>): void {
    if (typeof m.provider !== 'string' || typeof m.until !== 'number' || !Number.isFinite(m.until)) return;
    this.#health.ejectUntil(m.provider, m.until);
  }

  async close(): Promise<void> {
    this.#health.onEject = null;
    this.#ch.close();
  }
}
