// The store commands (keys, users, router) through the real command (node src/main.ts), against a
// fresh data directory: errors go to stderr and data to stdout (errors were printed on stdout, where a
// script reading a key from it took "error: ..." for one); a usage mistake or a value refused before any
// stored data is needed leaves no database file behind (one was created, then the usage printed); a
// single-valued flag given twice is refused naming it (`--name a --name b` made a key named b).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareKeysCommand } from '../src/auth/cli.ts';
import { prepareUsersCommand } from '../src/dashboard/users-cli.ts';
import { runRouterBench } from '../src/router/bench/run.ts';
import { prepareRouterCommand } from '../src/router/state-cli.ts';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

function gateway(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'cli-p39-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'data', 'gateway.db');
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nstorage: { sqlite_path: ${db} }\n`);
  const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '' };
  const run = (args: string[], input = '') => {
    const r = spawnSync(process.execPath, [MAIN, ...args, '--config', config], { encoding: 'utf8', timeout: 60_000, env, input });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return { db, run };
}

test('mistakes on a fresh data dir: one error on stderr, nothing on stdout, no database file created', (t) => {
  const { db, run } = gateway(t);
  for (const [args, status, message] of [
    [['keys', 'create', '--name', 'ci', '--bogus', '1'], 2, 'error: unknown option --bogus\nusage:'],
    [['keys', 'create', '--name', 'ci', '--rpm', 'ten'], 2, 'error: --rpm must be a whole number, got "ten"\nusage:'],
    [['keys', 'create'], 2, 'error: keys create needs --name\nusage:'],
    [['keys', 'frob'], 2, 'error: unknown subcommand "frob"\nusage:'],
    [['keys', 'create', '--name', ' '], 1, 'error: name is required (1 to 200 characters)\n'],
    [['keys', 'create', '--name', 'ci', '--budget', '-5'], 1, 'error: budget_usd must be a positive decimal'],
    [['keys', 'create', '--name', 'ci', '--expires', 'soon'], 1, 'error: expires_at must be an ISO 8601 time'],
    [['keys', 'rotate', 'abc', '--grace-hours', '1000'], 1, 'error: grace_hours must be a number from 0 to 720\n'],
    [['users', 'create', '--email', 'not-an-email'], 1, 'error: email must look like name@example.com\n'],
    [['users', 'create', '--email', 'ops@example.com', '--password-stdin'], 1, 'error: '],
    [['users', 'list', '--all'], 2, 'error: unknown option --all\nusage:'],
    [['router', 'rollback', '--to', 'x'], 2, 'error: --to must be a whole number of at least 1, got "x"\nusage:'],
    [['router', 'states', 'now'], 2, 'error: unexpected argument "now"\nusage:'],
  ] as Array<[string[], number, string]>) {
    const r = run(args, 'short\n');
    const what = args.join(' ');
    assert.equal(r.status, status, `${what}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, '', `${what}: stdout stays for data`);
    assert.ok(r.stderr.startsWith(message), `${what}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /\n\s+at /, `${what}: no stack trace`);
    assert.equal(existsSync(db), false, `${what}: created ${db}`);
  }
});

test('a refused operation on an existing store reports on stderr; the data stays alone on stdout', (t) => {
  const { run } = gateway(t);
  const made = run(['keys', 'create', '--name', 'ci', '--json']);
  assert.equal(made.status, 0, made.stdout + made.stderr);
  const id = (JSON.parse(made.stdout) as { id: string }).id;
  for (const [args, message] of [
    [['keys', 'revoke', 'nokey'], 'error: no key with id nokey\n'],
    [['keys', 'edit', id, '--expires', '2001-01-01T00:00:00Z'], 'error: expires_at must be in the future\n'],
    [['users', 'disable', 'nobody@example.com'], 'error: no user with email nobody@example.com\n'],
    [['router', 'rollback', '--to', '5'], 'router state version 5 is not stored: no learned state is stored yet\n'],
  ] as Array<[string[], string]>) {
    const r = run(args);
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.deepEqual([r.stdout, r.stderr], ['', message], args.join(' '));
  }
  assert.equal(run(['keys', 'revoke', id]).status, 0);
  const twice = run(['keys', 'revoke', id]);
  assert.equal(twice.status, 1);
  assert.equal(twice.stdout, '');
  assert.match(twice.stderr, new RegExp(`^error: key ${id} was already revoked at \\d{4}-`));
  const listed = run(['keys', 'list']);
  assert.equal(listed.status, 0, listed.stderr);
  assert.equal(listed.stderr, '');
  assert.match(listed.stdout, new RegExp(`^${id}  revoked  ci  `));
});

test('a single-valued flag given twice is a usage error naming it, in every spelling, before any store is needed', async () => {
  const err: string[] = [];
  const io = { out: (l: string) => assert.fail(`stdout: ${l}`), err: (l: string) => err.push(l) };
  for (const [args, flag] of [
    [['keys', 'create', '--name', 'a', '--name', 'b'], '--name'],
    [['keys', 'create', '--name=a', '--rpm', '5', '--rpm=6'], '--rpm'],
    [['keys', 'edit', 'abc', '--models', 'x/*', '--models', 'y/*'], '--models'],
    [['keys', 'rotate', 'abc', '--grace-hours', '1', '--grace-hours', '0'], '--grace-hours'],
    [['users', 'create', '--email', 'a@example.com', '--email', 'b@example.com'], '--email'],
    [['users', 'create', '--email', 'a@example.com', '--name', 'A', '--name', 'B'], '--name'],
    [['router', 'rollback', '--to', '1', '--to', '2'], '--to'],
    [['router', 'reset', '--reason', 'a', '--reason', 'b'], '--reason'],
    [['router', 'states', '--limit', '1', '--limit', '2'], '--limit'],
    [['router-bench', '--train', 'a.jsonl', '--test', 'b.jsonl', '--test', 'c.jsonl'], '--test'],
  ] as Array<[string[], string]>) {
    const [cmd, ...rest] = args;
    // Refused while checking the arguments: the answer is an exit code, not work to run on a store.
    const prepared = cmd === 'keys' ? prepareKeysCommand(rest, io) : cmd === 'users' ? await prepareUsersCommand(rest, io) : cmd === 'router' ? prepareRouterCommand(rest, io)
      : runRouterBench(rest, io.out, io.err);
    assert.equal(prepared, 2, args.join(' '));
    assert.ok(err.pop()!.startsWith(`${cmd === 'router-bench' ? '' : 'error: '}${flag} given more than once (it takes one value)\nusage:`), args.join(' '));
  }
});

test('a repeated bare flag changes nothing and stays accepted', (t) => {
  const { run } = gateway(t);
  const ok = run(['keys', 'create', '--name', 'a', '--json', '--json']);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  assert.equal((JSON.parse(ok.stdout) as { name: string }).name, 'a');
});
