// The compiled model index: model_overrides (add, hide, rename, re-price, remove) winning over files and
// overlay, aliases and retirements, canonical models across providers, the bare-name map, the flags the
// router reads (priced, callable, routable, listed), and resolution with its errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileCatalog, type ProviderModels } from '../src/catalog/compile-catalog.ts';
import { applyOverlay, type CatalogOverlay } from '../src/catalog/overlay.ts';
import { resolveModel } from '../src/catalog/resolve.ts';
import { GatewayError } from '../src/gateway-error.ts';
import type { CatalogModel } from '../src/catalog/types.ts';
import { zeroPricing } from '../src/catalog/types.ts';

const m = (name: string, over: Partial<CatalogModel> = {}): CatalogModel => ({
  name, created: 1759104000, added_at: '2025-09-29T00:00:00+00:00', updated_at: '2025-09-29T00:00:00+00:00', reliability_tier: 1,
  context_window: 200000, max_completion_tokens: 64000, modalities: { input: ['text'], output: ['text'] },
  capabilities: { tools: true, vision: false, reasoning: true, structured_output: true, prompt_caching: false },
  pricing: { ...zeroPricing(), prompt: '0.000003', completion: '0.000015' }, ...over,
});
const input = (id: string, catalog: readonly CatalogModel[], over: Partial<ProviderModels<{ id: string }>> = {}): ProviderModels<{ id: string }> =>
  ({ provider: { id }, id, catalog, handWritten: [], overrides: {}, allowUnpriced: false, ...over });
const now = Date.parse('2026-11-23T00:00:00Z');

const anthropic = input('anthropic', [
  m('claude-sonnet-4-5-20250929', { aliases: ['claude-sonnet-4-5'] }),
  { name: 'claude-3-opus-20240229', status: 'retired', retires_at: '2026-01-05T00:00:00+00:00', successor: 'claude-opus-4-8', aliases: ['claude-3-opus-latest'] } as CatalogModel,
  m('claude-opus-4-8'),
  m('claude-opus-4-1-20250805', { status: 'deprecated', retires_at: '2026-08-05T00:00:00+00:00' }),
  m('claude-haiku-9', { status: 'deprecated', retires_at: '2027-01-01T00:00:00+00:00' }),
  m('claude-sandbox', { unpriced: true, pricing: zeroPricing() }),
]);
const openrouter = input('openrouter', [m('anthropic/claude-sonnet-4.5', { reliability_tier: 2 }), m('x/y:free', { reliability_tier: 2, pricing: zeroPricing() })]);
const bedrock = input('bedrock', [m('us.anthropic.claude-sonnet-4-5-20250929-v1:0', { reliability_tier: 2 })]);
const c = compileCatalog([anthropic, openrouter, bedrock], null, now);
const cfg = { models: c.models, byName: c.byName, catalog: c.index, providers: new Map([['anthropic', 1], ['openrouter', 1], ['bedrock', 1]]) };

test('one canonical model, every provider\'s offer of it, first party first; bare names reach all of them', () => {
  const g = c.index.canonical.get('claude-sonnet-4-5-20250929')!;
  assert.deepEqual(g.offers, ['anthropic/claude-sonnet-4-5-20250929', 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'openrouter/anthropic/claude-sonnet-4.5']);
  assert.deepEqual(g.aliases, ['claude-sonnet-4-5', 'claude-sonnet-4-5-latest']);
  for (const name of ['claude-sonnet-4-5', 'claude-sonnet-4.5', 'claude-sonnet-4-5-20250929', 'anthropic/claude-sonnet-4.5']) assert.deepEqual(c.byName.get(name), g.offers, name);
  assert.equal(c.models.get('openrouter/anthropic/claude-sonnet-4.5')!.canonical, 'claude-sonnet-4-5-20250929');
});

test('lifecycle: retired ones leave the offers (aliases too), a deprecated one past its date is retired, flags for the router', () => {
  assert.equal(c.models.has('anthropic/claude-3-opus-20240229'), false);
  assert.deepEqual(c.index.retired.get('anthropic/claude-3-opus-latest'), { id: 'anthropic/claude-3-opus-20240229', retiredAt: '2026-01-05T00:00:00+00:00', successor: 'anthropic/claude-opus-4-8' });
  assert.equal(c.index.retired.has('anthropic/claude-opus-4-1-20250805'), true); // retires_at passed
  const haiku = c.models.get('anthropic/claude-haiku-9')!;
  assert.deepEqual([haiku.status, haiku.listed, haiku.routable, haiku.retiresAt], ['deprecated', true, false, '2027-01-01T00:00:00+00:00']);
  const sandbox = c.models.get('anthropic/claude-sandbox')!;
  assert.deepEqual([sandbox.priced, sandbox.callable, sandbox.routable], [false, false, false]);
  const free = c.models.get('openrouter/x/y:free')!;
  assert.deepEqual([free.priced, free.routable], [true, true]);
});

