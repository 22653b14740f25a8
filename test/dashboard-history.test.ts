// Request history in the admin API: the partial flag (inferences.partial) in list rows, detail and exports
// and as a filter; the router's recorded decision (router_decisions) in the detail, typed, and "router
// decisions" as a filter, for a stored decision and for a real router request from the openai SDK; usage cost sums exact to the last decimal; and sign-in limits shared by two
// gateways on one store (an attempt counted on one replica is counted on the other).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { addDecimal } from '../src/catalog/decimal.ts';
import { insertDecisions } from '../src/router/store.ts';
import type { InferenceRecord } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

const ADMIN_KEY = 'admin-key-for-the-history-test-0123456789abc';
let oa: MockUpstream; let gw: TestGateway;
const auth = { authorization: `Bearer ${ADMIN_KEY}` };
async function get(path: string): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${gw.url}/admin/api/v1${path}`, { headers: auth });
  const text = await res.text();
  let body: unknown = null;
  try { body = JSON.parse(text); } catch { /* CSV, JSONL */ }
  return { status: res.status, body, text };
}

const now = Date.now();
function record(over: Partial<InferenceRecord>): InferenceRecord {
  const t = over.createdAt ? Date.parse(over.createdAt) : now - 60_000;
  return {
    id: uuidv7(t), createdAt: new Date(t).toISOString(), keyId: null, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'mockai/test-model',
    servedModel: 'mockai/test-model', provider: 'mockai', attempts: [{ provider: 'mockai', model: 'test-model', status: 200, error: null, latencyMs: 120 }],
    status: 200, errorCode: null, latencyMs: 130, ttftMs: 40, stream: true, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0,
    reasoningTokens: 0, costUsd: '0.00000008333333333333334', finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null, ...over,
  };
}
const cut = record({ partial: true, finishReason: null, outputTokens: 3 });
const routed = record({ requestedModel: 'router', servedModel: 'mockai/test-model' });
const plain = record({});
const DECISION = {
  w: 0.5, policy: 'cheap-first', state_version: 3, kind: 'code', explored: false, affinity: null, chosen: 'mockai/test-model', chosen_quality: 0.8123,
  chosen_cost_usd: 0.000021, input_tokens: 1200, token_method: 'exact', expected_output_tokens: 350, plan: [['mockai/test-model', 4000], ['mockai/other', null]],
  candidates: 694, excluded_by: { max_cost: 40, 'capability:tools': 600 }, included: [['mockai/test-model', 0.812, 0.000021, 4.0599], ['mockai/other', 0.7, 0.00001, 3.49]],
  excluded: { max_cost: [['big/model', 0.3, 0.2]] }, attempts: [{ provider: 'mockai', model: 'test-model', status: 200, error: null, latencyMs: 120 }],
};

before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }], gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } } });
  await gw.services.store!.insertInferences([cut, routed, plain]);
  await insertDecisions(gw.services.store!.sql, [{ inferenceId: routed.id, createdAt: routed.createdAt, keyId: null, servedModel: routed.servedModel, canonical: 'test-model', kind: 'code', status: routed.status, costUsd: routed.costUsd, features: { schema: 1, kind: 'code', stats: {}, idx: [], val: [] } as never, decision: DECISION }]);
});
after(async () => { await gw.stop(); await oa.close(); });

describe('partial answers', () => {
  test('flagged in the list, the detail and the export, and filterable', async () => {
    const all = (await get('/requests?limit=50')).body.data as Array<{ id: string; partial: boolean }>;
    assert.deepEqual(all.filter((r) => r.partial).map((r) => r.id), [cut.id]);
    assert.deepEqual((await get('/requests?partial=true')).body.data.map((r: { id: string }) => r.id), [cut.id]);
    const complete = (await get('/requests?partial=false')).body.data.map((r: { id: string }) => r.id);
    assert.ok(complete.includes(plain.id) && !complete.includes(cut.id));
    assert.equal((await get(`/requests/${cut.id}`)).body.partial, true);
    assert.equal((await get(`/requests/${plain.id}`)).body.partial, false);
    const csv = (await get('/requests/export?format=csv&partial=true')).text.split('\r\n');
    assert.ok(csv[0]!.split(',').includes('partial'));
    assert.equal(csv.filter((l) => l.startsWith(cut.id)).length, 1);
    assert.equal((await get('/requests?partial=maybe')).status, 400);
  });
});

describe('router decisions', () => {
  test('the detail carries the recorded decision, typed: chosen, why, plan, candidates included and excluded', async () => {
    const d = (await get(`/requests/${routed.id}`)).body;
    assert.equal(d.routed, true);
    const r = d.routing;
    assert.equal(r.chosen, 'mockai/test-model');
    assert.equal(r.willingness_to_pay, 0.5);
    assert.equal(r.policy, 'cheap-first');
    assert.equal(r.candidates, 694);
    assert.deepEqual(r.excluded_by, { max_cost: 40, 'capability:tools': 600 });
    assert.deepEqual(r.plan, [{ model: 'mockai/test-model', max_output_tokens: 4000 }, { model: 'mockai/other', max_output_tokens: null }]);
    assert.deepEqual(r.included[0], { model: 'mockai/test-model', quality: 0.812, expected_cost_usd: 0.000021, utility: 4.0599 });
    assert.deepEqual(r.excluded, [{ constraint: 'max_cost', model: 'big/model', expected_cost_usd: 0.3, min_cost_usd: 0.2 }]);
    assert.deepEqual(r.raw, DECISION);
    const p = (await get(`/requests/${plain.id}`)).body;
    assert.equal(p.routing, null);
    assert.equal(p.routed, false);
  });
  test('"router decisions" filters history both ways', async () => {
    assert.deepEqual((await get('/requests?routed=true')).body.data.map((r: { id: string }) => r.id), [routed.id]);
    const not = (await get('/requests?routed=false')).body.data.map((r: { id: string }) => r.id);
    assert.ok(not.includes(plain.id) && not.includes(cut.id) && !not.includes(routed.id));
    const list = (await get('/requests')).body.data as Array<{ id: string; routed: boolean }>;
    assert.deepEqual(list.filter((x) => x.routed).map((x) => x.id), [routed.id]);
  });
});

describe('a real router request', () => {
  test('its recorded decision shows in the detail, and the request in the router filter', async () => {
    const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
    const routed = await startTestGateway({
      providers: [{ id: 'cheap', format: 'openai-chat', base_url: oa.url, models: [
        { name: 'small-1', pricing: { prompt: '0.0000001', completion: '0.0000002' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
        { name: 'mid-1', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: caps, context_window: 64000, max_completion_tokens: 8000 },
      ] }],
      gateway: { auth: { enabled: true, admin_key: ADMIN_KEY }, router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } } },
    });
    try {
      const admin = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
      const { key } = await (await fetch(`${routed.url}/admin/api/v1/keys`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'router user' }) })).json() as { key: string };
      const answer = await new OpenAI({ baseURL: `${routed.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'router', messages: [{ role: 'user', content: 'route me' }] });
      type Detail = { routed: boolean; served_model: string; routing: { chosen: string; candidates: number; plan: Array<{ model: string }>; included: Array<{ model: string }> } | null };
      const detail = async (): Promise<Detail | null> => {
        const res = await fetch(`${routed.url}/admin/api/v1/requests/${answer.id}`, { headers: admin });
        return res.ok ? await res.json() as Detail : null;
      };
      let d = await detail();
      for (let i = 0; i < 100 && !d?.routing; i++) { await new Promise((r) => setTimeout(r, 50)); d = await detail(); }
      assert.ok(d?.routing, 'the decision is recorded and shown');
      assert.equal(d.routed, true);
      assert.equal(d.routing.chosen, d.served_model);
      assert.equal(d.routing.candidates, 2);
      assert.equal(d.routing.plan[0]!.model, d.served_model);
      assert.deepEqual(d.routing.included.map((c) => c.model).sort(), ['cheap/mid-1', 'cheap/small-1']);
      const page = await (await fetch(`${routed.url}/admin/api/v1/requests?routed=true`, { headers: admin })).json() as { data: Array<{ id: string }> };
      assert.deepEqual(page.data.map((r) => r.id), [answer.id]);
    } finally {
      await routed.stop();
    }
  });
});

