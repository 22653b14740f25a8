// The `router` command: list the learned-state versions, roll back to one, or reset to the priors
// (src/router/state-restore.ts). A running gateway adopts the new version on its next state poll.
// Exit codes: 0 done, 1 the operation failed (a version not stored), 2 usage error.
import type { SqlRunner } from '../store/sql-runner.ts';
import { flagReader, onlyFlags, UsageError } from '../util/cli-args.ts';
import { describeOrigin, listStates, REASON_MAX, restoreReason, restoreState, StateNotFound } from './state-restore.ts';

export const ROUTER_USAGE = `usage:
  router states [--limit N] [--json]           the stored learned-state versions, newest first
  router rollback --to VERSION [--reason TEXT] route with that version's quality model again
  router reset [--reason TEXT]                 forget what feedback taught: route on the priors again`;

const size = (bytes: number): string => (bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`);

export async function runRouterCommand(argv: string[], sql: SqlRunner, out: (s: string) => void, err: (s: string) => void = out): Promise<number> {
  const [sub, ...args] = argv;
  const flag = flagReader(args);
  const count = (name: string, min: number): number | undefined => {
    const v = flag(name);
    if (v === undefined) return undefined;
    // Past 2^53 the digits are no longer the number: the database refused it ("datatype mismatch", a stack trace).
    if (!/^\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${v}"`);
    return Number(v);
  };
  try {
    switch (sub) {
      case 'states': {
        onlyFlags(args, ['--limit'], ['--json']);
        const list = await listStates(sql, count('limit', 1) ?? 50);
        if (args.includes('--json')) { out(JSON.stringify(list, null, 2)); return 0; }
        if (list.length === 0) { out('no learned state stored yet: the router routes on its priors'); return 0; }
        for (const s of list) out(`v${s.version}  ${s.createdAt}  ${String(s.outcomes).padStart(7)} outcomes  ${size(s.bytes).padStart(8)}  ${describeOrigin(s.origin)}`);
        return 0;
      }
      case 'rollback': case 'reset': {
        // A reset takes no version (as the admin API says): `reset --to 3` meant a rollback, not forgetting everything.
        if (sub === 'reset' && args.includes('--to')) throw new UsageError('router reset takes no version (it returns to the priors); to go back to a version: router rollback --to VERSION');
        onlyFlags(args, sub === 'rollback' ? ['--to', '--reason'] : ['--reason']);
        const to = sub === 'rollback' ? count('to', 1) : null;
        if (sub === 'rollback' && to === undefined) throw new UsageError('router rollback needs --to VERSION (see router states)');
        const reason = restoreReason(flag('reason'));
        if (reason === undefined) throw new UsageError(`--reason must be at most ${REASON_MAX} characters`);
        const s = await restoreState(sql, { from: to ?? null, by: 'cli', reason });
        out(`stored v${s.version}: ${describeOrigin(s.origin)}; running gateways route with it within router.learning.state_poll_ms`);
        return 0;
      }
      default:
        throw new UsageError(sub === undefined ? 'name a subcommand' : `unknown subcommand "${sub}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) { err(`${e.message}\n${ROUTER_USAGE}`); return 2; }
    if (e instanceof StateNotFound) { err(e.message); return 1; }
    throw e;
  }
}
