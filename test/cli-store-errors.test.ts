// A database the config names but that cannot be opened (the SQLite path is a directory, nothing
// listens at the PostgreSQL address), through the real command: exit 1 with one line naming the
// database and the cause, the password hidden, no stack trace, in bounded time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function withStorage(t: { after(fn: () => void): void }, storage: string): { dir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cli-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nserver: { port: 0 }\nstorage: ${storage}\n`);
  return { dir, config };
}

function run(config: string, ...args: string[]) {
  const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '' };
  const started = Date.now();
  const r = spawnSync(process.execPath, [MAIN, ...args, '--config', config], { encoding: 'utf8', timeout: 60_000, env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
}

test('a SQLite path that is a directory: the command names it and exits 1, without a stack trace', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-store-db-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'db'));
  const { config } = withStorage(t, `{ sqlite_path: ${join(dir, 'db')} }`);
  for (const args of [['keys', 'list'], ['keys', 'create', '--name', 'ci'], ['users', 'list'], ['router', 'states']]) {
    const r = run(config, ...args);
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stderr, `error: cannot open the database ${join(dir, 'db')} (storage.sqlite_path): unable to open database file\n`, args.join(' '));
    assert.equal(r.stdout, '', args.join(' '));
  }
});

test('PostgreSQL not listening: keys and serve name the URL without its password and exit 1 in bounded time', async (t) => {
  const port = await closedPort();
  const { config } = withStorage(t, `{ database_url: "postgres://ops:s3cret@127.0.0.1:${port}/gw" }`);
  for (const args of [['keys', 'create', '--name', 'ci'], ['serve']]) {
    const r = run(config, ...args);
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^error: cannot open the database postgres://ops:\\*\\*\\*@127\\.0\\.0\\.1:${port}/gw \\(storage\\.database_url\\): connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\n$`), args.join(' '));
    assert.doesNotMatch(r.stderr + r.stdout, /s3cret/);
    assert.ok(r.ms < 30_000, `${args.join(' ')} took ${r.ms} ms`);
  }
});