describe('usage money', () => {
  test('usage totals are the exact sum of the stored costs (23 decimals and all)', async () => {
    // And real traffic on top (the mock model's prices).
    const created = await (await fetch(`${gw.url}/admin/api/v1/keys`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'money' }) })).json() as { key: string };
    const key = created.key;
    await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'count my cents' }] });
    let raw: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 50 && raw.length < 4; i++) { await new Promise((r) => setTimeout(r, 50)); raw = await gw.services.store!.sql.all('SELECT cost_usd FROM inferences'); }
    const exact = raw.reduce((a, r) => addDecimal(a, String(r.cost_usd)), '0');
    const u = (await get(`/usage?group=model&from=${new Date(now - 86_400_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`)).body;
    assert.equal(u.totals.requests, 4);
    assert.equal(u.totals.cost_usd, exact);
    assert.match(exact, /\.\d{20,}/, 'the sum keeps every decimal');
  });
});

describe('sign-in limits across replicas', () => {
  test('failures on one gateway count on the other (one store)', async () => {
    const other = await startTestGateway({
      providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
      gateway: { auth: { enabled: true, admin_key: ADMIN_KEY }, storage: { sqlite_path: `${gw.dir}/gateway.db` } },
    });
    try {
      await gw.services.dashboard!.users.create({ email: 'shared@example.com', role: 'member', password: 'the right password here' });
      const attempt = (g: TestGateway, password: string) => fetch(`${g.url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'shared@example.com', password }) });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await attempt(i % 2 ? other : gw, 'not it at all')).status);
      assert.deepEqual(statuses, [401, 401, 401, 401, 401]);
      const blocked = await attempt(other, 'the right password here');
      assert.equal(blocked.status, 429, 'the sixth attempt, on the other replica, waits');
      assert.ok(Number(blocked.headers.get('retry-after')) > 0);
      assert.equal((await attempt(gw, 'the right password here')).status, 429);
      // Parallel guesses cannot slip past the limit between the check and the count.
      await gw.services.store!.sql.run('DELETE FROM dashboard_login_failures');
      const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => attempt(i % 2 ? other : gw, `guess number ${i}`)));
      assert.equal(burst.filter((r) => r.status === 401).length, 5);
      assert.equal(burst.filter((r) => r.status === 429).length, 7);
    } finally {
      await other.stopKeepingFiles();
    }
  });
});
