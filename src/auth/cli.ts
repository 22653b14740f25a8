// The `keys` command: create, list, edit, rotate and revoke API keys against the configured store.
// Edits, rotation and the listed spend go through the dashboard's KeysData, as the admin API does,
// so a key changed here and one changed in the browser obey the same rules.
// Exit codes: 0 done, 1 the operation failed (bad value, unknown or revoked key), 2 usage error (and a
// name holding control, invisible or text-direction characters). Arguments and the values that need no
// stored data are checked before the store is opened; data goes to stdout, errors to stderr.
import { GatewayError } from '../gateway-error.ts';
import { KeysData } from '../dashboard/keys-data.ts';
import type { KeyView } from '../dashboard/ui/api-types.ts';
import { Users } from '../dashboard/users.ts';
import type { Access } from '../dashboard/access.ts';
import type { Store } from '../store/types.ts';
import { noWords, parseArgs, reportCommandError, UsageError, type CommandIo, type Prepared } from '../util/cli-args.ts';
import { invisibleNameProblem } from '../util/visible-name.ts';
import {
  BUDGET_PERIODS, KeyAdmin, publicKeyView, rotationGraceMs, validateCreateKey, type BudgetPeriod, type CreateKeyInput, type KeyPatch, type PublicKey,
} from './admin.ts';

export const KEYS_USAGE = `usage:
  keys create --name NAME [--expires ISO] [--models a,b] [--budget USD [--period day|week|month|total]] [--rpm N] [--tpm N] [--json]
  keys list [--json]
  keys edit ID [--name NAME] [--expires ISO|never] [--models a,b|all] [--budget USD|none] [--period day|week|month|total] [--rpm N|none] [--tpm N|none] [--json]
  keys rotate ID [--grace-hours H] [--json]
  keys revoke ID`;

/** What the command needs from the configuration; `rotationGraceMs` is dashboard.rotation_grace_hours. */
export type KeysCommandOptions = { rotationGraceMs?: number };

const DEFAULT_GRACE_MS = 24 * 3_600_000;
/** The command line acts as an admin: it reaches every key. */
const ADMIN: Access = { role: 'admin', userId: null };
const LIMIT_FLAGS = ['name', 'expires', 'models', 'budget', 'period', 'rpm', 'tpm'];

type Flags = Map<string, string>;

