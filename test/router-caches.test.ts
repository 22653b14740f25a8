// What the decision computes once instead of per request must equal what it replaced: predictions
// per (state, kind) against predict() itself, fixed policy verdicts per (version, policy, key)
// against the rules evaluated directly, and the routed plan (top-k selection, pass 1 without quality)
// against the full ranking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { candidateSet, resolveIndices } from '../src/router/candidates.ts';
import { decide, type DecideInput } from '../src/router/decide.ts';
import { estimatesFor, expectedOutputs } from '../src/router/predictions.ts';
import { expectedOutput, foldOutputs } from '../src/router/output-stats.ts';
import { compilePolicies } from '../src/router/policy.ts';
import { fixedRuleHits, fixedVerdicts, keyData } from '../src/router/rule-cache.ts';
import { emptyState, extractPromptFeatures, predict, train, type Outcome, type QualityState } from '../src/router/quality/index.ts';
import { decideInput, model, routerTestConfig } from './helpers/router-decide.ts';
import { warmTokenizers } from '../src/tokens/index.ts';
import type { KeyRecord } from '../src/store/types.ts';

const cfg = routerTestConfig();
const set = candidateSet(cfg);
const features = (text: string) => extractPromptFeatures({ turns: [text] });
const PROMPTS = ['Write a haiku about the sea', 'Write a short story about a lighthouse keeper', 'What is 17 * 23?', 'def f(x): return x + 1  # fix the bug', 'Translate "good morning" into French'];

/** A state where two of the set's models have learned outcomes (with costs and output tokens) and the rest have none. */
function learnedState(): QualityState {
  const [a, b] = [set.refs[0]!.id, set.refs[1]!.id];
  const out: Outcome[] = [];
  for (let i = 0; i < 40; i++) {
    const f = features(`${PROMPTS[i % PROMPTS.length]} (${i})`);
    out.push({ features: f, model: a, score: i % 3 === 0 ? 0 : 1, time: 1000 + i, costUsd: 0.001, outputTokens: 120 + i });
    out.push({ features: f, model: b, score: i % 2, time: 1000 + i, costUsd: 0.002, outputTokens: 300 });
  }
  return train(out);
}

test('per-kind cached estimates equal predict() for every model and prompt, learned or not', () => {
  for (const state of [emptyState(), learnedState()]) {
    for (const text of PROMPTS) {
      const f = features(text);
      const want = predict(state, f, set.refs);
      const got = estimatesFor(state, set, f, null);
      set.refs.forEach((r, i) => {
        assert.equal(got.q[i], want[i]!.q, `${r.id} q for "${text}"`);
        assert.equal(got.evidence[i], want[i]!.evidence, `${r.id} evidence`);
        assert.equal(got.source[i], want[i]!.source, `${r.id} source`);
        assert.equal(Number.isNaN(got.outTok[i]!) ? undefined : got.outTok[i], want[i]!.outputTokens, `${r.id} output tokens`);
      });
      const table = foldOutputs({}, [{ model: set.refs[0]!.id, kind: f.kind, outputTokens: 77 }, { model: set.refs[2]!.id, kind: f.kind, outputTokens: 900 }]);
      const outs = expectedOutputs(state, set, f, table, 400);
      set.refs.forEach((r, i) => assert.equal(outs[i], expectedOutput(table, r.id, f.kind, want[i]!.outputTokens, 400), `${r.id} expected output`));
    }
  }
});

