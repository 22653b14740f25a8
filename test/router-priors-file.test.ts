// router.priors_file: an operator's cold-start figures over the shipped table (a model the shipped
// table lacks, or one whose figures the operator knows better), checked at load with errors naming
// the file and path, hot-reloaded, and refitted into the bridges.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startMockOpenAI } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING } from './helpers/gateway.ts';
import { loadConfig, ConfigError } from '../src/config/load.ts';
import { builtinPriors, priorFor } from '../src/router/quality/index.ts';
import { withOperatorPriors, type PriorTable } from '../src/router/quality/prior.ts';

const caps = { tools: true, vision: false, reasoning: false, structured_output: true, prompt_caching: false };
const table = (models: PriorTable['models'], sources: PriorTable['sources'] = { ours: { source: 'our own evaluation, 2026-11', date: '2026-11' } }): PriorTable =>
  ({ schema: 1, updated: '2026-11-28', sources, models });

const openai = await startMockOpenAI();
const priorsPath = join(mkdtempSync(join(tmpdir(), 'gw-priors-')), 'priors.yaml');
const writePriors = (t: PriorTable) => writeFileSync(priorsPath, JSON.stringify(t));
writePriors(table({ 'house-model-b': { figures: { general: { q: 0.91, benchmark: 'MMLU', source: 'ours', date: '2026-11' } } } }));
const gw = await startTestGateway({
  providers: [{ id: 'openai', format: 'openai-chat', base_url: openai.url, models: ['house-model-a', 'house-model-b'].map((name) => ({ name, pricing: TEST_PRICING, capabilities: caps, max_completion_tokens: 4096, context_window: 128000 })) }],
  gateway: { router: { priors_file: priorsPath, exploration: { share: 0 } } },
});
after(async () => { await gw.stop(); await openai.close(); rmSync(join(priorsPath, '..'), { recursive: true, force: true }); });

async function rank(): Promise<Array<{ id: string; quality: number; quality_source: string }>> {
  const r = await fetch(`${gw.url}/v1/router/rank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'What should I cook tonight?' }] }) });
  assert.equal(r.status, 200, await r.clone().text());
  return ((await r.json()) as { candidates: Array<{ id: string; quality: number; quality_source: string }> }).candidates;
}

test('a model the shipped table lacks takes the operator\'s figure and the first place; the file hot-reloads', async () => {
  let c = await rank();
  assert.equal(c[0]!.id, 'openai/house-model-b');
  assert.deepEqual([c[0]!.quality, c[0]!.quality_source], [0.91, 'benchmark_prior']);
  assert.equal(c.find((x) => x.id === 'openai/house-model-a')!.quality_source, 'default_prior');
  // The operator learns better: model-a gets a figure above b's. Reloaded, the ranking follows.
  writePriors(table({
    'house-model-a': { figures: { general: { q: 0.95, benchmark: 'MMLU', source: 'ours', date: '2026-11' } } },
    'house-model-b': { figures: { general: { q: 0.91, benchmark: 'MMLU', source: 'ours', date: '2026-11' } } },
  }));
  const r = await gw.services.holder.reload();
  assert.equal(r.ok, true, JSON.stringify(r));
  c = await rank();
  assert.equal(c[0]!.id, 'openai/house-model-a');
  assert.equal(c[0]!.quality, 0.95);
});

test('a bad priors file is refused at reload naming the file and path; the last good version keeps serving', async () => {
  const before = gw.services.holder.current.version;
  writePriors(table({ 'house-model-a': { figures: { general: { q: 1.5, benchmark: 'MMLU', source: 'ours', date: '2026-11' } } } }));
  const r = await gw.services.holder.reload();
  assert.equal(r.ok, false);
  assert.match(String((r as { error?: unknown }).error), /priors\.yaml at \/models\/house-model-a\/figures\/general\/q: must be <= 1/);
  assert.equal(gw.services.holder.current.version, before);
  assert.equal((await rank())[0]!.id, 'openai/house-model-a');
});

test('load errors name the file and path: unknown category, unlisted source, missing file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-priors-load-'));
  try {
    mkdirSync(join(dir, 'providers'));
    const gwFile = join(dir, 'gateway.yaml');
    writeFileSync(gwFile, 'version: 1\nrouter:\n  priors_file: ./p.json\n');
    const problems = (t: unknown): string => {
      if (t === undefined) rmSync(join(dir, 'p.json'), { force: true }); else writeFileSync(join(dir, 'p.json'), JSON.stringify(t));
      try { loadConfig(gwFile); } catch (e) { assert.ok(e instanceof ConfigError); return e.message; }
      return '';
    };
    const shown = relative(process.cwd(), join(dir, 'p.json'));
    assert.match(problems(table({ m: { figures: { poetry: { q: 0.5, benchmark: 'X', source: 'ours', date: '2026-11' } } as never } })), new RegExp(`${shown} at /models/m/figures: must NOT have additional properties "poetry"`));
    assert.match(problems(table({ m: { figures: {}, results: { X: { q: 0.5, source: 'nowhere', date: '2026-11-01' } } } })), new RegExp(`${shown} at /models/m/results/X/source: source "nowhere" is not listed under /sources`));
    assert.match(problems(table({ m: { figures: { code: { q: 0.5, benchmark: 'X', source: 'ours', date: 'November' } } } })), /\/models\/m\/figures\/code\/date: must match pattern/);
    assert.match(problems(undefined), new RegExp(`${shown}: cannot read`));
    // A source of the shipped table may be named without listing it again.
    assert.equal(problems(table({ m: { figures: { code: { q: 0.5, benchmark: 'X', source: 'simple-evals', date: '2025-05-09' } } } }, {})), '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an operator\'s entry replaces the shipped one of the same model and counts in the bridges', () => {
  const shipped = priorFor({ id: 'gpt-4o' }, 'chat', builtinPriors());
  const mine = withOperatorPriors(table({ 'gpt-4o': { figures: {
    general: { q: 0.95, benchmark: 'MMLU', source: 'ours', date: '2026-11' },
    reasoning: { q: 0.9, benchmark: 'GPQA Diamond', source: 'ours', date: '2026-11' },
  } } }));
  assert.equal(shipped.q, 0.887);
  assert.equal(priorFor({ id: 'openai/gpt-4o' }, 'chat', mine).q, 0.95);
  // A dated id still finds its own shipped entry (an exact id wins over a dateless one).
  assert.equal(priorFor({ id: 'gpt-4o-2024-08-06' }, 'chat', mine).q, 0.887);
  // Bridges are refitted over the merged table: the operator's pair moves the general-from-GPQA fit.
  const fit = (p: typeof mine) => p.bridges.find((b) => b.category === 'general' && b.from === 'GPQA Diamond')!;
  assert.notEqual(fit(mine).a, fit(builtinPriors()).a);
  assert.equal(withOperatorPriors(null), builtinPriors());
});

test('the shipped priors.json is valid against schema/priors.schema.json (an operator file has the same format)', async () => {
  const { validatorFor } = await import('../src/config/schemas.ts');
  const { readFileSync } = await import('node:fs');
  const v = validatorFor('priors');
  const shipped = JSON.parse(readFileSync(new URL('../src/router/quality/priors.json', import.meta.url), 'utf8'));
  assert.equal(v(shipped), true, JSON.stringify(v.errors?.slice(0, 3)));
});