function int(name: string, v: string): number {
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, got "${v}"`);
  return Number(v);
}

function period(v: string): BudgetPeriod {
  if (!(BUDGET_PERIODS as readonly string[]).includes(v)) throw new UsageError(`--period must be one of ${BUDGET_PERIODS.join(', ')}`);
  return v as BudgetPeriod;
}

/** `--name` as given; a name a listing would show as something else (U+202E, a zero-width space) is a usage error. */
function keyName(v: string): string {
  const hidden = invisibleNameProblem('--name', v);
  if (hidden !== null) throw new UsageError(hidden);
  return v;
}

/**
 * `--models a,b` as a list. An empty list means every model to the store, so `--models ""` (an unset
 * shell variable) or `--models ,` is refused rather than lifting the restriction the operator meant to set.
 */
function modelList(v: string, sub: 'create' | 'edit'): string[] {
  const list = v.split(',').map((m) => m.trim()).filter((m) => m !== '');
  if (list.length === 0) throw new UsageError(`--models needs at least one model id or glob, got "${v}"${sub === 'edit' ? ' (--models all lifts the restriction)' : ' (leave it out for every model)'}`);
  return list;
}

function createInput(flags: Flags): CreateKeyInput {
  const name = flags.get('name');
  if (name === undefined) throw new UsageError('keys create needs --name');
  const input: CreateKeyInput = { name: keyName(name) };
  const v = (f: string): string | undefined => flags.get(f);
  if (v('expires') !== undefined) input.expires_at = v('expires')!;
  if (v('models') !== undefined) input.allowed_models = modelList(v('models')!, 'create');
  if (v('budget') !== undefined) input.budget_usd = v('budget')!;
  if (v('period') !== undefined) input.budget_period = period(v('period')!);
  if (v('rpm') !== undefined) input.rpm_limit = int('rpm', v('rpm')!);
  if (v('tpm') !== undefined) input.tpm_limit = int('tpm', v('tpm')!);
  return input;
}

/** Flags of `keys edit` as the admin API's PATCH body: absent stays, `none`/`never`/`all` clear. */
function editPatch(flags: Flags): KeyPatch {
  const patch: KeyPatch = {};
  const v = (f: string): string | undefined => flags.get(f);
  const cleared = (f: string, word: string): boolean => v(f)?.trim().toLowerCase() === word;
  if (v('name') !== undefined) patch.name = keyName(v('name')!);
  if (v('expires') !== undefined) patch.expires_at = cleared('expires', 'never') ? null : v('expires')!;
  if (v('models') !== undefined) patch.allowed_models = cleared('models', 'all') ? [] : modelList(v('models')!, 'edit');
  if (v('budget') !== undefined) patch.budget_usd = cleared('budget', 'none') ? null : v('budget')!;
  if (v('period') !== undefined) patch.budget_period = period(v('period')!);
  if (v('rpm') !== undefined) patch.rpm_limit = cleared('rpm', 'none') ? null : int('rpm', v('rpm')!);
  if (v('tpm') !== undefined) patch.tpm_limit = cleared('tpm', 'none') ? null : int('tpm', v('tpm')!);
  if (Object.keys(patch).length === 0) throw new UsageError(`keys edit needs at least one of ${LIMIT_FLAGS.map((f) => `--${f}`).join(', ')}`);
  return patch;
}

function describeLimits(k: PublicKey): string {
  const parts = [
    k.budget_usd === null ? 'budget: none' : `budget: $${k.budget_usd} per ${k.budget_period === 'total' ? 'lifetime' : k.budget_period}`,
    `rpm: ${k.rpm_limit ?? 'none'}`, `tpm: ${k.tpm_limit ?? 'none'}`,
    `models: ${k.allowed_models.length ? k.allowed_models.join(',') : 'all'}`,
  ];
  return parts.join('  ');
}

/** Spend in the budget period against the budget, with the forecast the dashboard shows. */
function describeSpend(k: KeyView): string {
  const s = k.stats;
  const span = k.budget_period === 'total' ? 'in total' : `this ${k.budget_period ?? 'month'}`;
  if (k.budget_usd === null) return `spent: $${s.period_spend_usd} ${span}`;
  const pct = s.budget_used_ratio === null ? '' : ` (${(s.budget_used_ratio * 100).toFixed(1)}%)`;
  // A budget that starts again at the period's end before the rate would spend it lasts the period (as the Keys page says).
  const lasts = s.runs_out_at !== null && s.period_end !== null && Date.parse(s.runs_out_at) >= Date.parse(s.period_end);
  const runsOut = s.runs_out_at === null ? '' : lasts ? `, lasts this ${k.budget_period} at the last 7 days' rate` : `, runs out ${s.runs_out_at}`;
  return `spent: $${s.period_spend_usd} of $${k.budget_usd} ${span}${pct}${runsOut}`;
}

const oneId = (words: string[], sub: string): string => {
  if (words.length !== 1) throw new UsageError(`keys ${sub} needs exactly one key id`);
  return words[0]!;
};

/** The work of one checked `keys` command on the opened store (errors it meets are GatewayErrors). */
type KeysWork = (store: Store, io: CommandIo, opts: KeysCommandOptions) => Promise<number>;

/**
 * Checks `keys <create|list|edit|rotate|revoke>` (`argv` may start with the word "keys") without a
 * store: usage mistakes, and for create every value, as the store would check it. Returns the exit
 * code of a mistake (reported on `io.err`) or the work to run on the opened store.
 */
export function prepareKeysCommand(argv: string[], io: CommandIo, opts: KeysCommandOptions = {}): Prepared<Store> {
  const args = argv[0] === 'keys' ? argv.slice(1) : argv;
  let work: KeysWork;
  try {
    work = keysWork(args);
  } catch (e) {
    return reportCommandError(e, io, KEYS_USAGE);
  }
  return async (store) => {
    try { return await work(store, io, opts); } catch (e) { return reportCommandError(e, io, KEYS_USAGE); }
  };
}

/** Runs `keys ...` against an opened store (the checks first, as prepareKeysCommand does). Returns the exit code. */
export async function runKeysCommand(argv: string[], store: Store, io: CommandIo, opts: KeysCommandOptions = {}): Promise<number> {
  const prepared = prepareKeysCommand(argv, io, opts);
  return typeof prepared === 'number' ? prepared : prepared(store);
}

