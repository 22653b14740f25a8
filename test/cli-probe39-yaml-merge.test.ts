// YAML merge keys (`<<: *defaults`) in gateway.yaml and providers/*.yaml: read as merges (the
// operator's shared settings written once), where they were refused as an unknown property "<<"; a
// bad value that came in through a merge is still named by file and path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config/load.ts';
import { compileConfig } from '../src/config/compile.ts';

function configDir(t: { after(fn: () => void): void }, gateway: string, provider: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-merge-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'providers'));
  writeFileSync(join(dir, 'providers', 'acme.yaml'), provider);
  writeFileSync(join(dir, 'gateway.yaml'), gateway);
  return join(dir, 'gateway.yaml');
}

const PROVIDER = `id: acme
name: Acme
format: openai-chat
base_url: http://127.0.0.1:9/v1
auth: { type: bearer }
models:
  - &small { name: small, context_window: 8000, max_completion_tokens: 1000, pricing: { prompt: "0.000001", completion: "0.000002" } }
  - <<: *small
    name: large
    context_window: 128000
`;

test('merge keys are merged in gateway.yaml and provider files', (t) => {
  const file = configDir(t, `version: 1
providers_dir: ./providers
router:
  defaults: &cheap { max_cost: 0.5, willingness_to_pay: 0.001 }
  key_defaults:
    "agent-*":
      <<: *cheap
      max_cost: 2
`, PROVIDER);
  const cfg = compileConfig(loadConfig(file, {}), {});
  const large = cfg.models.get('acme/large');
  assert.ok(large, [...cfg.models.keys()].join(', '));
  assert.equal(large.model.context_window, 128000, 'the entry\'s own value wins over the merged one');
  assert.equal(large.model.max_completion_tokens, 1000, 'merged from the anchor');
  assert.equal(large.model.pricing.prompt, '0.000001');
  assert.equal(cfg.models.get('acme/small')?.model.context_window, 8000);
  const agent = cfg.router.keyDefaults.find((k) => k.glob === 'agent-*')?.defaults;
  assert.deepEqual([agent?.maxCost, agent?.wtp], [2, 0.001], 'gateway.yaml: merged, the own max_cost kept');
});

test('a bad value brought in by a merge is named by file and path', (t) => {
  const file = configDir(t, `version: 1
providers_dir: ./providers
`, PROVIDER.replace('max_completion_tokens: 1000', 'max_completion_tokens: lots'));
  let err: unknown;
  try { loadConfig(file, {}); } catch (e) { err = e; }
  assert.ok(err instanceof ConfigError, String(err));
  const shown = err.problems.map((p) => `${p.file.replace(/^.*providers\//, 'providers/')} at ${p.path}: ${p.message}`);
  assert.ok(shown.includes('providers/acme.yaml at /models/1/max_completion_tokens: must be integer'), shown.join('\n'));
  assert.ok(!shown.some((s) => s.includes('"<<"')), shown.join('\n'));
});