test('fixed policy rules: classified by the variables they read, verdicts equal to evaluating the rules', () => {
  const policies = compilePolicies({
    p: [
      { exclude: { '==': [{ var: 'candidate.provider' }, 'pc'] } },
      { prefer: { '>': [{ var: 'candidate.context_window' }, 1000] }, weight: 0.1 },
      { require: { 'starts_with': [{ var: 'candidate.id' }, { var: 'key.name' }] }, when: { '==': [{ var: 'request.stream' }, false] } },
      { exclude: { '>': [{ var: 'candidate.quality' }, 2] } },
      { exclude: { '>': [{ var: 'request.input_tokens' }, 1e9] } },
      { exclude: { '!': [{ missing: ['candidate.canonical'] }] } },
    ],
  });
  const p = policies.get('p')!;
  assert.deepEqual(p.rules.map((r) => r.fixed), [true, true, true, false, false, false]);
  assert.equal(p.readsInputTokens, true, 'request.input_tokens is read');
  assert.equal(compilePolicies({ q: [{ exclude: { '==': [{ var: 'candidate.provider' }, 'pc'] } }] }).get('q')!.readsInputTokens, false);
  const key = (name: string) => ({ id: `k-${name}`, name, allowedModels: [] }) as unknown as KeyRecord;
  for (const k of [null, key('pa/'), key('pb/')]) {
    const hits = fixedRuleHits(set, p, k);
    const v = fixedVerdicts(set, p, k, [0, 1, 2]);
    set.all.forEach((c, i) => {
      const data = { key: keyData(k), candidate: c.policyView };
      const expect = [0, 1, 2].map((r) => p.rules[r]!.test(data));
      assert.deepEqual([0, 1, 2].map((r) => hits[r]![i] === 1), expect, c.id);
      const fail = expect[0] ? 1 : !expect[2] ? 3 : 0;
      assert.equal(v.fail[i], fail, `${c.id} first failing rule for key ${k?.name}`);
      assert.equal(v.bonus[i], fail === 0 || fail === 3 ? (expect[1] ? 0.1 : 0) : 0, `${c.id} bonus`);
    });
  }
  // A key reloaded by the key ring is a new record: evaluated afresh, not served from the old one's memo.
  const before = fixedRuleHits(set, p, key('pa/'));
  assert.notEqual(fixedRuleHits(set, p, key('pa/')), before);
});

const input = (body: Record<string, unknown>, over: Partial<DecideInput> = {}): DecideInput => decideInput(cfg, body, over);

test('routing (top-k, quality predicted only for what is left) plans exactly what the full ranking ranks first', async () => {
  await warmTokenizers();
  const state = learnedState();
  const policy = compilePolicies({
    mixed: [{ exclude: { '==': [{ var: 'candidate.provider' }, 'pc'] } }, { exclude: { '<': [{ var: 'candidate.quality' }, 0.01] } }, { prefer: { '==': [{ var: 'candidate.model' }, 'gpt-4o'] }, weight: 0.2 }],
  }).get('mixed')!;
  const bodies: Array<Record<string, unknown>> = [
    {}, { willingness_to_pay: 0.001 }, { willingness_to_pay: 100 }, { max_cost: 0.002 }, { max_cost: 0.00001, willingness_to_pay: 0.01 },
    { max_cost_per_million_tokens: 1 }, { models: ['gpt-4o', 'claude-sonnet-4-5'] },
    { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] },
  ];
  for (const body of bodies) {
    for (const over of [{}, { policy }, { quality: state }, { quality: state, policy }] as Array<Partial<DecideInput>>) {
      const routed = decide(input(body, over));
      const full = decide(input(body, { ...over, fullRanking: true }));
      const label = `${JSON.stringify(body)} ${Object.keys(over).join('+')}`;
      assert.deepEqual(routed.plan.map((t) => [t.candidate.id, t.maxOutputTokens]), full.plan.map((t) => [t.candidate.id, t.maxOutputTokens]), label);
      assert.deepEqual(routed.excludedBy, full.excludedBy, label);
      const byId = new Map(full.ranked.map((r) => [r.id, r]));
      for (const r of routed.ranked) {
        const g = byId.get(r.id)!;
        assert.equal(r.q, g.q, `${label} ${r.id} q`);
        assert.equal(r.expectedCostUsd, g.expectedCostUsd, `${label} ${r.id} cost`);
        assert.deepEqual(r.excluded, g.excluded, `${label} ${r.id} exclusion`);
      }
    }
  }
});

test('the candidates a routed decision shows (headers, the record) are the best SHOWN in the full ranking\'s order', async () => {
  await warmTokenizers();
  const { SHOWN } = await import('../src/router/decide.ts');
  // Fourteen more offers, priced apart, so the order past the plan is more than the plan's few.
  const many = routerTestConfig([['pd', Array.from({ length: 14 }, (_, i) => model(`m-${i}`, (0.0000001 * (1 + ((i * 5) % 14))).toFixed(9), (0.0000004 * (1 + ((i * 3) % 14))).toFixed(9)))]]);
  const shownIncluded = (over: Partial<DecideInput>, body: Record<string, unknown>) =>
    decide(decideInput(many, body, over)).ranked.filter((r) => !r.excluded).slice(0, SHOWN).map((r) => [r.id, r.utility]);
  for (const body of [{}, { willingness_to_pay: 0.001 }, { willingness_to_pay: 1 }, { max_cost_per_million_tokens: 3 }]) {
    const full = shownIncluded({ fullRanking: true }, body);
    assert.equal(full.length, SHOWN);
    assert.deepEqual(shownIncluded({}, body), full, JSON.stringify(body));
  }
});