test('resolution: ids, aliases, another spelling at the same provider; retired names the successor; unpriced refused', () => {
  assert.equal(resolveModel(cfg, 'anthropic/claude-sonnet-4-5').id, 'anthropic/claude-sonnet-4-5-20250929');
  assert.equal(resolveModel(cfg, 'anthropic/claude-sonnet-4.5').id, 'anthropic/claude-sonnet-4-5-20250929');
  const err = (model: string, opts = {}): GatewayError => { try { resolveModel(cfg, model, opts); } catch (e) { return e as GatewayError; } throw new Error(`${model} resolved`); };
  const retired = err('anthropic/claude-3-opus-latest');
  assert.deepEqual([retired.code, retired.status], ['model_retired', 404]);
  assert.match(retired.message, /retired on 2026-01-05; use "anthropic\/claude-opus-4-8" instead/);
  assert.equal(err('anthropic/claude-sandbox').code, 'model_unpriced');
  assert.match(err('claude-sonnet-4-5').message, /use one of: anthropic\/claude-sonnet-4-5-20250929, bedrock\//);
  assert.equal(err('anthropic/nope').code, 'model_not_found');
  assert.match(err('nowhere/x').message, /unknown provider "nowhere"/);
  const allowed = compileCatalog([input('anthropic', anthropic.catalog, { allowUnpriced: true })], null, now);
  const acfg = { models: allowed.models, byName: allowed.byName, catalog: allowed.index, providers: new Map([['anthropic', 1]]) };
  assert.equal(resolveModel(acfg, 'anthropic/claude-sandbox').id, 'anthropic/claude-sandbox');
  assert.throws(() => resolveModel(acfg, 'anthropic/claude-sandbox', { budgeted: true }), /budget/);
  assert.equal(allowed.models.get('anthropic/claude-sandbox')!.routable, false);
});

test('model_overrides add, hide, rename, re-price and remove, and win over the overlay', () => {
  const overlay: CatalogOverlay = { version: 3, created_at: '2026-11-22T00:00:00Z', sources: [], providers: { anthropic: [{ name: 'claude-opus-4-8', pricing: { prompt: '0.000009' } }, { name: 'claude-new', pricing: { prompt: '0.000001', completion: '0.000002' } }] } };
  const o = compileCatalog([input('anthropic', anthropic.catalog, {
    overrides: {
      'claude-opus-4-8': { pricing: { prompt: '0.000004' } },
      'claude-sonnet-4-5-20250929': { rename: 'sonnet', aliases: ['claude-sonnet-4-5-20250929'] },
      'claude-haiku-9': { enabled: false },
      'claude-sandbox': { hidden: true, pricing: { prompt: '0.000001', completion: '0.000001' } },
      'my-finetune': { add: true, upstream: 'ft:claude:acme', context_window: 100000 },
      'typo-model': { upstream: 'x' },
    },
  })], overlay, now);
  assert.equal(o.models.get('anthropic/claude-opus-4-8')!.model.pricing.prompt, '0.000004');
  assert.equal(o.models.get('anthropic/claude-new')!.model.pricing.prompt, '0.000001');
  const renamed = o.models.get('anthropic/sonnet')!;
  assert.equal(renamed.upstream, 'claude-sonnet-4-5-20250929');
  assert.equal(o.index.aliases.get('anthropic/claude-sonnet-4-5-20250929'), 'anthropic/sonnet');
  assert.equal(o.models.has('anthropic/claude-haiku-9'), false);
  const hidden = o.models.get('anthropic/claude-sandbox')!;
  assert.deepEqual([hidden.listed, hidden.routable, hidden.priced], [false, false, true]);
  const added = o.models.get('anthropic/my-finetune')!;
  assert.deepEqual([added.upstream, added.model.context_window, added.priced, added.model.hand_written], ['ft:claude:acme', 100000, false, true]);
  assert.deepEqual(o.notes, ['model_overrides.typo-model: no such model in the catalog (set add: true to add it)']);
});

test('overlay patches: fields patch, a whole price sheet replaces tiers, a new name is a new (priced or unpriced) model', () => {
  const base = [m('a', { pricing: { ...zeroPricing(), prompt: '0.000001', completion: '0.000002', tiers: [{ above_input_tokens: 1000, prompt: '0.000002' }] } })];
  const patched = applyOverlay('p', base, { version: 1, created_at: '', sources: [], providers: { p: [
    { name: 'a', context_window: 300000, pricing: { ...zeroPricing(), prompt: '0.000005', completion: '0.00001' } },
    { name: 'b', added_at: '2026-01-01T00:00:00+00:00' },
  ] } });
  assert.equal(patched[0]!.context_window, 300000);
  assert.equal(patched[0]!.pricing.tiers, undefined);
  assert.equal(patched[0]!.pricing.prompt, '0.000005');
  assert.deepEqual([patched[1]!.name, patched[1]!.unpriced, patched[1]!.created, patched[1]!.updated_at], ['b', true, 1767225600, '2026-01-01T00:00:00+00:00']);
});
