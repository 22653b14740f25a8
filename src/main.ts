// The command line: serve (default) | check | keys ... | catalog sync. `npm start` runs serve and
// `npm run gateway -- <command>` runs the rest. GATEWAY_CONFIG (or --config) names the config file.
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from './config/load.ts';
import { compileConfig } from './config/compile.ts';

const USAGE = `usage: gateway <command> [--config FILE]
  serve                 start the gateway (default)
  check                 validate gateway.yaml and providers/*.yaml without serving
  keys create --name N [--expires ISO] [--models a,b] [--budget USD --period day|week|month|total] [--rpm N] [--tpm N]
  keys list | keys revoke ID
  catalog sync          regenerate providers/catalog/*.yaml from the pinned open data packages`;

function configPath(argv: string[]): string {
  const i = argv.indexOf('--config');
  if (i >= 0 && argv[i + 1]) { const p = argv[i + 1]!; argv.splice(i, 2); return resolve(p); }
  return resolve(process.env.GATEWAY_CONFIG || 'gateway.yaml');
}

async function main(argv: string[]): Promise<number> {
  const file = configPath(argv);
  const [cmd = 'serve', ...rest] = argv;
  switch (cmd) {
    case 'serve': {
      const { serve } = await import('./serve.ts');
      await serve(file);
      return -1; // keeps running
    }
    case 'check': {
      try {
        const cfg = compileConfig(loadConfig(file));
        console.log(`config OK: ${file} (version ${cfg.version}); ${cfg.providers.size} providers, ${cfg.models.size} models`);
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
      const { openStoreFor } = await import('./serve.ts');
      const { runKeysCommand } = await import('./auth/cli.ts');
      const store = await openStoreFor(compileConfig(loadConfig(file)));
      try { return await runKeysCommand(rest, store, (s) => console.log(s)); } finally { await store.close(); }
    }
    case 'catalog': {
      if (rest[0] !== 'sync') { console.error(USAGE); return 2; }
      const { syncCatalog } = await import('./catalog/sync.ts');
      const cfg = compileConfig(loadConfig(file));
      const r = await syncCatalog({ outDir: resolve(cfg.providersDir, 'catalog') });
      console.log(`catalog sync: ${r.written.length} files written, ${r.changed.length} changed${r.changed.length ? `: ${r.changed.join(', ')}` : ''}`);
      return 0;
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
  console.error(e instanceof ConfigError ? `config invalid:\n${e.message}` : e);
  process.exit(1);
});
