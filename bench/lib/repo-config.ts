// A copy of the repository's own config (gateway.yaml, providers/ with their catalogs) in a temp
// directory, served on port 0 with the watcher off and SQLite in the same directory: the real size of
// a config, for measuring reloads (bench/reload-stall.ts, test/config-reload-live.test.ts).
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export type RepoConfigCopy = {
  dir: string; file: string; env: Record<string, string>;
  /** Rewrites gateway.yaml with a new trailing comment, so the next reload sees a new version. */
  touch(): void;
  remove(): void;
};

export function copyRepoConfig(): RepoConfigCopy {
  const root = resolve(import.meta.dirname, '..', '..');
  const dir = mkdtempSync(join(tmpdir(), 'gw-repo-config-'));
  cpSync(join(root, 'providers'), join(dir, 'providers'), { recursive: true });
  const file = join(dir, 'gateway.yaml');
  const base = readFileSync(join(root, 'gateway.yaml'), 'utf8').replace(/^(\s*)port: \d+/m, '$1port: 0').replace(/^(\s*)watch: true/m, '$1watch: false');
  writeFileSync(file, base);
  let n = 0;
  return {
    dir, file, env: { GATEWAY_DB: join(dir, 'gw.db'), PATH: process.env.PATH ?? '' },
    touch: () => writeFileSync(file, `${base}\n# reload ${n++}\n`),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A placeholder key for every provider of the repository's providers/ (and AWS keys for the signing
 * ones): the router routes only to providers with credentials, so a bench that measures decisions
 * over the whole catalog names one for each. Nothing is sent to those providers (the bench policy
 * keeps the routed traffic on the mock upstream).
 */
export function everyProviderKey(): Record<string, string> {
  const dir = join(resolve(import.meta.dirname, '..', '..'), 'providers');
  const env: Record<string, string> = { AWS_ACCESS_KEY_ID: 'AKIDBENCH', AWS_SECRET_ACCESS_KEY: 'bench-unused' };
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml'))) {
    const id = /^id:\s*(\S+)/m.exec(readFileSync(join(dir, f), 'utf8'))?.[1];
    if (id) env[`${id.toUpperCase().replace(/-/g, '_')}_API_KEY`] = 'sk-bench-unused';
  }
  return env;
}