test('recorded decisions encoded for the worker decode to recordedDecision (rounded) and the features given', async () => {
  const { RowEncoder, readChunk } = await import('../src/router/decision-row.ts');
  const { recordedDecision, roundRecorded } = await import('../src/router/explain.ts');
  const attempts = [{ provider: 'pa', model: 'gpt-4o', status: 503, latencyMs: 12, error: 'upstream 503' }] as never;
  const policy = compilePolicies({ p: [{ exclude: { '==': [{ var: 'candidate.provider' }, 'pc'] } }] }).get('p')!;
  const enc = new RowEncoder();
  const want: unknown[] = [];
  let k = 0;
  for (const [body, over] of [[{}, {}], [{ max_cost: 0.00001 }, { policy }], [{ willingness_to_pay: 0.01 }, { quality: learnedState() }], [{ max_cost: 1e-12 }, {}]] as Array<[Record<string, unknown>, Partial<DecideInput>]>) {
    for (const fullRanking of [false, true]) {
      const inp = input(body, { ...over, fullRanking });
      const d = decide(inp);
      for (const keep of [10, Number.POSITIVE_INFINITY, 0]) {
        const head = { inferenceId: `id-${k++}`, createdAt: new Date(k).toISOString(), keyId: k % 2 ? 'key' : null, servedModel: 'pa/gpt-4o', canonical: null, kind: inp.view.features.kind, status: k % 3 ? 200 : 502, costUsd: k % 3 ? `0.${k}000000000000000001` : '0' };
        enc.add(head, inp.view.features, d, attempts, keep);
        want.push({ ...head, features: inp.view.features, decision: roundRecorded(recordedDecision(d, attempts, keep)) });
      }
    }
  }
  const chunk = enc.seal();
  assert.equal(chunk.rows, want.length);
  const got = readChunk(structuredClone(chunk)).map((r) => ({ inferenceId: r.inferenceId, createdAt: r.createdAt, keyId: r.keyId, servedModel: r.servedModel,
    canonical: r.canonical, kind: r.kind, status: r.status, costUsd: r.costUsd, features: JSON.parse(r.features), decision: JSON.parse(r.decision) }));
  assert.deepEqual(got, want);
});

test('decision writer: rows are written in chunks off the request, a failed chunk is kept and retried, past the bound the oldest chunk is dropped and counted', async () => {
  const { DecisionWriter } = await import('../src/router/decision-writer.ts');
  const { readChunk } = await import('../src/router/decision-row.ts');
  const inp = input({});
  const d = decide(inp);
  const written: string[] = [];
  let fail = true;
  const w = new DecisionWriter(async (c) => { if (fail) throw new Error('store down'); written.push(...readChunk(c).map((r) => r.inferenceId)); }, { flushMs: 3_600_000, maxQueue: 1200, onError: () => {} });
  const add = (i: number) => w.enqueue({ inferenceId: `r${i}`, createdAt: new Date(0).toISOString(), keyId: null, servedModel: null, canonical: null, kind: 'chat', status: 200, costUsd: '0' }, inp.view.features, d, [], 10);
  for (let i = 0; i < 10; i++) add(i);
  await w.flush();
  assert.equal(written.length, 0);
  assert.equal(w.pending, 10, 'the failed chunk is kept');
  fail = false;
  await w.flush();
  assert.deepEqual(written, Array.from({ length: 10 }, (_, i) => `r${i}`));
  fail = true;
  for (let i = 10; i < 1710; i++) add(i);
  assert.equal(w.dropped, 500, 'one chunk of 500 (the oldest) went past the bound of 1200');
  assert.equal(w.pending, 1200);
  fail = false;
  await w.close();
  assert.equal(written.length, 10 + 1200);
  assert.equal(written[10], 'r510', 'the oldest rows were the ones dropped');
});

