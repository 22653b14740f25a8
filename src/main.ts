// The command line: serve (default) | check | keys ... | catalog sync. `npm start` runs serve and
// `npm run gateway -- <command>` runs the rest. GATEWAY_CONFIG (or --config) names the config file.
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { ConfigError, loadConfig } from './config/load.ts';
import { compileConfig } from './config/compile.ts';
import { unsetVariableLines } from './config/env-warnings.ts';
import type { Config } from './config/types.ts';
import { RESTART_ONLY } from './config/live-settings.ts';
import { OperatorError } from './util/operator-error.ts';
import type { CommandIo, Prepared } from './util/cli-args.ts';
import type { Store } from './store/types.ts';

const USAGE = `usage: gateway <command> [--config FILE]
  serve                 start the gateway (default)
  check                 validate gateway.yaml and providers/*.yaml without serving
  keys create --name N [--expires ISO] [--models a,b] [--budget USD --period day|week|month|total] [--rpm N] [--tpm N]
  keys list | keys edit ID [--name N] [--models a,b|all] [--budget USD|none] ... | keys rotate ID [--grace-hours H] | keys revoke ID
  users create --email E [--name N] [--admin] [--password-stdin]   a dashboard account (the first admin: --admin)
  users list | users password EMAIL | users disable EMAIL | users enable EMAIL
  catalog sync          regenerate providers/catalog/*.yaml from the pinned open data (docs/catalog.md)
  catalog refresh       read the providers' model lists, OpenRouter and models.dev; store the overlay every replica serves
  catalog diff          show what a refresh would change in the served catalog, without storing it
  catalog check         report the catalog's invariants (also part of check)
  router states | router rollback --to VERSION [--reason TEXT] | router reset [--reason TEXT]
                        the router's learned-state versions; undo what feedback taught (docs/router.md)
  store vacuum          rewrite the SQLite database with 16 KB pages and without free pages (gateway stopped)
  router-bench --train FILE --test FILE [--plot FILE.svg] [--choices FILE.jsonl]
                        offline evaluation of the router's quality model (docs/router.md)`;

/** An operator's mistake on the command line: the message and the usage, exit code 2. */
class UsageError extends Error {}

/**
 * Takes `--config FILE` or `--config=FILE` out of argv. A bare `--config` (or `--config=`) is refused:
 * ignored, `check` validated gateway.yaml instead and said OK, and `serve` served it.
 */
function configPath(argv: string[]): string {
  const i = argv.findIndex((a) => a === '--config' || a.startsWith('--config='));
  if (i < 0) return resolve(process.env.GATEWAY_CONFIG || 'gateway.yaml');
  const a = argv[i]!;
  const value = a === '--config' ? argv[i + 1] : a.slice('--config='.length);
  if (value === undefined || value === '' || (a === '--config' && value.startsWith('--'))) throw new UsageError('--config needs a file name');
  argv.splice(i, a === '--config' ? 2 : 1);
  if (argv.some((x) => x === '--config' || x.startsWith('--config='))) throw new UsageError('--config given twice');
  return resolve(value);
}

/** `check` and `serve` take no arguments but --config: anything else is a typo, not something to ignore. */
function noArguments(cmd: string, rest: string[]): void {
  if (rest.length > 0) throw new UsageError(`${cmd} takes no arguments besides --config FILE, got "${rest[0]}"`);
}

/**
 * A command that would create the SQLite file says so: storage.sqlite_path is relative to the current
 * directory, and `keys create` run from another one wrote the key to a new, empty database there
 * (the gateway never saw it) without a word.
 */
function noteNewDatabase(cfg: Config): Config {
  const path = resolve(cfg.storage.sqlitePath);
  if (!cfg.storage.databaseUrl && !existsSync(path)) {
    console.error(`note: no database at ${path} yet: creating it (storage.sqlite_path${isAbsolute(cfg.storage.sqlitePath) ? '' : ` "${cfg.storage.sqlitePath}" is relative to the current directory`})`);
  }
  return cfg;
}

/** Data to stdout, errors and notes to stderr. */
const IO: CommandIo = { out: (s) => console.log(s), err: (s) => console.error(s) };

/**
 * A store command whose arguments were checked (`prepared`: the exit code of a mistake, already
 * reported, or the work): the store is opened only for work to do, so a mistake never creates the
 * database file. `part` is what of the store the work takes.
 */
