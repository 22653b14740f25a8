// A `keys`, `users` or `router` command that is about to create the SQLite file says so, naming the
// absolute path: storage.sqlite_path is relative to the current directory, and a key created from
// another directory went to a new, empty database the gateway never read, without a word.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

test('a command creating the SQLite file names it on stderr; once it exists, nothing is said', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-newdb-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const elsewhere = join(dir, 'elsewhere');
  mkdirSync(elsewhere);
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nstorage: { sqlite_path: ./data/gw.db }\n`);
  const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '' };
  const keys = (...args: string[]) => spawnSync(process.execPath, [MAIN, 'keys', ...args, '--config', config], { cwd: elsewhere, encoding: 'utf8', timeout: 60_000, env });
  let r = keys('create', '--name', 'ci', '--json');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stderr, `note: no database at ${join(elsewhere, 'data', 'gw.db')} yet: creating it (storage.sqlite_path "./data/gw.db" is relative to the current directory)\n`);
  assert.equal((JSON.parse(r.stdout) as { name: string }).name, 'ci', 'stdout stays the JSON alone');
  r = keys('list', '--json');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stderr, '');
});
