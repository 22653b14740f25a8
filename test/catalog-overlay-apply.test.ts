// A catalog overlay read from the store is untrusted input (another replica's version wrote it, or
// someone edited the row): one whose patches are not model facts (a price "abc", tiers "x") was compiled
// and served, failing requests at billing; one that did not compile at all (pricing: null) was kept,
// so every later reload compiled it again and an operator's good edit was refused until a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigHolder } from '../src/config/reload.ts';
import type { CatalogOverlay, ModelPatch } from '../src/catalog/overlay.ts';

const PRICE = { prompt: '0.000001', completion: '0.000002' };
const overlay = (version: number, patches: unknown[]): CatalogOverlay =>
  ({ version, created_at: new Date().toISOString(), providers: { p: patches as ModelPatch[] }, sources: [] });

function holder(t: { after(fn: () => void): void }): { h: ConfigHolder; setDepth(n: number): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gw-overlay-apply-'));
  mkdirSync(join(dir, 'providers'));
  const setDepth = (n: number): void => writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', server: { json_max_depth: n } }));
  setDepth(20);
  writeFileSync(join(dir, 'providers', 'p.yaml'), stringify({ id: 'p', name: 'P', format: 'openai-chat', base_url: 'http://127.0.0.1:9', auth: { type: 'bearer' }, models: [{ name: 'm', pricing: PRICE }] }));
  const h = new ConfigHolder(join(dir, 'gateway.yaml'), {});
  t.after(() => { h.close(); rmSync(dir, { recursive: true, force: true }); });
  return { h, setDepth };
}

test('an overlay whose patches are not model facts is refused naming provider, patch and field; the catalog serves on', async (t) => {
  const { h } = holder(t);
  const running = h.current.version;
  const cases: Array<[unknown, RegExp]> = [
    [{ name: 'm', pricing: { prompt: 'abc' } }, /p\/m at \/pricing\/prompt: must match pattern/],
    [{ name: 'm', pricing: { tiers: 'x' } }, /p\/m at \/pricing\/tiers: must be array/],
    [{ name: 'm', added_at: 'not a date' }, /p\/m at \/added_at: must match pattern/],
    [{ name: 'm', context_window: 'big' }, /p\/m at \/context_window: must be integer/],
    [{ name: 'new', pricing: { prompt: '-3' } }, /p\/new at \/pricing\/prompt/],
    [{ nme: 'm' }, /p\[0\] at \/: must have required property 'name'/],
  ];
  let v = 1;
  for (const [patch, message] of cases) {
    const r = await h.setCatalogOverlay(overlay(v++, [patch]));
    assert.equal(r.ok, false, JSON.stringify(patch));
    assert.match((r as { error: string }).error, message);
    assert.match((r as { error: string }).error, new RegExp(`catalog overlay v${v - 1}`));
    assert.equal(h.current.version, running);
    assert.equal(h.current.models.get('p/m')!.model.pricing.prompt, PRICE.prompt);
  }
  // A sound one still applies.
  const ok = await h.setCatalogOverlay(overlay(v, [{ name: 'new', pricing: { prompt: '0.000003', completion: '0.000004' } }]));
  assert.ok(ok.ok && ok.changed, JSON.stringify(ok));
  assert.equal(h.current.models.get('p/new')!.model.pricing.prompt, '0.000003');
});

test('an overlay that does not compile is not kept: the next good file edit applies', async (t) => {
  const { h, setDepth } = holder(t);
  const r = await h.setCatalogOverlay(overlay(1, [{ name: 'm', pricing: null }]));
  assert.equal(r.ok, false);
  setDepth(33);
  const next = await h.reload();
  assert.ok(next.ok && next.changed, JSON.stringify(next));
  assert.equal(h.current.server.jsonMaxDepth, 33);
  assert.equal(h.catalogOverlay, null);
});
