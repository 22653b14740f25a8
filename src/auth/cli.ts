// The `keys` command: create, list and revoke API keys against the configured store.
// Exit codes: 0 done, 1 the operation failed (bad value, unknown key), 2 usage error.
import { GatewayError } from '../gateway-error.ts';
import type { Store } from '../store/types.ts';
import { BUDGET_PERIODS, KeyAdmin, type BudgetPeriod, type CreateKeyInput, type PublicKey } from './admin.ts';

export const KEYS_USAGE = `usage:
  keys create --name NAME [--expires ISO] [--models a,b] [--budget USD [--period day|week|month|total]] [--rpm N] [--tpm N] [--json]
  keys list [--json]
  keys revoke ID`;

type Flags = Map<string, string | true>;

/** `--flag value`, `--flag=value` and bare boolean flags; positional words are returned separately. */
function parseArgs(args: string[], valued: ReadonlySet<string>, bare: ReadonlySet<string>): { flags: Flags; words: string[] } {
  const flags: Flags = new Map();
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) { words.push(a); continue; }
    const eq = a.indexOf('=');
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    if (bare.has(name) && eq < 0) { flags.set(name, true); continue; }
    if (!valued.has(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq < 0 ? args[++i] : a.slice(eq + 1);
    if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  return { flags, words };
}

class UsageError extends Error {}

function intFlag(flags: Flags, name: string): number | undefined {
  const v = flags.get(name);
  if (typeof v !== 'string') return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, got "${v}"`);
  return Number(v);
}

function createInput(flags: Flags): CreateKeyInput {
  const name = flags.get('name');
  if (typeof name !== 'string') throw new UsageError('keys create needs --name');
  const input: CreateKeyInput = { name };
  const expires = flags.get('expires');
  if (typeof expires === 'string') input.expires_at = expires;
  const models = flags.get('models');
  if (typeof models === 'string') input.allowed_models = models.split(',').map((m) => m.trim()).filter((m) => m !== '');
  const budget = flags.get('budget');
  if (typeof budget === 'string') input.budget_usd = budget;
  const period = flags.get('period');
  if (typeof period === 'string') {
    if (!(BUDGET_PERIODS as readonly string[]).includes(period)) throw new UsageError(`--period must be one of ${BUDGET_PERIODS.join(', ')}`);
    input.budget_period = period as BudgetPeriod;
  }
  const rpm = intFlag(flags, 'rpm');
  if (rpm !== undefined) input.rpm_limit = rpm;
  const tpm = intFlag(flags, 'tpm');
  if (tpm !== undefined) input.tpm_limit = tpm;
  return input;
}

function describeLimits(k: PublicKey): string {
  const parts = [
    k.budget_usd === null ? 'budget: none' : `budget: $${k.budget_usd} per ${k.budget_period === 'total' ? 'lifetime' : k.budget_period}`,
    `rpm: ${k.rpm_limit ?? 'none'}`, `tpm: ${k.tpm_limit ?? 'none'}`,
    `models: ${k.allowed_models.length ? k.allowed_models.join(',') : 'all'}`,
  ];
  return parts.join('  ');
}

/** Runs `keys <create|list|revoke>`; `argv` may start with the word "keys". Returns the exit code. */
export async function runKeysCommand(argv: string[], store: Store, out: (s: string) => void): Promise<number> {
  const args = argv[0] === 'keys' ? argv.slice(1) : argv;
  const admin = new KeyAdmin(store);
  try {
    const [sub, ...rest] = args;
    if (sub === 'create') {
      const { flags, words } = parseArgs(rest, new Set(['name', 'expires', 'models', 'budget', 'period', 'rpm', 'tpm']), new Set(['json']));
      if (words.length) throw new UsageError(`unexpected argument "${words[0]}"`);
      const { key, record } = await admin.createKey(createInput(flags));
      if (flags.has('json')) { out(JSON.stringify({ key, ...record })); return 0; }
      out(`created key ${record.id} "${record.name}"${record.expires_at ? ` (expires ${record.expires_at})` : ''}`);
      out(`  ${describeLimits(record)}`);
      out(`  key: ${key}`);
      out('Store this key now: it is shown only once and cannot be recovered.');
      return 0;
    }
    if (sub === 'list') {
      const { flags, words } = parseArgs(rest, new Set(), new Set(['json']));
      if (words.length) throw new UsageError(`unexpected argument "${words[0]}"`);
      const keys = await admin.listKeys();
      if (flags.has('json')) { for (const k of keys) out(JSON.stringify(k)); return 0; }
      if (keys.length === 0) { out('no keys; create one with: keys create --name NAME'); return 0; }
      for (const k of keys) {
        out(`${k.id}  ${k.status.padEnd(7)}  ${k.name}  created ${k.created_at}  last used ${k.last_used_at ?? 'never'}  ${describeLimits(k)}`);
      }
      return 0;
    }
    if (sub === 'revoke') {
      const { words } = parseArgs(rest, new Set(), new Set());
      if (words.length !== 1) throw new UsageError('keys revoke needs exactly one key id');
      const id = words[0]!;
      if (await admin.revokeKey(id)) { out(`revoked key ${id}`); return 0; }
      const existing = await store.getKey(id);
      out(existing ? `error: key ${id} was already revoked at ${existing.revokedAt}` : `error: no key with id ${id}`);
      return 1;
    }
    throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`);
  } catch (err) {
    if (err instanceof UsageError) { out(`error: ${err.message}\n${KEYS_USAGE}`); return 2; }
    if (err instanceof GatewayError) { out(`error: ${err.message}`); return 1; }
    throw err;
  }
}
