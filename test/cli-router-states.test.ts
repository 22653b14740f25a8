// `router states | rollback` through the real command: a --limit or --to too large to be a number
// (past 2^53) is a usage error (exit 2), where the database refused it with a stack trace. Checked
// before the store is opened, so no database file is created for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

test('router states --limit and rollback --to beyond 2^53 exit 2 with the usage, no stack trace', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-router-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nstorage: { sqlite_path: ${join(dir, 'gw.db')} }\n`);
  const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '' };
  const router = (...args: string[]) => spawnSync(process.execPath, [MAIN, 'router', ...args, '--config', config], { encoding: 'utf8', timeout: 60_000, env });
  for (const [args, message] of [
    [['states', '--limit', '99999999999999999999'], /^error: --limit must be a whole number of at least 1, got "99999999999999999999"\nusage:/],
    [['rollback', '--to', '9007199254740993'], /^error: --to must be a whole number of at least 1, got "9007199254740993"\nusage:/],
  ] as Array<[string[], RegExp]>) {
    const r = router(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(existsSync(join(dir, 'gw.db')), false, 'the refused command created no database');
  }
  const r = router('states', '--limit', '9007199254740991');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^no learned state stored yet/);
});
