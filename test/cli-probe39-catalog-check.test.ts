// `catalog check` (which stores nothing) against a data directory with no database yet: it created an
// empty SQLite file to look for a stored overlay, without a word. With no file there is no overlay;
// the check runs on the files and leaves the directory as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

test('catalog check on a fresh data dir reports the files\' catalog and creates no database', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-p39-cat-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'data', 'gateway.db');
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nstorage: { sqlite_path: ${db} }\n`);
  const r = spawnSync(process.execPath, [MAIN, 'catalog', 'check', '--config', config], {
    encoding: 'utf8', timeout: 60_000, env: { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '' },
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^catalog OK: \d+ models, every invariant holds$/m);
  assert.equal(existsSync(db), false, 'no database file was created');
  assert.equal(existsSync(join(dir, 'data')), false, 'nor its directory');
});
