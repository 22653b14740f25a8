// The operator's admin key (GATEWAY_ADMIN_KEY / auth.admin_key): its minimum length, a comparison whose
// time depends on neither the key's length nor where a guess differs, and a per-address limit on
// failed attempts, so the admin API cannot be brute-forced or timed.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** 24 characters: 143 bits from base62, 96 from hex; `openssl rand -hex 32` gives 64. Checked at config load. */
export const ADMIN_KEY_MIN_LENGTH = 24;

// A per-process secret: digests of both strings are fixed-length, so the compare leaks no length.
const HMAC_KEY = randomBytes(32);
const digest = (s: string): Buffer => createHmac('sha256', HMAC_KEY).update(s, 'utf8').digest();

/** True when `presented` is the admin key; constant time in both strings' lengths and contents. */
export function adminKeyMatches(presented: string | undefined, configured: string): boolean {
  // An absent key still pays the digest, so "no header" and "wrong key" take the same time.
  const ok = timingSafeEqual(digest(presented ?? ''), digest(configured));
  return ok && presented !== undefined && configured !== '';
}

export type AdminAttemptOptions = { maxFailures?: number; windowMs?: number; maxAddresses?: number; now?: () => number };

/**
 * Failed admin-key attempts per client address in a fixed window: at `maxFailures` (default 10 per
 * minute) the address is refused until the window ends, right key or not, so a guesser learns
 * nothing more. At most `maxAddresses` are tracked (oldest forgotten first): memory stays bounded
 * whatever a flood of addresses does.
 */
export class AdminAttempts {
  readonly #o: Required<AdminAttemptOptions>;
  readonly #byAddress = new Map<string, { start: number; failures: number }>();

  constructor(opts: AdminAttemptOptions = {}) {
    this.#o = { maxFailures: opts.maxFailures ?? 10, windowMs: opts.windowMs ?? 60_000, maxAddresses: opts.maxAddresses ?? 10_000, now: opts.now ?? Date.now };
  }

  /** Seconds until `address` may try again, or 0 when it may try now. */
  blockedFor(address: string): number {
    const e = this.#byAddress.get(address);
    if (!e) return 0;
    const left = e.start + this.#o.windowMs - this.#o.now();
    if (left <= 0) { this.#byAddress.delete(address); return 0; }
    return e.failures >= this.#o.maxFailures ? Math.ceil(left / 1000) : 0;
  }

  failed(address: string): void {
    const now = this.#o.now();
    let e = this.#byAddress.get(address);
    if (!e || e.start + this.#o.windowMs <= now) {
      this.#byAddress.delete(address);
      if (this.#byAddress.size >= this.#o.maxAddresses) this.#byAddress.delete(this.#byAddress.keys().next().value!);
      e = { start: now, failures: 0 };
      this.#byAddress.set(address, e);
    }
    e.failures++;
  }

  get tracked(): number { return this.#byAddress.size; }
}
