// The sync's merge rules: which models count, which source wins each fact and price, tiers and dated
// prices, unpriced and free models, lifecycle, aliases, Bedrock profiles and the union of the sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildModel, defaultOutputLimit, exclusionReason } from '../src/catalog/build.ts';
import { mergePricing, sheetPricing } from '../src/catalog/prices.ts';
import { makerOf, PROVIDER_SOURCES } from '../src/catalog/providers-map.ts';
import { priceModelFor, PRICES_AS_OF } from '../src/catalog/sources.ts';
import type { DevModel } from '../src/catalog/sources.ts';
import { buildAllCatalogs } from '../src/catalog/sync.ts';
import { datedName, deriveAliases, canonicalKey } from '../src/catalog/aliases.ts';
import type { CatalogModel } from '../src/catalog/types.ts';

const dev = (id: string, over: Partial<DevModel> = {}): DevModel => ({
  id, name: id.toUpperCase(), reasoning: false, toolCall: true, releaseDate: '2025-02-19', lastUpdated: '2025-03-01',
  input: ['image', 'text'], output: ['text'], context: 200000, outputLimit: 64000,
  cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }, ...over,
});
const src = (id: string) => PROVIDER_SOURCES.find((s) => s.id === id)!;
const sheetOf = (provider: string, id: string) => sheetPricing(priceModelFor(provider, id));
const extra = { fallbackDate: PRICES_AS_OF };
const all = buildAllCatalogs();
const find = (provider: string, name: string): CatalogModel | undefined => all.get(provider)!.file.models.find((m) => m.name === name);

test('prices: genai-prices per field when present, else models.dev, converted per token; a cache read above input is dropped', () => {
  const p = mergePricing({ input: 3, output: 15, cache_read: 0.3, cache_write: 3.75, reasoning: 20 },
    { now: { prompt: '0.0000025', completion: '0.00001', input_cache_write_1h: '0.000006', web_search: '0.01', request: '0.005' }, later: [] })!;
  assert.deepEqual([p.prompt, p.completion, p.input_cache_read, p.input_cache_write, p.input_cache_write_1h, p.internal_reasoning, p.web_search, p.request, p.image],
    ['0.0000025', '0.00001', '0.0000003', '0.00000375', '0.000006', '0.00002', '0.01', '0.005', '0']);
  assert.equal(mergePricing(null, null), null);
  // models.dev gave gpt-3.5-turbo a cache read of $1.25/M against a $0.50/M input: not a discount, a typo.
  assert.equal(mergePricing({ input: 0.5, output: 1.5, cache_read: 1.25 }, null)!.input_cache_read, '0');
});

test('genai-prices tiers, dated changes and time-of-day windows', () => {
  // Tiered values: base price plus one tier per threshold, every field that has one.
  assert.deepEqual(sheetOf('anthropic', 'claude-sonnet-4-5')!.now.tiers, [{
    above_input_tokens: 200000, prompt: '0.000006', completion: '0.0000225', input_cache_read: '0.0000006', input_cache_write: '0.0000075', input_cache_write_1h: '0.000012',
  }]);
  // A change dated after PRICES_AS_OF becomes the schedule; one before it is the price.
  const flash = mergePricing(null, sheetOf('google', 'gemini-3.6-flash'))!;
  assert.equal(flash.prompt, '0.00000075');
  assert.equal(flash.schedule?.length, 1);
  assert.equal(flash.schedule![0]!.from, '2027-01-01T00:00:00+00:00');
  assert.ok(Number(flash.schedule![0]!.pricing.prompt) > Number(flash.prompt));
  assert.equal(sheetOf('mistral', 'mistral-medium-latest')?.now.prompt, '0.0000015');
  // Off-peak 0.135 unconstrained, peak 0.27 from 00:30 to 16:30 UTC: the peak price is kept.
  assert.equal(sheetOf('deepseek', 'deepseek-chat')?.now.prompt, '0.00000027');
  assert.equal(sheetOf('cohere', 'no-such-model-anywhere'), null);
});

