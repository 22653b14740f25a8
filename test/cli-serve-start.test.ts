// `serve` (node src/main.ts serve) when its port is taken: one line naming the address and the
// settings that choose it, exit 1, no stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

test('serve on a port already in use exits 1 naming the address and the settings', async (t) => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => taken.close(() => r())));
  const port = (taken.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'cli-serve-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nserver: { host: 127.0.0.1, port: ${port} }\nstorage: { sqlite_path: ${join(dir, 'gw.db')} }\nreload: { watch: false }\n`);
  const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '', HOST: '', PORT: '' };
  // Asynchronous: the port is held by this process, whose event loop must stay free to hold it.
  const child = spawn(process.execPath, [MAIN, 'serve', '--config', config], { env });
  let stderr = '', stdout = '';
  child.stderr.on('data', (d) => { stderr += String(d); });
  child.stdout.on('data', (d) => { stdout += String(d); });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const status = await new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  clearTimeout(timer);
  assert.equal(status, 1, stdout + stderr);
  assert.equal(stderr, `error: cannot listen on 127.0.0.1:${port} (server.host and server.port, or HOST and PORT): listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`);
});

test('a PORT that is not a port is a config problem for check and serve alike, naming the variable', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-serve-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nstorage: { sqlite_path: ${join(dir, 'gw.db')} }\nreload: { watch: false }\n`);
  for (const port of ['abc', '99999', '-1', '80.5']) {
    for (const cmd of ['check', 'serve']) {
      const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '', PORT: port };
      const r = spawnSync(process.execPath, [MAIN, cmd, '--config', config], { encoding: 'utf8', timeout: 60_000, env });
      assert.equal(r.status, 1, `${cmd} PORT=${port}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, new RegExp(`environment at PORT: PORT must be a whole number from 0 to 65535 \\(it overrides server\\.port\\), got "${port.replace('.', '\\.')}"`), `${cmd} PORT=${port}`);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
  }
});

test('a storage.redis_url the Redis client cannot parse is a config problem for check and serve alike', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-serve-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'gateway.yaml');
  const env = { ...process.env, GATEWAY_CONFIG: '', DATABASE_URL: '', GATEWAY_DB: '', REDIS_URL: '', PORT: '0' };
  const write = (url: string) => writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\nserver: { port: 0 }\nstorage: { sqlite_path: ${join(dir, 'gw.db')}, redis_url: "${url}" }\nreload: { watch: false }\n`);
  write('not a url');
  for (const cmd of ['check', 'serve']) {
    const r = spawnSync(process.execPath, [MAIN, cmd, '--config', config], { encoding: 'utf8', timeout: 60_000, env });
    assert.equal(r.status, 1, `${cmd}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /gateway\.yaml at \/storage\/redis_url: not a Redis URL: "not a url" \(like redis:\/\/host:6379\/0/, cmd);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
  // What the client takes passes: a URL, host:port and a socket path.
  for (const url of ['redis://127.0.0.1:6379/0', 'rediss://cache.internal:6380', '127.0.0.1:6379', '/run/redis.sock']) {
    write(url);
    const r = spawnSync(process.execPath, [MAIN, 'check', '--config', config], { encoding: 'utf8', timeout: 60_000, env });
    assert.equal(r.status, 0, `${url}: ${r.stdout}${r.stderr}`);
  }
});
