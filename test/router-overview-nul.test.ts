// The router overview (GET /admin/api/v1/router) on PostgreSQL when an upstream's error text holds a NUL
// or a lone surrogate. A routed request's attempts are stored in its decision's JSON, which wrote them as
// \u0000 and \ud800; the overview reads each decision with feedback through PostgreSQL's json operators,
// which refuse both anywhere in the text (22P05, 22P02): one such decision was a 500 'internal error'
// for every window holding it. The writer now stores those characters as U+FFFD, and the read takes only
// the chosen model's field, so decisions stored before are read too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { insertDecisions } from '../src/router/store.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startRawUpstream, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { pgTestDb } from './helpers/pg.ts';

const db = await pgTestDb('gw_router_nul'); // null: PostgreSQL unreachable (CI=true throws instead)
const ADMIN = { authorization: 'Bearer admin-key-for-the-router-nul-test-0123456789' };
let oa: MockUpstream; let raw: RawUpstream; let gw: TestGateway; let key = '';

before(async () => {
  if (!db) return;
  oa = await startMockOpenAI();
  raw = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      // The cheapest: willingness_to_pay 0 tries it first, and its 500 falls back to the other.
      { id: 'raw', format: 'openai-chat', base_url: `${raw.url}/v1`, models: [{ name: 'cheap', pricing: { prompt: '0.0000001', completion: '0.0000001' } }] },
      { id: 'oa', format: 'openai-chat', base_url: oa.url },
    ],
    gateway: {
      auth: { enabled: true, admin_key: ADMIN.authorization.slice(7) }, storage: { database_url: db.storeOptions().databaseUrl }, reload: { watch: false },
      router: { exploration: { share: 0 }, quality_signals: [{ metric: 'good', optimize: 'max' }], learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
    },
    env: { GATEWAY_PG_SCHEMA: db.schema },
  });
  key = (await gw.services.admin!.createKey({ name: 'k' })).key;
});
after(async () => { if (db) { await gw.stop(); await oa.close(); await raw.close(); } });

const overview = async (): Promise<{ status: number; body: any }> => {
  const r = await fetch(`${gw.url}/admin/api/v1/router`, { headers: ADMIN, signal: AbortSignal.timeout(10_000) });
  return { status: r.status, body: await r.json() };
};
const good = (o: any, model: string): unknown => o.models.find((m: any) => m.model === model)?.feedback;

test('an upstream error with a NUL or a lone surrogate in a routed request: the overview answers, the decision holds U+FFFD', { skip: !db && 'PostgreSQL unreachable' }, async () => {
  for (const message of ['bad\u0000thing', 'bad \ud800 thing']) {
    raw.push({ status: 500, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ error: { message } })] });
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'router', willingness_to_pay: 0, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.deepEqual([r.status, r.headers.get('x-router-model')], [200, 'raw/cheap']);
    const id = r.headers.get('x-inference-id')!;
    const f = await fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify([{ id, feedback: { good: true } }]) });
    assert.equal(f.status, 200);
    await gw.services.router!.flush();
    const [row] = await gw.services.store!.sql.all('SELECT decision FROM router_decisions WHERE inference_id = ?', [id]);
    const attempts = JSON.parse(String(row!.decision)).attempts as Array<{ provider: string; error: string | null }>;
    assert.deepEqual(attempts.map((a) => a.provider), ['raw', 'oa']);
    assert.match(attempts[0]!.error!, /bad ?\uFFFD ?thing/);
  }
  // The feedback rows land through the record writer's batches: read until both have (under load the
  // second could still be queued when the overview was read first, which failed this test once).
  let o = await overview();
  for (const end = Date.now() + 5_000; o.status === 200 && (good(o.body, 'raw/cheap') as Array<{ count: number }> | undefined)?.[0]?.count !== 2 && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 100));
    o = await overview();
  }
  assert.equal(o.status, 200, JSON.stringify(o.body));
  // Feedback counts by the chosen model (the one that failed here).
  assert.deepEqual(good(o.body, 'raw/cheap'), [{ metric: 'good', type: 'boolean', count: 2, mean: 1, rate: 1 }]);
});

test('decisions stored with \\u0000 and \\ud800 in their JSON (before the writer cleaned them) are read', { skip: !db && 'PostgreSQL unreachable' }, async () => {
  const before = await overview();
  assert.equal(before.status, 200);
  const store = gw.services.store!;
  const ids = [uuidv7(), uuidv7()];
  await insertDecisions(store.sql, ids.map((id, i) => ({
    inferenceId: id, createdAt: new Date().toISOString(), keyId: null, servedModel: 'oa/test-model', canonical: 'test-model', kind: 'chat', status: 200, costUsd: '0',
    features: { schema: 1, kind: 'chat', stats: {}, idx: [], val: [] } as never,
    decision: {
      w: 0, policy: null, state_version: 0, kind: 'chat', explored: false, affinity: null, chosen: 'raw/cheap', chosen_quality: 0.4, chosen_cost_usd: 0.00001,
      input_tokens: 1, token_method: 'estimate', expected_output_tokens: 10, plan: [['raw/cheap', null]], candidates: 2, excluded_by: {}, included: [], excluded: {},
      attempts: [{ provider: 'raw', model: 'raw/cheap', status: 500, error: i === 0 ? 'bad\u0000thing' : 'bad \ud800 thing', latencyMs: 1 }],
    },
  })));
  const [stored] = await store.sql.all('SELECT decision FROM router_decisions WHERE inference_id = ?', [ids[0]]);
  assert.match(String(stored!.decision), /bad\\u0000thing/, 'the old form, as it was stored');
  await store.insertFeedback(ids.map((inferenceId) => ({
    id: uuidv7(), inferenceId, keyId: null, metric: 'good', type: 'boolean', value: 'false', reason: null, tags: {}, optimize: 'max', createdAt: new Date().toISOString(),
  })));
  const o = await overview();
  assert.equal(o.status, 200, JSON.stringify(o.body));
  assert.deepEqual([good(before.body, 'raw/cheap'), good(o.body, 'raw/cheap')], [
    [{ metric: 'good', type: 'boolean', count: 2, mean: 1, rate: 1 }], [{ metric: 'good', type: 'boolean', count: 4, mean: 0.5, rate: 0.5 }],
  ]);
});