async function withStoreAfter<S>(cfg: Config, prepared: Prepared<S>, part: (store: Store) => S): Promise<number> {
  if (typeof prepared === 'number') return prepared;
  const { openStoreFor } = await import('./serve.ts');
  const store = await openStoreFor(noteNewDatabase(cfg));
  try { return await prepared(part(store)); } finally { await store.close(); }
}

async function main(argv: string[]): Promise<number> {
  const file = configPath(argv);
  const [cmd = 'serve', ...rest] = argv;
  switch (cmd) {
    case 'serve': {
      noArguments(cmd, rest);
      const { serve } = await import('./serve.ts');
      await serve(file);
      return -1; // keeps running
    }
    case 'check': {
      noArguments(cmd, rest);
      try {
        const raw = loadConfig(file);
        for (const line of unsetVariableLines(raw.warnings)) console.error(line);
        const cfg = compileConfig(raw);
        // The catalog's invariants over the files, hand-written models and overrides (src/catalog/check.ts).
        const { checkCatalog, formatProblems } = await import('./catalog/check.ts');
        const problems = checkCatalog(cfg);
        for (const n of cfg.catalog.notes) console.log(`note: ${n}`);
        const { defaultsWarning } = await import('./router/defaults-check.ts');
        const unroutable = defaultsWarning(cfg);
        if (unroutable !== null) console.error(unroutable);
        // Reported, not fatal: the config is valid and the models are served (`catalog check` exits 1 on them).
        if (problems.length > 0) {
          console.error(`catalog: ${problems.length} invariant problem${problems.length === 1 ? '' : 's'} (the models are served; fix them or override them in model_overrides):`);
          for (const line of formatProblems(problems)) console.error(line);
        }
        console.log(`config OK: ${file} (version ${cfg.version}); ${cfg.providers.size} providers, ${cfg.models.size} models`);
        // Which settings a running gateway applies on reload, and which need a restart (src/config/live-settings.ts).
        console.log(`restart required to change: ${RESTART_ONLY.join(', ')}; every other setting applies on reload (file change or SIGHUP)`);
        return 0;
      } catch (e) {
        if (e instanceof ConfigError) {
          console.error(`config invalid (${e.problems.length} problem${e.problems.length === 1 ? '' : 's'}):`);
          for (const p of e.problems) console.error(`  ${p.file}${p.path ? ` at ${p.path}` : ''}: ${p.message}`);
          return 1;
        }
        throw e;
      }
    }
    case 'keys': {
      const { prepareKeysCommand } = await import('./auth/cli.ts');
      const cfg = compileConfig(loadConfig(file));
      return withStoreAfter(cfg, prepareKeysCommand(rest, IO, { rotationGraceMs: cfg.dashboard.rotationGraceMs }), (s) => s);
    }
    case 'users': {
      const { prepareUsersCommand } = await import('./dashboard/users-cli.ts');
      const cfg = compileConfig(loadConfig(file));
      return withStoreAfter(cfg, await prepareUsersCommand(rest, IO), (s) => s);
    }
    case 'catalog': {
      const { runCatalogCommand } = await import('./catalog/cli.ts');
      return runCatalogCommand(rest, file);
    }
    case 'router': {
      const { prepareRouterCommand } = await import('./router/state-cli.ts');
      const cfg = compileConfig(loadConfig(file));
      return withStoreAfter(cfg, prepareRouterCommand(rest, IO), (s) => s.sql);
    }
    case 'store': {
      const { storeOptionsFor } = await import('./serve.ts');
      const { runStoreCommand } = await import('./store/vacuum-cli.ts');
      return runStoreCommand(rest, storeOptionsFor(compileConfig(loadConfig(file))), (s) => console.log(s), (s) => console.error(s));
    }
    case 'router-bench': {
      const { runRouterBench } = await import('./router/bench/run.ts');
      return runRouterBench(rest);
    }
    case 'help': case '--help': case '-h':
      console.log(USAGE);
      return 0;
    default:
      console.error(`unknown command "${cmd}"\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then((code) => { if (code >= 0) process.exit(code); }, (e: unknown) => {
  if (e instanceof UsageError) { console.error(`error: ${e.message}\n${USAGE}`); process.exit(2); }
  // The database cannot be opened, the port is taken: the operator's to fix, so the message alone.
  if (e instanceof OperatorError) { console.error(`error: ${e.message}`); process.exit(1); }
  console.error(e instanceof ConfigError ? `config invalid:\n${e.message}` : e);
  process.exit(1);
});
