// Router mode at /metrics: routed requests by the model chosen and why (utility, explored, affinity),
// refusals by the constraint that excluded candidates, the decision-time histogram, the learned
// state version and training passes by result, and the decisions waiting to be recorded (or dropped),
// also in /health. The dry run and count_tokens move none of them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyStored } from '../src/router/learning.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, unknown>;
let up: MockUpstream; let gw: TestGateway;
const caps = (caching: boolean) => ({ tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: caching });

before(async () => {
  up = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'p', format: 'openai-chat', base_url: up.url, models: [
      { name: 'big', pricing: { prompt: '0.00001', completion: '0.00002' }, capabilities: caps(true), context_window: 200000, max_completion_tokens: 4000 },
      { name: 'small', pricing: { prompt: '0.0000001', completion: '0.0000002' }, capabilities: caps(false), context_window: 200000, max_completion_tokens: 4000 },
    ] }],
    gateway: {
      reload: { watch: false },
      router: {
        // Half the decisions with two fresh candidates explore; one candidate, or a held conversation, never does.
        exploration: { share: 0.5 },
        quality_signals: [{ metric: 'good', optimize: 'max' }],
        learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000, feedback_settle_ms: 0 },
      },
    },
  });
});
after(async () => { await gw?.stop(); await up?.close(); });

/** The value of one sample in /metrics (0 when absent), `labels` as rendered, e.g. `model="p/big",reason="utility"`. */
async function sample(name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const decisions = (model: string, reason: string) => sample('gateway_router_decisions_total', `model="${model}",reason="${reason}"`);

const chat = async (body: Rec, path = '/v1/chat/completions'): Promise<Response> => {
  const r = await fetch(gw.url + path, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'Hello there' }], ...body }),
  });
  return r;
};

test('routed requests count by the chosen model with reason utility; the dry run counts nothing', async () => {
  const before = await decisions('p/small', 'utility');
  const count = await sample('gateway_router_decision_seconds_count');
  for (let i = 0; i < 3; i++) {
    const r = await chat({ models: ['small'] });
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal(r.headers.get('x-router-model'), 'p/small');
    await r.text();
  }
  assert.equal(await decisions('p/small', 'utility'), before + 3);
  assert.equal(await sample('gateway_router_decision_seconds_count'), count + 3, 'one observation per decision');
  const rank = await chat({ models: ['small'] }, '/v1/router/rank');
  assert.equal(rank.status, 200);
  await rank.text();
  assert.equal(await decisions('p/small', 'utility'), before + 3, 'the dry run is no routed request');
  assert.equal(await sample('gateway_router_decision_seconds_count'), count + 3);
  // count_tokens with model "router" looks at the choice (x-router-model) and sends nothing: not counted either.
  const counted = await fetch(`${gw.url}/v1/messages/count_tokens`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'router', models: ['small'], messages: [{ role: 'user', content: 'Hello there' }] }),
  });
  assert.equal(counted.status, 200, await counted.clone().text());
  assert.equal(counted.headers.get('x-router-model'), 'p/small');
  await counted.text();
  assert.equal(await decisions('p/small', 'utility'), before + 3, 'count_tokens is no routed request');
  assert.equal(await sample('gateway_router_decision_seconds_count'), count + 3);
});

test('a request no candidate can serve under its max_cost counts as refused by max_cost, not as a decision', async () => {
  const refused = await sample('gateway_router_no_route_total', 'constraint="max_cost"');
  const count = await sample('gateway_router_decision_seconds_count');
  const r = await chat({ models: ['small', 'big'], max_cost: 1e-12 });
  assert.equal(r.status, 400);
  assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'no_route');
  assert.equal(await sample('gateway_router_no_route_total', 'constraint="max_cost"'), refused + 1);
  assert.equal(await sample('gateway_router_decision_seconds_count'), count);
});