test('chat models only', () => {
  assert.equal(exclusionReason(dev('gpt-4o')), null);
  for (const id of ['whisper-large-v3', 'text-embedding-3-small', 'gpt-realtime', 'gpt-image-1', 'gemini-2.5-flash-preview-tts', 'ft:gpt-4o', 'gpt-4o:extended']) {
    assert.equal(exclusionReason(dev(id)), 'not a chat model', id);
  }
  assert.equal(exclusionReason(dev('painter', { output: ['image'] })), 'no text in or out');
});

test('makers are read from the family name, whatever the host prefix', () => {
  assert.equal(makerOf('gpt-4.1'), 'openai');
  assert.equal(makerOf('openai/gpt-oss-120b'), 'openai-open-weights');
  assert.equal(makerOf('us.anthropic.claude-sonnet-4-5-20250929-v1:0'), 'anthropic');
  assert.equal(makerOf('amazon.nova-pro-v1:0'), 'amazon');
  assert.equal(makerOf('qwen/qwen3-coder'), undefined);
});

test('buildModel: dates, tier, capabilities, caching minimum, output limit default, unpriced and :free', () => {
  const m = buildModel(src('anthropic'), dev('claude-3-5-haiku-20241022'), mergePricing(dev('x').cost, null), extra);
  assert.deepEqual([m.added_at, m.updated_at, m.created, m.reliability_tier], ['2025-02-19T00:00:00+00:00', '2025-03-01T00:00:00+00:00', 1739923200, 1]);
  assert.deepEqual(m.modalities.input, ['text', 'image']);
  assert.equal(m.cache_min_tokens, 2048);
  assert.equal(buildModel(src('anthropic'), dev('claude-3-7-sonnet-preview'), null, extra).reliability_tier, 2);
  // The window written into the output field is not believed: 8192, or half a small window.
  assert.equal(buildModel(src('deepseek'), dev('deepseek-x', { context: 128000, outputLimit: 128000 }), null, extra).max_completion_tokens, 8192);
  assert.equal(defaultOutputLimit(8192), 4096);
  // Priced by nobody, or "0" by a source that does not say free: unpriced, not free.
  assert.equal(buildModel(src('nvidia'), dev('deepseek-r1', { cost: { input: 0, output: 0 } }), mergePricing({ input: 0, output: 0 }, null), extra).unpriced, true);
  assert.equal(buildModel(src('nvidia'), dev('deepseek-r1', { cost: null }), null, extra).unpriced, true);
  const free = buildModel(src('openrouter'), dev('x/y:free', { cost: null }), null, extra);
  assert.equal(free.unpriced, undefined);
  assert.equal(free.pricing.prompt, '0');
  // No date in the facts: the fallback date.
  assert.equal(buildModel(src('openai'), dev('gpt-9', { releaseDate: '', lastUpdated: '' }), null, extra).added_at, `${PRICES_AS_OF}T00:00:00+00:00`);
});

test('the union: models only genai-prices prices are included, with borrowed facts', () => {
  const opus = find('anthropic', 'claude-opus-5-5')!;
  assert.equal(opus.pricing.prompt, '0.000004');
  assert.equal(opus.context_window, 1000000);
  assert.equal(opus.capabilities.tools, true);
  assert.ok(opus.max_completion_tokens < opus.context_window);
  assert.ok(find('openai', 'gpt-5.6-luna'));
  // Hosts keep a genai-prices-only entry only when the maker serves the model now.
  assert.equal(find('openrouter', 'anthropic/claude-2'), undefined);
  assert.ok(all.get('openrouter')!.excluded.some((e) => e.name === 'anthropic/claude-2' && /no longer serves/.test(e.reason)));
  // Families the provider's API cannot serve, and formats that cannot call a model, are left out.
  assert.ok(all.get('google')!.excluded.some((e) => e.name === 'claude-sonnet-4-5'));
  assert.ok(all.get('openai')!.excluded.some((e) => e.name === 'o3-pro' && /chat completions/.test(e.reason)));
});

