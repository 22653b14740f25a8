// The shipped benchmark priors: every figure is a sourced, dated fact in [0, 1], and ids written
// the ways providers write them find their entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtinPriors, familyOf, normalId, priorFor, priorKey, type PriorTable } from '../src/router/quality/index.ts';
import { PRIOR_CATEGORIES } from '../src/router/quality/prior.ts';

const table = JSON.parse(readFileSync(new URL('../src/router/quality/priors.json', import.meta.url), 'utf8')) as PriorTable;

test('every figure has a value in [0, 1], a benchmark, a listed source and a date', () => {
  assert.equal(table.schema, 1);
  assert.ok(Object.keys(table.models).length >= 20);
  for (const [id, e] of Object.entries(table.models)) {
    assert.ok(Object.keys(e.figures).length > 0, id);
    for (const [cat, f] of Object.entries(e.figures)) {
      assert.ok((PRIOR_CATEGORIES as readonly string[]).includes(cat), `${id}: category ${cat}`);
      assert.ok(f.q > 0 && f.q <= 1, `${id}.${cat}: ${f.q}`);
      assert.ok(f.benchmark.length > 0, `${id}.${cat}: benchmark`);
      assert.ok(table.sources?.[f.source], `${id}.${cat}: source ${f.source} listed`);
      assert.match(f.date, /^\d{4}-\d{2}-\d{2}$/);
      assert.equal(f.date, table.sources![f.source]!.date);
    }
  }
});

test('provider spellings of a model find its entry; unknown models get the conservative default', () => {
  assert.equal(normalId('meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo'), 'llama-3-1-70b');
  assert.equal(priorKey('openai/gpt-4o-2024-11-20'), 'gpt-4o');
  assert.equal(familyOf('deepseek-ai/DeepSeek-V3'), 'deepseek');
  const p = builtinPriors();
  for (const id of ['gpt-4o', 'openai/gpt-4o-mini', 'claude-3.5-sonnet', 'meta-llama/Llama-3.1-8B-Instruct', 'deepseek-ai/DeepSeek-R1', 'gemini-1.5-flash']) {
    assert.equal(priorFor({ id }, 'code', p).source, 'benchmark_prior', id);
  }
  // Exact dated ids win over the dateless key.
  assert.equal(priorFor({ id: 'gpt-4o-2024-11-20' }, 'math', p).q, 0.685);
  assert.equal(priorFor({ id: 'gpt-4o' }, 'math', p).q, 0.759);
  const unknown = priorFor({ id: 'newco/brand-new-model', pricePerMillion: 50 }, 'chat', p);
  assert.equal(unknown.source, 'default_prior');
  assert.ok(unknown.q < Math.min(...Object.values(table.models).map((e) => e.figures.general?.q ?? 1)), 'below every benchmarked model');
});
