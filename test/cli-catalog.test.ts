// `catalog` through the real command (node src/main.ts catalog ...): a subcommand that does not exist,
// or an option none of them takes, exits 2 with the usage and writes nothing; `catalog sync
// --dry-run` used to regenerate every catalog file, the flag ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

test('catalog: an unknown subcommand or an extra argument is refused, and sync --dry-run writes nothing', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-catalog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(PROVIDERS, join(dir, 'providers'), { recursive: true });
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ./providers\nstorage: { sqlite_path: ${join(dir, 'gw.db')} }\n`);
  const catalogDir = join(dir, 'providers', 'catalog');
  const stamps = () => readdirSync(catalogDir).map((f) => `${f} ${statSync(join(catalogDir, f)).mtimeMs}`);
  const before = stamps();
  const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '' };
  for (const [args, message] of [
    [['sync', '--dry-run'], /^catalog sync takes no arguments, got "--dry-run"\nusage:\n {2}catalog sync/],
    [['check', 'openai'], /^catalog check takes no arguments, got "openai"\nusage:/],
    [['synch'], /^unknown subcommand "synch"\nusage:/],
    [[], /^name a subcommand\nusage:/],
  ] as Array<[string[], RegExp]>) {
    const r = spawnSync(process.execPath, [MAIN, 'catalog', ...args, '--config', config], { encoding: 'utf8', timeout: 120_000, env });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stdout, '', args.join(' '));
  }
  assert.deepEqual(stamps(), before, 'no catalog file was written');
});
