// Router mode end to end with the mock upstreams: the request surface and its 400s, the dry run,
// constraints alone and combined, hard max_cost under fallbacks and streaming (recorded cost checked),
// capabilities, policies per key, an outage, a model joining on reload, feedback moving decisions,
// affinity, both routes, the legacy prefix and the official SDKs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockOpenAI, startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway, type TestProvider } from './helpers/gateway.ts';

type Rec = Record<string, unknown>;
let a: MockUpstream; let b: MockUpstream; let c: MockUpstream; let gw: TestGateway;
const LONG = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ');
const caps = (o: Rec = {}) => ({ tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false, ...o });
let providers: TestProvider[];

before(async () => {
  // The "long" prompt makes every mock answer with 3000 words: max_tokens is what limits the bill.
  const reply = (t: string) => (t.includes('LONG') ? LONG : `Echo: ${t.slice(0, 40)}`);
  a = await startMockOpenAI({ reply });
  b = await startMockAnthropic({ reply });
  c = await startMockOpenAI({ reply });
  providers = [
    { id: 'cheap', format: 'openai-chat', base_url: a.url, models: [
      { name: 'small-1', pricing: { prompt: '0.0000001', completion: '0.0000002' }, capabilities: caps(), context_window: 16000, max_completion_tokens: 4000 },
      { name: 'mid-1', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: caps({ tools: true }), context_window: 64000, max_completion_tokens: 8000 },
    ] },
    { id: 'pricey', format: 'anthropic-messages', base_url: b.url, models: [
      { name: 'big-1', pricing: { prompt: '0.00001', completion: '0.00005' }, capabilities: caps({ tools: true, vision: true, structured_output: true, prompt_caching: true }), context_window: 200000, max_completion_tokens: 8000 },
    ] },
    { id: 'alt', format: 'openai-chat', base_url: c.url, models: [
      { name: 'mid-1', pricing: { prompt: '0.0000012', completion: '0.0000024' }, capabilities: caps({ tools: true }), context_window: 64000, max_completion_tokens: 8000 },
    ] },
  ];
  gw = await startTestGateway({
    providers,
    gateway: {
      reload: { watch: false },
      upstream: { max_attempts: 3, retry_budget_floor: 1000, ejection: { consecutive_failures: 1, base_ms: 400, max_ms: 400 } },
      router: {
        exploration: { share: 0 },
        quality_signals: [{ metric: 'good', optimize: 'max' }],
        learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000, feedback_settle_ms: 0 },
        policies: {
          no_pricey: [{ exclude: { '==': [{ var: 'candidate.provider' }, 'pricey'] } }],
          tools_only: [{ require: { '==': [{ var: 'candidate.capabilities.tools' }, true] } }],
          like_alt: [{ prefer: { '==': [{ var: 'candidate.provider' }, 'alt'] }, weight: 1 }],
        },
        key_policies: {},
      },
    },
  });
});
after(async () => { await gw?.stop(); await a?.close(); await b?.close(); await c?.close(); });

