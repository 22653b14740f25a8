// The router overview (GET /admin/api/v1/router) against a real gateway on SQLite and on PostgreSQL (a
// fresh schema, dropped after; CI fails when PostgreSQL is down): the figures equal a hand-counted set of
// decisions, records and feedback; a member sees only their keys' routed requests; an empty window;
// bad parameters are 400 in the admin API's error shape; a window with more decisions than one call
// reads is counted from its newest ones and says so.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { routerOverview } from '../src/dashboard/router-overview.ts';
import { insertDecisions, type DecisionRow } from '../src/router/store.ts';
import type { FeedbackRow, InferenceRecord } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';

const ADMIN_KEY = 'admin-key-for-the-router-overview-test-0123';
const PW = 'a long enough password';
const MIN = 60_000;

type Call = { status: number; body: any };
type Fixture = { aliceKey: string; bobKey: string; ids: string[]; at: string[] };

const inference = (id: string, at: number, keyId: string | null, o: { model?: string | null; status?: number; cost?: string; requested?: string }): InferenceRecord => ({
  id, createdAt: new Date(at).toISOString(), keyId, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: o.requested ?? 'router',
  servedModel: o.model ?? null, provider: o.model ? o.model.split('/')[0]! : null, attempts: [], status: o.status ?? 200, errorCode: null, latencyMs: 100, ttftMs: null,
  stream: false, inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: o.cost ?? '0', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

type D = { chosen: string | null; q?: number; cost?: number; attempts?: number; explored?: boolean; affinity?: string | null; version: number; excluded?: Record<string, number> };
const decision = (id: string, at: number, keyId: string, d: D): DecisionRow => ({
  inferenceId: id, createdAt: new Date(at).toISOString(), keyId, servedModel: d.chosen, canonical: d.chosen?.split('/')[1] ?? null, kind: 'chat',
  features: { schema: 1, kind: 'chat', stats: {}, idx: [], val: [] } as never,
  decision: {
    w: 1, policy: null, state_version: d.version, kind: 'chat', explored: d.explored ?? false, affinity: d.affinity ?? null, chosen: d.chosen,
    chosen_quality: d.chosen ? d.q ?? 0.5 : null, chosen_cost_usd: d.chosen ? d.cost ?? 0.001 : null, input_tokens: 10, token_method: 'exact', expected_output_tokens: 300,
    plan: d.chosen ? [[d.chosen, null]] : [], candidates: 5, excluded_by: d.excluded ?? {}, included: [], excluded: {},
    attempts: Array.from({ length: d.attempts ?? (d.chosen ? 1 : 0) }, () => ({ provider: 'p', model: 'm', status: 200, error: null, latencyMs: 10 })),
  },
});

const feedback = (inferenceId: string, metric: string, type: 'boolean' | 'float', value: string, at: number): FeedbackRow => ({
  id: uuidv7(), inferenceId, keyId: null, metric, type, value, reason: null, tags: {}, optimize: 'max', createdAt: new Date(at).toISOString(),
});

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`router overview (${backend})`, async () => {
    const havePg = backend === 'sqlite' || await pgAvailable(); // throws under CI=true when PostgreSQL is down
    const schema = freshSchema('gw_router_overview');
    let oa: MockUpstream; let gw: TestGateway;
    const fx: Fixture = { aliceKey: '', bobKey: '', ids: [], at: [] };
    const callers: Record<string, Record<string, string>> = { anonymous: {}, key: { authorization: `Bearer ${ADMIN_KEY}` } };
    const get = async (who: string, path: string): Promise<Call> => {
      const res = await fetch(`${gw.url}/admin/api/v1${path}`, { headers: callers[who]! });
      return { status: res.status, body: await res.json() };
    };
    const signIn = async (email: string): Promise<Record<string, string>> => {
      const res = await fetch(`${gw.url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PW }) });
      assert.equal(res.status, 200);
      return { cookie: res.headers.get('set-cookie')!.split(';')[0]! };
    };

    before(async () => {
      if (!havePg) return;
      oa = await startMockOpenAI();
      gw = await startTestGateway({
        providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
        gateway: {
          auth: { enabled: true, admin_key: ADMIN_KEY }, router: { quality_signals: [{ metric: 'good' }, { metric: 'score' }] },
          ...(backend === 'postgres' ? { storage: { database_url: PG_URL } } : {}),
        },
        env: backend === 'postgres' ? { GATEWAY_PG_SCHEMA: schema } : {},
      });
      const users = gw.services.dashboard!.users;
      await users.create({ email: 'root@example.com', role: 'admin', password: PW });
      const alice = await users.create({ email: 'alice@example.com', role: 'member', password: PW });
      const bob = await users.create({ email: 'bob@example.com', role: 'member', password: PW });
      await users.create({ email: 'carol@example.com', role: 'member', password: PW });
      callers.admin = await signIn('root@example.com');
      callers.alice = await signIn('alice@example.com');
      callers.carol = await signIn('carol@example.com');
      const mk = async (name: string, owner: string): Promise<string> => {
        const res = await fetch(`${gw.url}/admin/api/v1/keys`, { method: 'POST', headers: { ...callers.key, 'content-type': 'application/json' }, body: JSON.stringify({ name, owner_id: owner }) });
        return ((await res.json()) as { record: { id: string } }).record.id;
      };
      fx.aliceKey = await mk('alice-key', alice.id);
      fx.bobKey = await mk('bob-key', bob.id);

      // Six requests in the last hour (four routed) and one routed request nine days ago.
      const now = Date.now();
      const at = (i: number): number => now - 60 * MIN + i * MIN;
      const ids = Array.from({ length: 7 }, (_, i) => uuidv7(i === 6 ? now - 9 * 86_400_000 : at(i)));
      fx.ids = ids;
      fx.at = ids.slice(0, 6).map((_, i) => new Date(at(i)).toISOString());
      const { aliceKey: a, bobKey: b } = fx;
      const store = gw.services.store!;
      await store.insertInferences([
        inference(ids[0]!, at(0), a, { model: 'mockai/alpha', cost: '0.0012' }),
        inference(ids[1]!, at(1), a, { model: 'mockai/beta', cost: '0.002' }),
        inference(ids[2]!, at(2), b, { model: 'mockai/beta', status: 502 }),
        inference(ids[3]!, at(3), b, { model: null, status: 400 }),
        inference(ids[4]!, at(4), a, { model: 'mockai/alpha', requested: 'mockai/alpha', cost: '0.5' }),
        inference(ids[5]!, at(5), b, { model: 'mockai/alpha', requested: 'mockai/alpha', cost: '0.5' }),
        inference(ids[6]!, now - 9 * 86_400_000, a, { model: 'mockai/alpha', cost: '1' }),
      ]);
      await insertDecisions(store.sql, [
        decision(ids[0]!, at(0) + 500, a, { chosen: 'mockai/alpha', q: 0.8, cost: 0.001, version: 3, excluded: { max_cost: 2 } }),
        // Chosen alpha, which failed: the plan fell back to beta (two attempts); a cached prefix favoured alpha.
        decision(ids[1]!, at(1) + 500, a, { chosen: 'mockai/alpha', q: 0.6, cost: 0.003, attempts: 2, affinity: 'mockai/alpha', version: 3, excluded: { max_cost: 1, 'capability:tools': 1 } }),
        decision(ids[2]!, at(2) + 500, b, { chosen: 'mockai/beta', q: 0.7, cost: 0.002, explored: true, affinity: 'mockai/alpha', version: 4 }),
        decision(ids[3]!, at(3) + 500, b, { chosen: null, version: 4, excluded: { max_cost: 3, 'capability:tools': 0 } }),
        decision(ids[6]!, now - 9 * 86_400_000 + 500, a, { chosen: 'mockai/alpha', version: 1, excluded: { max_cost: 9 } }),
      ]);
      await store.insertFeedback([
        feedback(ids[0]!, 'good', 'boolean', 'true', at(10)), feedback(ids[1]!, 'good', 'boolean', 'false', at(10)),
        feedback(ids[1]!, 'score', 'float', '4', at(10)), feedback(ids[2]!, 'good', 'boolean', 'true', at(10)),
        feedback(ids[0]!, 'not-a-signal', 'boolean', 'false', at(10)),
      ]);
    });
    after(async () => {
      if (!havePg) return;
      await gw.stop(); await oa.close();
      if (backend === 'postgres') await dropSchema(schema);
    });

    test('the admin sees every routed request of the window, counted as stored', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      assert.equal(gw.services.store!.sql.dialect, backend);
      const r = await get('admin', '/router');
      assert.equal(r.status, 200);
      const o = r.body;
      assert.equal(o.truncated, false);
      assert.equal(o.covered_from, o.from);
      assert.deepEqual([o.requests, o.routed, o.no_route, o.recorded, o.errors], [6, 4, 1, 4, 2]);
      assert.equal(o.routed_share, 4 / 6);
      assert.equal(o.cost_usd, '0.0032');
      assert.equal(o.cost_per_request_usd, '0.0008');
      assert.deepEqual([o.fallbacks, o.explored, o.affinity_known, o.affinity_chosen], [1, 1, 2, 1]);
      assert.deepEqual(o.quality_signals, ['good', 'score']);
      assert.equal(o.models.length, 2);
      const [alpha, beta] = o.models;
      assert.deepEqual({ ...alpha, predicted_quality: Number(alpha.predicted_quality.toFixed(6)), predicted_cost_usd: Number(alpha.predicted_cost_usd.toFixed(9)) }, {
        model: 'mockai/alpha', requests: 2, share: 0.5, cost_usd: '0.0032', cost_per_request_usd: '0.0016', predicted_cost_usd: 0.002, predicted_quality: 0.7,
        errors: 0, fallbacks: 1, explored: 0,
        feedback: [{ metric: 'good', type: 'boolean', count: 2, mean: 0.5, rate: 0.5 }, { metric: 'score', type: 'float', count: 1, mean: 4, rate: null }],
      });
      assert.deepEqual([beta.model, beta.requests, beta.share, beta.cost_usd, beta.errors, beta.explored, beta.feedback], ['mockai/beta', 1, 0.25, '0', 1, 1, [{ metric: 'good', type: 'boolean', count: 1, mean: 1, rate: 1 }]]);
      assert.equal(o.other, null);
      assert.deepEqual(o.constraints, [
        { constraint: 'max_cost', decisions: 3, share: 0.75, candidates: 6 },
        { constraint: 'capability:tools', decisions: 1, share: 0.25, candidates: 1 },
      ]);
      assert.equal(o.state_version_count, 2);
      assert.deepEqual(o.state_versions.map((v: { version: number; decisions: number }) => [v.version, v.decisions]), [[4, 2], [3, 2]]);
      assert.ok(o.state_versions[1].first_at < o.state_versions[1].last_at);
      // The admin key sees the same; a longer window takes in the old decision.
      assert.deepEqual((await get('key', '/router')).body.models, o.models);
      const month = (await get('admin', `/router?from=${Date.now() - 30 * 86_400_000}`)).body;
      assert.deepEqual([month.routed, month.requests, month.state_version_count], [5, 7, 3]);
    });

    test('top N keeps the most chosen models and sums the rest', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const o = (await get('admin', '/router?top=1')).body;
      assert.deepEqual(o.models.map((m: { model: string }) => m.model), ['mockai/alpha']);
      assert.deepEqual(o.other, { models: 1, requests: 1, cost_usd: '0' });
      assert.deepEqual(o.constraints.map((c: { constraint: string }) => c.constraint), ['max_cost']);
      assert.deepEqual(o.state_versions.map((v: { version: number }) => v.version), [4]);
      assert.equal(o.state_version_count, 2);
    });

    test('a member sees only their own keys\' requests; a member without keys sees nothing', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const o = (await get('alice', '/router')).body;
      assert.deepEqual([o.requests, o.routed, o.no_route, o.errors, o.cost_usd, o.explored], [3, 2, 0, 0, '0.0032', 0]);
      assert.deepEqual(o.models.map((m: { model: string; requests: number }) => [m.model, m.requests]), [['mockai/alpha', 2]]);
      assert.deepEqual(o.constraints.map((c: { constraint: string; decisions: number }) => [c.constraint, c.decisions]), [['max_cost', 2], ['capability:tools', 1]]);
      assert.deepEqual(o.state_versions.map((v: { version: number }) => v.version), [3]);
      const none = (await get('carol', '/router')).body;
      assert.deepEqual([none.requests, none.routed, none.models, none.constraints, none.state_versions], [0, 0, [], [], []]);
    });

    test('an empty window answers zeros and empty lists', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const r = await get('admin', '/router?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, {
        from: '2020-01-01T00:00:00.000Z', to: '2020-01-02T00:00:00.000Z', covered_from: '2020-01-01T00:00:00.000Z', truncated: false,
        requests: 0, routed: 0, routed_share: null, no_route: 0, recorded: 0, errors: 0, cost_usd: '0', cost_per_request_usd: null,
        fallbacks: 0, explored: 0, affinity_known: 0, affinity_chosen: 0, models: [], other: null, constraints: [], state_versions: [],
        state_version_count: 0, quality_signals: ['good', 'score'],
      });
    });

    test('anonymous callers get 401; bad parameters 400 naming the parameter', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const anon = await get('anonymous', '/router');
      assert.equal(anon.status, 401);
      assert.equal(anon.body.error.code, 'session_required');
      for (const [q, param] of [['from=yesterday', 'from'], ['to=soon', 'to'], ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'], ['top=0', 'top'], ['top=51', 'top'], ['top=ten', 'top']] as const) {
        const r = await get('alice', `/router?${q}`);
        assert.equal(r.status, 400, q);
        assert.equal(r.body.error.code, 'invalid_parameter', q);
        assert.equal(r.body.error.param, param, q);
        assert.equal(typeof r.body.error.message, 'string', q);
      }
      assert.equal((await fetch(`${gw.url}/admin/api/v1/router`, { method: 'POST', headers: callers.key })).status, 405);
    });

    test('a window with more decisions than one call reads is counted from its newest', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const now = Date.now();
      const o = await routerOverview(gw.services.store!.sql, { from: now - 86_400_000, to: now, top: 10, qualitySignals: [], maxDecisions: 2 }, { role: 'admin', userId: null });
      assert.equal(o.truncated, true);
      // All requests come from the usage rollups' hour rows: from the hour the counted decisions start in.
      const HOUR = 3_600_000;
      const since = Math.floor(Date.parse(o.covered_from) / HOUR) * HOUR;
      const requests = fx.ids.slice(0, 6).filter((_, i) => Math.floor(Date.parse(fx.at[i]!) / HOUR) * HOUR >= since).length;
      assert.deepEqual([o.routed, o.no_route, o.requests], [2, 1, requests], 'the newest two decisions, and the requests of the hours since the decision before them');
      assert.ok(o.covered_from > o.from);
    });
  });
}
