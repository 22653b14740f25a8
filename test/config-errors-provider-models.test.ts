// A provider file listing one model twice, through `check` (the real command): refused naming the
// file and both entries, where the second entry used to replace the first without a word.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;

test('a model named twice in a provider file is a config problem naming both entries', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-dup-model-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'providers'));
  const provider = (models: string) => `id: acme\nname: Acme\nformat: openai-chat\nbase_url: http://127.0.0.1:9/v1\nauth: { type: bearer }\nmodels:\n${models}`;
  writeFileSync(join(dir, 'providers', 'acme.yaml'), provider([
    '  - { name: m1, pricing: { prompt: "0.000001", completion: "0.000002" } }',
    '  - { name: m2 }',
    '  - { name: m1, pricing: { prompt: "0.00001", completion: "0.00002" } }',
  ].join('\n') + '\n'));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, 'version: 1\nproviders_dir: ./providers\n');
  const check = () => spawnSync(process.execPath, [MAIN, 'check', '--config', config], { encoding: 'utf8', timeout: 60_000 });
  let r = check();
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /acme\.yaml at \/models\/2\/name: duplicate model "m1" \(also at \/models\/0\); keep one entry/);
  writeFileSync(join(dir, 'providers', 'acme.yaml'), provider('  - { name: m1 }\n  - { name: m2 }\n'));
  r = check();
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /1 providers, 2 models/);
});
