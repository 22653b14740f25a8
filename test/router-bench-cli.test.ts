// router-bench end to end on small generated files (planted task structure), through main.ts too,
// and on a slice of the shared dev data when it is present.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRouterBench } from '../src/router/bench/run.ts';
import { wtpGrid } from '../src/router/bench/sweep.ts';
import { generate } from './helpers/router-bench-data.ts';

function files(t: { after: (f: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'router-bench-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const train = join(dir, 'train.jsonl'), test = join(dir, 'test.jsonl');
  writeFileSync(train, generate(180, 1, 'train'));
  writeFileSync(test, generate(60, 2, 'test', true));
  return { dir, train, test };
}

const AIQ_LINE = /^AIQ router=(\d+\.\d{4}) knn=(\d+\.\d{4}) best_single_hull=(\d+\.\d{4})$/;

test('router-bench learns the planted structure, beats the single-model hull, writes choices and a plot', (t) => {
  const f = files(t);
  const out: string[] = [], err: string[] = [];
  const plot = join(f.dir, 'curve.svg'), choices = join(f.dir, 'choices.jsonl');
  const code = runRouterBench(['--train', f.train, '--test', f.test, '--plot', plot, '--choices', choices], (s) => out.push(s), (s) => err.push(s));
  assert.equal(code, 0, err.join('\n'));
  const m = AIQ_LINE.exec(out.at(-1)!);
  assert.ok(m, `last line: ${out.at(-1)}`);
  const [router, knn, single] = [Number(m[1]), Number(m[2]), Number(m[3])];
  assert.ok(router > single + 0.05, `router ${router} vs single hull ${single}`);
  assert.ok(knn > single, `knn ${knn} vs single hull ${single}`);
  assert.ok(out.some((l) => l.includes('not routable') && l.includes('newcomer')));
  const grid = wtpGrid();
  const rows = readFileSync(choices, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; wtp: number; model: string | null });
  assert.equal(rows.length, 60 * grid.length);
  assert.deepEqual(Object.keys(rows[0]!), ['id', 'wtp', 'model']);
  assert.ok(rows.every((r) => r.id.startsWith('test.') && grid.includes(r.wtp) && ['tiny', 'mid', 'big', 'odd'].includes(r.model!)));
  // Cheap at the low end of W, the right specialist per task in the middle, the big model at the top.
  assert.ok(rows.filter((r) => r.wtp === grid[0]).every((r) => r.model === 'tiny'));
  assert.ok(rows.filter((r) => r.wtp === grid.at(-1)).every((r) => r.model === 'big'));
  const svg = readFileSync(plot, 'utf8');
  assert.ok(svg.startsWith('<svg') && svg.trimEnd().endsWith('</svg>') && svg.includes('router') && svg.includes('oracle'));
  assert.equal(out.filter((l) => /^\d\.\d{2}e[+-]\d+\s/.test(l)).length, grid.length, 'one table row per W');
});

test('through the gateway command: usage errors exit 2, bad data exits 1 naming file and line', (t) => {
  const f = files(t);
  const run = (...args: string[]) => spawnSync(process.execPath, ['src/main.ts', 'router-bench', ...args], { encoding: 'utf8' });
  let r = run('--train', f.train);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--train and --test are required/);
  r = run('--train', f.train, '--test', f.test, '--bogus');
  assert.equal(r.status, 2);
  const bad = join(f.dir, 'bad.jsonl');
  writeFileSync(bad, generate(2, 3, 'b') + '{"id": "x", "prompt": "p", "outcomes": {"m": {"score": 2, "cost_usd": 0}}}\n');
  r = run('--train', bad, '--test', f.test);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /bad\.jsonl:3: outcomes\["m"\]\.score must be a number in \[0, 1\]/);
  r = run('--train', join(f.dir, 'missing.jsonl'), '--test', f.test);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /ENOENT/);
  r = run('--train', f.train, '--test', f.test);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout.trimEnd().split('\n').at(-1)!, AIQ_LINE);
});

const DEV = new URL('../../shared/router-bench/routerbench-dev.jsonl', import.meta.url);

test('a slice of the shared dev data runs end to end', { skip: existsSync(DEV) ? false : 'shared dev data not present' }, (t) => {
  const lines = readFileSync(DEV, 'utf8').trim().split('\n');
  // Every 7th row is test, the rest of the first 420 train: three tasks in both.
  const slice = lines.slice(0, 2217).filter((_, i) => i % 5 === 0).slice(0, 420);
  const dir = mkdtempSync(join(tmpdir(), 'router-bench-dev-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'train.jsonl'), slice.filter((_, i) => i % 7 !== 0).join('\n'));
  writeFileSync(join(dir, 'test.jsonl'), slice.filter((_, i) => i % 7 === 0).join('\n'));
  const out: string[] = [];
  assert.equal(runRouterBench(['--train', join(dir, 'train.jsonl'), '--test', join(dir, 'test.jsonl')], (s) => out.push(s), () => {}), 0);
  const m = AIQ_LINE.exec(out.at(-1)!);
  assert.ok(m);
  assert.ok(Number(m[1]) > 0.5 && Number(m[1]) <= 1);
});
