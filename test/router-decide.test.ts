// The routing decision as a pure function: utility and ties, exploration within its share, ejected
// providers behind healthy ones, exact output caps under max_cost, affinity pricing the cached prefix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { compileConfig } from '../src/config/compile.ts';
import { loadConfig } from '../src/config/load.ts';
import { maxAffordableOutputTokens } from '../src/catalog/cost.ts';
import { decide, type DecideInput } from '../src/router/decide.ts';
import { parseRouterParams } from '../src/router/params.ts';
import { viewRequest } from '../src/router/request-view.ts';
import { emptyState } from '../src/router/quality/index.ts';
import { compileRouterSettings } from '../src/router/settings.ts';
import { codecFor } from '../src/formats/registry.ts';
import { warmTokenizers } from '../src/tokens/index.ts';
import { png } from './helpers/image-headers.ts';

const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: true };
function config(vision = false) {
  const dir = mkdtempSync(join(tmpdir(), 'gw-decide-'));
  mkdirSync(join(dir, 'providers'));
  const model = (name: string, prompt: string, completion: string) => ({ name, pricing: { prompt, completion, input_cache_read: (Number(prompt) / 10).toFixed(12).replace(/0+$/, '') }, capabilities: { ...caps, vision }, context_window: 100000, max_completion_tokens: 8000 });
  for (const [id, models] of [['pa', [model('gpt-4o-mini', '0.00000015', '0.0000006'), model('gpt-4o', '0.0000025', '0.00001')]], ['pb', [model('gpt-4o', '0.000003', '0.000012')]]] as const) {
    writeFileSync(join(dir, 'providers', `${id}.yaml`), stringify({ id, name: id, format: 'openai-chat', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-test', auth: { type: 'bearer' }, models }));
  }
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', router: { exploration: { share: 0.2, min_evidence: 10 } } }));
  const cfg = compileConfig(loadConfig(join(dir, 'gateway.yaml'), {}), {});
  rmSync(dir, { recursive: true, force: true });
  return cfg;
}
const cfg = config();
const EVERY_KEY = { all: true, keys: [] };
const cfgVision = config(true);
const health = (ejected: string[] = []) => ({ isEjected: (p: string) => ejected.includes(p), latencyMs: () => null, errorRate: () => 0 });
function input(body: Record<string, unknown>, over: Partial<DecideInput> = {}): DecideInput {
  const full = { model: 'router', messages: [{ role: 'user', content: 'Explain the difference between TCP and UDP.' }], ...body };
  const params = parseRouterParams(full);
  const view = viewRequest(codecFor('openai-chat').client!.decodeRequest(full), params, null, '/v1/chat/completions', null);
  return { cfg, settings: { ...cfg.router, explorationShare: 0 }, params, view, policy: null, quality: emptyState(), output: {}, health: health(), affinity: null, maxAttempts: 3, fullRanking: true, ...over };
}

test('utility is 10*W*q - expected cost; without W the best q wins and ties go to the cheaper', async () => {
  await warmTokenizers();
  const d = decide(input({ willingness_to_pay: 0.001 }));
  for (const r of d.ranked) assert.ok(Math.abs(r.utility - (10 * 0.001 * r.q - r.expectedCostUsd)) < 1e-12);
  for (let i = 1; i < d.ranked.length; i++) assert.ok(d.ranked[i - 1]!.utility >= d.ranked[i]!.utility);
  const best = decide(input({ models: ['gpt-4o'] }));
  assert.equal(best.ranked[0]!.q, best.ranked[1]!.q, 'two offers of one model share q');
  assert.equal(best.chosen!.id, 'pa/gpt-4o', 'equal q: the cheaper offer');
});

test('exploration: within its share a low-evidence candidate takes the first place, never outside it', () => {
  const base = decide(input({}));
  const explored = decide(input({}, { settings: { ...cfg.router, explorationShare: 0.2, learnsFrom: EVERY_KEY }, random: (() => { const xs = [0.1, 0.99]; let i = 0; return () => xs[i++ % 2]!; })() }));
  assert.equal(explored.explored, true);
  assert.notEqual(explored.chosen!.id, base.chosen!.id);
  const not = decide(input({}, { settings: { ...cfg.router, explorationShare: 0.2, learnsFrom: EVERY_KEY }, random: () => 0.5 }));
  assert.equal(not.explored, false);
  assert.equal(not.chosen!.id, base.chosen!.id);
});

test('exploration only where the request\'s feedback can teach: no quality signal, or a key no signal takes, explores nothing', () => {
  const draw = { random: () => 0 };
  // The shipped gateway.yaml names no quality signal: 5% of routed requests went to a uniformly drawn
  // model for good (the first newcomer request went to gpt-3.5-turbo-1106), and no evidence could come of it.
  const none = compileRouterSettings({ exploration: { share: 0.5 } });
  assert.equal(decide(input({}, { ...draw, settings: { ...cfg.router, ...none } })).explored, false);
  const evals = compileRouterSettings({ exploration: { share: 0.5 }, quality_signals: [{ metric: 'ok', keys: ['eval-*'] }] });
  const key = (name: string) => ({ id: name, name, allowedModels: [] }) as never;
  assert.equal(decide(input({}, { ...draw, settings: { ...cfg.router, ...evals }, key: key('eval-7') })).explored, true);
  assert.equal(decide(input({}, { ...draw, settings: { ...cfg.router, ...evals }, key: key('web-app') })).explored, false);
  assert.equal(decide(input({}, { ...draw, settings: { ...cfg.router, ...evals }, key: null })).explored, false);
  const all = compileRouterSettings({ exploration: { share: 0.5 }, quality_signals: [{ metric: 'ok', keys: ['eval-*'] }, { metric: 'thumbs' }] });
  assert.equal(decide(input({}, { ...draw, settings: { ...cfg.router, ...all }, key: null })).explored, true);
});

test('with W, exploration never picks a model that could not be chosen were its quality perfect', () => {
  const draw = { random: () => 0, settings: { ...cfg.router, explorationShare: 0.5, learnsFrom: EVERY_KEY } };
  // W = 1e-6 a quality point: gpt-4o's expected cost is past what a perfect answer is worth to this caller.
  const tight = decide(input({ willingness_to_pay: 1e-6 }, draw));
  assert.equal(tight.ranked[0]!.id, 'pa/gpt-4o-mini');
  const dear = tight.ranked.filter((r) => r.id.endsWith('/gpt-4o'));
  assert.ok(dear.length === 2 && dear.every((r) => 10 * 1e-6 - r.expectedCostUsd < tight.ranked[0]!.utility), 'the premise: neither offer could win at q = 1');
  assert.equal(tight.explored, false);
  assert.equal(tight.chosen!.id, 'pa/gpt-4o-mini');
  // W = 1: any of them could win: explored as before.
  assert.equal(decide(input({ willingness_to_pay: 1 }, draw)).explored, true);
});

test('exploration leaves a conversation that affinity holds where its prompt cache is', () => {
  const always = { settings: { ...cfg.router, explorationShare: 0.5, learnsFrom: EVERY_KEY }, random: () => 0 };
  const explored = decide(input({}, always));
  assert.equal(explored.explored, true, 'without affinity the draw explores');
  const held = decide(input({}, { ...always, affinity: { id: 'pb/gpt-4o', cachedTokens: 5 } }));
  assert.equal(held.explored, false);
  assert.equal(held.chosen!.id, 'pb/gpt-4o');
  // Held by a model that does not win the ranking (the cheap one, whose prior is lower): not explored either; the best wins.
  const lower = decide(input({}, { ...always, affinity: { id: 'pa/gpt-4o-mini', cachedTokens: 5 } }));
  assert.equal(lower.explored, false);
  assert.equal(lower.chosen!.id, decide(input({})).chosen!.id);
  assert.notEqual(lower.chosen!.id, 'pa/gpt-4o-mini');
  // A cached model the request cannot use (here: not in its list) holds nothing.
  const other = decide(input({ models: ['gpt-4o'] }, { ...always, affinity: { id: 'pa/gpt-4o-mini', cachedTokens: 5 } }));
  assert.equal(other.explored, true);
});

test('an ejected provider goes behind every healthy one in the plan', () => {
  const d = decide(input({ models: ['gpt-4o'] }, { health: health(['pa']) }));
  assert.deepEqual(d.plan.map((t) => t.candidate.id), ['pb/gpt-4o', 'pa/gpt-4o']);
  assert.equal(d.chosen!.id, 'pb/gpt-4o');
});

test('max_cost: each target gets the exact largest affordable output (decimal arithmetic on the token ceiling)', () => {
  const d = decide(input({ max_cost: 0.001 }));
  assert.ok(d.plan.length >= 2);
  for (const t of d.plan) {
    const r = d.ranked.find((x) => x.id === t.candidate.id)!;
    const exact = maxAffordableOutputTokens(t.candidate.entry.model.pricing, r.inputTokensCeiling, '0.001000000000');
    assert.equal(t.maxOutputTokens, Math.min(exact!, t.candidate.maxOutput));
  }
  const tiny = decide(input({ max_cost: 0.0000001 }));
  assert.equal(tiny.plan.length, 0);
  assert.ok(tiny.excludedBy.max_cost! >= 3);
});

test('affinity prices the cached prefix at the cache-read price and adds its bonus', () => {
  const plain = decide(input({ models: ['gpt-4o'] }));
  const withAff = decide(input({ models: ['gpt-4o'] }, { affinity: { id: 'pb/gpt-4o', cachedTokens: 5 } }));
  const pb0 = plain.ranked.find((r) => r.id === 'pb/gpt-4o')!;
  const pb1 = withAff.ranked.find((r) => r.id === 'pb/gpt-4o')!;
  assert.equal(pb1.cachedTokens, 0, 'below the minimum cacheable prompt nothing is cached');
  assert.ok(pb1.preferred.includes('affinity'));
  assert.equal(withAff.chosen!.id, 'pb/gpt-4o', 'the bonus outweighs the small price difference');
  assert.equal(pb0.expectedCostUsd, pb1.expectedCostUsd);
  const big = decide(input({ models: ['gpt-4o'], messages: [{ role: 'user', content: 'word '.repeat(3000) }] }, { affinity: { id: 'pb/gpt-4o', cachedTokens: 2500 } }));
  const r = big.ranked.find((x) => x.id === 'pb/gpt-4o')!;
  assert.equal(r.cachedTokens, 2500);
  const p = Number(0.000003);
  assert.ok(Math.abs(r.expectedCostUsd - ((r.inputTokens - 2500) * p + 2500 * p / 10 + r.outputTokens * 0.000012)) < 1e-12);
});

test('max_cost far from binding: a long new prompt is not encoded for the bound (the loose ceiling gives the same plan and caps)', async () => {
  await warmTokenizers();
  const text = Array.from({ length: 800 }, (_, i) => `item ${i}: the value is ${(i * 7919) % 1000} (far)`).join('\n');
  const d = decide(input({ models: ['gpt-4o'], max_cost: 50, messages: [{ role: 'user', content: text }] }));
  assert.equal(d.plan.length, 2);
  for (const t of d.plan) {
    const r = d.ranked.find((x) => x.id === t.candidate.id)!;
    assert.equal(r.tokensExact, false, 'estimated, as without max_cost');
    assert.ok(r.inputTokensCeiling >= Buffer.byteLength(text), 'the bytes ceiling');
    assert.equal(t.maxOutputTokens, t.candidate.maxOutput, 'the cap it would get anyway');
    assert.ok(maxAffordableOutputTokens(t.candidate.entry.model.pricing, r.inputTokensCeiling, '50')! >= t.candidate.maxOutput);
  }
  // The same prompt under a max_cost that binds is counted exactly (the test below checks the caps).
  const tight = decide(input({ models: ['gpt-4o'], max_cost: 0.2, messages: [{ role: 'user', content: text }] }));
  assert.ok(tight.plan.every((t) => tight.ranked.find((x) => x.id === t.candidate.id)!.tokensExact));
});

test('max_cost with an image: each candidate\'s prompt ceiling takes the image at its model\'s own rule (gpt-4o 1,445 tokens, gpt-4o-mini 48,169), a small inline PNG at its size', async () => {
  await warmTokenizers();
  const ask = (url: string) => decide(input({ max_cost: 0.05, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url } }] }] }, { cfg: cfgVision }));
  const ceilingOf = (d: ReturnType<typeof decide>, id: string) => d.ranked.find((r) => r.id === id)!.inputTokensCeiling;
  const byUrl = ask('https://images.example.com/cat.png');
  const text = ceilingOf(byUrl, 'pa/gpt-4o-mini') - 48_169;
  assert.ok(text > 0 && text < 60, `text and framing: ${text}`);
  assert.equal(ceilingOf(byUrl, 'pa/gpt-4o'), text + 1445);
  assert.equal(ceilingOf(byUrl, 'pb/gpt-4o'), text + 1445);
  // A 512x512 PNG: one tile (gpt-4o 255, gpt-4o-mini 8,500); a ceiling is never below the expected count (which takes an image at 765).
  const inline = ask(`data:image/png;base64,${png(512, 512)}`);
  assert.equal(ceilingOf(inline, 'pa/gpt-4o'), Math.max(text + 255, inline.ranked.find((r) => r.id === 'pa/gpt-4o')!.inputTokens));
  assert.equal(ceilingOf(inline, 'pa/gpt-4o-mini'), text + 8_500);
  // gpt-4o at $2.50 a million under max_cost $0.05: the image left room for output (48,169 tokens would cost $0.12 alone).
  const t = byUrl.plan.find((x) => x.candidate.id === 'pa/gpt-4o');
  assert.ok(t && t.maxOutputTokens! > 1000, `${t?.maxOutputTokens}`);
});