function keysWork(args: string[]): KeysWork {
  const [sub, ...rest] = args;
  // A running gateway sees these changes at its next key refresh (auth.key_refresh_ms).
  const keysData = (store: Store) => new KeysData(store, async () => {});
  if (sub === 'create') {
    const p = parseArgs(rest, LIMIT_FLAGS, ['json']);
    noWords(p);
    const input = createInput(p.values);
    // Every value checked before the store is opened: a refused key leaves no new database behind.
    validateCreateKey(input);
    return async (store, { out }) => {
      const { key, record } = await new KeyAdmin(store).createKey(input);
      if (p.bare.has('json')) { out(JSON.stringify({ key, ...record })); return 0; }
      out(`created key ${record.id} "${record.name}"${record.expires_at ? ` (expires ${record.expires_at})` : ''}`);
      out(`  ${describeLimits(record)}`);
      out(`  key: ${key}`);
      out('Store this key now: it is shown only once and cannot be recovered.');
      return 0;
    };
  }
  if (sub === 'list') {
    const p = parseArgs(rest, [], ['json']);
    noWords(p);
    return async (store, { out }) => {
      const users = new Users(store.sql);
      const byId = new Map((await users.list()).map((u) => [u.id, u]));
      const keys = (await keysData(store).list(ADMIN, byId, await users.owners())).data.reverse();
      if (p.bare.has('json')) { for (const k of keys) out(JSON.stringify(k)); return 0; }
      if (keys.length === 0) { out('no keys; create one with: keys create --name NAME'); return 0; }
      for (const k of keys) {
        const owner = k.owner ? `  owner ${k.owner.email}` : '';
        // One line per key, so the listing stays easy to grep.
        out(`${k.id}  ${k.status.padEnd(7)}  ${k.name}  ${describeSpend(k)}  requests 24h: ${k.stats.requests_24h} (${k.stats.errors_24h} errors)  `
          + `${describeLimits(k)}${k.expires_at ? `  expires ${k.expires_at}` : ''}  created ${k.created_at}  last used ${k.last_used_at ?? 'never'}${owner}`);
      }
      return 0;
    };
  }
  if (sub === 'edit') {
    const p = parseArgs(rest, LIMIT_FLAGS, ['json']);
    const id = oneId(p.words, 'edit');
    const patch = editPatch(p.values);
    return async (store, { out }) => {
      const rec = publicKeyView(await keysData(store).update(id, patch, ADMIN));
      if (p.bare.has('json')) { out(JSON.stringify(rec)); return 0; }
      out(`updated key ${id} "${rec.name}"${rec.expires_at ? ` (expires ${rec.expires_at})` : ''}`);
      out(`  ${describeLimits(rec)}`);
      return 0;
    };
  }
  if (sub === 'rotate') {
    const p = parseArgs(rest, ['grace-hours'], ['json']);
    const id = oneId(p.words, 'rotate');
    const hours = p.values.get('grace-hours');
    // Hours in decimal only: Number() also reads '0x10' (16 hours) and '1e2' (100 hours).
    const givenMs = hours === undefined ? undefined : rotationGraceMs(/^\s*\d+(\.\d+)?\s*$/.test(hours) ? Number(hours) : Number.NaN);
    return async (store, { out }, opts) => {
      const r = await keysData(store).rotate(id, givenMs ?? opts.rotationGraceMs ?? DEFAULT_GRACE_MS, ADMIN);
      if (p.bare.has('json')) { out(JSON.stringify({ key: r.key, id, previous_secret_valid_until: r.oldValidUntil })); return 0; }
      out(`rotated key ${id} "${r.record.name}"`);
      out(`  key: ${r.key}`);
      out(r.oldValidUntil === null ? '  the previous secret no longer works' : `  the previous secret works until ${r.oldValidUntil}`);
      out('Store this key now: it is shown only once and cannot be recovered.');
      return 0;
    };
  }
  if (sub === 'revoke') {
    const id = oneId(parseArgs(rest, []).words, 'revoke');
    return async (store, { out, err }) => {
      try {
        // As the admin API does: the revocation also ends a rotated key's grace period.
        await keysData(store).revoke(id, ADMIN);
      } catch (e) {
        const existing = e instanceof GatewayError && e.code === 'conflict' ? await store.getKey(id) : null;
        if (existing === null) throw e;
        err(`error: key ${id} was already revoked at ${existing.revokedAt}`);
        return 1;
      }
      out(`revoked key ${id}`);
      return 0;
    };
  }
  throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`);
}
