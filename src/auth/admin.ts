// Key administration (create, list, revoke) shared by the `keys` command and the admin API: input is
// validated into a KeyRecord here, and the public view never carries the hash.
import { decimalFromNumber, formatDecimal, isDecimalString } from '../catalog/decimal.ts';
import { invalidParam } from '../gateway-error.ts';
import { invisibleNameProblem } from '../util/visible-name.ts';
import type { KeyRecord, Store } from '../store/types.ts';
import { generateKey } from './keys.ts';

export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';
export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month', 'total'];

export type CreateKeyInput = {
  name: string; expires_at?: string; allowed_models?: string[]; budget_usd?: string | number;
  budget_period?: BudgetPeriod; rpm_limit?: number; tpm_limit?: number;
};

export type PublicKey = {
  id: string; name: string; prefix: string; status: 'active' | 'expired' | 'revoked';
  created_at: string; last_used_at: string | null; expires_at: string | null; revoked_at: string | null;
  allowed_models: string[]; budget_usd: string | null; budget_period: BudgetPeriod | null;
  rpm_limit: number | null; tpm_limit: number | null;
};

export function publicKeyView(k: KeyRecord, now: number = Date.now()): PublicKey {
  const status = k.revokedAt !== null ? 'revoked' : k.expiresAt !== null && Date.parse(k.expiresAt) <= now ? 'expired' : 'active';
  return {
    id: k.id, name: k.name, prefix: `sk-gw-${k.id}-`, status, created_at: k.createdAt, last_used_at: k.lastUsedAt,
    expires_at: k.expiresAt, revoked_at: k.revokedAt, allowed_models: k.allowedModels, budget_usd: k.budgetUsd,
    budget_period: k.budgetPeriod, rpm_limit: k.rpmLimit, tpm_limit: k.tpmLimit,
  };
}

const MODEL_PATTERN_RE = /^[A-Za-z0-9._:@/*-]{1,200}$/;

function positiveInt(v: unknown, param: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw invalidParam(param, `${param} must be a positive integer`);
  return v;
}

function budget(v: string | number, param: string): string {
  const s = typeof v === 'number' && Number.isFinite(v) ? decimalFromNumber(v) : typeof v === 'string' ? v.trim() : '';
  if (!isDecimalString(s) || s.startsWith('-') || formatDecimal(s) === '0') throw invalidParam(param, `${param} must be a positive decimal amount in USD, like "25" or "2.50"`);
  return formatDecimal(s);
}

/** Parses untrusted input (CLI flags or an admin request body) into a new key record; throws invalid_parameter. */
export function validateCreateKey(input: CreateKeyInput, now: number = Date.now()): Omit<KeyRecord, 'id' | 'hash'> {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name === '' || name.length > 200) throw invalidParam('name', 'name is required (1 to 200 characters)');
  // Control characters make a name unprintable in lists and logs (PostgreSQL text cannot hold NUL at all);
  // invisible and text-direction ones make a listing show another name than the one stored.
  const hidden = invisibleNameProblem('name', name);
  if (hidden !== null) throw invalidParam('name', hidden);
  let expiresAt: string | null = null;
  if (input.expires_at !== undefined) {
    const t = typeof input.expires_at === 'string' ? Date.parse(input.expires_at) : Number.NaN;
    if (Number.isNaN(t)) throw invalidParam('expires_at', 'expires_at must be an ISO 8601 time, like 2027-01-01T00:00:00Z');
    if (t <= now) throw invalidParam('expires_at', 'expires_at must be in the future');
    expiresAt = new Date(t).toISOString();
  }
  const models = input.allowed_models ?? [];
  if (!Array.isArray(models) || models.some((m) => typeof m !== 'string' || !MODEL_PATTERN_RE.test(m))) {
    throw invalidParam('allowed_models', 'allowed_models must be a list of model ids or globs, like "openai/*" or "anthropic/claude-*"');
  }
  const budgetUsd = input.budget_usd === undefined ? null : budget(input.budget_usd, 'budget_usd');
  if (input.budget_period !== undefined && !BUDGET_PERIODS.includes(input.budget_period)) {
    throw invalidParam('budget_period', `budget_period must be one of ${BUDGET_PERIODS.join(', ')}`);
  }
  if (input.budget_period !== undefined && budgetUsd === null) throw invalidParam('budget_period', 'budget_period needs budget_usd');
  return {
    name, createdAt: new Date(now).toISOString(), lastUsedAt: null, expiresAt, revokedAt: null,
    allowedModels: [...new Set(models)], budgetUsd,
    // A budget without a period is a monthly budget (documented in docs/storage.md and shown in the key's view).
    budgetPeriod: budgetUsd === null ? null : input.budget_period ?? 'month',
    rpmLimit: input.rpm_limit === undefined ? null : positiveInt(input.rpm_limit, 'rpm_limit'),
    tpmLimit: input.tpm_limit === undefined ? null : positiveInt(input.tpm_limit, 'tpm_limit'),
  };
}

