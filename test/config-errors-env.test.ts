// A ${VAR} without default whose variable is not set, through `check` (the real command): the value
// is empty, as documented, and check says so, naming file, path and variable (it said "config OK" and
// nothing else, so a provider served with no API key until its first 401). ${VAR:-} stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;

test('check warns of each ${VAR} without default that is not set, and stays quiet for ${VAR:-} and set ones', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-env-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'providers'));
  writeFileSync(join(dir, 'providers', 'acme.yaml'), [
    'id: acme', 'name: Acme', 'format: openai-chat', 'base_url: http://127.0.0.1:9/v1', 'api_key: ${ACME_TEST_KEY_UNSET}',
    'auth: { type: bearer }', 'headers: { x-team: "${ACME_TEST_TEAM:-}", x-set: "${ACME_TEST_SET}" }', 'models:', '  - { name: m1 }', '',
  ].join('\n'));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(config, 'version: 1\nproviders_dir: ./providers\nauth: { admin_key: "${GW_TEST_ADMIN_UNSET}" }\n');
  const env: NodeJS.ProcessEnv = { ...process.env, ACME_TEST_SET: 'yes' };
  delete env.ACME_TEST_KEY_UNSET; delete env.GW_TEST_ADMIN_UNSET; delete env.ACME_TEST_TEAM;
  const r = spawnSync(process.execPath, [MAIN, 'check', '--config', config], { encoding: 'utf8', timeout: 60_000, env });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const warnings = r.stderr.split('\n').filter((l) => l.startsWith('warning: '));
  assert.deepEqual(warnings.map((l) => l.replace(/^warning: \S*?(gateway\.yaml|providers\/acme\.yaml)/, 'warning: $1')), [
    'warning: gateway.yaml at /auth/admin_key: ${GW_TEST_ADMIN_UNSET} is not set: the value is empty (write ${GW_TEST_ADMIN_UNSET:-} if that is meant)',
    'warning: providers/acme.yaml at /api_key: ${ACME_TEST_KEY_UNSET} is not set: the value is empty (write ${ACME_TEST_KEY_UNSET:-} if that is meant)',
  ]);
  assert.match(r.stdout, /^config OK: /m);
});