test('a model only genai-prices prices takes the facts a fact package states over borrowed ones', () => {
  // OpenAI's specs (gpt-tokenizer) describe these, but its SDK's union leaves out `-1106`-style snapshots
  // and gpt-audio: borrowed from the family's newest model, gpt-3.5-turbo-1106 read images and
  // gpt-audio read images and reasoned, and the router could send an image to either.
  const turbo = find('openai', 'gpt-3.5-turbo-1106')!;
  assert.deepEqual(turbo.modalities?.input, ['text']);
  assert.equal(turbo.capabilities.vision, false);
  assert.equal(turbo.status, 'deprecated');
  const audio = find('openai', 'gpt-audio')!;
  assert.deepEqual([audio.capabilities.vision, audio.capabilities.reasoning, audio.added_at], [false, false, '2025-08-28T00:00:00+00:00']);
  assert.equal(find('openai', 'gpt-4o-2024-05-13')!.max_completion_tokens, 4096);
  // Which API serves it is not taken from there: legacy completions models stay listed as retired, naming a successor.
  assert.equal(find('openai', 'davinci')?.status, 'retired');
});

test('a host\'s offer of a model its maker serves takes the maker\'s facts, not its own family\'s', () => {
  // Only genai-prices priced Bedrock's global Claude profiles; borrowed from a family they share with no
  // listed model, they read no images, called no tools, did not reason (thinking was dropped) and
  // stopped at 8,192 output tokens.
  const opus = find('bedrock', 'global.anthropic.claude-opus-4-5-v1:0')!;
  const maker = find('anthropic', 'claude-opus-4-5-20251101')!;
  assert.deepEqual(opus.capabilities, { ...maker.capabilities, prompt_caching: opus.capabilities.prompt_caching });
  assert.deepEqual([opus.max_completion_tokens, opus.added_at], [maker.max_completion_tokens, maker.added_at]);
  assert.equal(find('bedrock', 'global.anthropic.claude-sonnet-4-6-v1:0')!.capabilities.reasoning, true);
  // OpenRouter's gpt-4o had borrowed reasoning from OpenAI's newest model; OpenAI's record says it does not reason.
  assert.equal(find('openrouter', 'openai/gpt-4o')!.capabilities.reasoning, false);
});

test('lifecycle: curated retirements with successors, models the provider withdrew, deprecations', () => {
  assert.deepEqual(find('anthropic', 'claude-3-opus-20240229'), {
    name: 'claude-3-opus-20240229', status: 'retired', deprecated_at: '2025-06-30T00:00:00+00:00', retires_at: '2026-01-05T00:00:00+00:00',
    successor: 'claude-opus-4-8', aliases: ['claude-3-opus-latest'],
  });
  // genai-prices flags grok-2-1212 deprecated; llm-zoo records gemini-3-flash-preview as retired (a secondary source: deprecated).
  assert.equal(find('xai', 'grok-2')?.status, 'deprecated');
  assert.equal(find('google', 'gemini-3-flash-preview')?.status, 'deprecated');
  // Google's deprecations page shut gemini-3-pro-preview down on 2026-03-09 (curated): retired, naming its replacement.
  assert.deepEqual([find('google', 'gemini-3-pro-preview')?.status, find('google', 'gemini-3-pro-preview')?.successor], ['retired', 'gemini-3.1-pro-preview']);
  // OpenAI's deprecations of 2026-04-22 and 2026-05-08 shut these down before PRICES_AS_OF: they were
  // listed active and routed to; the 2026-06-11 ones carry their shutdown date and replacement.
  for (const [name, retires] of [['gpt-4o-mini-search-preview', '2026-07-23'], ['gpt-3.5-turbo', '2026-10-23'], ['gpt-4', '2026-10-23'], ['gpt-5.3-chat-latest', '2026-08-10']] as const) {
    assert.deepEqual([find('openai', name)?.status, find('openai', name)?.retires_at], ['retired', `${retires}T00:00:00+00:00`], name);
  }
  assert.deepEqual([find('openai', 'gpt-5')?.status, find('openai', 'gpt-5')?.retires_at, find('openai', 'gpt-5')?.successor], ['deprecated', '2026-12-11T00:00:00+00:00', 'gpt-6.1-sol']);
  // Anthropic's SDK warns that claude-sonnet-4-5 reaches end of life on November 30th, 2026.
  assert.equal(find('anthropic', 'claude-sonnet-4-5-20250929')?.retires_at, '2026-11-30T00:00:00+00:00');
  // Invitation-only models the SDK names are left out, with the reason.
  assert.ok(all.get('anthropic')!.excluded.some((e) => e.name === 'claude-mythos-5-1' && /limited availability/.test(e.reason)));
  // A host's model only the 2025-09 data lists, whose maker does not confirm it, is served but not routed.
  const groq = all.get('groq')!.file.models.filter((m) => m.status !== 'retired');
  assert.ok(groq.length > 0 && groq.every((m) => m.status === 'deprecated'), groq.map((m) => `${m.name}:${m.status}`).join());
  // The bedrock offer of a model its maker serves now stays active.
  assert.equal(find('bedrock', 'global.anthropic.claude-sonnet-5-v1:0')?.status, undefined);
});