test('exploration and conversation affinity count under their own reasons', async () => {
  const both = async (reason: string) => (await decisions('p/small', reason)) + (await decisions('p/big', reason));
  const explored = await both('explored');
  const utility = await both('utility');
  let seen = 0;
  for (let i = 0; i < 24; i++) {
    const r = await chat({ models: ['small', 'big'], messages: [{ role: 'user', content: `question ${i}` }] });
    assert.equal(r.status, 200);
    if (r.headers.get('x-router-explored') === 'true') seen++;
    await r.text();
  }
  assert.ok(seen > 0, 'some decisions explored');
  assert.equal(await both('explored'), explored + seen);
  assert.equal(await both('utility'), utility + 24 - seen);

  // A long first turn served by the caching model (alone: no exploration), then its follow-up among both: affinity holds it.
  const first = `Please keep this context: ${'the cache holds this prefix '.repeat(300)}`;
  const r1 = await chat({ models: ['big'], messages: [{ role: 'user', content: first }] });
  assert.equal(r1.status, 200);
  const answer = (await r1.json()) as { choices: Array<{ message: { content: string } }> };
  const held = await decisions('p/big', 'affinity');
  const r2 = await chat({ models: ['small', 'big'], messages: [
    { role: 'user', content: first }, { role: 'assistant', content: answer.choices[0]!.message.content }, { role: 'user', content: 'and a follow-up' },
  ] });
  assert.equal(r2.headers.get('x-router-affinity'), 'true');
  assert.equal(r2.headers.get('x-router-model'), 'p/big');
  await r2.text();
  assert.equal(await decisions('p/big', 'affinity'), held + 1);
});

test('the state version gauge follows the state routed with; training passes count by result', async () => {
  const learning = gw.services.router!.learning;
  // The earlier tests' routed answers are read as soon as they land (training reads in landing order,
  // with no lag since 2026-11-29): take them in first, so the next pass has nothing new.
  // Until two passes 100 ms apart find nothing (a record the writer lands late would make the next one train).
  for (let i = 0; i < 50; i++) {
    if (await learning.trainOnce()) continue;
    await new Promise((ok) => setTimeout(ok, 100));
    if (!(await learning.trainOnce())) break;
  }
  assert.equal(await sample('gateway_router_state_version'), learning.state.version);
  const nothing = await sample('gateway_router_training_runs_total', 'result="nothing_new"');
  const stored = await sample('gateway_router_training_runs_total', 'result="stored"');
  assert.equal(await learning.trainOnce(), false);
  assert.equal(await sample('gateway_router_training_runs_total', 'result="nothing_new"'), nothing + 1);

  // Feedback on a routed answer: the next pass stores a new version, which the gauge shows.
  const r = await chat({ models: ['small'] });
  const id = r.headers.get('x-inference-id')!;
  await r.text();
  await gw.services.router!.flush();
  await new Promise((ok) => setTimeout(ok, 200));
  const fb = await fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ id, feedback: { good: true } }]) });
  assert.equal(fb.status, 200);
  await fb.text();
  const v0 = learning.state.version;
  // The answer and its feedback land through the writers (a flush period each; longer on a loaded machine).
  let trained = false;
  for (let i = 0; i < 50 && !trained; i++) {
    trained = await learning.trainOnce();
    if (!trained) await new Promise((ok) => setTimeout(ok, 100));
  }
  assert.equal(trained, true);
  assert.equal(await sample('gateway_router_training_runs_total', 'result="stored"'), stored + 1);
  assert.equal(await sample('gateway_router_state_version'), v0 + 1);

  learning.setState({ ...emptyStored(), version: v0 + 40 });
  assert.equal(await sample('gateway_router_state_version'), v0 + 40);
  learning.setState({ ...emptyStored(), version: v0 + 1 });

  // The store failing under a pass: counted failed.
  const sql = gw.services.store!.sql as { all: (...a: unknown[]) => Promise<unknown> };
  const all = sql.all;
  sql.all = () => Promise.reject(new Error('store down'));
  try { assert.equal(await learning.trainOnce(), false); } finally { sql.all = all; }
  assert.equal(await sample('gateway_router_training_runs_total', 'result="failed"'), 1);
});

test('decisions waiting to be recorded and dropped: at /metrics and in /health', async () => {
  const r = await chat({ models: ['small'] });
  await r.text();
  const health = async () => ((await (await fetch(`${gw.url}/health`)).json()) as { router: { state_version: number; decisions: { pending: number; dropped: number } } }).router;
  await gw.services.router!.flush();
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(text, /\ngateway_router_decisions_pending 0\n/);
  assert.match(text, /\ngateway_router_decisions_dropped_total 0\n/);
  const h = await health();
  assert.deepEqual(h.decisions, { pending: 0, dropped: 0 });
  assert.equal(h.state_version, gw.services.router!.learning.state.version);
});
