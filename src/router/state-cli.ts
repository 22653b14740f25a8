// The `router` command: list the learned-state versions, roll back to one, or reset to the priors
// (src/router/state-restore.ts). A running gateway adopts the new version on its next state poll.
// Exit codes: 0 done, 1 the operation failed (a version not stored), 2 usage error.
import type { SqlRunner } from '../store/sql-runner.ts';
import { noWords, parseArgs, reportCommandError, UsageError, type CommandIo, type Prepared } from '../util/cli-args.ts';
import { describeOrigin, listStates, REASON_MAX, restoreReason, restoreState, StateNotFound } from './state-restore.ts';

export const ROUTER_USAGE = `usage:
  router states [--limit N] [--json]           the stored learned-state versions, newest first
  router rollback --to VERSION [--reason TEXT] route with that version's quality model again
  router reset [--reason TEXT]                 forget what feedback taught: route on the priors again`;

const size = (bytes: number): string => (bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`);

type RouterWork = (sql: SqlRunner) => Promise<number>;

/** A version that is not stored: exit 1 with its message; anything else as every store command reports it. */
function report(e: unknown, io: CommandIo): number {
  if (e instanceof StateNotFound) { io.err(e.message); return 1; }
  return reportCommandError(e, io, ROUTER_USAGE);
}

/**
 * Checks `router <states|rollback|reset>` before any store is opened. Returns the exit code of a mistake
 * (reported on `io.err`) or the work to run on the opened store's SQL.
 */
export function prepareRouterCommand(argv: string[], io: CommandIo): Prepared<SqlRunner> {
  let work: RouterWork;
  try { work = routerWork(argv, io); } catch (e) { return report(e, io); }
  return async (sql) => { try { return await work(sql); } catch (e) { return report(e, io); } };
}

/** Runs `router ...` on an opened store's SQL (the checks first, as prepareRouterCommand does). Returns the exit code. */
export async function runRouterCommand(argv: string[], sql: SqlRunner, io: CommandIo): Promise<number> {
  const prepared = prepareRouterCommand(argv, io);
  return typeof prepared === 'number' ? prepared : prepared(sql);
}

function routerWork(argv: string[], { out }: CommandIo): RouterWork {
  const [sub, ...args] = argv;
  const count = (values: Map<string, string>, name: string, min: number): number | undefined => {
    const v = values.get(name);
    if (v === undefined) return undefined;
    // Past 2^53 the digits are no longer the number: the database refused it ("datatype mismatch", a stack trace).
    if (!/^\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${v}"`);
    return Number(v);
  };
  switch (sub) {
    case 'states': {
      const p = parseArgs(args, ['limit'], ['json']);
      noWords(p);
      const limit = count(p.values, 'limit', 1) ?? 50;
      return async (sql) => {
        const list = await listStates(sql, limit);
        if (p.bare.has('json')) { out(JSON.stringify(list, null, 2)); return 0; }
        if (list.length === 0) { out('no learned state stored yet: the router routes on its priors'); return 0; }
        for (const s of list) out(`v${s.version}  ${s.createdAt}  ${String(s.outcomes).padStart(7)} outcomes  ${size(s.bytes).padStart(8)}  ${describeOrigin(s.origin)}`);
        return 0;
      };
    }
    case 'rollback': case 'reset': {
      // A reset takes no version (as the admin API says): `reset --to 3` meant a rollback, not forgetting everything.
      if (sub === 'reset' && args.some((a) => a === '--to' || a.startsWith('--to='))) throw new UsageError('router reset takes no version (it returns to the priors); to go back to a version: router rollback --to VERSION');
      const p = parseArgs(args, sub === 'rollback' ? ['to', 'reason'] : ['reason']);
      noWords(p);
      const to = sub === 'rollback' ? count(p.values, 'to', 1) : null;
      if (sub === 'rollback' && to === undefined) throw new UsageError('router rollback needs --to VERSION (see router states)');
      const reason = restoreReason(p.values.get('reason'));
      if (reason === undefined) throw new UsageError(`--reason must be at most ${REASON_MAX} characters`);
      return async (sql) => {
        const s = await restoreState(sql, { from: to ?? null, by: 'cli', reason });
        out(`stored v${s.version}: ${describeOrigin(s.origin)}; running gateways route with it within router.learning.state_poll_ms`);
        return 0;
      };
    }
    default:
      throw new UsageError(sub === undefined ? 'name a subcommand' : `unknown subcommand "${sub}"`);
  }
}