const chat = (body: Rec, path = '/v1/chat/completions', headers: Rec = {}) => fetch(gw.url + path, {
  method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'Hello there' }], ...body }),
});
const rank = async (body: Rec, q = ''): Promise<Rec> => {
  const r = await fetch(`${gw.url}/v1/router/rank${q}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'Hello there' }], ...body }) });
  assert.equal(r.status, 200, await r.clone().text());
  return await r.json() as Rec;
};
const cands = (r: Rec) => r.candidates as Array<Rec & { id: string; excluded?: { constraint: string } }>;

test('router fields are validated: 400 naming the field, in the route envelope', async () => {
  for (const [body, param] of [[{ models: 'x' }, 'models'], [{ models: [] }, 'models'], [{ max_cost: -1 }, 'max_cost'], [{ max_cost: 'a' }, 'max_cost'],
    [{ willingness_to_pay: -0.1 }, 'willingness_to_pay'], [{ max_cost_per_million_tokens: 0 }, 'max_cost_per_million_tokens'], [{ extra: [1] }, 'extra'],
    [{ models: ['nope/none'] }, 'models[0]'], [{ models: ['small-1', 5] }, 'models[1]']] as const) {
    const r = await chat(body as Rec);
    assert.equal(r.status, 400);
    const j = await r.json() as { error: { param: string; message: string } };
    assert.equal(j.error.param, param, JSON.stringify(j));
  }
  // A number JSON.parse reads as Infinity: out of range, said so.
  const huge = await fetch(gw.url + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"router","willingness_to_pay":1e400,"messages":[{"role":"user","content":"hi"}]}' });
  assert.equal(huge.status, 400);
  const hj = await huge.json() as { error: { param: string; message: string } };
  assert.equal(hj.error.param, 'willingness_to_pay');
  assert.match(hj.error.message, /must be a finite number \(USD\); Infinity is out of range/);
  const m = await fetch(gw.url + '/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', max_tokens: 50, max_cost: -2, messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(m.status, 400);
  const mj = await m.json() as Rec;
  assert.equal(mj.type, 'error');
  assert.match(String((mj.error as Rec).message), /max_cost/);
  assert.equal(a.requests.length + b.requests.length + c.requests.length, 0, 'no upstream call for a bad request');
});

test('dry run ranks every candidate with estimates and calls no model; W trades quality for cost', async () => {
  const before = a.requests.length + b.requests.length + c.requests.length;
  const best = await rank({});
  assert.equal(cands(best).length, 4);
  const included = cands(best).filter((x) => !x.excluded);
  const qs = included.map((x) => x.quality as number);
  assert.equal(best.model, included[0]!.id);
  assert.equal(qs[0], Math.max(...qs), 'W absent: best predicted quality first');
  for (const x of cands(best)) assert.ok((x.expected_cost_usd as number) > 0 && (x.input_tokens as number) > 0);
  const cheap = await rank({ willingness_to_pay: 1e-9 });
  assert.equal(cheap.model, 'cheap/small-1', 'W near 0: the cheapest candidate');
  for (const x of cands(cheap)) assert.ok(x.excluded || Math.abs((x.utility as number) - (1e-8 * (x.quality as number) - (x.expected_cost_usd as number))) <= 1e-5 * Math.abs(x.utility as number));
  assert.equal(a.requests.length + b.requests.length + c.requests.length, before);
});

test('a bare name routes over every provider serving it; constraints exclude with reasons', async () => {
  const r = await rank({ models: ['mid-1'] });
  assert.deepEqual(cands(r).map((x) => x.id).sort(), ['alt/mid-1', 'cheap/mid-1']);
  const tools = await rank({ tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] });
  assert.equal(cands(tools).find((x) => x.id === 'cheap/small-1')!.excluded!.constraint, 'capability:tools');
  const perM = await rank({ max_cost_per_million_tokens: 1 });
  assert.equal(cands(perM).find((x) => x.id === 'pricey/big-1')!.excluded!.constraint, 'max_cost_per_million_tokens');
  assert.ok(!cands(perM).find((x) => x.id === 'cheap/small-1')!.excluded);
  // Combined: tools needed and at most $1/M leaves the two mid-1 offers.
  const both = await rank({ max_cost_per_million_tokens: 5, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] });
  assert.deepEqual(cands(both).filter((x) => !x.excluded).map((x) => x.id).sort(), ['alt/mid-1', 'cheap/mid-1']);
});

test('nothing qualifies: 400 listing each constraint and what it excluded', async () => {
  const r = await chat({ max_cost: 1e-12, max_cost_per_million_tokens: 0.5 });
  assert.equal(r.status, 400);
  const j = await r.json() as { error: { code: string; message: string } };
  assert.equal(j.error.code, 'no_route');
  assert.match(j.error.message, /max_cost_per_million_tokens excluded \d/);
  assert.match(j.error.message, /max_cost excluded \d/);
  assert.match(j.error.message, /pricey\/big-1/);
  assert.ok(r.headers.get('x-router-excluded'));
});

test('count_tokens with model "router": counted for the model the router would choose; its 400s in the Anthropic envelope', async () => {
  const count = (body: Rec) => fetch(`${gw.url}/v1/messages/count_tokens`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'Hello there' }], ...body }),
  });
  // An OpenAI-format choice: counted by the gateway, for the model the dry run ranks first.
  const cheap = await count({ models: ['small-1', 'mid-1'] });
  assert.equal(cheap.status, 200, await cheap.clone().text());
  const ranked = await rank({ models: ['small-1', 'mid-1'], max_tokens: 100 }, '?format=messages');
  assert.equal(cheap.headers.get('x-router-model'), ranked.model);
  assert.match(String(cheap.headers.get('x-gateway-token-count')), /^(exact:|estimate)/);
  assert.ok(((await cheap.json()) as { input_tokens: number }).input_tokens > 0);
  // An Anthropic-format choice: the provider's own count_tokens answers.
  b.reset();
  const pricey = await count({ models: ['big-1'] });
  assert.equal(pricey.status, 200);
  assert.equal(pricey.headers.get('x-router-model'), 'pricey/big-1');
  assert.equal(pricey.headers.get('x-gateway-token-count'), 'provider');
  assert.equal(b.requests.at(-1)!.path, '/v1/messages/count_tokens');
  assert.equal((b.requests.at(-1)!.body as Rec).model, 'big-1');
  assert.equal((b.requests.at(-1)!.body as Rec).models, undefined, 'router fields stay in the gateway');
  // Nothing qualifies: the router's 400, in the Anthropic envelope.
  const none = await count({ max_cost: 1e-12 });
  assert.equal(none.status, 400);
  const e = (await none.json()) as { type: string; error: { type: string; message: string } };
  assert.equal(e.type, 'error');
  assert.match(e.error.message, /max_cost excluded/);
});

test('routed answer: model is the chosen provider/model, headers explain it; legacy prefix and messages too', async () => {
  const r = await chat({ willingness_to_pay: 1e-9 });
  assert.equal(r.status, 200);
  const j = await r.json() as Rec;
  assert.equal(j.model, 'cheap/small-1');
  assert.equal(r.headers.get('x-router-model'), 'cheap/small-1');
  assert.ok(r.headers.get('x-router-decision-id'));
  assert.ok(Number(r.headers.get('x-router-quality')) > 0);
  assert.ok(Number(r.headers.get('x-router-cost')) > 0);
  const legacy = await chat({ willingness_to_pay: 1e-9 }, '/api/openai/v1/chat/completions');
  assert.equal(legacy.status, 200);
  assert.equal((await legacy.json() as Rec).model, 'cheap/small-1');
  const m = await fetch(gw.url + '/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', models: ['big-1'], max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(m.status, 200);
  const text = await m.text();
  assert.match(text, /"model":"pricey\/big-1"/);
  assert.match(text, /message_stop/);
});

async function recordedCost(id: string): Promise<number> {
  await new Promise((r) => setTimeout(r, 150));
  const rows = await gw.services.store!.sql.all('SELECT cost_usd, output_tokens FROM inferences WHERE id = ?', [id]);
  assert.equal(rows.length, 1);
  return Number(rows[0]!.cost_usd);
}

test('max_cost is hard: the worst case (the model would write 3000 words) stays within it, streamed or not, fallback included', async () => {
  const maxCost = 0.0005; // big-1: 50 output tokens at most after the prompt
  for (const stream of [false, true]) {
    const r = await chat({ models: ['big-1'], max_cost: maxCost, stream, messages: [{ role: 'user', content: 'LONG answer please' }] });
    assert.equal(r.status, 200);
    const cap = Number(r.headers.get('x-router-max-output-tokens'));
    assert.ok(cap > 0 && cap < 3000, `cap ${cap}`);
    const id = r.headers.get('x-inference-id')!;
    await r.text();
    const cost = await recordedCost(id);
    assert.ok(cost > 0 && cost <= maxCost, `recorded ${cost} <= ${maxCost}`);
  }
  // Fallback: the first target fails (503), the second is capped by its own prices.
  a.fault({ status: 503 });
  const r = await chat({ models: ['mid-1'], max_cost: 0.00005, messages: [{ role: 'user', content: 'LONG please' }] });
  assert.equal(r.status, 200);
  const id = r.headers.get('x-inference-id')!;
  const j = await r.json() as { model: string; usage: { completion_tokens: number } };
  assert.equal(j.model, 'alt/mid-1');
  assert.ok((await recordedCost(id)) <= 0.00005);
  await new Promise((res) => setTimeout(res, 450)); // ejection of "cheap" ends
});

// A cost bound on a named model holds as in router mode (the model the only candidate); without one,
// the named request is untouched. Before, max_cost on a named model was dropped as a router-only field.
test('max_cost on a named model: output capped under it (streamed or not, both routes), refused when even a token would pass it', async () => {
  const maxCost = 0.0005;
  for (const [path, stream] of [['/v1/chat/completions', false], ['/v1/chat/completions', true], ['/v1/messages', false]] as const) {
    const r = await fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'pricey/big-1', max_tokens: 8000, max_cost: maxCost, stream, messages: [{ role: 'user', content: 'LONG answer please' }] }) });
    assert.equal(r.status, 200, path);
    assert.equal(r.headers.get('x-router-model'), 'pricey/big-1');
    const cap = Number(r.headers.get('x-router-max-output-tokens'));
    assert.ok(cap > 0 && cap < 3000, `cap ${cap}`);
    const id = r.headers.get('x-inference-id')!;
    await r.text();
    const cost = await recordedCost(id);
    assert.ok(cost > 0 && cost <= maxCost, `${path} stream=${stream}: recorded ${cost} <= ${maxCost}`);
    const rec = (await gw.services.store!.listInferences({ limit: 50 })).find((x) => x.id === id)!;
    assert.equal(rec.requestedModel, 'pricey/big-1', 'the record keeps the model the client named');
  }
  const tiny = await fetch(gw.url + '/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'pricey/big-1', max_tokens: 100, max_cost: 1e-9, messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(tiny.status, 400);
  const tj = await tiny.json() as { type: string; error: { message: string } };
  assert.equal(tj.type, 'error', 'in the messages envelope');
  assert.match(tj.error.message, /max_cost excluded 1: pricey\/big-1/);
  // The 400 points at the dry run, which ranks the same body the same way.
  const dry = await rank({ model: 'pricey/big-1', max_cost: 1e-9 });
  assert.deepEqual([dry.model, (cands(dry)[0]!.excluded as { constraint: string }).constraint, cands(dry).length], [null, 'max_cost', 1]);
  assert.equal((await rank({ model: 'pricey/big-1', max_cost: maxCost })).model, 'pricey/big-1');
  const unbounded = await fetch(`${gw.url}/v1/router/rank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'pricey/big-1', messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(unbounded.status, 400);
  const plain = await fetch(gw.url + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'pricey/big-1', messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(plain.status, 200);
  assert.equal(plain.headers.get('x-router-decision-id'), null, 'no bound: not routed');
  await plain.text();
});

test('outage: a provider answering 503 costs one attempt, traffic moves, and comes back after recovery', async () => {
  await new Promise((res) => setTimeout(res, 450));
  a.fault([{ status: 503 }, { status: 503 }, { status: 503 }]);
  const aBefore = a.requests.length;
  const r1 = await chat({ models: ['small-1', 'mid-1'], willingness_to_pay: 1e-9 });
  assert.equal(r1.status, 200);
  assert.equal((await r1.json() as Rec).model, 'alt/mid-1', 'moved off the failing provider within one attempt');
  assert.equal(a.requests.length - aBefore, 1, 'one failed attempt on the down provider (its second model skipped)');
  // While ejected it is not tried first.
  const r2 = await chat({ models: ['small-1', 'mid-1'], willingness_to_pay: 1e-9 });
  assert.equal((await r2.json() as Rec).model, 'alt/mid-1');
  assert.equal(a.requests.length - aBefore, 1);
  await new Promise((res) => setTimeout(res, 500));
  a.reset?.();
  const r3 = await chat({ models: ['small-1', 'mid-1'], willingness_to_pay: 1e-9 });
  assert.equal((await r3.json() as Rec).model, 'cheap/small-1', 'back after recovery');
});

test('policies: exclude, require, prefer, selected per key name; unknown variables fail the config at load', async () => {
  const cfgPath = gw.configFile;
  const doc = parse(readFileSync(cfgPath, 'utf8')) as Rec;
  const setPolicy = async (p: string | null) => {
    (doc.router as Rec).default_policy = p ?? undefined;
    if (p === null) delete (doc.router as Rec).default_policy;
    writeFileSync(cfgPath, stringify(doc));
    const res = await gw.services.holder.reload();
    assert.ok(res.ok, JSON.stringify(res));
  };
  await setPolicy('no_pricey');
  assert.equal(cands(await rank({})).find((x) => x.id === 'pricey/big-1')!.excluded!.constraint, 'policy:no_pricey[0]');
  await setPolicy('tools_only');
  assert.equal(cands(await rank({})).find((x) => x.id === 'cheap/small-1')!.excluded!.constraint, 'policy:tools_only[0]');
  await setPolicy('like_alt');
  assert.equal((await rank({ models: ['mid-1'] })).model, 'alt/mid-1');
  await setPolicy(null);
  const bad = structuredClone(doc);
  (bad.router as Rec).policies = { x: [{ exclude: { '==': [{ var: 'candidate.pricee' }, 1] } }], y: [{ prefer: { frobnicate: [1] } }] };
  writeFileSync(cfgPath, stringify(bad));
  const res = await gw.services.holder.reload();
  assert.equal(res.ok, false);
  assert.match((res as { error: string }).error, /gateway\.yaml at \/router\/policies\/x\/0\/exclude: .*unknown variable "candidate\.pricee"/);
  assert.match((res as { error: string }).error, /\/router\/policies\/y\/0\/prefer: .*unknown json-logic operation "frobnicate"/);
  writeFileSync(cfgPath, stringify(doc));
  assert.ok((await gw.services.holder.reload()).ok);
});

test('router.record_candidates applies on reload: 0 stores no candidate lists (the chosen model, plan and counts stay), the default lists them', async () => {
  const cfgPath = gw.configFile;
  const doc = parse(readFileSync(cfgPath, 'utf8')) as Rec;
  const stored = async (v: number | undefined): Promise<Rec> => {
    if (v === undefined) delete (doc.router as Rec).record_candidates; else (doc.router as Rec).record_candidates = v;
    writeFileSync(cfgPath, stringify(doc));
    assert.ok((await gw.services.holder.reload()).ok);
    const r = await chat({ max_cost: 0.0001 });
    assert.equal(r.status, 200, await r.clone().text());
    await r.text();
    await gw.services.router!.flush();
    const rows = await gw.services.store!.sql.all('SELECT decision FROM router_decisions WHERE inference_id = ?', [r.headers.get('x-router-decision-id')]);
    return JSON.parse(String(rows[0]!.decision)) as Rec;
  };
  const none = await stored(0);
  assert.deepEqual([none.included, none.excluded], [[], {}]);
  assert.ok(Number((none.excluded_by as Rec).max_cost) > 0, JSON.stringify(none));
  assert.ok(typeof none.chosen === 'string' && (none.plan as unknown[]).length > 0 && (none.attempts as unknown[]).length === 1, JSON.stringify(none));
  const top = await stored(undefined);
  assert.ok((top.included as unknown[]).length > 0 && ((top.excluded as Rec).max_cost as unknown[]).length > 0, JSON.stringify(top));
});

test('a model added to the catalog joins the router on reload', async () => {
  const before = cands(await rank({}));
  assert.ok(!before.some((x) => x.id === 'alt/new-2'));
  const p = providers.find((x) => x.id === 'alt')!;
  gw.writeProvider({ ...p, models: [...p.models!, { name: 'new-2', pricing: { prompt: '0.00000005', completion: '0.0000001' }, capabilities: caps(), context_window: 16000, max_completion_tokens: 4000 }] });
  assert.ok((await gw.services.holder.reload()).ok);
  const after = await rank({ willingness_to_pay: 1e-9 });
  const n = cands(after).find((x) => x.id === 'alt/new-2')!;
  assert.ok(n && !n.excluded);
  assert.equal(n.evidence, 0);
  assert.equal(after.model, 'alt/new-2', 'cheapest at W ~ 0');
});

test('feedback moves decisions: negative feedback on the best model for a prompt kind lowers its q and its share', async () => {
  const router = gw.services.router!;
  const first = await rank({ models: ['small-1', 'mid-1'] });
  const top = first.model as string;
  const topQ = cands(first).find((x) => x.id === top)!.quality as number;
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await chat({ models: [top] });
    assert.equal(r.status, 200);
    ids.push(r.headers.get('x-inference-id')!);
    await r.text();
  }
  await router.flush();
  await new Promise((r) => setTimeout(r, 200));
  const fb = await fetch(gw.url + '/v1/feedback', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ids.map((id) => ({ id, feedback: { good: false } }))) });
  assert.equal(fb.status, 200);
  for (const x of await fb.json() as Rec[]) assert.equal(x.error ?? null, null, JSON.stringify(x));
  await new Promise((r) => setTimeout(r, 200));
  const v0 = router.learning.state.version;
  assert.equal(await router.learning.trainOnce(), true);
  assert.equal(router.learning.state.version, v0 + 1);
  const after = await rank({ models: ['small-1', 'mid-1'] });
  const q2 = cands(after).find((x) => x.id === top)!.quality as number;
  assert.ok(q2 < topQ, `q ${topQ} -> ${q2}`);
  assert.notEqual(after.model, top, 'the other model is chosen now');
  // The state is versioned in the store: a fresh load sees the same version.
  const rows = await gw.services.store!.sql.all('SELECT MAX(version) AS v FROM router_state');
  assert.equal(Number(rows[0]!.v), router.learning.state.version);
});

