// A budgeted key whose remaining budget covers the first target of its plan but not a pricier fallback
// is served with the targets it can afford (src/limits/affordable.ts), not refused: a named model and
// its configured fallback, router mode's plan, and the pass-through /v1/embeddings, with the
// in-process and the Redis limiter. The dropped targets are named in x-gateway-budget-dropped and
// never called; a key with room keeps the whole plan; a key that cannot afford the first target gets
// the 402 it got before; the stored spend never passes a budget.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { acquireAffordable } from '../src/limits/affordable.ts';
import { MemoryLimiter } from '../src/limits/memory.ts';
import { LimitError } from '../src/limits/limiter.ts';
import { getDecision } from '../src/router/store.ts';
import { decisionView } from '../src/dashboard/router-decision.ts';
import type { KeyRecord } from '../src/store/types.ts';

type Rec = Record<string, any>;
const ADMIN = 'budget-affordable-admin-key-0123456789';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
const DROPPED = 'x-gateway-budget-dropped';
// Worst cases at max_tokens 200: cheap/small about $0.0004, pricey/big about $0.02.
const ROOMY = '0.05';
const NEAR = '0.005';
const TINY = '0.0002';
// Embeddings of ~250 tokens: $0.000025 on cheap/emb, $0.0025 on pricey/emb.
const EMB_INPUT = 'word '.repeat(200);
const EMB_ROOMY = '0.01';
const EMB_NEAR = '0.0001';
const EMB_TINY = '0.00001';
const FAIL = [{ status: 503 }, { status: 503 }, { status: 503 }];

