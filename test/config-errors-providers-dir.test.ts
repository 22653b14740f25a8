// A gateway.yaml refused for one field still names its providers_dir: `check` lists that field's
// problem and the problems of the provider files in the directory it names, not a made-up "cannot
// read providers directory" for ./providers beside the file (which sent operators looking for a
// directory they never configured).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;

function check(config: string) {
  const r = spawnSync(process.execPath, [MAIN, 'check', '--config', config], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('a refused gateway.yaml: its own problem and those of the providers in the providers_dir it names, nothing else', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-pdir-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'elsewhere'));
  writeFileSync(join(dir, 'elsewhere', 'acme.yaml'), 'id: acme\nname: Acme\nformat: openai-chat\nbase_url: ftp://x\nauth: { type: bearer }\n');
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, 'version: 1\nproviders_dir: ./elsewhere\nserver: { port: "eighty" }\n');
  const r = check(config);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines[0], 'config invalid (2 problems):', r.stderr);
  assert.match(r.stderr, /gateway\.yaml at \/server\/port: must be integer/);
  assert.match(r.stderr, /elsewhere\/acme\.yaml at \/base_url: must match pattern/);
});

test('a gateway.yaml that cannot be parsed or read: its problem alone, no guess at a providers directory', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-pdir-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, 'version: 1\nserver:\n\tport: 8080\n');
  let r = check(config);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /^config invalid \(1 problem\):\n {2}.*gateway\.yaml at line 3: Tabs are not allowed as indentation/);
  r = check(join(dir, 'missing.yaml'));
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /^config invalid \(1 problem\):\n {2}.*missing\.yaml: cannot read: ENOENT/);
  // A valid gateway.yaml without the directory it names is still told so.
  writeFileSync(config, 'version: 1\nproviders_dir: ./gone\n');
  r = check(config);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /gone: cannot read providers directory: ENOENT/);
});
