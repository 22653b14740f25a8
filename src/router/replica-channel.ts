// A Redis pub/sub channel between gateway replicas: two connections (a subscribed one cannot publish),
// each message one JSON object tagged with its sender so a replica skips its own, anything else on
// the channel (not JSON, not an object) dropped before a handler sees it, and Redis trouble only
// reported: no request ever waits on the channel.
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { isRecord } from '../formats/errors.ts';
import { redisClient } from '../util/redis-retry.ts';

const OPTIONS = { maxRetriesPerRequest: 1, commandTimeout: 1000, lazyConnect: true } as const;

export class ReplicaChannel {
  /** The publishing connection, also for plain commands (GET/SET) beside the channel. */
  readonly redis: Redis;
  readonly #sub: Redis;
  readonly #channel: string;
  readonly #me = randomUUID();
  readonly #onError: (e: unknown) => void;
  /** The channel is subscribed (ioredis resubscribes it by itself after a reconnect). */
  #subscribed = false;
  /** start() could not subscribe (Redis away as the gateway started): the first connection that comes does. */
  #late = false;

  /**
   * `onResubscribed`: the subscription is back after Redis was lost (ioredis resubscribes by itself);
   * whatever was published in between never reaches this replica, so state kept in keys is read again.
   */
  constructor(url: string, channel: string, onMessage: (m: Record<string, unknown>) => void, onError: (e: unknown) => void, onResubscribed?: () => void) {
    this.#channel = channel;
    this.#onError = onError;
    this.redis = redisClient(url, OPTIONS);
    this.#sub = redisClient(url, OPTIONS);
    for (const c of [this.redis, this.#sub]) c.on('error', (e) => onError(e));
    // 'ready' comes on each connect; once subscribed, ioredis resubscribes right after emitting it. A
    // PING sent on the next turn is answered after the subscription is in place: then read the keys.
    // Before the first subscription, start() makes it, or when Redis was away then, the first connection
    // that comes (before, nothing did: a replica started without Redis never heard the others' messages
    // until it restarted, and never read the keys stored meanwhile).
    this.#sub.on('ready', () => {
      if (!this.#subscribed) {
        if (this.#late) this.#sub.subscribe(channel).then(() => { this.#subscribed = true; onResubscribed?.(); }, (e: unknown) => onError(e));
        return;
      }
      if (!onResubscribed) return;
      setImmediate(() => { this.#sub.ping().then(() => onResubscribed(), (e: unknown) => onError(e)); });
    });
    this.#sub.on('message', (_ch: string, text: string) => {
      let m: unknown;
      try { m = JSON.parse(text); } catch { return; }
      if (!isRecord(m) || m.from === this.#me) return;
      try { onMessage(m); } catch (e) { onError(e); }
    });
  }

  /**
   * Connects and subscribes; a failure is reported, and the replica works alone until Redis answers:
   * then it subscribes and `onResubscribed` reads what was stored meanwhile.
   */
  async start(): Promise<void> {
    try {
      await Promise.all([this.redis.connect(), this.#sub.connect()]);
      await this.#sub.subscribe(this.#channel);
      this.#subscribed = true;
    } catch (e) {
      this.#late = true;
      throw e;
    }
  }

  /** Publishes `m` (with this replica as its sender), fire and forget. */
  publish(m: Record<string, unknown>): void {
    this.redis.publish(this.#channel, JSON.stringify({ ...m, from: this.#me })).catch((e: unknown) => this.#onError(e));
  }

  close(): void {
    this.redis.disconnect();
    this.#sub.disconnect();
  }
}