test('an image in the expected cost: each candidate counts it by its own model\'s rule (gpt-4o-mini bills a 1024x1024 image 25,501 tokens, not the 765 of gpt-4o), so the cheap-looking model is not chosen for a price it does not have', async () => {
  await warmTokenizers();
  const ask = (url: string, body: Record<string, unknown> = {}) => decide(input({ ...body, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url } }] }] }, { cfg: cfgVision }));
  const tokensOf = (d: ReturnType<typeof decide>, id: string) => d.ranked.find((r) => r.id === id)!.inputTokens;
  const byUrl = ask('https://images.example.com/cat.png');
  const text = tokensOf(byUrl, 'pa/gpt-4o') - 765;
  assert.ok(text > 0 && text < 40, `text and framing: ${text}`);
  assert.equal(tokensOf(byUrl, 'pa/gpt-4o-mini'), text + 25_501);
  // A 512x512 inline PNG: one tile each (gpt-4o 255, gpt-4o-mini 8,500).
  const inline = ask(`data:image/png;base64,${png(512, 512)}`);
  assert.equal(tokensOf(inline, 'pa/gpt-4o'), text + 255);
  assert.equal(tokensOf(inline, 'pa/gpt-4o-mini'), text + 8_500);
  // Cost decides at a tiny W, with a short answer: gpt-4o's image ($2.50/M x ~780) is cheaper than gpt-4o-mini's ($0.15/M x ~25,520).
  const cheap = ask('https://images.example.com/cat.png', { willingness_to_pay: 1e-9, max_tokens: 16 });
  assert.equal(cheap.plan[0]!.candidate.id, 'pa/gpt-4o');
  // Without an image gpt-4o-mini is the cheap one, as before.
  const textOnly = decide(input({ willingness_to_pay: 1e-9, max_tokens: 16 }, { cfg: cfgVision }));
  assert.equal(textOnly.plan[0]!.candidate.id, 'pa/gpt-4o-mini');
});

