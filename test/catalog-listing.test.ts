// GET /v1/models records: both spec shapes in one record, and the owned_by filter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildListing, modelRecord } from '../src/catalog/listing.ts';
import type { CatalogModel } from '../src/catalog/types.ts';
import { zeroPricing } from '../src/catalog/types.ts';

const model = (name: string, over: Partial<CatalogModel> = {}): CatalogModel => ({
  name, created: 1715558400, added_at: '2024-05-13T00:00:00+00:00', updated_at: '2024-08-06T00:00:00+00:00',
  reliability_tier: 1, context_window: 128000, max_completion_tokens: 16384,
  modalities: { input: ['text', 'image'], output: ['text'] },
  capabilities: { tools: true, vision: true, reasoning: false, structured_output: true, prompt_caching: true },
  pricing: { ...zeroPricing(), prompt: '0.0000025', completion: '0.00001', input_cache_read: '0.00000125', web_search: '0.01' },
  cache_min_tokens: 1024,
  ...over,
});

const entries = [
  { provider: 'openai', model: model('gpt-4o', { display_name: 'GPT-4o' }) },
  { provider: 'azure', model: model('gpt-4o', { reliability_tier: 2 }) },
  { provider: 'openai', model: model('gpt-4o-mini') },
];

test('one record carries the compact and the detailed shape', () => {
  const r = modelRecord('openai', entries[0]!.model);
  // Compact form.
  assert.equal(r.id, 'openai/gpt-4o');
  assert.equal(r.object, 'model');
  assert.equal(r.created, 1715558400);
  assert.equal(r.owned_by, 'openai');
  // Detailed form.
  assert.deepEqual(r.pricing, {
    prompt: '0.0000025', completion: '0.00001', image: '0', request: '0', web_search: '0.01', internal_reasoning: '0',
    input_cache_read: '0.00000125', input_cache_write: '0', input_cache_write_1h: '0',
  });
  assert.equal(r.added_at, '2024-05-13T00:00:00+00:00');
  assert.equal(r.updated_at, '2024-08-06T00:00:00+00:00');
  assert.equal(r.reliability_tier, 1);
  assert.equal(r.max_completion_tokens, 16384);
  // Extras.
  assert.equal(r.name, 'GPT-4o');
  assert.equal(r.context_length, 128000);
  assert.deepEqual(r.architecture, { modality: 'text+image->text', input_modalities: ['text', 'image'], output_modalities: ['text'] });
  assert.deepEqual(r.capabilities, { tools: true, vision: true, reasoning: false, structured_output: true, prompt_caching: true });
});

test('records are copies: mutating one leaves the catalog alone', () => {
  const m = model('x');
  const r = modelRecord('p', m);
  (r.pricing as Record<string, string>).prompt = '1';
  (r.architecture as { input_modalities: string[] }).input_modalities.push('audio');
  assert.equal(m.pricing.prompt, '0.0000025');
  assert.deepEqual(m.modalities.input, ['text', 'image']);
  assert.equal(modelRecord('p', model('y')).name, 'y');
});

test('listing without a filter: every model, sorted by id', () => {
  const list = buildListing(entries);
  assert.equal(list.object, 'list');
  assert.deepEqual(list.data.map((r) => r.id), ['azure/gpt-4o', 'openai/gpt-4o', 'openai/gpt-4o-mini']);
  assert.deepEqual(list.data.map((r) => r.reliability_tier), [2, 1, 1]);
});

test('listing with owned_by keeps only that provider', () => {
  assert.deepEqual(buildListing(entries, 'openai').data.map((r) => r.id), ['openai/gpt-4o', 'openai/gpt-4o-mini']);
  assert.deepEqual(buildListing(entries, 'azure').data.map((r) => r.owned_by), ['azure']);
  assert.deepEqual(buildListing(entries, 'nobody'), { object: 'list', data: [] });
});
