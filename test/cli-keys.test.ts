// `keys` through the real command (node src/main.ts keys ...) on a SQLite file: the mistakes an
// operator makes in a script, refused with exit 2 and the usage, and the store left as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

function gateway(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'cli-keys-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nstorage: { sqlite_path: ${join(dir, 'gw.db')} }\n`);
  const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '' };
  return (...args: string[]) => {
    const r = spawnSync(process.execPath, [MAIN, 'keys', ...args, '--config', config], { encoding: 'utf8', timeout: 60_000, env });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
}

test('an empty --models (an unset variable, a stray comma) is refused: it would have allowed every model', (t) => {
  const keys = gateway(t);
  const made = keys('create', '--name', 'ci', '--models', 'openai/gpt-5', '--json');
  assert.equal(made.status, 0, made.stdout + made.stderr);
  const id = (JSON.parse(made.stdout) as { id: string }).id;
  for (const args of [['create', '--name', 'wide', '--models', ''], ['create', '--name', 'wide', '--models=,'], ['edit', id, '--models', ' , ']]) {
    const r = keys(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, '', args.join(' '));
    assert.match(r.stderr, /^error: --models needs at least one model id or glob, got ".*" \((leave it out for every model|--models all lifts the restriction)\)\nusage:/, args.join(' '));
  }
  const listed = keys('list', '--json');
  assert.equal(listed.status, 0, listed.stderr);
  const rows = listed.stdout.trim().split('\n').map((l) => JSON.parse(l) as { name: string; allowed_models: string[] });
  assert.deepEqual(rows.map((k) => [k.name, k.allowed_models]), [['ci', ['openai/gpt-5']]], 'no key was created and the restriction stands');
  // The documented way to lift it still works.
  const all = keys('edit', id, '--models', 'all', '--json');
  assert.equal(all.status, 0, all.stdout + all.stderr);
  assert.deepEqual((JSON.parse(all.stdout) as { allowed_models: string[] }).allowed_models, []);
});

test('keys rotate --grace-hours takes decimal hours only: 0x10, 1e2, -0 and Infinity are refused (exit 1)', (t) => {
  const keys = gateway(t);
  const made = keys('create', '--name', 'ci', '--json');
  assert.equal(made.status, 0, made.stdout + made.stderr);
  const id = (JSON.parse(made.stdout) as { id: string }).id;
  for (const hours of ['0x10', '1e2', '-0', 'Infinity']) {
    const r = keys('rotate', id, '--grace-hours', hours);
    assert.equal(r.status, 1, `${hours}: ${r.stdout}${r.stderr}`);
    assert.deepEqual([r.stdout, r.stderr], ['', 'error: grace_hours must be a number from 0 to 720\n'], hours);
  }
  const r = keys('rotate', id, '--grace-hours', '1.5', '--json');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const until = Date.parse((JSON.parse(r.stdout) as { previous_secret_valid_until: string }).previous_secret_valid_until);
  assert.ok(Math.abs(until - Date.now() - 1.5 * 3_600_000) < 60_000, `grace until ${new Date(until).toISOString()}`);
});
