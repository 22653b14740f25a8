// What the probe of every subcommand found: REDIS_URL (which applies when gateway.yaml sets no
// storage.redis_url) that the Redis client cannot parse passed `check` and ended `serve` with
// "TypeError: Invalid URL" and a stack trace; a YAML alias inside the node it names was reported as
// "Maximum call stack size exceeded"; a gateway.yaml holding a list was also said to miss a providers
// directory it never named; `users create --name ""` made the account under a name of its own choosing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config/load.ts';
import { prepareUsersCommand } from '../src/dashboard/users-cli.ts';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

function configFile(t: { after(fn: () => void): void }, text: string): { file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cli-p39-cfg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'gateway.yaml'), text);
  return { file: join(dir, 'gateway.yaml') };
}

const problemsOf = (file: string, env: Record<string, string> = {}): string[] => {
  try { loadConfig(file, env); } catch (e) {
    if (e instanceof ConfigError) return e.problems.map((p) => `${p.file.replace(/^.*\//, '')}${p.path ? ` at ${p.path}` : ''}: ${p.message}`);
    throw e;
  }
  return [];
};

test('a REDIS_URL the Redis client cannot parse is a config problem naming the variable: check and serve exit 1, no stack trace', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-p39-redis-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, `version: 1\nproviders_dir: ${PROVIDERS}\nserver: { port: 0 }\nstorage: { sqlite_path: ${join(dir, 'gw.db')} }\nreload: { watch: false }\n`);
  const bad = 'redis host:6379';
  assert.deepEqual(problemsOf(file, { REDIS_URL: bad }), [`environment at REDIS_URL: not a Redis URL: "${bad}" (like redis://host:6379/0, rediss://host:6380, host:6379 or /path/to/redis.sock)`]);
  assert.deepEqual(problemsOf(file, { REDIS_URL: 'redis://127.0.0.1:6379/0' }), []);
  const r = spawnSync(process.execPath, [MAIN, 'serve', '--config', file], {
    encoding: 'utf8', timeout: 60_000, env: { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '', PORT: '', REDIS_URL: bad },
  });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /environment at REDIS_URL: not a Redis URL: "redis host:6379"/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

test('a DATABASE_URL or storage.database_url that is no PostgreSQL URL is a config problem naming it (it was tried as PostgreSQL)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-p39-db-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, `version: 1\nproviders_dir: ${PROVIDERS}\nserver: { port: 0 }\nreload: { watch: false }\n`);
  assert.deepEqual(problemsOf(file, { DATABASE_URL: 'mysql://u@h/db' }), ['environment at DATABASE_URL: a mysql: URL: the gateway stores in PostgreSQL (postgres://user:password@host:5432/db) or, with neither set, SQLite']);
  for (const ok of ['postgres://u@127.0.0.1/test', 'postgresql://127.0.0.1:5432/test', '']) assert.deepEqual(problemsOf(file, { DATABASE_URL: ok }), [], ok);
  writeFileSync(file, `version: 1\nproviders_dir: ${PROVIDERS}\nstorage: { database_url: 'localhost/db' }\n`);
  assert.match(problemsOf(file)[0] ?? '', /gateway\.yaml at \/storage\/database_url: not a URL/);
});

test('an alias inside the node it names is one problem naming file and path', (t) => {
  const { file } = configFile(t, 'version: 1\nfallbacks: &loop { a: [*loop] }\n');
  assert.deepEqual(problemsOf(file), ['gateway.yaml: the YAML alias at /fallbacks/a/0 refers to a node that contains it (the value would be infinite)']);
});

test('a gateway.yaml holding a list is refused for that alone', (t) => {
  const { file } = configFile(t, '- version: 1\n');
  assert.deepEqual(problemsOf(file), ['gateway.yaml at /: must be object']);
});

test('users create --name "" is a usage error, not a name made up', async () => {
  const err: string[] = [];
  const prepared = await prepareUsersCommand(['create', '--email', 'ops@example.com', '--name', ' '], { out: (l) => assert.fail(l), err: (l) => err.push(l) });
  assert.equal(prepared, 2);
  assert.ok(err[0]!.startsWith('error: --name is empty (leave it out to name the user after the email, before the @)\nusage:'), err[0]);
});
