// The watcher follows a providers directory that is replaced: swapped by rename (a deploy tool's
// atomic switch) or deleted and created again. Neither reloaded, then or at any later edit: the
// watch stayed on the old directory, and the change of the directory's own entry named no watched file.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigHolder } from '../src/config/reload.ts';
import { until } from './helpers/until.ts';

const writeProvider = (dir: string, model: string): void => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'p.yaml'), stringify({ id: 'p', name: 'P', format: 'openai-chat', base_url: 'http://127.0.0.1:9', auth: { type: 'bearer' }, models: [{ name: model }] }));
};

/** A config in a fresh directory (gateway.yaml, providers/p.yaml serving model `one`) held and watched with `debounceMs`. */
function watched(t: TestContext, debounceMs: number): { dir: string; models: () => string; h: ConfigHolder } {
  const dir = mkdtempSync(join(tmpdir(), 'gw-reload-dirs-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers' }));
  writeProvider(join(dir, 'providers'), 'one');
  const h = new ConfigHolder(join(dir, 'gateway.yaml'), {});
  t.after(() => h.close());
  h.watch(debounceMs);
  return { dir, h, models: () => [...h.current.models.keys()].join() };
}

test('a providers directory swapped by rename, or deleted and created again, is followed', async (t) => {
  const { dir, h, models } = watched(t, 30);

  writeProvider(join(dir, 'providers.new'), 'two');
  renameSync(join(dir, 'providers'), join(dir, 'providers.old'));
  renameSync(join(dir, 'providers.new'), join(dir, 'providers'));
  assert.ok(await until(() => models() === 'p/two'), `after the swap: ${models()}`);
  writeProvider(join(dir, 'providers'), 'three');
  assert.ok(await until(() => models() === 'p/three'), `after an edit in the new directory: ${models()}`);

  rmSync(join(dir, 'providers'), { recursive: true });
  assert.ok(await until(() => h.lastError !== null), 'a missing providers directory is refused');
  assert.match(h.lastError!.message, /cannot read providers directory/);
  assert.equal(models(), 'p/three', 'the running config serves on');
  writeProvider(join(dir, 'providers'), 'four');
  assert.ok(await until(() => models() === 'p/four'), `after creating it again: ${models()}`);
  writeProvider(join(dir, 'providers'), 'five');
  assert.ok(await until(() => models() === 'p/five'), `after an edit in the created directory: ${models()}`);
});

test('a file written continuously cannot postpone the reload for good: it comes at most 10 debounce periods after the burst starts', async (t) => {
  const { dir, models } = watched(t, 100);
  // A write every 30 ms for 3 s: never a 100 ms pause, so a pure debounce would wait for the end.
  const start = Date.now();
  let reloadedAt = 0;
  for (let i = 0; Date.now() - start < 3000; i++) {
    writeProvider(join(dir, 'providers'), `m${i}`);
    if (!reloadedAt && models() !== 'p/one') reloadedAt = Date.now() - start;
    await new Promise((r) => setTimeout(r, 30));
  }
  assert.ok(reloadedAt > 0 && reloadedAt < 2500, `first reload ${reloadedAt} ms into the writes (bound: 1,000 ms and the reload's own time)`);
});