test('aliases: the maker\'s undated names, -latest, dated names', () => {
  assert.deepEqual(datedName('claude-sonnet-4-5-20250929'), ['claude-sonnet-4-5', '20250929']);
  assert.deepEqual(datedName('gpt-4o-2024-08-06'), ['gpt-4o', '20240806']);
  assert.deepEqual(datedName('mistral-large-2512'), ['mistral-large', '20251200']);
  assert.equal(datedName('deepseek-r1-0528'), null);
  const models = new Map<string, CatalogModel>([
    ['x-20250101', { name: 'x-20250101', added_at: '2025-01-01T00:00:00+00:00' } as CatalogModel],
    ['x-20250601', { name: 'x-20250601', added_at: '2025-06-01T00:00:00+00:00' } as CatalogModel],
    ['x-latest', { name: 'x-latest', added_at: '2025-06-01T00:00:00+00:00' } as CatalogModel],
    ['y', { name: 'y', added_at: '2025-06-01T00:00:00+00:00', aliases: ['why'] } as CatalogModel],
  ]);
  const { aliases, replaced } = deriveAliases(models);
  assert.deepEqual(Object.fromEntries(aliases), { 'x-latest': 'x-20250601', x: 'x-20250601', why: 'y' });
  assert.deepEqual([...replaced], ['x-latest']);
  assert.equal(canonicalKey('us.anthropic.claude-sonnet-4-5-20250929-v1:0'), 'claude-sonnet-4-5-20250929');
  assert.equal(canonicalKey('anthropic/claude-sonnet-4.5'), 'claude-sonnet-4-5');
  assert.equal(canonicalKey('openai/gpt-4.1'), 'gpt-4-1');
});

test('Bedrock: models without on-demand throughput are listed by their US inference profile, other geographies left out', () => {
  const bedrock = all.get('bedrock')!;
  const names = bedrock.file.models.map((m) => m.name);
  assert.ok(names.includes('us.anthropic.claude-sonnet-4-20250514-v1:0'));
  assert.ok(!names.includes('anthropic.claude-sonnet-4-20250514-v1:0'));
  assert.ok(names.includes('global.anthropic.claude-sonnet-4-5-20250929-v1:0'));
  assert.ok(!names.includes('anthropic.claude-sonnet-4-5-20250929-v1:0'));
  assert.ok(!names.some((n) => /^(eu|apac|jp|au)\./.test(n)));
  assert.ok(names.includes('amazon.nova-pro-v1:0'), 'on-demand models keep their base id');
});

test('corrections: o3-deep-research\'s date; DeepSeek\'s legacy names retired', () => {
  const o3dr = find('openrouter', 'openai/o3-deep-research');
  if (o3dr) assert.ok(o3dr.added_at >= '2025-06-26', o3dr.added_at);
  // DeepSeek's API took deepseek-chat and deepseek-reasoner until 2026-07-24 (its output-limit
  // correction no longer shows: a retired record keeps only what a refusal needs).
  for (const name of ['deepseek-chat', 'deepseek-reasoner']) {
    assert.deepEqual([find('deepseek', name)?.status, find('deepseek', name)?.retires_at, find('deepseek', name)?.successor], ['retired', '2026-07-24T00:00:00+00:00', 'deepseek-flash'], name);
  }
});