test('affinity: a follow-up prefers the model whose prompt cache holds the conversation; short prompts and models without caching are not followed', async () => {
  const followUp = async (models: string[], first: string): Promise<{ served: string; follow: Rec }> => {
    const r1 = await chat({ models, messages: [{ role: 'user', content: first }] });
    const served = (await r1.json() as { model: string; choices: Array<{ message: { content: string } }> });
    const follow = await rank({ models, messages: [
      { role: 'user', content: first },
      { role: 'assistant', content: served.choices[0]!.message.content },
      { role: 'user', content: 'and a follow-up' },
    ] });
    return { served: served.model, follow };
  };
  // big-1 caches prompts of 1024+ tokens (the default minimum): a long first turn is followed.
  const long = await followUp(['big-1'], `Please keep this context: ${'the cache holds this prefix '.repeat(300)}`);
  assert.equal(long.served, 'pricey/big-1');
  assert.equal(long.follow.affinity, 'pricey/big-1');
  assert.equal(long.follow.model, 'pricey/big-1');
  const cached = cands(long.follow).find((c) => c.id === 'pricey/big-1')!;
  assert.ok((cached.cached_tokens as number) >= 1024, 'its cached prefix is priced at the cache-read price');
  assert.equal((await followUp(['big-1'], 'a short first question')).follow.affinity, null, 'below the minimum nothing is cached');
  assert.equal((await followUp(['mid-1'], `Please keep this context: ${'no cache here '.repeat(300)}`)).follow.affinity, null, 'mid-1 caches nothing');
});

