// The command line's own arguments, through the real command (node src/main.ts): --config in both
// spellings, and words that check and serve do not take. A mistake exits 2 with the usage, and never
// falls back to another config file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;

/** Runs the command in an empty directory: no gateway.yaml there to fall back to. */
function gateway(t: { after(fn: () => void): void }, ...args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'cli-args-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'version: 1\nserver: { port: "eighty" }\n');
  const env = { ...process.env, GATEWAY_CONFIG: '' };
  const r = spawnSync(process.execPath, [MAIN, ...args.map((a) => a.replace('BAD', bad))], { cwd: dir, encoding: 'utf8', timeout: 30_000, env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('--config=FILE names the file, for check and serve alike', (t) => {
  for (const cmd of ['check', 'serve']) {
    const r = gateway(t, cmd, '--config=BAD');
    assert.equal(r.status, 1, `${cmd}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /bad\.yaml at \/server\/port: must be integer/, cmd);
    assert.doesNotMatch(r.stderr, /gateway\.yaml/, cmd);
  }
});

test('a --config without a file, twice, or words check and serve do not take: exit 2 with the usage', (t) => {
  for (const [args, message] of [
    [['check', '--config'], /error: --config needs a file name/],
    [['check', '--config='], /error: --config needs a file name/],
    [['check', '--config', '--verbose'], /error: --config needs a file name/],
    [['check', '--config', 'BAD', '--config', 'BAD'], /error: --config given twice/],
    [['check', '--config', 'BAD', '--strict'], /error: check takes no arguments besides --config FILE, got "--strict"/],
    [['serve', 'now', '--config', 'BAD'], /error: serve takes no arguments besides --config FILE, got "now"/],
  ] as Array<[string[], RegExp]>) {
    const r = gateway(t, ...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.match(r.stderr, /\nusage: gateway <command>/, args.join(' '));
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});