test('an image at detail "low": expected and ceiling counts at each tile model\'s base (gpt-4o 85, gpt-4o-mini 2,833), other levels at the most', async () => {
  await warmTokenizers();
  const ask = (detail: string | undefined, body: Record<string, unknown> = {}) => decide(input({ ...body, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' },
    { type: 'image_url', image_url: { url: 'https://images.example.com/cat.png', ...(detail ? { detail } : {}) } }] }] }, { cfg: cfgVision }));
  const row = (d: ReturnType<typeof decide>, id: string) => d.ranked.find((r) => r.id === id)!;
  const high = ask(undefined);
  const text = row(high, 'pa/gpt-4o').inputTokens - 765;
  assert.ok(text > 0 && text < 40, `text and framing: ${text}`);
  const low = ask('low');
  assert.equal(row(low, 'pa/gpt-4o').inputTokens, text + 85);
  assert.equal(row(low, 'pa/gpt-4o-mini').inputTokens, text + 2_833);
  assert.equal(row(low, 'pa/gpt-4o').inputTokensCeiling, text + 85);
  assert.equal(row(low, 'pa/gpt-4o-mini').inputTokensCeiling, text + 2_833);
  // "auto" and "high" stay at the most (auto may pick high): gpt-4o-mini's ceiling 48,169.
  for (const d of ['auto', 'high']) assert.equal(row(ask(d), 'pa/gpt-4o-mini').inputTokensCeiling, row(high, 'pa/gpt-4o-mini').inputTokensCeiling, d);
  // The cost each is ranked at follows: gpt-4o-mini's image $0.15/M x 2,833 at low, not x 25,501.
  const cost = (d: ReturnType<typeof decide>) => row(d, 'pa/gpt-4o-mini').expectedCostUsd;
  assert.ok(cost(low) * 5 < cost(high), `${cost(low)} ${cost(high)}`);
});

