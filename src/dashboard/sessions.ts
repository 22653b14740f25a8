// Dashboard sessions: a random token in an HttpOnly cookie, stored only as its SHA-256; idle and absolute
// expiry; a CSRF token per session that every change must echo in `x-csrf-token`. Logout deletes the row.
import { createHash, randomBytes } from 'node:crypto';
import { iso, str, type Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { constantTimeEqual } from '../auth/keys.ts';
import type { UserView } from './ui/api-types.ts';

export type SessionLimits = { idleMs: number; absoluteMs: number };
export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 60 * 60_000, absoluteMs: 12 * 3_600_000 };

export type Session = { id: string; userId: string; csrf: string; createdAt: string; lastSeenAt: string; expiresAt: string };

const digest = (token: string): string => createHash('sha256').update(token).digest('hex');
/** Last-seen times are written at most this often: a page's calls do not each cost a write. */
const TOUCH_EVERY_MS = 60_000;

export class Sessions {
  readonly #sql: SqlRunner;
  readonly #now: () => number;
  limits: SessionLimits;

  constructor(sql: SqlRunner, limits: SessionLimits = DEFAULT_SESSION_LIMITS, now: () => number = Date.now) {
    this.#sql = sql;
    this.limits = limits;
    this.#now = now;
  }

  /** A new session; `token` goes into the cookie and is never stored. */
  async create(userId: string, ip: string | null, userAgent: string | null): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString('base64url');
    const now = this.#now();
    const session: Session = {
      id: digest(token), userId, csrf: randomBytes(24).toString('base64url'), createdAt: new Date(now).toISOString(),
      lastSeenAt: new Date(now).toISOString(), expiresAt: new Date(now + this.limits.absoluteMs).toISOString(),
    };
    await this.#sql.run(`INSERT INTO dashboard_sessions (id, user_id, csrf, created_at, last_seen_at, expires_at, ip, user_agent)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [session.id, userId, session.csrf, session.createdAt, session.lastSeenAt, session.expiresAt, ip, userAgent?.slice(0, 300) ?? null]);
    return { token, session };
  }

  /** The live session and its (enabled) user for a cookie token, or null; expired sessions are deleted on sight. */
  async lookup(token: string): Promise<{ session: Session; user: UserView } | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const id = digest(token);
    const r = (await this.#sql.all(`SELECT s.id, s.user_id, s.csrf, s.created_at, s.last_seen_at, s.expires_at,
        u.email, u.name, u.role, u.created_at AS u_created_at, u.password_changed_at, u.disabled_at
      FROM dashboard_sessions s JOIN dashboard_users u ON u.id = s.user_id WHERE s.id = ?`, [id]))[0];
    if (!r) return null;
    const session = toSession(r);
    const now = this.#now();
    const lastSeen = Date.parse(session.lastSeenAt);
    if (now >= Date.parse(session.expiresAt) || now - lastSeen >= this.limits.idleMs || r.disabled_at !== null && r.disabled_at !== undefined) {
      await this.#sql.run('DELETE FROM dashboard_sessions WHERE id = ?', [id]);
      return null;
    }
    if (now - lastSeen >= TOUCH_EVERY_MS) {
      session.lastSeenAt = new Date(now).toISOString();
      // Not waited for: a read of the dashboard must not wait on a write (SQLite's lock held by another
      // process, a slow PostgreSQL), and the time is only the idle timeout's; one that fails is written
      // by a later request (the stored time stays older than the period).
      this.#sql.run('UPDATE dashboard_sessions SET last_seen_at = ? WHERE id = ?', [session.lastSeenAt, id]).catch(() => {});
    }
    const user: UserView = {
      id: session.userId, email: str(r.email), name: str(r.name), role: str(r.role) === 'admin' ? 'admin' : 'member',
      created_at: iso(r.u_created_at), password_changed_at: iso(r.password_changed_at), disabled_at: null,
    };
    return { session, user };
  }

  static csrfMatches(session: Session, presented: string | undefined): boolean {
    return presented !== undefined && constantTimeEqual(presented, session.csrf);
  }

  async revoke(token: string): Promise<void> {
    await this.#sql.run('DELETE FROM dashboard_sessions WHERE id = ?', [digest(token)]);
  }

  /** Ends every session of a user (password change, disable, role change), optionally but one. */
  async revokeUser(userId: string, exceptId?: string): Promise<void> {
    await this.#sql.run('DELETE FROM dashboard_sessions WHERE user_id = ? AND id <> ?', [userId, exceptId ?? '']);
  }

  /** Deletes sessions past either expiry; run from the retention timer. */
  async prune(): Promise<number> {
    const now = this.#now();
    return this.#sql.run('DELETE FROM dashboard_sessions WHERE expires_at <= ? OR last_seen_at <= ?',
      [new Date(now).toISOString(), new Date(now - this.limits.idleMs).toISOString()]);
  }
}

function toSession(r: Row): Session {
  return {
    id: str(r.id), userId: str(r.user_id), csrf: str(r.csrf), createdAt: iso(r.created_at), lastSeenAt: iso(r.last_seen_at),
    expiresAt: iso(r.expires_at),
  };
}
