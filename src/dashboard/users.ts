// Dashboard accounts (admin | member) and which user owns which API key, written once against store.sql.
// Emails are compared lower-cased; the password hash never leaves this module.
import { GatewayError, invalidParam } from '../gateway-error.ts';
import { iso, isoOrNull, str, strOrNull, type Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { uuidv7 } from '../util/uuid.ts';
import { invisibleNameProblem } from '../util/visible-name.ts';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.ts';
import type { Role, UserView } from './ui/api-types.ts';

export const ROLES: readonly Role[] = ['admin', 'member'];
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
const COLUMNS = 'id, email, name, role, created_at, password_changed_at, disabled_at';

function toView(r: Row): UserView {
  return {
    id: str(r.id), email: str(r.email), name: str(r.name), role: str(r.role) === 'admin' ? 'admin' : 'member',
    created_at: iso(r.created_at), password_changed_at: iso(r.password_changed_at), disabled_at: isoOrNull(r.disabled_at),
  };
}

export function normalEmail(v: unknown): string {
  const e = typeof v === 'string' ? v.trim().toLowerCase() : '';
  const hidden = invisibleNameProblem('email', e);
  if (hidden !== null) throw invalidParam('email', hidden);
  if (!EMAIL_RE.test(e)) throw invalidParam('email', 'email must look like name@example.com');
  return e;
}

function cleanName(v: unknown, fallback: string): string {
  if (v === undefined || v === null || v === '') return fallback;
  const n = typeof v === 'string' ? v.trim() : '';
  if (n === '' || n.length > 200) throw invalidParam('name', 'name must have 1 to 200 characters');
  const hidden = invisibleNameProblem('name', n);
  if (hidden !== null) throw invalidParam('name', hidden);
  return n;
}

function role(v: unknown): Role {
  if (v !== 'admin' && v !== 'member') throw invalidParam('role', 'role must be admin or member');
  return v;
}

export type CreateUserInput = { email: unknown; name?: unknown; role?: unknown; password: string };

export class Users {
  readonly #sql: SqlRunner;
  constructor(sql: SqlRunner) { this.#sql = sql; }

  async create(input: CreateUserInput): Promise<UserView> {
    const email = normalEmail(input.email);
    const problem = passwordProblem(input.password);
    if (problem) throw invalidParam('password', problem);
    const now = new Date().toISOString();
    const user: UserView = {
      id: uuidv7(), email, name: cleanName(input.name, email.split('@')[0]!), role: input.role === undefined ? 'member' : role(input.role),
      created_at: now, password_changed_at: now, disabled_at: null,
    };
    const hash = await hashPassword(input.password);
    const n = await this.#sql.run(`INSERT INTO dashboard_users (id, email, name, role, password_hash, created_at, password_changed_at)
      SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM dashboard_users WHERE email = ?)`,
    [user.id, email, user.name, user.role, hash, now, now, email]);
    if (n === 0) throw new GatewayError('conflict', `a user with email ${email} exists already`, { param: 'email' });
    return user;
  }

  async list(): Promise<UserView[]> {
    return (await this.#sql.all(`SELECT ${COLUMNS} FROM dashboard_users ORDER BY email`)).map(toView);
  }

  async get(id: string): Promise<UserView | null> {
    const r = (await this.#sql.all(`SELECT ${COLUMNS} FROM dashboard_users WHERE id = ?`, [id]))[0];
    return r ? toView(r) : null;
  }

  async count(): Promise<number> {
    return Number((await this.#sql.all('SELECT COUNT(*) AS n FROM dashboard_users'))[0]?.n ?? 0);
  }

  /**
   * The user for an email and password, or null (unknown, wrong password, disabled). An unknown email
   * still costs one hash, so response time does not tell which emails exist.
   */
  async authenticate(email: string, password: string): Promise<UserView | null> {
    const r = (await this.#sql.all(`SELECT ${COLUMNS}, password_hash FROM dashboard_users WHERE email = ?`, [email.trim().toLowerCase()]))[0];
    const ok = await verifyPassword(password, r ? str(r.password_hash) : DUMMY_HASH);
    if (!r || !ok) return null;
    const u = toView(r);
    return u.disabled_at === null ? u : null;
  }

  /** Name, role and disabled state; refuses to leave no active admin. */
  async update(id: string, patch: { name?: unknown; role?: unknown; disabled?: unknown }): Promise<UserView> {
    const cur = await this.get(id);
    if (!cur) throw new GatewayError('resource_not_found', `no user with id ${id}`, { param: 'id' });
    const name = patch.name === undefined ? cur.name : cleanName(patch.name, cur.name);
    const newRole = patch.role === undefined ? cur.role : role(patch.role);
    if (patch.disabled !== undefined && typeof patch.disabled !== 'boolean') throw invalidParam('disabled', 'disabled must be true or false');
    const disabledAt = patch.disabled === undefined ? cur.disabled_at : patch.disabled ? (cur.disabled_at ?? new Date().toISOString()) : null;
    if (cur.role === 'admin' && cur.disabled_at === null && (newRole !== 'admin' || disabledAt !== null) && (await this.#activeAdmins()) <= 1) {
      throw new GatewayError('conflict', 'this is the last active admin: make another admin first');
    }
    await this.#sql.run('UPDATE dashboard_users SET name = ?, role = ?, disabled_at = ? WHERE id = ?', [name, newRole, disabledAt, id]);
    return { ...cur, name, role: newRole, disabled_at: disabledAt };
  }

  async setPassword(id: string, password: string): Promise<void> {
    const problem = passwordProblem(password);
    if (problem) throw invalidParam('password', problem);
    const hash = await hashPassword(password);
    const n = await this.#sql.run('UPDATE dashboard_users SET password_hash = ?, password_changed_at = ? WHERE id = ?', [hash, new Date().toISOString(), id]);
    if (n === 0) throw new GatewayError('resource_not_found', `no user with id ${id}`, { param: 'id' });
  }

  async #activeAdmins(): Promise<number> {
    return Number((await this.#sql.all("SELECT COUNT(*) AS n FROM dashboard_users WHERE role = 'admin' AND disabled_at IS NULL"))[0]?.n ?? 0);
  }

  // Key ownership: a key belongs to at most one user; keys without an owner are visible to admins only.

  async setKeyOwner(keyId: string, userId: string | null): Promise<void> {
    await this.#sql.run('DELETE FROM key_owners WHERE key_id = ?', [keyId]);
    if (userId !== null) await this.#sql.run('INSERT INTO key_owners (key_id, user_id) VALUES (?, ?)', [keyId, userId]);
  }

  async keyOwner(keyId: string): Promise<string | null> {
    return strOrNull((await this.#sql.all('SELECT user_id FROM key_owners WHERE key_id = ?', [keyId]))[0]?.user_id);
  }

  async keysOf(userId: string): Promise<string[]> {
    return (await this.#sql.all('SELECT key_id FROM key_owners WHERE user_id = ? ORDER BY key_id', [userId])).map((r) => str(r.key_id));
  }

  async owners(): Promise<Map<string, string>> {
    return new Map((await this.#sql.all('SELECT key_id, user_id FROM key_owners')).map((r) => [str(r.key_id), str(r.user_id)]));
  }
}

/** A valid hash of a random password, checked when the email is unknown (same cost as a real check). */
const DUMMY_HASH = await hashPassword(`dummy-${Math.random()}-${Date.now()}`);