test('affinity off (router.affinity.enabled false, on reload): answers are not remembered, so nothing is held in memory or shared', async () => {
  const cfgPath = gw.configFile;
  const doc = parse(readFileSync(cfgPath, 'utf8')) as Rec;
  const router = gw.services.router!;
  const longFirst = async (): Promise<void> => {
    const r = await chat({ models: ['big-1'], messages: [{ role: 'user', content: `Please keep this context: ${'a prefix the cache would hold '.repeat(300)} ${Math.random()}` }] });
    assert.equal(r.status, 200);
    await r.text();
  };
  (doc.router as Rec).affinity = { enabled: false };
  writeFileSync(cfgPath, stringify(doc));
  try {
    assert.ok((await gw.services.holder.reload()).ok);
    const before = router.affinity.size;
    await longFirst();
    assert.equal(router.affinity.size, before, 'nothing remembered while affinity is off');
  } finally {
    delete (doc.router as Rec).affinity;
    writeFileSync(cfgPath, stringify(doc));
    assert.ok((await gw.services.holder.reload()).ok);
  }
  const before = router.affinity.size;
  await longFirst();
  assert.equal(router.affinity.size, before + 1, 'remembered again once it is on');
});

test('official SDKs: openai with router fields in the body, anthropic messages', async () => {
  const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-none' });
  const res = await openai.chat.completions.create({ model: 'router', messages: [{ role: 'user', content: 'Hi' }], models: ['small-1', 'big-1'], willingness_to_pay: 1e-9 } as never);
  assert.equal(res.model, 'cheap/small-1');
  const stream = await openai.chat.completions.create({ model: 'router', stream: true, messages: [{ role: 'user', content: 'Hi' }], models: ['mid-1'] } as never) as unknown as AsyncIterable<{ model: string }>;
  let model = '';
  for await (const ch of stream) model = ch.model;
  assert.match(model, /mid-1$/);
  const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-none' });
  const m = await anthropic.messages.create({ model: 'router', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], models: ['big-1'] } as never);
  assert.equal((m as { model: string }).model, 'pricey/big-1');
});

test('measured latency and error rate per provider come from all its traffic, plain requests too', async () => {
  const stats = gw.services.router!.stats;
  const before = stats.errorRate('alt');
  c.fault([{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }]);
  const failed = await fetch(gw.url + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'alt/mid-1', messages: [{ role: 'user', content: 'plain' }] }) });
  await failed.text();
  assert.ok(stats.errorRate('alt') > before, `a plain request's failed attempts count (${before} -> ${stats.errorRate('alt')})`);
  c.reset();
  const ok = await fetch(gw.url + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'alt/mid-1', messages: [{ role: 'user', content: 'plain' }] }) });
  assert.equal(ok.status, 200);
  await ok.text();
  assert.notEqual(stats.latencyMs('alt'), null, 'and its answers give the latency');
});