/** Admin operations; `onChange` (usually KeyRing.refresh) runs after every write so new keys work at once. */
export class KeyAdmin {
  readonly #store: Store;
  readonly #onChange: () => Promise<void>;

  constructor(store: Store, onChange: () => Promise<void> = async () => {}) {
    this.#store = store;
    this.#onChange = onChange;
  }

  /** The returned `key` is the only time the secret is visible. */
  async createKey(input: CreateKeyInput): Promise<{ key: string; record: PublicKey }> {
    const fields = validateCreateKey(input);
    const { id, key, hash } = generateKey();
    const record: KeyRecord = { id, hash, ...fields };
    await this.#store.insertKey(record);
    await this.#onChange();
    return { key, record: publicKeyView(record) };
  }

  async listKeys(): Promise<PublicKey[]> {
    const now = Date.now();
    return (await this.#store.listKeys()).map((k) => publicKeyView(k, now));
  }

  /** False when no such key exists or it was already revoked. */
  async revokeKey(id: string): Promise<boolean> {
    const done = await this.#store.revokeKey(id, new Date().toISOString());
    if (done) await this.#onChange();
    return done;
  }
}

/** Editable fields of a key (dashboard and admin API): absent means unchanged, null clears the limit. */
export type KeyPatch = {
  name?: string; expires_at?: string | null; allowed_models?: string[]; budget_usd?: string | number | null;
  budget_period?: BudgetPeriod | null; rpm_limit?: number | null; tpm_limit?: number | null;
};

/** The key after `patch`, validated by the same rules as a new key (a new expiry must lie in the future). */
export function applyKeyPatch(cur: KeyRecord, patch: KeyPatch, now: number = Date.now()): KeyRecord {
  const pick = <T>(v: T | undefined, old: T): T => (v === undefined ? old : v);
  const input: CreateKeyInput = { name: pick(patch.name, cur.name), allowed_models: pick(patch.allowed_models, cur.allowedModels) };
  const budgetUsd = pick(patch.budget_usd, cur.budgetUsd);
  if (budgetUsd !== null) input.budget_usd = budgetUsd;
  const period = pick(patch.budget_period, cur.budgetPeriod);
  if (period !== null && (budgetUsd !== null || patch.budget_period !== undefined)) input.budget_period = period;
  const rpm = pick(patch.rpm_limit, cur.rpmLimit);
  if (rpm !== null) input.rpm_limit = rpm;
  const tpm = pick(patch.tpm_limit, cur.tpmLimit);
  if (tpm !== null) input.tpm_limit = tpm;
  if (patch.expires_at !== undefined && patch.expires_at !== null) input.expires_at = patch.expires_at;
  const v = validateCreateKey(input, now);
  return {
    ...cur, name: v.name, allowedModels: v.allowedModels, budgetUsd: v.budgetUsd, budgetPeriod: v.budgetPeriod, rpmLimit: v.rpmLimit,
    tpmLimit: v.tpmLimit, expiresAt: patch.expires_at === undefined ? cur.expiresAt : v.expiresAt,
  };
}

/** Hours a rotated key's previous secret stays valid (admin API `grace_hours`, CLI `--grace-hours`): 0 to 720. */
export function rotationGraceMs(hours: unknown): number {
  if (typeof hours !== 'number' || !(hours >= 0 && hours <= 720)) throw invalidParam('grace_hours', 'grace_hours must be a number from 0 to 720');
  return hours * 3_600_000;
}
