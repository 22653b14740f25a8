// The in-memory key cache the request path authenticates against: loaded from the store at start,
// refreshed on an interval and after admin operations, so no request ever waits on the database.
import { withinReadDeadline } from '../store/read-deadline.ts';
import { GatewayError } from '../gateway-error.ts';
import type { KeyRecord, Store } from '../store/types.ts';
import { compileModelPatterns, constantTimeEqual, keyMatchesHash, parsePresentedKey } from './keys.ts';

/**
 * A key with what the request path needs decoded once: lowercase hex hash, revocation/expiry instants,
 * and `verified`, the last presented key whose SHA-256 matched `hash` (see authenticate).
 */
type Entry = {
  record: KeyRecord; allows: (modelId: string) => boolean; hash: string; revokedAtMs: number; expiresAtMs: number;
  verified: string | null;
  /** Hashes of a rotated key's previous secrets, each accepted until its instant (the rotation's grace period). */
  grace: Array<{ hash: string; untilMs: number }>;
};

/** A rotated key's previous hash and when it stops working (the dashboard keeps them: src/dashboard/keys-data.ts). */
export type GraceHash = { keyId: string; hash: string; validUntil: string };

const instant = (iso: string | null): number => (iso === null ? Infinity : Date.parse(iso));

export type KeyRingOptions = {
  refreshMs?: number;       // reload all keys this often (default 30 s)
  touchFlushMs?: number;    // write last-used times this often (default 10 s)
  now?: () => number;       // clock, for tests
  onError?: (what: 'refresh' | 'touch', err: unknown) => void;
  /** Previous hashes of rotated keys, loaded with every refresh (none when absent). */
  graceHashes?: () => Promise<GraceHash[]>;
  /**
   * Runs on each load before its keys are used, with the keys whose budget is new or changed (amount
   * or period, or a key not seen before); on the first load with every key, even none. The gateway
   * seeds the limiter's counters with it (limiter.seed): a budget added or moved to another period by
   * `keys edit` in another process then starts from the store's spend of the period. If it fails, the
   * load fails and the previous keys stay in use, so the next refresh tries again.
   */
  onBudgets?: (keys: KeyRecord[]) => Promise<void>;
};

/** The budget a key's limiter counter depends on: its amount and its period (monthly when unset). */
const budgetSignature = (r: KeyRecord): string | null => (r.budgetUsd === null ? null : `${r.budgetUsd}/${r.budgetPeriod ?? 'month'}`);

// One message for every rejected key so a caller learns nothing about which keys exist; the key is never echoed.
const INVALID = 'Invalid API key. Check the key, or ask the gateway operator for a new one.';

export class KeyRing {
  readonly #store: Store;
  readonly #opts: Required<Omit<KeyRingOptions, 'onError' | 'graceHashes' | 'onBudgets'>> & Pick<KeyRingOptions, 'onError' | 'graceHashes' | 'onBudgets'>;
  #entries = new Map<string, Entry>();
  #touched = new Map<string, number>();
  #timers: NodeJS.Timeout[] = [];
  #loaded = false;
  #lastMissRefresh = -Infinity;
  /** Whether the latest reload of the keys failed (the store unreadable); the ring serves the keys it holds. */
  #lastLoadFailed = false;
  /** The load in progress: loads run one after another, so an older one cannot replace a newer map. */
  #loading: Promise<void> = Promise.resolve();

  constructor(store: Store, opts: KeyRingOptions = {}) {
    this.#store = store;
    this.#opts = { refreshMs: opts.refreshMs ?? 30_000, touchFlushMs: opts.touchFlushMs ?? 10_000, now: opts.now ?? Date.now, onError: opts.onError, graceHashes: opts.graceHashes, onBudgets: opts.onBudgets };
  }

