// The watcher follows a config reached through symlinks: a gateway.yaml linked to a file elsewhere
// (edited there), and a Kubernetes ConfigMap mount, where every file links through `..data`, a link
// the kubelet swaps by rename to a new directory. Neither reloaded: the watch saw only the link's
// directory, and a change of the target or of `..data` named no watched file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigHolder } from '../src/config/reload.ts';
import { until } from './helpers/until.ts';

const gateway = (depth: number): string => stringify({ version: 1, providers_dir: './providers', server: { json_max_depth: depth } });
const provider = (model: string): string => stringify({ id: 'p', name: 'P', format: 'openai-chat', base_url: 'http://127.0.0.1:9', auth: { type: 'bearer' }, models: [{ name: model }] });

test('a symlinked gateway.yaml reloads when the file it links to is edited', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-reload-link-'));
  const elsewhere = mkdtempSync(join(tmpdir(), 'gw-reload-target-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); rmSync(elsewhere, { recursive: true, force: true }); });
  mkdirSync(join(dir, 'providers'));
  writeFileSync(join(elsewhere, 'gateway.yaml'), gateway(20));
  symlinkSync(join(elsewhere, 'gateway.yaml'), join(dir, 'gateway.yaml'));
  const h = new ConfigHolder(join(dir, 'gateway.yaml'), {});
  t.after(() => h.close());
  h.watch(30);
  writeFileSync(join(elsewhere, 'gateway.yaml'), gateway(33));
  assert.ok(await until(() => h.current.server.jsonMaxDepth === 33), `json_max_depth is ${h.current.server.jsonMaxDepth}`);
});

test('a ConfigMap-style mount reloads when ..data is swapped to a new directory, and again after', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-reload-configmap-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const publish = (version: string, depth: number, model: string, first = false): void => {
    mkdirSync(join(dir, version, 'providers'), { recursive: true });
    writeFileSync(join(dir, version, 'gateway.yaml'), gateway(depth));
    writeFileSync(join(dir, version, 'providers', 'p.yaml'), provider(model));
    // The kubelet's way: a new link beside the old one, renamed over it (atomic).
    symlinkSync(version, join(dir, first ? '..data' : '..data_tmp'));
    if (!first) renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  };
  publish('..v1', 20, 'one', true);
  symlinkSync('..data/gateway.yaml', join(dir, 'gateway.yaml'));
  symlinkSync('..data/providers', join(dir, 'providers'));
  const h = new ConfigHolder(join(dir, 'gateway.yaml'), {});
  t.after(() => h.close());
  h.watch(30);
  assert.ok(h.current.models.has('p/one'));
  publish('..v2', 33, 'two');
  assert.ok(await until(() => h.current.server.jsonMaxDepth === 33 && h.current.models.has('p/two')), `json_max_depth ${h.current.server.jsonMaxDepth}, models ${[...h.current.models.keys()]}`);
  rmSync(join(dir, '..v1'), { recursive: true });
  publish('..v3', 44, 'three');
  assert.ok(await until(() => h.current.server.jsonMaxDepth === 44 && h.current.models.has('p/three')), `json_max_depth ${h.current.server.jsonMaxDepth}, models ${[...h.current.models.keys()]}`);
});
