// `users` through the real command (node src/main.ts users ...): an option a subcommand does not take
// (a typo such as --admn, or --role admin) is refused with exit 2 on stderr and nothing is created or
// changed, where it used to be ignored and the account made as a member.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

test('users: options a subcommand does not take are refused and nothing is written', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-users-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nstorage: { sqlite_path: ${join(dir, 'gw.db')} }\n`);
  const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '' };
  const users = (...args: string[]) => spawnSync(process.execPath, [MAIN, 'users', ...args, '--config', config], { encoding: 'utf8', timeout: 60_000, env, input: '' });
  const made = users('create', '--email', 'ops@example.com');
  assert.equal(made.status, 0, made.stdout + made.stderr);
  for (const [args, message] of [
    [['create', '--email', 'boss@example.com', '--admn'], 'unknown option --admn'],
    [['create', '--email', 'boss@example.com', '--role', 'admin'], 'unknown option --role'],
    [['list', '--all'], 'unknown option --all'],
    [['disable', 'ops@example.com', 'now'], 'unexpected argument "now"'],
    [['password', 'ops@example.com', '--password'], 'unknown option --password'],
  ] as Array<[string[], string]>) {
    const r = users(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, '', args.join(' '));
    assert.ok(r.stderr.startsWith(`error: ${message}\nusage:`), `${args.join(' ')}: ${r.stderr}`);
  }
  const listed = users('list', '--json');
  assert.equal(listed.status, 0, listed.stdout + listed.stderr);
  const rows = listed.stdout.trim().split('\n').map((l) => JSON.parse(l) as { email: string; role: string; disabled_at: string | null });
  assert.deepEqual(rows.map((u) => [u.email, u.role, u.disabled_at]), [['ops@example.com', 'member', null]]);
});
