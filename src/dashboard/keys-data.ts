// Keys as the dashboard sees them: each with its owner, its spend in the budget period, the last day's
// requests and errors and a burn-down forecast, from one read of the per-key rollups; plus edits,
// rotation (same id, new secret, the old one valid for a grace period) and ownership.
import { addDecimal, compareDecimal, decimalToNumber, divDecimal, subDecimal } from '../catalog/decimal.ts';
import { applyKeyPatch, publicKeyView, type KeyPatch } from '../auth/admin.ts';
import type { GraceHash } from '../auth/keyring.ts';
import { hashKey, KEY_PREFIX, randomBase62, SECRET_LENGTH } from '../auth/keys.ts';
import { GatewayError } from '../gateway-error.ts';
import { periodEnd, periodStart } from '../limits/limiter.ts';
import { iso, str, type Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import type { KeyRecord, Store } from '../store/types.ts';
import { foldBeforeRead } from '../store/rollup-fold.ts';
import { keyScope, type Access } from './access.ts';
import { costOf, readRollup, segments, sumsOf } from './rollup-query.ts';
import type { KeyStats, KeyView, UserView } from './ui/api-types.ts';

const DAY = 86_400_000;
const hourFloor = (ms: number): number => Math.floor(ms / 3_600_000) * 3_600_000;

type RawStats = { req24: number; err24: number; cost24: string; cost7d: string; day: string; week: string; month: string; total: string | null };

/**
 * Per key: requests/errors/spend of the last 24 h and 7 days and spend since the UTC day, week and month
 * started, from one read of the per-key rollup rows cut at those instants (whole days from day rows);
 * all-time spend only for `total` budgets (day rows since the first, plus today's hours).
 */
async function rawStats(sql: SqlRunner, keyIds: readonly string[], totalIds: readonly string[], now: number): Promise<Map<string, RawStats>> {
  const out = new Map<string, RawStats>();
  if (keyIds.length === 0) return out;
  await foldBeforeRead(sql);
  const since24 = hourFloor(now - DAY);
  const since7 = hourFloor(now - 7 * DAY);
  const [day, week, month] = (['day', 'week', 'month'] as const).map((p) => periodStart(p, now));
  const cuts = [...new Set([since24, since7, day!, week!, month!])].sort((a, b) => a - b);
  const rows = await readRollup(sql, {
    table: 'usage_rollup', grain: 'key', segs: segments(cuts[0]!, now, cuts), filter: { keys: keyIds },
    select: `r.key_id AS key_id, ${sumsOf(sql, ['requests', 'errors'])}`, groupBy: ['r.key_id'],
  });
  type Part = { at: number; requests: number; errors: number; cost: string };
  const parts = new Map<string, Part[]>();
  for (const r of rows) {
    const list = parts.get(str(r.key_id)) ?? [];
    list.push({ at: cuts[Number(r.b)]!, requests: Number(r.requests ?? 0), errors: Number(r.errors ?? 0), cost: costOf(r) });
    parts.set(str(r.key_id), list);
  }
  const since = (list: readonly Part[], t: number): string =>
    list.filter((x) => x.at >= t).reduce((a, x) => addDecimal(a, x.cost), '0');
  for (const [k, list] of parts) {
    const last = list.filter((x) => x.at >= since24);
    out.set(k, {
      req24: last.reduce((a, x) => a + x.requests, 0), err24: last.reduce((a, x) => a + x.errors, 0), cost24: since(list, since24),
      cost7d: since(list, since7), day: since(list, day!), week: since(list, week!), month: since(list, month!), total: null,
    });
  }
  if (totalIds.length > 0) {
    const all = await readRollup(sql, {
      table: 'usage_rollup', grain: 'key', segs: segments(0, now), filter: { keys: totalIds }, noBucket: true,
      select: `r.key_id AS key_id, ${sumsOf(sql, [])}`, groupBy: ['r.key_id'],
    });
    for (const r of all) { const s = out.get(str(r.key_id)); if (s) s.total = costOf(r); }
  }
  return out;
}

export function keyStats(k: KeyRecord, s: RawStats | undefined, now: number): KeyStats {
  const period = k.budgetPeriod ?? 'month';
  const spend = !s ? '0' : period === 'total' ? s.total ?? '0' : s[period];
  const cost7d = s?.cost7d ?? '0';
  let runsOut: string | null = null;
  let used: number | null = null;
  if (k.budgetUsd !== null) {
    used = decimalToNumber(spend) / decimalToNumber(k.budgetUsd);
    const left = subDecimal(k.budgetUsd, spend);
    const perDay = divDecimal(cost7d, '7');
    if (compareDecimal(left, '0') <= 0) runsOut = new Date(now).toISOString();
    else if (compareDecimal(perDay, '0') > 0) {
      const at = now + (decimalToNumber(left) / decimalToNumber(perDay)) * DAY;
      runsOut = Number.isFinite(at) && at < 8.64e15 ? new Date(at).toISOString() : null;
    }
  }
  return {
    period_spend_usd: spend, period_start: k.budgetPeriod === 'total' ? null : new Date(periodStart(period, now)).toISOString(),
    period_end: k.budgetPeriod === 'total' ? null : new Date(periodEnd(period, now)!).toISOString(),
    requests_24h: s?.req24 ?? 0, errors_24h: s?.err24 ?? 0, spend_24h_usd: s?.cost24 ?? '0', spend_7d_usd: cost7d,
    runs_out_at: runsOut, budget_used_ratio: used,
  };
}

/** The columns a key edit may change, each with its stored value. */
const EDITABLE: ReadonlyArray<readonly [string, (k: KeyRecord) => string | number | null]> = [
  ['name', (k) => k.name], ['expires_at', (k) => k.expiresAt], ['allowed_models', (k) => JSON.stringify(k.allowedModels)],
  ['budget_usd', (k) => k.budgetUsd], ['budget_period', (k) => k.budgetPeriod], ['rpm_limit', (k) => k.rpmLimit], ['tpm_limit', (k) => k.tpmLimit],
];

export class KeysData {
  readonly #store: Store;
  readonly #sql: SqlRunner;
  readonly #changed: () => Promise<void>;

  /** `changed` runs after every write (the key ring's refresh and the limiter's seed). */
  constructor(store: Store, changed: () => Promise<void>) {
    this.#store = store;
    this.#sql = store.sql;
    this.#changed = changed;
  }

  /**
   * The keys visible to `access`, newest first, each with owner and stats: all of them, or with `page`
   * the `limit` after the key `after` (an id from the previous page) and the id to continue from (null
   * at the end). Stats are read for the keys answered only.
   */
  async list(access: Access, users: Map<string, UserView>, owners: Map<string, string>, now = Date.now(),
    page?: { limit: number; after: string | null }): Promise<{ data: KeyView[]; next: string | null }> {
    const scope = keyScope(access);
    let all = (await this.#store.listKeys()).filter((k) => scope === null || scope.includes(k.id)).reverse();
    let next: string | null = null;
    if (page) {
      const start = page.after === null ? 0 : all.findIndex((k) => k.id === page.after) + 1;
      if (start === 0 && page.after !== null) throw new GatewayError('invalid_parameter', 'cursor names no key of this list', { param: 'cursor' });
      next = start + page.limit < all.length ? all[start + page.limit - 1]!.id : null;
      all = all.slice(start, start + page.limit);
    }
    const stats = await rawStats(this.#sql, all.map((k) => k.id), all.filter((k) => k.budgetPeriod === 'total').map((k) => k.id), now);
    const grace = await this.graceHashes(now);
    return { data: all.map((k) => this.view(k, stats.get(k.id), users, owners, grace, now)), next };
  }

  async get(id: string, access: Access, users: Map<string, UserView>, owners: Map<string, string>, now = Date.now()): Promise<KeyView> {
    const k = await this.record(id, access);
    const stats = await rawStats(this.#sql, [k.id], k.budgetPeriod === 'total' ? [k.id] : [], now);
    return this.view(k, stats.get(k.id), users, owners, await this.graceHashes(now), now);
  }

  view(k: KeyRecord, s: RawStats | undefined, users: Map<string, UserView>, owners: Map<string, string>, grace: GraceHash[], now: number): KeyView {
    const ownerId = owners.get(k.id);
    const owner = ownerId ? users.get(ownerId) : undefined;
    const until = grace.filter((g) => g.keyId === k.id).map((g) => g.validUntil).sort().at(-1) ?? null;
    return { ...publicKeyView(k, now), owner: owner ? { id: owner.id, email: owner.email } : null, previous_secret_valid_until: until, stats: keyStats(k, s, now) };
  }

  /** The stored key if `access` may see it; a member asking for another's key learns nothing (404). */
  async record(id: string, access: Access): Promise<KeyRecord> {
    const scope = keyScope(access);
    const k = scope === null || scope.includes(id) ? await this.#store.getKey(id) : null;
    if (!k) throw new GatewayError('resource_not_found', `no key with id ${id}`, { param: 'id' });
    return k;
  }

  async update(id: string, patch: KeyPatch, access: Access): Promise<KeyRecord> {
    const cur = await this.record(id, access);
    if (cur.revokedAt !== null) throw new GatewayError('conflict', 'a revoked key cannot be edited');
    const next = applyKeyPatch(cur, patch);
    // Only the columns this edit changes: writing every column as read let two edits at once (one renaming,
    // one raising the budget) undo each other, the later write putting back what the earlier changed.
    const cols = EDITABLE.filter(([, of]) => of(next) !== of(cur));
    if (cols.length > 0) {
      await this.#sql.run(`UPDATE api_keys SET ${cols.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ?`, [...cols.map(([, of]) => of(next)), id]);
      await this.#changed();
    }
    return next;
  }

  /** A new secret for the same key id (so usage, budget and owner carry on); the old secret works until `graceMs` from now. */
  async rotate(id: string, graceMs: number, access: Access): Promise<{ key: string; record: KeyRecord; oldValidUntil: string | null }> {
    const cur = await this.record(id, access);
    if (cur.revokedAt !== null) throw new GatewayError('conflict', 'a revoked key cannot be rotated');
    const key = `${KEY_PREFIX}${cur.id}-${randomBase62(SECRET_LENGTH)}`;
    const hash = hashKey(key);
    const until = graceMs > 0 ? new Date(Date.now() + graceMs).toISOString() : null;
    await this.#sql.tx(async (q) => {
      if (until !== null) await q.run('INSERT INTO key_grace (key_id, hash, valid_until) VALUES (?, ?, ?)', [cur.id, cur.hash, until]);
      await q.run('UPDATE api_keys SET hash = ? WHERE id = ?', [hash, cur.id]);
    });
    await this.#changed();
    return { key, record: { ...cur, hash }, oldValidUntil: until };
  }

  async revoke(id: string, access: Access): Promise<void> {
    await this.record(id, access);
    if (!(await this.#store.revokeKey(id, new Date().toISOString()))) throw new GatewayError('conflict', 'the key is revoked already');
    await this.#sql.run('DELETE FROM key_grace WHERE key_id = ?', [id]);
    await this.#changed();
  }

  graceHashes(now = Date.now()): Promise<GraceHash[]> { return loadGraceHashes(this.#sql, now); }

  async pruneGrace(now = Date.now()): Promise<number> {
    return this.#sql.run('DELETE FROM key_grace WHERE valid_until <= ?', [new Date(now).toISOString()]);
  }
}


/** Grace hashes still valid: the key ring's `graceHashes` source. Expired ones are deleted by the retention pass. */
export async function loadGraceHashes(sql: SqlRunner, now = Date.now()): Promise<GraceHash[]> {
  const rows = await sql.all('SELECT key_id, hash, valid_until FROM key_grace WHERE valid_until > ?', [new Date(now).toISOString()]);
  return rows.map((r: Row) => ({ keyId: str(r.key_id), hash: str(r.hash), validUntil: iso(r.valid_until) }));
}