  /** Loads every key (failing start-up if the store is unreachable) and starts the background timers. */
  async start(): Promise<void> {
    await this.refresh();
    const refresh = setInterval(() => { this.refresh().catch((e: unknown) => this.#opts.onError?.('refresh', e)); }, this.#opts.refreshMs);
    const flush = setInterval(() => { this.flushTouches().catch((e: unknown) => this.#opts.onError?.('touch', e)); }, this.#opts.touchFlushMs);
    refresh.unref(); flush.unref();
    this.#timers.push(refresh, flush);
  }

  /** Applies a new auth.key_refresh_ms (config reload): the refresh timer restarts at the new period. */
  setRefreshMs(ms: number): void {
    if (ms === this.#opts.refreshMs) return;
    this.#opts.refreshMs = ms;
    const old = this.#timers[0];
    if (old === undefined) return; // not started: start() uses the new period
    clearInterval(old);
    const refresh = setInterval(() => { this.refresh().catch((e: unknown) => this.#opts.onError?.('refresh', e)); }, ms);
    refresh.unref();
    this.#timers[0] = refresh;
  }

  get refreshMs(): number { return this.#opts.refreshMs; }

  /** Swaps in a freshly loaded key map; on error the previous map stays in use. */
  refresh(): Promise<void> {
    const run = this.#loading.then(() => this.#load(), () => this.#load());
    this.#loading = run.then(() => { this.#lastLoadFailed = false; }, () => { this.#lastLoadFailed = true; });
    return run;
  }

  async #load(): Promise<void> {
    const records = await this.#store.listKeys();
    const grace = new Map<string, Entry['grace']>();
    for (const g of (await this.#opts.graceHashes?.()) ?? []) {
      const list = grace.get(g.keyId) ?? [];
      list.push({ hash: g.hash.toLowerCase(), untilMs: Date.parse(g.validUntil) });
      grace.set(g.keyId, list);
    }
    const next = new Map<string, Entry>();
    for (const r of records) {
      const hash = r.hash.toLowerCase();
      const prev = this.#entries.get(r.id);
      next.set(r.id, {
        record: r, allows: compileModelPatterns(r.allowedModels), hash, revokedAtMs: instant(r.revokedAt), expiresAtMs: instant(r.expiresAt),
        verified: prev?.hash === hash ? prev.verified : null, grace: grace.get(r.id) ?? [],
      });
    }
    if (this.#opts.onBudgets) {
      // Before the swap: a request with the new record finds its counter seeded (with Redis, a counter
      // made first by a request would win over the seed).
      const changed = records.filter((r) => {
        if (!this.#loaded) return true;
        const prev = this.#entries.get(r.id);
        return r.budgetUsd !== null && (!prev || budgetSignature(prev.record) !== budgetSignature(r));
      });
      if (!this.#loaded || changed.length > 0) await this.#opts.onBudgets(changed);
    }
    this.#entries = next;
    this.#loaded = true;
  }

  /**
   * A well-formed key whose id this ring does not know may have been created a moment ago (CLI, or the
   * admin API of another replica): reload once, at most every `minMs`, and say whether it is known now,
   * or that the store could not be read to tell ('unavailable': before 2026-11-29 such a key was a 401
   * "Invalid API key" for as long as the store was down, which clients take as final).
   */
  async refreshForUnknown(presented: string | undefined, minMs = 1000): Promise<'known' | 'unknown' | 'unavailable'> {
    const parsed = presented ? parsePresentedKey(presented) : null;
    if (!parsed || this.#entries.has(parsed.id)) return 'unknown';
    const now = this.#opts.now();
    // Within the period, the last reload's outcome stands: with the store unreadable, an id this ring
    // does not hold may be a key made since (another replica, the CLI), not a wrong one.
    if (now - this.#lastMissRefresh < minMs) return this.#lastLoadFailed ? 'unavailable' : 'unknown';
    this.#lastMissRefresh = now;
    try { await this.refresh(); } catch (e) { this.#opts.onError?.('refresh', e); return 'unavailable'; }
    return this.#entries.has(parsed.id) ? 'known' : 'unknown';
  }

  get size(): number { return this.#entries.size; }
  get loaded(): boolean { return this.#loaded; }

  /** The key record for a presented key; throws missing_api_key or invalid_api_key (401). */
  authenticate(presented: string | undefined): KeyRecord {
    if (presented === undefined || presented.trim() === '') {
      throw new GatewayError('missing_api_key', 'Missing API key. Send it as "Authorization: Bearer <key>" or "x-api-key: <key>".');
    }
    const parsed = parsePresentedKey(presented);
    const entry = parsed ? this.#entries.get(parsed.id) : undefined;
    if (!parsed || !entry || !this.#matches(entry, parsed.key)) throw new GatewayError('invalid_api_key', INVALID);
    const now = this.#opts.now();
    if (entry.revokedAtMs <= now) throw new GatewayError('invalid_api_key', 'This API key has been revoked.');
    if (entry.expiresAtMs <= now) throw new GatewayError('invalid_api_key', 'This API key has expired.');
    this.#touched.set(entry.record.id, now);
    return entry.record;
  }

  /**
   * A client sends the same key on every request. Once a presented key has matched the stored hash it
   * is kept on the entry, and the next presentations are compared with it in constant time instead of
   * hashed again: SHA-256 was the largest part of authentication (measured: 2.2% of the gateway's main
   * thread under load). Any other string still goes through the hash. The key is held in memory only,
   * as the request path holds every presented key anyway; the store keeps the hash alone.
   */
  #matches(entry: Entry, key: string): boolean {
    if (entry.verified !== null && constantTimeEqual(key, entry.verified)) return true;
    if (keyMatchesHash(key, entry.hash)) {
      entry.verified = key;
      return true;
    }
    if (entry.grace.length === 0) return false;
    const now = this.#opts.now();
    return entry.grace.some((g) => g.untilMs > now && keyMatchesHash(key, g.hash));
  }

  /** Throws model_not_allowed (403) when the key's allowed-model globs do not cover `modelId`. */
  checkModel(key: KeyRecord, modelId: string): void {
    const allows = this.#entries.get(key.id)?.allows ?? compileModelPatterns(key.allowedModels);
    if (!allows(modelId)) {
      throw new GatewayError('model_not_allowed', `This API key may not use model "${modelId}". Allowed: ${key.allowedModels.join(', ')}.`, { param: 'model' });
    }
  }

  /** Writes the batched last-used times; on failure they are kept (newest wins) for the next flush. */
  async flushTouches(): Promise<void> {
    if (this.#touched.size === 0) return;
    const touched = this.#touched;
    this.#touched = new Map();
    try {
      await this.#store.touchKeys([...touched].map(([id, at]) => ({ id, at: new Date(at).toISOString() })));
    } catch (err) {
      for (const [id, at] of touched) {
        const cur = this.#touched.get(id);
        if (cur === undefined || cur < at) this.#touched.set(id, at);
      }
      throw err;
    }
  }

  /**
   * Stops the timers and flushes pending last-used times, waiting at most `deadlineMs`: a database that
   * stopped answering (a partition, a lock) must not hold the shutdown with no end; the times are then
   * not written (rejects, saying so).
   */
  async close(deadlineMs = 5000): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    await withinReadDeadline(this.flushTouches(), deadlineMs);
  }
}
