// Upstream health: per-provider outlier ejection with exponential back-off, and a retry budget
// that caps how many extra upstream calls retries and fallbacks may add (no retry storms).
import type { UpstreamSettings } from '../config/types.ts';

type ProviderHealth = { failures: number; ejections: number; ejectedUntil: number };

export class UpstreamHealth {
  readonly #providers = new Map<string, ProviderHealth>();
  /** Told of each ejection this replica decides (src/router/health-share.ts publishes it to the others through Redis). */
  onEject: ((provider: string, until: number) => void) | null = null;
  #windowStart = Date.now();
  #requests = 0;
  #retries = 0;
  #prevRequests = 0;
  #prevRetries = 0;

  #get(id: string): ProviderHealth {
    let h = this.#providers.get(id);
    if (!h) { h = { failures: 0, ejections: 0, ejectedUntil: 0 }; this.#providers.set(id, h); }
    return h;
  }

  isEjected(provider: string, now = Date.now()): boolean {
    return (this.#providers.get(provider)?.ejectedUntil ?? 0) > now;
  }

  success(provider: string): void {
    const h = this.#providers.get(provider);
    if (h) { h.failures = 0; h.ejections = 0; }
  }

  /** Counts a failure; ejects the provider after N consecutive ones, doubling the time each ejection. */
  failure(provider: string, s: UpstreamSettings['ejection'], now = Date.now()): boolean {
    const h = this.#get(provider);
    if (++h.failures < s.consecutiveFailures) return false;
    h.failures = 0;
    h.ejectedUntil = now + Math.min(s.maxMs, s.baseMs * 2 ** h.ejections);
    h.ejections++;
    this.onEject?.(provider, h.ejectedUntil);
    return true;
  }

  /** Applies an ejection another replica decided (never shortens one in force). */
  ejectUntil(provider: string, until: number): void {
    const h = this.#get(provider);
    if (until > h.ejectedUntil) h.ejectedUntil = until;
  }

  #roll(now: number): void {
    if (now - this.#windowStart < 10_000) return;
    this.#prevRequests = this.#requests; this.#prevRetries = this.#retries;
    this.#requests = 0; this.#retries = 0; this.#windowStart = now;
  }

  countRequest(now = Date.now()): void { this.#roll(now); this.#requests++; }

  /** Takes one retry from the budget: retries may add at most `ratio` of recent requests (at least `floor` per window). */
  takeRetry(ratio: number, floor: number, now = Date.now()): boolean {
    this.#roll(now);
    const allowed = Math.max(floor, ratio * (this.#requests + this.#prevRequests));
    if (this.#retries + this.#prevRetries >= allowed) return false;
    this.#retries++;
    return true;
  }

  /** Each provider this replica has seen fail or heard ejected: ejected until when (ISO, null when not), failures in a row. */
  snapshot(): Record<string, { ejected: boolean; ejected_until: string | null; consecutive_failures: number }> {
    const now = Date.now();
    return Object.fromEntries([...this.#providers].map(([id, h]) => [id, {
      ejected: h.ejectedUntil > now, ejected_until: h.ejectedUntil > now ? new Date(h.ejectedUntil).toISOString() : null, consecutive_failures: h.failures,
    }]));
  }
}