test('a huge max_cost (1e21 and above, where toFixed writes an exponent) caps nothing and is no error', () => {
  for (const maxCost of [1e21, 1e308, Number.MAX_VALUE]) {
    const d = decide(input({ max_cost: maxCost }));
    assert.ok(d.plan.length >= 2, `max_cost ${maxCost}`);
    for (const t of d.plan) assert.equal(t.maxOutputTokens, t.candidate.maxOutput);
  }
});

test('max_cost with a long new prompt: ranked by estimate, the plan capped on the exact count (a tight strict bound)', async () => {
  await warmTokenizers();
  const text = Array.from({ length: 800 }, (_, i) => `item ${i}: the value is ${(i * 7919) % 1000}`).join('\n');
  const loose = decide(input({ models: ['gpt-4o'], messages: [{ role: 'user', content: `${text} (a)` }] }));
  assert.ok(loose.ranked.every((r) => !r.tokensExact && r.inputTokensCeiling > r.inputTokens * 1.5), 'without max_cost: estimate, bytes ceiling');
  const d = decide(input({ models: ['gpt-4o'], max_cost: 0.2, messages: [{ role: 'user', content: `${text} (b)` }] }));
  assert.equal(d.plan.length, 2);
  for (const t of d.plan) {
    const r = d.ranked.find((x) => x.id === t.candidate.id)!;
    assert.equal(r.tokensExact, true);
    assert.equal(r.inputTokensCeiling, r.inputTokens);
    assert.equal(t.maxOutputTokens, Math.min(maxAffordableOutputTokens(t.candidate.entry.model.pricing, r.inputTokens, '0.2')!, t.candidate.maxOutput));
  }
});
