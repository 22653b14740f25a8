// Dashboard sign-in attempts, counted per account and per client address in fixed windows in the store
// (dashboard_login_failures, migration 43), so every replica enforces the same limit: past it, further
// attempts get 429 with retry-after until the window ends. The store rather than Redis: the dashboard
// always has a store (Redis is optional), and a sign-in's one or two small statements are nothing next
// to its scrypt hash. An attempt is counted before the password is checked, so parallel guesses (on one
// replica or several) cannot slip past the limit between the check and the count.
import type { SqlRunner } from '../store/sql-runner.ts';

export type LoginLimits = { perAccount: number; perAddress: number; windowMs: number };
export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perAccount: 5, perAddress: 20, windowMs: 15 * 60_000 };

export class LoginLimiter {
  readonly #sql: SqlRunner;
  readonly #limits: LoginLimits;
  readonly #now: () => number;

  constructor(sql: SqlRunner, limits: LoginLimits = DEFAULT_LOGIN_LIMITS, now: () => number = Date.now) {
    this.#sql = sql;
    this.#limits = limits;
    this.#now = now;
  }

  /** An email is at most 320 characters (users.ts): a longer one names no account, and must not store a row of its size. */
  #keys(email: string, ip: string): Array<[string, number]> {
    return [[`a:${email.trim().toLowerCase().slice(0, 320)}`, this.#limits.perAccount], [`i:${ip}`, this.#limits.perAddress]];
  }

  /**
   * Counts an attempt for the account and the address (a window starts with the first). Returns the
   * seconds to wait when either is over its limit (the attempt must then be refused), else 0.
   */
  async attempt(email: string, ip: string): Promise<number> {
    const now = this.#now();
    const until = now + this.#limits.windowMs;
    let wait = 0;
    for (const [k, max] of this.#keys(email, ip)) {
      const rows = await this.#sql.all(`INSERT INTO dashboard_login_failures AS f (k, count, until_ms) VALUES (?, 1, ?)
        ON CONFLICT (k) DO UPDATE SET count = CASE WHEN f.until_ms <= ? THEN 1 ELSE f.count + 1 END,
          until_ms = CASE WHEN f.until_ms <= ? THEN ? ELSE f.until_ms END
        RETURNING count, until_ms`, [k, until, now, now, until]);
      const r = rows[0];
      if (r && Number(r.count) > max) wait = Math.max(wait, Math.ceil((Number(r.until_ms) - now) / 1000));
    }
    return wait;
  }

  /**
   * A successful sign-in: the account's count ends (its owner is in), the address's attempt is taken
   * back (it was no failure) but the address's earlier failures stay: one good password must not
   * unlock guessing others from the same place.
   */
  async succeeded(email: string, ip: string): Promise<void> {
    const [[account], [address]] = this.#keys(email, ip);
    await this.#sql.run('DELETE FROM dashboard_login_failures WHERE k = ?', [account]);
    await this.#sql.run('UPDATE dashboard_login_failures SET count = count - 1 WHERE k = ? AND count > 0', [address]);
  }

  /** Windows that ended (the retention pass). */
  async prune(): Promise<number> {
    return this.#sql.run('DELETE FROM dashboard_login_failures WHERE until_ms <= ?', [this.#now()]);
  }
}
