// Bytes an operator's edit can leave in a config file: text that is not UTF-8 (a file saved as
// Latin-1) was decoded with U+FFFD in place of the bad bytes and served, an API key or a header
// value silently changed. It is refused naming the file and line, and a reload keeps the running config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigError, loadConfig } from '../src/config/load.ts';
import { ConfigHolder } from '../src/config/reload.ts';

const provider = (key: string): string => stringify({ id: 'p', name: 'P', format: 'openai-chat', base_url: 'http://127.0.0.1:9', api_key: key, auth: { type: 'bearer' }, models: [{ name: 'm' }] });

test('a config file that is not UTF-8 is refused naming the file and line; a reload keeps the running config', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-load-bytes-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'providers'));
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers' }));
  const file = join(dir, 'providers', 'p.yaml');
  writeFileSync(file, provider('sk-good'));
  const h = new ConfigHolder(join(dir, 'gateway.yaml'), {});
  t.after(() => h.close());
  const running = h.current.version;

  // "sk-caf\xe9": the key as a Latin-1 editor saves it, and UTF-8 text (an em dash) elsewhere, which stays valid.
  const text = provider('sk-cafX').replace('name: P', 'name: P \u2014 Latin');
  const at = Buffer.from(text).indexOf('X');
  const bytes = Buffer.from(text); bytes[at] = 0xe9;
  writeFileSync(file, bytes);
  assert.throws(() => loadConfig(join(dir, 'gateway.yaml'), {}), (e: unknown) => {
    assert.ok(e instanceof ConfigError, String(e));
    assert.equal(e.problems.length, 1, e.message);
    const line = text.slice(0, text.indexOf('X')).split('\n').length;
    assert.match(e.problems[0]!.file, /providers\/p\.yaml$/);
    assert.equal(e.problems[0]!.path, `line ${line}`);
    assert.match(e.problems[0]!.message, /not UTF-8/);
    return true;
  });
  return h.reload().then((r) => {
    assert.equal(r.ok, false);
    assert.match((r as { error: string }).error, /p\.yaml at line \d+: .*not UTF-8/);
    assert.equal(h.current.version, running);
    assert.equal(h.current.providers.get('p')!.apiKey, 'sk-good');
  });
});
