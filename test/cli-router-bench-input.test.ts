// router-bench as an operator misuses it, through the real command (node src/main.ts router-bench):
// outputs it cannot write and inputs it cannot read are named with their flag and file, exit 1, no
// stack trace, and before the evaluation runs (minutes on real data) rather than after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from './helpers/router-bench-data.ts';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;

function files(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'cli-bench-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const train = join(dir, 'train.jsonl'), test = join(dir, 'test.jsonl');
  writeFileSync(train, generate(30, 1, 'train'));
  writeFileSync(test, generate(10, 2, 'test'));
  return { dir, train, test };
}

const bench = (...args: string[]) => {
  const r = spawnSync(process.execPath, [MAIN, 'router-bench', ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

test('a --plot or --choices that cannot be written is refused before the evaluation, naming flag and file', (t) => {
  const f = files(t);
  const missing = join(f.dir, 'no-such-folder', 'choices.jsonl');
  for (const [args, message] of [
    [['--plot', f.dir], `router-bench: cannot write --plot ${f.dir}: EISDIR`],
    [['--choices', missing], `router-bench: cannot write --choices ${missing}: ENOENT`],
  ] as Array<[string[], string]>) {
    const r = bench('--train', f.train, '--test', f.test, ...args);
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.ok(r.stderr.startsWith(message), `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.split('\n').filter((l) => l !== '').length, 1, `one line, no stack trace: ${r.stderr}`);
    assert.equal(r.stdout, '', 'no evaluation ran');
  }
  assert.equal(existsSync(missing), false);
  // Writable outputs still get the plot and the choices.
  const plot = join(f.dir, 'curve.svg'), choices = join(f.dir, 'choices.jsonl');
  const r = bench('--train', f.train, '--test', f.test, '--plot', plot, '--choices', choices);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(plot) && existsSync(choices));
});

test('a --train or --test that cannot be read is named, whatever the reason', (t) => {
  const f = files(t);
  for (const [args, message] of [
    [['--train', f.dir, '--test', f.test], `router-bench: ${f.dir}: cannot read it (EISDIR: illegal operation on a directory, read)\n`],
    [['--train', f.train, '--test', join(f.dir, 'gone.jsonl')], `router-bench: ${join(f.dir, 'gone.jsonl')}: cannot read it (ENOENT: no such file or directory, open '${join(f.dir, 'gone.jsonl')}')\n`],
  ] as Array<[string[], string]>) {
    const r = bench(...args);
    assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stderr, message);
  }
});

test('--test naming the --train file (however spelled) is refused; test ids also in the train file are warned of', (t) => {
  const f = files(t);
  const r = bench('--train', f.train, '--test', join(f.dir, '.', 'train.jsonl'));
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /^--train and --test name the same file \(.*train\.jsonl\): the test file must hold prompts the router did not learn from\nusage:/);
  assert.equal(r.stdout, '');
  // A test file that repeats three train prompts runs, with a warning saying how many.
  const mixed = join(f.dir, 'mixed.jsonl');
  writeFileSync(mixed, generate(30, 1, 'train').split('\n').slice(0, 3).join('\n') + '\n' + generate(10, 2, 'test'));
  const m = bench('--train', f.train, '--test', mixed);
  assert.equal(m.status, 0, m.stderr);
  assert.match(m.stderr, /^router-bench: warning: 3 of the 13 test ids are also in the train file/);
});

test('an output naming an input (or the other output) is refused and the data file is left as it was', (t) => {
  const f = files(t);
  const before = readFileSync(f.train, 'utf8');
  for (const [args, message] of [
    [['--choices', f.train], `router-bench: --choices names the --train file (${f.train}); writing it would replace the data\n`],
    [['--plot', join(f.dir, '.', 'test.jsonl')], `router-bench: --plot names the --test file (${join(f.dir, 'test.jsonl')}); writing it would replace the data\n`],
    [['--plot', join(f.dir, 'out'), '--choices', join(f.dir, 'out')], `router-bench: --plot and --choices name the same file (${join(f.dir, 'out')})\n`],
  ] as Array<[string[], string]>) {
    const r = bench('--train', f.train, '--test', f.test, ...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stderr, message);
    assert.equal(r.stdout, '');
  }
  assert.equal(readFileSync(f.train, 'utf8'), before);
  assert.equal(existsSync(join(f.dir, 'out')), false, 'no output was created');
});