for (const backend of ['memory', 'redis'] as const) describe(`a budget serves the plan's affordable targets (${backend} limiter)`, () => {
  let cheap: MockUpstream; let pricey: MockUpstream; let priceyEmb: MockUpstream; let gw: TestGateway;
  const since = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())).toISOString();
  before(async () => {
    cheap = await startMockOpenAI({ reply: () => WORDS });
    pricey = await startMockAnthropic({ reply: () => WORDS });
    priceyEmb = await startMockOpenAI();
    const model = (name: string, prompt: string, completion: string) => ({ name, pricing: { prompt, completion }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 });
    gw = await startTestGateway({
      providers: [
        { id: 'cheap', format: 'openai-chat', base_url: cheap.url, models: [model('small', '0.000001', '0.000002'), model('emb', '0.0000001', '0')] },
        { id: 'pricey', format: 'anthropic-messages', base_url: pricey.url, models: [model('big', '0.00001', '0.0001')] },
        { id: 'priceyemb', format: 'openai-chat', base_url: priceyEmb.url, models: [model('emb', '0.00001', '0')] },
      ],
      gateway: {
        auth: { enabled: true, admin_key: ADMIN },
        fallbacks: { 'cheap/small': ['pricey/big'], 'cheap/emb': ['priceyemb/emb'] },
        upstream: { max_attempts: 3, retry_budget_floor: 1000 },
        router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
        ...(backend === 'redis' ? { storage: { redis_url: REDIS_URL } } : {}),
      },
    });
    assert.equal(gw.services.limiter!.status().backend, backend);
  });
  after(async () => { await gw.stop(); await cheap.close(); await pricey.close(); await priceyEmb.close(); });
  const reset = () => { cheap.reset(); pricey.reset(); priceyEmb.reset(); };

  const key = async (budget: string) => {
    const r = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `budget-${budget}`, budget_usd: budget, budget_period: 'day' }) });
    assert.equal(r.status, 201, await r.clone().text());
    return await r.json() as { id: string; key: string };
  };
  const chat = (k: string, body: Rec) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${k}` },
    body: JSON.stringify({ max_tokens: 200, messages: [{ role: 'user', content: 'count for me' }], ...body }),
  });
  const embed = (k: string) => fetch(`${gw.url}/v1/embeddings`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${k}` }, body: JSON.stringify({ model: 'cheap/emb', input: EMB_INPUT }),
  });
  const recorded = async (id: string): Promise<Rec> => {
    for (let i = 0; i < 100; i++) {
      const rows = await gw.services.store!.sql.all('SELECT * FROM inferences WHERE id = ?', [id]);
      if (rows.length === 1) return rows[0] as Rec;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no record for ${id}`);
  };
  /** Every stored record of the key today: none bills past its budget, and neither does their sum. */
  const withinBudget = async (k: { id: string }, budget: string) => {
    const rows = await gw.services.store!.sql.all('SELECT cost_usd FROM inferences WHERE key_id = ?', [k.id]) as Rec[];
    for (const r of rows) assert.ok(Number(r.cost_usd) <= Number(budget), `a record billed $${r.cost_usd} of a $${budget} budget`);
    const spent = Number(await gw.services.store!.keySpend(k.id, since));
    assert.ok(spent <= Number(budget), `spent $${spent} of a $${budget} budget`);
  };
  const refusedAsBefore = async (r: Response, upTo: string) => {
    const text = await r.text();
    assert.equal(r.status, 402, text);
    assert.equal(r.headers.get(DROPPED), null);
    assert.match((JSON.parse(text) as Rec).error.message, new RegExp(`^Budget exceeded: .* this request may cost up to \\$${upTo.replace('.', '\\.')}`), 'the message names the whole plan\'s worst case, as before');
  };

  for (const mode of ['named', 'router'] as const) {
    // Named: cheap/small with its configured fallback pricey/big. Router: both candidates, cheap/small first.
    const body: Rec = mode === 'named' ? { model: 'cheap/small' } : { model: 'router', models: ['small', 'big'], willingness_to_pay: 1e-9 };
    test(`${mode} model: room for the whole plan keeps it; near the limit the cheap target serves alone, and its failure does not fall back to the dropped one; too little is 402 as before`, async () => {
      reset();
      // Room for everything: the whole plan, the pricier fallback serving when the cheap target fails.
      const roomy = await key(ROOMY);
      cheap.fault({ status: 503 });
      const full = await chat(roomy.key, body);
      const fullText = await full.text();
      assert.equal(full.status, 200, fullText);
      assert.equal(full.headers.get(DROPPED), null, 'nothing dropped');
      assert.equal((JSON.parse(fullText) as Rec).model, 'pricey/big', 'the fallback served');
      if (mode === 'router') assert.equal(full.headers.get('x-router-model'), 'cheap/small');
      await recorded(full.headers.get('x-inference-id')!);
      await withinBudget(roomy, ROOMY);
      reset();

      // Near the limit: served by the cheap target (402 before this change), the pricier one named as dropped.
      const near = await key(NEAR);
      const ok = await chat(near.key, body);
      const okText = await ok.text();
      assert.equal(ok.status, 200, okText);
      assert.equal((JSON.parse(okText) as Rec).model, 'cheap/small');
      assert.equal(ok.headers.get(DROPPED), 'pricey/big');
      if (mode === 'router') assert.equal(ok.headers.get('x-router-model'), 'cheap/small', 'the decision stands');
      const okRec = await recorded(ok.headers.get('x-inference-id')!);
      assert.equal(okRec.served_model, 'cheap/small');
      assert.ok(Number(okRec.cost_usd) > 0);
      // The cheap target failing: its own retries only, never the dropped pricier target; nothing billed.
      cheap.fault(FAIL);
      const failed = await chat(near.key, body);
      const failedText = await failed.text();
      assert.equal(failed.status, 503, failedText);
      assert.equal(failed.headers.get(DROPPED), 'pricey/big');
      assert.equal(pricey.requests.length, 0, 'the dropped target was never called');
      const failedRec = await recorded(failed.headers.get('x-inference-id')!);
      assert.ok(failedRec.attempts.includes('cheap/small') && !failedRec.attempts.includes('pricey/big'), failedRec.attempts);
      assert.equal(Number(failedRec.cost_usd), 0);
      await withinBudget(near, NEAR);
      reset();

      // Too little for the first target: the 402 of before, naming the whole plan's worst case.
      const tiny = await key(TINY);
      await refusedAsBefore(await chat(tiny.key, body), '0.02');
      assert.equal(cheap.requests.length + pricey.requests.length, 0);
      await withinBudget(tiny, TINY);
    });
  }

  test('router mode: a first choice the key cannot afford is dropped too, and the next target it ranked serves (the decision headers name the first)', async () => {
    reset();
    const near = await key(NEAR);
    // A high willingness to pay ranks the pricier model first.
    const r = await chat(near.key, { model: 'router', models: ['small', 'big'], willingness_to_pay: 1000 });
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal(r.headers.get('x-router-model'), 'pricey/big', 'the decision');
    assert.equal(r.headers.get(DROPPED), 'pricey/big');
    assert.equal(((await r.json()) as { model: string }).model, 'cheap/small', 'served by what the key can afford');
    assert.equal(pricey.requests.length, 0);
    // The recorded decision says what the budget left out (and the dashboard's request detail shows it).
    await gw.services.router!.flush();
    const stored = await getDecision(gw.services.store!.sql, r.headers.get('x-inference-id')!);
    assert.deepEqual((stored!.decision as Rec).budget_dropped, ['pricey/big']);
    assert.deepEqual(decisionView(stored!.decision).budget_dropped, ['pricey/big']);
    // Only the pricier model allowed: nothing affordable is left, the 402 as before.
    const only = await chat(near.key, { model: 'router', models: ['big'], willingness_to_pay: 1000 });
    await refusedAsBefore(only, '0.02');
    // Operators see the trimmed requests by mode.
    const m = await (await fetch(`${gw.url}/metrics`)).text();
    assert.ok(Number(/gateway_budget_trimmed_total\{mode="router"\} (\d+)/.exec(m)?.[1] ?? 0) >= 1, m.split('\n').filter((l) => l.includes('budget_trimmed')).join('\n'));
    // The same key is served when the cheap model is the decision (402 before this change).
    const ok = await chat(near.key, { model: 'router', models: ['small', 'big'], willingness_to_pay: 1e-9 });
    assert.equal(ok.status, 200, await ok.text());
    assert.equal(ok.headers.get(DROPPED), 'pricey/big');
    assert.equal(pricey.requests.length, 0);
    await withinBudget(near, NEAR);
  });

  test('/v1/embeddings: room keeps the fallback; near the limit the cheap model serves alone and its failure is not passed to the dropped one; too little is 402 as before', async () => {
    reset();
    const roomy = await key(EMB_ROOMY);
    cheap.fault({ status: 503 });
    const full = await embed(roomy.key);
    assert.equal(full.status, 200, await full.text());
    assert.equal(full.headers.get(DROPPED), null);
    assert.equal(priceyEmb.requests.length, 1, 'the fallback served');
    reset();

    const near = await key(EMB_NEAR);
    const ok = await embed(near.key);
    const okText = await ok.text();
    assert.equal(ok.status, 200, okText.slice(0, 300));
    assert.equal(ok.headers.get(DROPPED), 'priceyemb/emb');
    const okRec = await recorded(ok.headers.get('x-inference-id')!);
    assert.equal(okRec.served_model, 'cheap/emb');
    assert.ok(Number(okRec.cost_usd) > 0);
    cheap.fault(FAIL);
    const failed = await embed(near.key);
    const failedText = await failed.text();
    assert.equal(failed.status, 503, failedText);
    assert.equal(typeof (JSON.parse(failedText) as Rec).error.message, 'string', 'in the OpenAI envelope');
    assert.equal(priceyEmb.requests.length, 0, 'the dropped target was never called');
    assert.equal(Number((await recorded(failed.headers.get('x-inference-id')!)).cost_usd), 0);
    await withinBudget(near, EMB_NEAR);
    reset();

    const tiny = await key(EMB_TINY);
    await refusedAsBefore(await embed(tiny.key), '0.0025');
    await withinBudget(tiny, EMB_TINY);
  });

  test('near the limit under concurrency: every request reserves what it may spend, none passes the budget', async () => {
    reset();
    // Room for about a dozen cheap reservations ($0.0004 each), never one pricey one.
    const near = await key(NEAR);
    const answers = await Promise.all(Array.from({ length: 20 }, () => chat(near.key, { model: 'cheap/small' })));
    const statuses = await Promise.all(answers.map(async (r) => { await r.text(); return r.status; }));
    assert.ok(statuses.every((s) => s === 200 || s === 402), String(statuses));
    assert.ok(statuses.filter((s) => s === 200).length >= 10, `${statuses}: the cheap target served most`);
    assert.equal(pricey.requests.length, 0);
    for (const r of answers) if (r.status === 200) assert.equal(r.headers.get(DROPPED), 'pricey/big');
    await Promise.all(answers.map((r) => recorded(r.headers.get('x-inference-id')!)));
    await withinBudget(near, NEAR);
  });
});

// ---- acquireAffordable over the in-process limiter ----

const budgeted = (budgetUsd: string, more: Partial<KeyRecord> = {}): KeyRecord => ({
  id: `k-${Math.random()}`, name: 'k', prefix: 'x', hash: 'h', createdAt: new Date().toISOString(), revokedAt: null, expiresAt: null,
  allowedModels: null, rpmLimit: null, tpmLimit: null, budgetUsd, budgetPeriod: 'day', ...more,
} as KeyRecord);

test('acquireAffordable: one acquire when the plan fits; else drops the dearest price level at a time, keeping order and the first target', () => {
  const limiter = new MemoryLimiter();
  const cost: Record<string, string> = { a: '0.001', b: '0.05', c: '0.002', d: '0.01', e: '0.0005' };
  let acquires = 0;
  const estimateOf = (p: readonly string[]) => {
    acquires++;
    return { tokens: 1, costUsd: p.map((t) => cost[t]!).reduce((x, y) => (Number(x) >= Number(y) ? x : y)) };
  };
  const plan = ['a', 'b', 'c', 'd', 'e'];
  const all = acquireAffordable(limiter, budgeted('1'), plan, estimateOf);
  assert.ok(!(all instanceof Promise));
  assert.deepEqual([all.kept, all.dropped, acquires], [plan, [], 1], 'the normal path: one estimate, one acquire');
  acquires = 0;
  const some = acquireAffordable(limiter, budgeted('0.005'), plan, estimateOf);
  assert.ok(!(some instanceof Promise));
  assert.deepEqual([some.kept, some.dropped], [['a', 'c', 'e'], ['b', 'd']]);
  acquires = 0;
  const first = acquireAffordable(limiter, budgeted('0.0012'), plan, estimateOf);
  assert.ok(!(first instanceof Promise));
  assert.deepEqual(first.kept, ['a', 'e'], 'targets no dearer than the first stay with it');
  // Too little for the first target: the first refusal (the whole plan's cost), after at most one try per price level.
  const tries: string[][] = [];
  assert.throws(() => acquireAffordable(limiter, budgeted('0.0009'), plan, (p) => { tries.push([...p]); return estimateOf(p); }),
    (e: unknown) => e instanceof LimitError && e.reason === 'budget' && /may cost up to \$0\.05\b/.test(e.message));
  assert.deepEqual(tries.filter((p) => p.length > 1 || p.length === plan.length), [plan, ['a', 'c', 'd', 'e'], ['a', 'c', 'e'], ['a', 'e']]);
  // A plan whose first target is its dearest: nothing to drop, one try.
  tries.length = 0;
  assert.throws(() => acquireAffordable(limiter, budgeted('0.01'), ['b', 'a'], (p) => { tries.push([...p]); return estimateOf(p); }), /Budget exceeded/);
  assert.deepEqual(tries.filter((p) => p.length === 2), [['b', 'a']]);
  // Router mode (keepFirst false): the first target goes too when it is dearer than what the key can afford.
  const routed = acquireAffordable(limiter, budgeted('0.0009'), plan, estimateOf, false);
  assert.ok(!(routed instanceof Promise));
  assert.deepEqual([routed.kept, routed.dropped], [['e'], ['a', 'b', 'c', 'd']]);
  const routedFirst = acquireAffordable(limiter, budgeted('0.01'), ['b', 'a'], estimateOf, false);
  assert.ok(!(routedFirst instanceof Promise));
  assert.deepEqual(routedFirst.kept, ['a']);
  assert.throws(() => acquireAffordable(limiter, budgeted('0.0001'), plan, estimateOf, false), /may cost up to \$0\.05\b/, 'nothing affordable: the first refusal');
});

test('acquireAffordable: an rpm or tpm refusal is not retried', async () => {
  const limiter = new MemoryLimiter();
  const k = budgeted('0.005', { rpmLimit: 1 });
  const estimateOf = (p: readonly string[]) => ({ tokens: 1, costUsd: p.includes('b') ? '0.05' : '0.001' });
  const got = acquireAffordable(limiter, k, ['a', 'b'], estimateOf);
  assert.deepEqual((got as { kept: readonly string[] }).kept, ['a']);
  let tries = 0;
  assert.throws(() => acquireAffordable(limiter, k, ['a', 'b'], (p) => { tries++; return estimateOf(p); }), (e: unknown) => e instanceof LimitError && e.reason === 'rpm');
  assert.equal(tries, 1);
  // The async path (a limiter without acquireSync) behaves the same.
  const asyncOnly = { acquire: (key: KeyRecord, est: { tokens: number; costUsd: string }) => limiter.acquire(key, est) } as unknown as MemoryLimiter;
  const a = await acquireAffordable(asyncOnly, budgeted('0.005'), ['a', 'b'], estimateOf);
  assert.deepEqual([a.kept, a.dropped], [['a'], ['b']]);
});
