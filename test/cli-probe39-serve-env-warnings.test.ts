// A ${VAR} without default whose variable is not set, in a running gateway (node src/main.ts serve):
// only `check` said so, and a gateway started (or reloaded) with a provider's key reference unset served
// an empty key until its first 401. The warning is printed on stderr at start and on every reload, once
// per variable per load, naming the first place and the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { providerDoc } from './helpers/gateway.ts';
import { spawnGateway, writeGatewayConfig } from './helpers/process.ts';
import { until } from './helpers/until.ts';

const KEY_VAR = 'GW_P39_UNSET_KEY';
const TEAM_VAR = 'GW_P39_UNSET_TEAM';
const warningsOf = (out: string, name: string): string[] => out.split('\n').filter((l) => l.startsWith('warning: ') && l.includes(`\${${name}} is not set`));

test('serve warns of each unset ${VAR} once at start, and again with a new one on reload (SIGHUP)', async (t) => {
  const provider = { id: 'acme', format: 'openai-chat' as const, base_url: 'http://127.0.0.1:9/v1', api_key: `\${${KEY_VAR}}` };
  const { dir, configFile } = writeGatewayConfig([provider], { reload: { watch: false } });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // The same variable twice in one file: one warning naming both places.
  const providerFile = join(dir, 'providers', 'acme.yaml');
  writeFileSync(providerFile, stringify({ ...providerDoc(provider), headers: { 'x-key-copy': `\${${KEY_VAR}}` } }));
  const gw = await spawnGateway(configFile, { [KEY_VAR]: '', [TEAM_VAR]: '' });
  t.after(() => gw.stop('SIGKILL'));

  const atStart = warningsOf(gw.output(), KEY_VAR);
  assert.equal(atStart.length, 1, gw.output());
  assert.match(atStart[0]!, new RegExp(`^warning: \\S*providers/acme\\.yaml at /api_key: \\$\\{${KEY_VAR}\\} is not set: the value is empty \\(write \\$\\{${KEY_VAR}:-\\} if that is meant\\) \\(also at \\S*providers/acme\\.yaml at /headers/x-key-copy\\)$`));

  // A reload reading a new unset reference says it, and the one still unset again (once). The watch is
  // off, so the one reload is the SIGHUP's.
  writeFileSync(providerFile, stringify({ ...providerDoc(provider), headers: { 'x-team': `\${${TEAM_VAR}}` } }));
  process.kill(gw.pid, 'SIGHUP');
  assert.ok(await until(() => warningsOf(gw.output(), TEAM_VAR).length > 0, 20_000), gw.output());
  assert.match(warningsOf(gw.output(), TEAM_VAR)[0]!, /providers\/acme\.yaml at \/headers\/x-team: /);
  assert.equal(warningsOf(gw.output(), KEY_VAR).length, 2, gw.output());
  assert.equal(warningsOf(gw.output(), TEAM_VAR).length, 1, gw.output());
  const stopped = await gw.stop();
  assert.equal(stopped.code, 0, gw.output());
});
