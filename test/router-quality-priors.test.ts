// The shipped benchmark priors: every figure is a sourced, dated fact in [0, 1], and ids written
// the ways providers write them find their entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtinPriors, familyOf, normalId, priorFor, priorKey, type PriorTable } from '../src/router/quality/index.ts';
import { BRIDGE_MIN_MODELS, compilePriors, lineOf, PRIOR_CATEGORIES, priorWithBasis } from '../src/router/quality/prior.ts';

const table = JSON.parse(readFileSync(new URL('../src/router/quality/priors.json', import.meta.url), 'utf8')) as PriorTable;

test('every figure has a value in [0, 1], a benchmark, a listed source and a date', () => {
  assert.equal(table.schema, 1);
  assert.ok(Object.keys(table.models).length >= 20);
  for (const [id, e] of Object.entries(table.models)) {
    assert.ok(Object.keys(e.figures).length + Object.keys(e.results ?? {}).length > 0, id);
    for (const [cat, f] of Object.entries(e.figures)) {
      assert.ok((PRIOR_CATEGORIES as readonly string[]).includes(cat), `${id}: category ${cat}`);
      assert.ok(f.q > 0 && f.q <= 1, `${id}.${cat}: ${f.q}`);
      assert.ok(f.benchmark.length > 0, `${id}.${cat}: benchmark`);
      assert.ok(table.sources?.[f.source], `${id}.${cat}: source ${f.source} listed`);
      assert.match(f.date, /^\d{4}-\d{2}(-\d{2})?$/); // some sources give only the month
      assert.equal(f.date, table.sources![f.source]!.date);
    }
    for (const [bench, r] of Object.entries(e.results ?? {})) {
      assert.ok(r.q > 0 && r.q <= 1, `${id} ${bench}: ${r.q}`);
      assert.ok(table.sources?.[r.source], `${id} ${bench}: source ${r.source} listed`);
      assert.equal(r.date, table.sources![r.source]!.date);
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

// A synthetic table where category "general" (benchmark OLD) and a newer benchmark NEW are exactly
// logit-linear: logit(old) = 0.5 + 0.6 logit(new).
const L = (q: number) => Math.log(q / (1 - q));
const S = (z: number) => 1 / (1 + Math.exp(-z));
function synthetic(pairs: number, extra: Record<string, PriorTable['models'][string]> = {}): PriorTable {
  const models: PriorTable['models'] = {};
  for (let i = 0; i < pairs; i++) {
    const nw = 0.3 + 0.05 * i;
    models[`old-model-${i}`] = {
      figures: { general: { q: S(0.5 + 0.6 * L(nw)), benchmark: 'OLD', source: 's', date: '2025-01-01' } },
      results: { NEW: { q: nw, source: 's', date: '2025-01-01' } },
    };
  }
  return { schema: 1, updated: '2026-11-28', sources: { s: { source: 'test', date: '2025-01-01' } }, models: { ...models, ...extra } };
}
const newOnly = { 'next-gen': { figures: {}, results: { NEW: { q: 0.9, source: 's', date: '2026-01-01' } } } };

test('a bridge puts a newer benchmark on the scale of a category\'s figures', () => {
  const p = compilePriors(synthetic(10, newOnly));
  const br = p.bridges.find((b) => b.category === 'general' && b.from === 'NEW')!;
  assert.ok(br, 'bridge fitted');
  assert.equal(br.n, 10);
  assert.ok(Math.abs(br.a - 0.5) < 1e-9 && Math.abs(br.b - 0.6) < 1e-9 && br.residualSd < 1e-9, JSON.stringify(br));
  const prior = priorFor({ id: 'next-gen' }, 'chat', p);
  assert.equal(prior.source, 'benchmark_prior');
  assert.ok(Math.abs(prior.q - S(0.5 + 0.6 * L(0.9))) < 1e-9, String(prior.q));
  // It is above every old model, as its result is above theirs: the order of the newer benchmark carries over.
  for (let i = 0; i < 10; i++) assert.ok(prior.q > priorFor({ id: `old-model-${i}` }, 'chat', p).q);
});

// The family rule lends a sibling's published figure (less a margin), never a bridged one: with the
// bridges, a 2026 flagship's estimated math figure lifted its family's 7B and 2023 models to 0.88-0.90.
test('the family rule lends published figures only, not bridged ones', () => {
  const t = synthetic(10, { 'nx-flagship': { family: 'nx', figures: {}, results: { NEW: { q: 0.9, source: 's', date: '2026-01-01' } } } });
  const small = { id: 'nx-small', family: 'nx', pricePerMillion: 0.1 };
  const lone = priorWithBasis(small, 'chat', compilePriors(t));
  assert.equal(priorFor({ id: 'nx-flagship' }, 'chat', compilePriors(t)).source, 'benchmark_prior', 'the flagship itself is bridged');
  assert.deepEqual([lone.source, lone.basis.basis, lone.q], ['default_prior', 'price_tier', 0.4]);
  t.models['nx-older'] = { family: 'nx', figures: { general: { q: 0.7, benchmark: 'OLD', source: 's', date: '2025-01-01' } } };
  const lent = priorWithBasis(small, 'chat', compilePriors(t));
  assert.deepEqual([lent.source, lent.basis.basis], ['default_prior', 'family']);
  assert.ok(Math.abs(lent.q - 0.62) < 1e-9, String(lent.q));
});

test('a later version of a line starts just below its predecessor, not at the family\'s weakest', () => {
  assert.deepEqual(lineOf('claude-3-5-sonnet-20241022'), { line: 'claude-sonnet', version: [3, 5] });
  assert.deepEqual(lineOf('openai/gpt-5.6-sol'), { line: 'gpt-sol', version: [5, 6] });
  assert.deepEqual(lineOf('gemini-3-flash-preview'), { line: 'gemini-flash', version: [3] });
  assert.deepEqual(lineOf('qwen2.5-7b-instruct'), { line: 'qwen2-7b', version: [5] });
  const p = builtinPriors();
  // Claude Opus 5.5 had no figure: the family rule gave it 0.60 (claude-3-opus's era), below gpt-3.5's 0.757.
  const opus = priorWithBasis({ id: 'anthropic/claude-opus-5-5', pricePerMillion: 10 }, 'code', p);
  const before = priorFor({ id: 'claude-opus-4-8' }, 'code', p).q;
  assert.deepEqual([opus.source, opus.basis.basis, opus.basis.basis === 'predecessor' && opus.basis.sibling], ['default_prior', 'predecessor', 'claude-opus-4-8']);
  assert.ok(Math.abs(opus.q - (before - 0.03)) < 1e-9 && opus.q < before, `${opus.q} against ${before}`);
  // The latest earlier version with a figure lends, never a later one, nor another line (size) of the family.
  const sol = priorWithBasis({ id: 'gpt-6-sol' }, 'chat', p);
  assert.equal(sol.basis.basis === 'predecessor' && sol.basis.sibling, 'gpt-5.6-sol');
  const older = priorWithBasis({ id: 'claude-opus-3-9', pricePerMillion: 10 }, 'chat', p);
  assert.equal(older.basis.basis === 'predecessor' && older.basis.sibling, 'claude-3-opus-20240229');
  assert.notEqual(priorWithBasis({ id: 'gpt-5-sol-mini', pricePerMillion: 0.1 }, 'chat', p).basis.basis, 'predecessor');
  assert.notEqual(priorWithBasis({ id: 'claude-tiny-6', pricePerMillion: 0.1 }, 'chat', p).basis.basis, 'predecessor');
});

test('too few models reporting both benchmarks: no bridge, the default prior', () => {
  const p = compilePriors(synthetic(BRIDGE_MIN_MODELS - 1, newOnly));
  assert.equal(p.bridges.length, 0);
  assert.equal(priorFor({ id: 'next-gen', pricePerMillion: 10 }, 'chat', p).source, 'default_prior');
});

test('a benchmark that ranks models the other way bridges nothing', () => {
  const t = synthetic(10, newOnly);
  for (const e of Object.values(t.models)) if (e.results?.NEW && e.figures.general) e.results.NEW.q = 1 - e.results.NEW.q;
  assert.equal(compilePriors(t).bridges.length, 0);
});

test('the shipped table: a model\'s own figure wins over a bridge', () => {
  const p = builtinPriors();
  assert.ok(p.bridges.length > 0);
  for (const b of p.bridges) assert.ok(b.n >= BRIDGE_MIN_MODELS && b.b > 0, `${b.category} from ${b.from}`);
  // Own figures are untouched.
  assert.equal(priorFor({ id: 'gpt-4o' }, 'math', p).q, 0.759);
  assert.equal(priorFor({ id: 'o3' }, 'code', p).q, 0.874);
  // Entries without a category's figure get it bridged from the result with the tightest bridge.
  for (const [e, cats] of p.bridged) {
    for (const [cat, f] of Object.entries(cats)) {
      assert.equal(e.figures[cat as keyof typeof e.figures], undefined);
      assert.ok(f!.q > 0 && f!.q < 1, `${cat} via ${f!.via}`);
    }
  }
});

// The repository's own catalog, every provider keyed, no outcomes yet: what the router picks on
// priors alone. Before bridges, every model of 2025-26 lacked an MMLU or HumanEval figure and fell
// to the default prior, so a 2025 model's saturated MMLU (gpt-4.1, o3) outranked all of them.
async function repoRouter() {
  const { compileConfig } = await import('../src/config/compile.ts');
  const { loadConfig } = await import('../src/config/load.ts');
  const { RouterService } = await import('../src/router/service.ts');
  const { everyProviderKey } = await import('../bench/lib/repo-config.ts');
  const env = { ...process.env, ...everyProviderKey() };
  const loaded = compileConfig(loadConfig(new URL('../gateway.yaml', import.meta.url).pathname, env), env);
  // Exploration off: a share of conversation starts goes to a model under min_evidence on purpose.
  const cfg = { ...loaded, router: { ...loaded.router, explorationShare: 0 } };
  const router = new RouterService({ sql: null, settings: () => cfg.router, isEjected: () => false });
  const rank = async (prompt: string, id: string) =>
    (await router.rank(cfg, { model: 'router', messages: [{ role: 'user', content: prompt }] }, 'openai-chat', null, '/v1/router/rank', id)).body;
  return { router, rank, cfg };
}

test('on the repository catalog, the cold-start choice without W is a model no candidate beats on GPQA Diamond', async () => {
  const { router, rank } = await repoRouter();
  const p = builtinPriors();
  const gpqa = (canonical: string): number | undefined => {
    const e = p.byId.get(normalId(canonical)) ?? p.byKey.get(priorKey(canonical));
    return e?.figures.reasoning?.benchmark === 'GPQA Diamond' ? e.figures.reasoning.q : e?.results?.['GPQA Diamond']?.q;
  };
  try {
    const prompts = {
      code: 'Write a Python function that parses an ISO 8601 duration and returns seconds.\n```python\ndef parse(s):\n    pass\n```',
      chat: 'What are some good ways to spend a rainy weekend afternoon with friends?',
      math: 'Solve for x: 3x^2 - 12x + 9 = 0. Show the steps.',
    };
    for (const [kind, prompt] of Object.entries(prompts)) {
      // The dry run ranks every candidate (a routed request's decision keeps only the first few).
      const body = await rank(prompt, `t-${kind}`);
      const all = body.candidates as Array<{ id: string; canonical: string; quality_source: string; excluded?: unknown }>;
      const included = all.filter((c) => !c.excluded);
      assert.ok(included.length > 200, `${kind}: ${included.length} candidates`);
      const chosen = included[0]!;
      assert.equal(chosen.id, body.model);
      const best = Math.max(...included.map((c) => gpqa(c.canonical) ?? 0));
      const own = gpqa(chosen.canonical);
      assert.ok(own !== undefined && own >= best - 0.01, `${kind}: chose ${chosen.id} (GPQA Diamond ${own}) where a candidate has ${best}`);
      assert.equal(chosen.quality_source, 'benchmark_prior', kind);
    }
  } finally {
    await router.close();
  }
});

// The dry run says where each cold-start figure came from: a published figure with its source's
// address, a bridge (the benchmark, the result read and the fit), or the default prior's rule.
test('the dry run shows each candidate\'s prior and where it came from', async () => {
  const { router, rank } = await repoRouter();
  type Basis = { q: number; source: string; basis: string; model?: string; category?: string; benchmark?: string; result?: number; reference?: string; date?: string;
    fit?: { models: number; r2: number; extrapolated: boolean }; sibling?: string; sibling_q?: number; margin?: number; blended_per_million?: number };
  try {
    const body = await rank('Write a Python function that reverses a linked list.\n```python\ndef rev(head):\n    pass\n```', 't-basis');
    assert.equal(body.prompt_kind, 'code');
    const all = body.candidates as Array<{ id: string; canonical: string; quality: number; quality_source: string; prior: Basis }>;
    const seen = new Set<string>();
    for (const c of all) {
      const b = c.prior;
      seen.add(b.basis);
      // No outcomes yet: the estimate is the prior.
      assert.equal(c.quality_source, b.source, c.id);
      assert.ok(Math.abs(c.quality - b.q) < 1e-4, `${c.id}: quality ${c.quality} prior ${b.q}`);
      if (b.basis === 'figure' || b.basis === 'bridge') {
        assert.equal(b.source, 'benchmark_prior', c.id);
        assert.ok(table.models[b.model!], `${c.id}: ${b.model} is a table entry`);
        assert.ok(b.category === 'code' || b.category === 'general', `${c.id}: ${b.category}`);
        assert.match(b.date!, /^\d{4}-\d{2}/);
        assert.ok(b.reference!.length > 10, `${c.id}: ${b.reference}`);
        assert.ok(b.result! > 0 && b.result! <= 1);
      }
      if (b.basis === 'figure') assert.equal(b.q, b.result, c.id);
      if (b.basis === 'bridge') assert.ok(b.fit!.models >= BRIDGE_MIN_MODELS && b.fit!.r2 > 0, c.id);
      if (b.basis === 'family') assert.ok(Math.abs(b.q - (b.sibling_q! - b.margin!)) < 1e-4 && table.models[b.sibling!], `${c.id}: ${JSON.stringify(b)}`);
      if (b.basis === 'price_tier') assert.ok(b.blended_per_million! >= 0, c.id);
    }
    for (const kind of ['figure', 'bridge', 'family', 'price_tier']) assert.ok(seen.has(kind), `some candidate's prior is a ${kind}: ${[...seen]}`);
    // A 2026 model's code figure comes through its GPQA Diamond result, with the maker's document cited.
    const sol = all.find((c) => c.canonical === 'gpt-5.6-sol')!;
    assert.equal(sol.prior.basis, 'bridge');
    assert.equal(sol.prior.benchmark, 'GPQA Diamond');
    assert.equal(sol.prior.result, table.models['gpt-5.6-sol']!.figures.reasoning!.q); // its reasoning figure
    assert.equal(sol.prior.fit!.extrapolated, true); // fitted on results up to 0.83
    assert.match(sol.prior.reference!, /https:\/\/openai\.com\//);
    // A 2024 model's own HumanEval figure, from its first dated entry.
    const gpt4o = all.find((c) => c.canonical === 'gpt-4o')!;
    assert.match(gpt4o.prior.model!, /^gpt-4o-2024/);
    assert.deepEqual([gpt4o.prior.basis, gpt4o.prior.benchmark, gpt4o.prior.result], ['figure', 'HumanEval', table.models[gpt4o.prior.model!]!.figures.code!.q]);
  } finally {
    await router.close();
  }
});

// `models` takes a model as a named request does: `provider/alias` (a dated model's undated name) was
// an unknown model, so `models: ["anthropic/claude-haiku-4-5"]` was a 400 while `model:
// "anthropic/claude-haiku-4-5"` answered. And a later version of a line starts below its predecessor:
// naming Opus 5.5 and Haiku 4.5, code goes to Opus 5.5 (it went to Haiku 4.5: 0.60 against 0.92).
test('on the repository catalog, models entries resolve aliases under their provider; Opus 5.5 is preferred to Haiku 4.5', async () => {
  const { router, cfg } = await repoRouter();
  try {
    const out = (await router.rank(cfg, {
      model: 'router', models: ['anthropic/claude-opus-5-5', 'anthropic/claude-haiku-4-5'],
      messages: [{ role: 'user', content: 'Write a function in Rust that sorts a vector of strings by length.' }],
    }, 'openai-chat', null, '/v1/router/rank', 't-alias')).body as { model: string; candidates: Array<{ id: string; quality: number }> };
    assert.deepEqual(out.candidates.map((c) => c.id).sort(), ['anthropic/claude-haiku-4-5-20251001', 'anthropic/claude-opus-5-5']);
    assert.equal(out.model, 'anthropic/claude-opus-5-5');
  } finally {
    await router.close();
  }
});