test('decision writer: a written chunk\'s buffers take later rows (no new memory per chunk), a failed chunk\'s are kept for its retry, and every row reads back as written', async () => {
  const { DecisionWriter } = await import('../src/router/decision-writer.ts');
  const { readChunk } = await import('../src/router/decision-row.ts');
  const inp = input({});
  const d = decide(inp);
  const written: string[] = [];
  const buffers: ArrayBufferLike[] = [];
  let fail = false;
  const w = new DecisionWriter(async (c) => {
    buffers.push(c.json.buffer, c.nums.buffer);
    if (fail) throw new Error('store down');
    written.push(...readChunk(c).map((r) => r.inferenceId));
  }, { flushMs: 3_600_000, onError: () => {} });
  const add = (i: number) => w.enqueue({ inferenceId: `r${i}`, createdAt: new Date(0).toISOString(), keyId: null, servedModel: null, canonical: null, kind: 'chat', status: 200, costUsd: '0' }, inp.view.features, d, [], 10);
  // A chunk is sealed at its 500th row, and the next encoder opened then: the first chunk written
  // (A) gives its memory to the encoder opened after it, which holds the third chunk.
  for (let i = 0; i < 500; i++) add(i);
  await w.flush();
  for (let i = 500; i < 1000; i++) add(i);
  await w.flush();
  fail = true; // the third chunk's write fails: kept with its rows for the retry
  for (let i = 1000; i < 1500; i++) add(i);
  await w.flush();
  assert.equal(buffers[4], buffers[0], 'the third chunk\'s text went into the first chunk\'s buffer');
  assert.equal(buffers[5], buffers[1], 'and its numbers');
  fail = false;
  for (let i = 1500; i < 2000; i++) add(i);
  assert.equal(w.pending, 1000);
  await w.flush();
  assert.equal(buffers[6], buffers[0], 'the retry sent the failed chunk as it was');
  assert.notEqual(buffers[8], buffers[0], 'the rows encoded after the failure went elsewhere');
  assert.deepEqual(written, Array.from({ length: 2000 }, (_, i) => `r${i}`), 'every row read back as written, the retried ones too');
  await w.close();
});

test("a policy's constraint names and reasons are made once per compiled policy: a reload's new policy shows its own", () => {
  const compile = (name: string, action: 'exclude' | 'require') => compilePolicies({ p: [{ name, [action]: { '==': [{ var: 'candidate.provider' }, action === 'exclude' ? 'pc' : 'pa'] } }] }).get('p')!;
  const shown = (policy: ReturnType<typeof compile>) => {
    const d = decide(input({}, { policy }));
    const excluded = d.ranked.filter((r) => r.excluded);
    assert.ok(excluded.length > 0);
    return { by: Object.keys(d.excludedBy), reasons: [...new Set(excluded.map((r) => `${r.excluded!.constraint}: ${r.excluded!.reason}`))] };
  };
  const before = compile('no-pc', 'exclude');
  assert.deepEqual(shown(before), { by: ['policy:no-pc'], reasons: ['policy:no-pc: excluded by policy rule no-pc'] });
  assert.deepEqual(shown(before), { by: ['policy:no-pc'], reasons: ['policy:no-pc: excluded by policy rule no-pc'] }, 'the same from the memo');
  // The same rule index in the policy compiled by a reload, renamed and turned into a requirement.
  assert.deepEqual(shown(compile('only-pa', 'require')), { by: ['policy:only-pa'], reasons: ['policy:only-pa: fails required policy rule only-pa'] });
  assert.deepEqual(shown(before), { by: ['policy:no-pc'], reasons: ['policy:no-pc: excluded by policy rule no-pc'] }, 'the old policy keeps its own');
});

test('remembered models lists are bounded in bytes, not only in count, and still resolve past the bound', () => {
  const c = routerTestConfig();
  const s = candidateSet(c);
  const ids = s.all.map((x) => x.id);
  // 600 different valid lists of 401 to 1,000 names (params allows 1,000): ~12 MB of keys unbounded.
  let peak = 0;
  for (let i = 0; i < 600; i++) {
    const names = Array.from({ length: 1000 - i }, (_, j) => ids[(i + j) % ids.length]!);
    const idx = resolveIndices(c, s, names);
    assert.equal(idx.length, Math.min(ids.length, names.length));
    peak = Math.max(peak, s.listBytes);
  }
  assert.ok(peak <= 4 * 1024 * 1024, `lists held ${peak} bytes`);
  let held = 0;
  for (const [k, v] of s.lists) held += k.length + v.byteLength;
  assert.equal(held, s.listBytes);
});
