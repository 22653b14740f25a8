// Numbers the schema's types let through but the gateway cannot use, through `check` (the real
// command): a timer longer than Node runs (it fired after 1 ms instead: the key ring re-read the keys
// every millisecond) and Infinity (`.inf`, `1e400`). Each is named with its file and path; the
// largest timer Node honours still passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const PROVIDERS = new URL('../providers', import.meta.url).pathname;

function check(t: { after(fn: () => void): void }, body: string) {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-numbers-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, `version: 1\nproviders_dir: ${PROVIDERS}\n${body}\n`);
  const r = spawnSync(process.execPath, [MAIN, 'check', '--config', config], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('timers longer than 2^31-1 ms, in ms, seconds or minutes, are refused naming the path', (t) => {
  const r = check(t, [
    'auth: { key_refresh_ms: 3000000000 }',
    'upstream: { total_timeout_ms: 2147483648 }',
    'catalog: { refresh: { interval_minutes: 40000, poll_seconds: 3000000 } }',
  ].join('\n'));
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /gateway\.yaml at \/auth\/key_refresh_ms: 3000000000 ms is longer than a timer can run; at most 2147483647 ms/);
  assert.match(r.stderr, /gateway\.yaml at \/upstream\/total_timeout_ms: 2147483648 ms is longer than a timer can run/);
  assert.match(r.stderr, /gateway\.yaml at \/catalog\/refresh\/interval_minutes: 40000 minutes is longer than a timer can run; at most 35791 minutes/);
  assert.match(r.stderr, /gateway\.yaml at \/catalog\/refresh\/poll_seconds: 3000000 seconds is longer than a timer can run; at most 2147483 seconds/);
});

test('Infinity (.inf, 1e400) is refused naming the path; the largest timer passes', (t) => {
  for (const [body, path] of [['server: { body_limit_bytes: 1e400 }', '/server/body_limit_bytes'], ['storage: { writer: { max_queue: .inf } }', '/storage/writer/max_queue']]) {
    const r = check(t, body);
    assert.equal(r.status, 1, `${body}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, new RegExp(`gateway\\.yaml at ${path}: must be a finite number, got Infinity`), body);
  }
  const r = check(t, 'upstream: { total_timeout_ms: 2147483647 }\ncatalog: { refresh: { interval_minutes: 35791 } }');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^config OK: /m);
});
