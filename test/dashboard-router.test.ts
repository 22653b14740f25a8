// The router overview (GET /admin/api/v1/router) against a real gateway on SQLite and on PostgreSQL (a
// fresh schema, dropped after; CI fails when PostgreSQL is down): the figures equal a hand-counted set of
// decisions, records and feedback; a member sees only their keys' routed requests; an empty window;
// bad parameters are 400 in the admin API's error shape. The router rollups the overview reads: a chunk
// stored twice counts once, two chunks of one cell sum exactly, a request routed through the gateway
// shows up, and migrations 21 and 22 fill them from the decisions stored before them as the write path
// would. The time series (hour and day buckets, UTC and another zone) and the breakdown by prompt kind
// against hand-counted decisions.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { routerOverview } from '../src/dashboard/router-overview.ts';
import { insertDecisions, type DecisionRow } from '../src/router/store.ts';
import { MIGRATIONS, MIGRATIONS_TABLE_SQL } from '../src/store/migrations.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import { pruneRollups } from '../src/store/rollup-retention.ts';
import { PostgresStore } from '../src/store/postgres.ts';
import type { FeedbackRow, InferenceRecord } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { addDecimal, compareDecimal } from '../src/catalog/decimal.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';
import { createApiKey, sessionHeaders } from './helpers/admin-api.ts';

const ADMIN_KEY = 'admin-key-for-the-router-overview-test-0123';
const PW = 'a long enough password';
const MIN = 60_000;
const HOUR = 3_600_000;

type Call = { status: number; body: any };
type Fixture = { aliceKey: string; aliceSecret: string; bobKey: string; ids: string[]; at: string[] };

const inference = (id: string, at: number, keyId: string | null, o: { model?: string | null; status?: number; cost?: string; requested?: string }): InferenceRecord => ({
  id, createdAt: new Date(at).toISOString(), keyId, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: o.requested ?? 'router',
  servedModel: o.model ?? null, provider: o.model ? o.model.split('/')[0]! : null, attempts: [], status: o.status ?? 200, errorCode: null, latencyMs: 100, ttftMs: null,
  stream: false, inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: o.cost ?? '0', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

type D = { kind?: string; status?: number; costUsd?: string; chosen: string | null; q?: number; cost?: number; attempts?: number; explored?: boolean; affinity?: string | null; version: number; excluded?: Record<string, number> };
const decision = (id: string, at: number, keyId: string, d: D): DecisionRow => ({
  inferenceId: id, createdAt: new Date(at).toISOString(), keyId, servedModel: d.chosen, canonical: d.chosen?.split('/')[1] ?? null, kind: d.kind ?? 'chat',
  status: d.status ?? 200, costUsd: d.costUsd ?? '0',
  features: { schema: 1, kind: d.kind ?? 'chat', stats: {}, idx: [], val: [] } as never,
  decision: {
    w: 1, policy: null, state_version: d.version, kind: d.kind ?? 'chat', explored: d.explored ?? false, affinity: d.affinity ?? null, chosen: d.chosen,
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
    const fx: Fixture = { aliceKey: '', aliceSecret: '', bobKey: '', ids: [], at: [] };
    const callers: Record<string, Record<string, string>> = { anonymous: {}, key: { authorization: `Bearer ${ADMIN_KEY}` } };
    const get = async (who: string, path: string): Promise<Call> => {
      const res = await fetch(`${gw.url}/admin/api/v1${path}`, { headers: callers[who]! });
      return { status: res.status, body: await res.json() };
    };
    const signIn = (email: string): Promise<Record<string, string>> => sessionHeaders(gw.url, email, PW);

    before(async () => {
      if (!havePg) return;
      oa = await startMockOpenAI();
      gw = await startTestGateway({
        providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url, models: [
          { name: 'gamma', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false }, context_window: 16000, max_completion_tokens: 4000 },
        ] }],
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
      const mk = (name: string, owner: string) => createApiKey(gw.url, callers.key!, { name, owner_id: owner });
      const ak = await mk('alice-key', alice.id);
      fx.aliceKey = ak.record.id;
      fx.aliceSecret = ak.key;
      fx.bobKey = (await mk('bob-key', bob.id)).record.id;

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
        decision(ids[0]!, at(0) + 500, a, { kind: 'code', costUsd: '0.0012', chosen: 'mockai/alpha', q: 0.8, cost: 0.001, version: 3, excluded: { max_cost: 2 } }),
        // Chosen alpha, which failed: the plan fell back to beta (two attempts); a cached prefix favoured alpha.
        decision(ids[1]!, at(1) + 500, a, { kind: 'code', costUsd: '0.002', chosen: 'mockai/alpha', q: 0.6, cost: 0.003, attempts: 2, affinity: 'mockai/alpha', version: 3, excluded: { max_cost: 1, 'capability:tools': 1 } }),
        decision(ids[2]!, at(2) + 500, b, { kind: 'math', status: 502, chosen: 'mockai/beta', q: 0.7, cost: 0.002, explored: true, affinity: 'mockai/alpha', version: 4 }),
        decision(ids[3]!, at(3) + 500, b, { kind: 'code', status: 400, chosen: null, version: 4, excluded: { max_cost: 3, 'capability:tools': 0 } }),
        decision(ids[6]!, now - 9 * 86_400_000 + 500, a, { costUsd: '1', chosen: 'mockai/alpha', version: 1, excluded: { max_cost: 9 } }),
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
      assert.equal(o.truncated, undefined);
      // The last 7 days rounded out to whole hours.
      assert.deepEqual([Date.parse(o.from) % HOUR, Date.parse(o.to) % HOUR], [0, 0]);
      assert.ok([7 * 86_400_000, 7 * 86_400_000 + HOUR].includes(Date.parse(o.to) - Date.parse(o.from)), `${o.from} ${o.to}`);
      assert.deepEqual([o.requests, o.routed, o.no_route, o.errors], [6, 4, 1, 2]);
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
      // By prompt kind: the no-route decision counts in its kind, not among its models.
      assert.deepEqual(o.kinds, [
        { kind: 'code', requests: 3, share: 0.75, errors: 1, error_rate: 1 / 3, cost_usd: '0.0032', cost_per_request_usd: '0.001066666666', no_route: 1,
          models: [{ model: 'mockai/alpha', requests: 2, share: 2 / 3 }], other: null },
        { kind: 'math', requests: 1, share: 0.25, errors: 1, error_rate: 1, cost_usd: '0', cost_per_request_usd: '0', no_route: 0,
          models: [{ model: 'mockai/beta', requests: 1, share: 1 }], other: null },
      ]);
      // Over time: 7 days (and the hour rounding) in day buckets, UTC by default; the buckets add up to the totals.
      assert.deepEqual([o.bucket, o.tz, o.buckets.length, o.series.length], ['day', 'UTC', o.series.length, o.buckets.length]);
      assert.ok(o.buckets.length >= 8 && o.buckets.length <= 9, String(o.buckets.length));
      const sum = o.series.reduce((a: { requests: number; errors: number; cost: string }, p: { requests: number; errors: number; cost_usd: string }) =>
        ({ requests: a.requests + p.requests, errors: a.errors + p.errors, cost: addDecimal(a.cost, p.cost_usd) }), { requests: 0, errors: 0, cost: '0' });
      assert.deepEqual(sum, { requests: 4, errors: 2, cost: '0.0032' });
      // The admin key sees the same; a longer window takes in the old decision.
      assert.deepEqual((await get('key', '/router')).body.models, o.models);
      const month = (await get('admin', `/router?from=${Date.now() - 30 * 86_400_000}`)).body;
      assert.deepEqual([month.routed, month.requests, month.state_version_count], [5, 7, 3]);
      assert.deepEqual(month.kinds.map((k: { kind: string; requests: number }) => [k.kind, k.requests]), [['code', 3], ['chat', 1], ['math', 1]]);
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
      assert.deepEqual(o.kinds.map((k: { kind: string; requests: number; errors: number; no_route: number }) => [k.kind, k.requests, k.errors, k.no_route]), [['code', 2, 0, 0]]);
      assert.equal(o.series.reduce((a: number, p: { requests: number }) => a + p.requests, 0), 2);
      const none = (await get('carol', '/router')).body;
      assert.deepEqual([none.requests, none.routed, none.models, none.constraints, none.state_versions, none.kinds], [0, 0, [], [], [], []]);
      assert.ok(none.series.length > 0 && none.series.every((p: { requests: number; errors: number; cost_usd: string }) => p.requests === 0 && p.errors === 0 && p.cost_usd === '0'));
    });

    test('an empty window answers zeros and empty lists', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const r = await get('admin', '/router?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, {
        from: '2020-01-01T00:00:00.000Z', to: '2020-01-02T00:00:00.000Z',
        requests: 0, routed: 0, routed_share: null, no_route: 0, errors: 0, cost_usd: '0', cost_per_request_usd: null,
        fallbacks: 0, explored: 0, affinity_known: 0, affinity_chosen: 0, models: [], other: null, constraints: [], state_versions: [],
        state_version_count: 0, quality_signals: ['good', 'score'],
        bucket: 'hour', tz: 'UTC', buckets: Array.from({ length: 24 }, (_, i) => new Date(Date.UTC(2020, 0, 1, i)).toISOString()),
        series: Array.from({ length: 24 }, () => ({ requests: 0, errors: 0, cost_usd: '0' })), kinds: [],
      });
    });

    test('anonymous callers get 401; bad parameters 400 naming the parameter', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const anon = await get('anonymous', '/router');
      assert.equal(anon.status, 401);
      assert.equal(anon.body.error.code, 'session_required');
      for (const [q, param] of [['from=yesterday', 'from'], ['to=soon', 'to'], ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'], ['top=0', 'top'], ['top=51', 'top'], ['top=ten', 'top'],
        ['bucket=minute', 'bucket'], ['tz=Mars/Olympus', 'tz'], [`bucket=hour&from=${Date.UTC(2020, 0, 1)}&to=${Date.UTC(2021, 0, 1)}`, 'bucket']] as const) {
        const r = await get('alice', `/router?${q}`);
        assert.equal(r.status, 400, q);
        assert.equal(r.body.error.code, 'invalid_parameter', q);
        assert.equal(r.body.error.param, param, q);
        assert.equal(typeof r.body.error.message, 'string', q);
      }
      assert.equal((await fetch(`${gw.url}/admin/api/v1/router`, { method: 'POST', headers: callers.key })).status, 405);
    });

    const ADMIN = { role: 'admin' as const, userId: null };
    // Hours of 2021, away from the fixture's window.
    const past = (day: number, minute: number): number => Date.UTC(2021, 0, day, 10, minute);
    const dayOf = (day: number): { from: number; to: number; top: number; qualitySignals: string[] } => ({ from: Date.UTC(2021, 0, day), to: Date.UTC(2021, 0, day + 1), top: 10, qualitySignals: [] });

    test('a chunk stored twice (a retry after its rows landed) counts once', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const sql = gw.services.store!.sql;
      const rows = [0, 1, 2].map((i) => decision(uuidv7(past(3, i)), past(3, i), fx.aliceKey, { kind: 'code', costUsd: '0.25', chosen: 'mockai/alpha', version: 7, attempts: 2, excluded: { max_cost: 2 } }));
      await insertDecisions(sql, rows);
      await insertDecisions(sql, rows);
      // Partly stored: the new row alone is counted.
      const extra = decision(uuidv7(past(3, 5)), past(3, 5), fx.aliceKey, { kind: 'code', costUsd: '0.25', chosen: 'mockai/alpha', version: 7 });
      await insertDecisions(sql, [rows[0]!, extra]);
      const o = await routerOverview(sql, dayOf(3), ADMIN);
      assert.deepEqual([o.routed, o.cost_usd, o.fallbacks, o.state_version_count], [4, '1', 3, 1]);
      assert.deepEqual(o.state_versions, [{ version: 7, decisions: 4, first_at: rows[0]!.createdAt, last_at: extra.createdAt }]);
      assert.deepEqual(o.constraints, [{ constraint: 'max_cost', decisions: 3, share: 0.75, candidates: 6 }]);
      assert.deepEqual(o.kinds.map((k) => [k.kind, k.requests, k.cost_usd, k.models]), [['code', 4, '1', [{ model: 'mockai/alpha', requests: 4, share: 1 }]]]);
      assert.deepEqual(o.series.filter((p) => p.requests > 0), [{ requests: 4, errors: 0, cost_usd: '1' }]);
      assert.equal(o.buckets[o.series.findIndex((p) => p.requests > 0)], new Date(Date.UTC(2021, 0, 3, 10)).toISOString());
    });

    test('two chunks of one cell sum exactly (0.1 + 0.2 = 0.3) with first and last use kept', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const sql = gw.services.store!.sql;
      const one = decision(uuidv7(past(5, 30)), past(5, 30), fx.bobKey, { costUsd: '0.1', status: 503, chosen: 'mockai/beta', q: 0.5, cost: 0.25, version: 9, explored: true });
      const two = decision(uuidv7(past(5, 10)), past(5, 10), fx.bobKey, { costUsd: '0.2', chosen: 'mockai/beta', q: 0.75, cost: 0.5, version: 9, affinity: 'mockai/beta' });
      const tiny = decision(uuidv7(past(5, 20)), past(5, 20), fx.bobKey, { costUsd: '0.000000000000000000001', chosen: 'mockai/beta', q: 1, cost: 0.75, version: 9 });
      await insertDecisions(sql, [one]);
      await insertDecisions(sql, [two]);
      await insertDecisions(sql, [tiny]);
      const o = await routerOverview(sql, dayOf(5), ADMIN);
      assert.equal(o.cost_usd, '0.300000000000000000001');
      assert.deepEqual([o.routed, o.errors, o.explored, o.affinity_known, o.affinity_chosen], [3, 1, 1, 1, 1]);
      const [beta] = o.models;
      assert.deepEqual([beta!.model, beta!.requests, beta!.cost_usd, beta!.cost_per_request_usd, beta!.predicted_cost_usd, beta!.predicted_quality], ['mockai/beta', 3, '0.300000000000000000001', '0.1', 0.5, 0.75]);
      assert.deepEqual(o.state_versions, [{ version: 9, decisions: 3, first_at: two.createdAt, last_at: one.createdAt }]);
      // A member sees their own keys' cells only.
      const alice = (await get('alice', `/router?from=${Date.UTC(2021, 0, 5)}&to=${Date.UTC(2021, 0, 6)}`)).body;
      assert.deepEqual([alice.routed, alice.cost_usd, alice.state_versions], [0, '0', []]);
    });

    test('a request routed through the gateway shows up in the overview with its cost and status', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const before = (await get('admin', '/router')).body;
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${fx.aliceSecret}` },
        body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'Hello there' }] }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      const id = res.headers.get('x-inference-id')!;
      await gw.services.router!.flush();
      let rec: Record<string, unknown> | undefined;
      for (let i = 0; i < 200 && !rec; i++) {
        rec = (await gw.services.store!.sql.all('SELECT cost_usd FROM inferences WHERE id = ?', [id]))[0];
        if (!rec) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(rec, 'the inference record landed');
      const after = (await get('admin', '/router')).body;
      assert.equal(after.routed, before.routed + 1);
      const gamma = after.models.find((m: { model: string }) => m.model === 'mockai/gamma');
      assert.ok(gamma, JSON.stringify(after.models));
      assert.equal(gamma.requests, 1);
      assert.equal(gamma.errors, 0);
      assert.ok(Number(gamma.cost_usd) > 0);
      assert.equal(compareDecimal(gamma.cost_usd, String(rec!.cost_usd)), 0, 'the exact cost of its inference record');
      const mine = (await get('alice', '/router')).body;
      assert.equal(mine.models.find((m: { model: string }) => m.model === 'mockai/gamma')?.requests, 1);
    });

    test('routed traffic over time and by prompt kind, hand-counted, in the viewer\'s zone and for a member', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const sql = gw.services.store!.sql;
      const { aliceKey: a, bobKey: b } = fx;
      const at = (day: number, h: number, m: number): number => Date.UTC(2021, 0, day, h, m);
      const markup = '<b onmouseover="x()">kind</b>';
      // [time, key, kind, chosen, status, cost]
      const spec: Array<[number, string, string, string | null, number, string]> = [
        [at(10, 10, 5), a, 'code', 'mockai/alpha', 200, '0.1'], [at(10, 10, 20), a, 'code', 'mockai/beta', 200, '0.2'],
        [at(10, 10, 40), b, 'math', 'mockai/alpha', 502, '0'], [at(10, 11, 10), b, 'code', 'mockai/alpha', 200, '0.3'],
        [at(10, 13, 0), a, 'chat', null, 400, '0'],
        [at(11, 9, 0), a, 'code', 'mockai/alpha', 200, '0.05'], [at(11, 9, 10), a, 'code', 'mockai/delta', 200, '0'],
        [at(11, 9, 20), a, 'code', 'mockai/epsilon', 200, '0'], [at(11, 23, 30), b, markup, 'mockai/gamma', 200, '0.01'],
      ];
      const rows = spec.map(([t, key, kind, chosen, status, costUsd]) => decision(uuidv7(t), t, key, { kind, chosen, status, costUsd, version: 2 }));
      await insertDecisions(sql, rows.slice(0, 4));
      await insertDecisions(sql, rows.slice(4));
      const zero = { requests: 0, errors: 0, cost_usd: '0' };
      const q = (from: number, to: number, extra: object = {}) => ({ from, to, top: 10, qualitySignals: [], ...extra });

      // One day: hour buckets.
      const day = await routerOverview(sql, q(at(10, 0, 0), at(11, 0, 0)), ADMIN);
      assert.equal(day.bucket, 'hour');
      const hourly = Array.from({ length: 24 }, () => zero);
      hourly[10] = { requests: 3, errors: 1, cost_usd: '0.3' };
      hourly[11] = { requests: 1, errors: 0, cost_usd: '0.3' };
      hourly[13] = { requests: 1, errors: 1, cost_usd: '0' };
      assert.deepEqual(day.series, hourly);
      assert.equal(day.buckets[10], new Date(at(10, 10, 0)).toISOString());

      // Three days: day buckets, UTC and New York (UTC-5 in January: its days start at 05:00 UTC).
      const three = await routerOverview(sql, q(at(10, 0, 0), at(13, 0, 0)), ADMIN);
      assert.equal(three.bucket, 'day');
      assert.deepEqual(three.buckets, [10, 11, 12].map((d) => new Date(at(d, 0, 0)).toISOString()));
      assert.deepEqual(three.series, [{ requests: 5, errors: 2, cost_usd: '0.6' }, { requests: 4, errors: 0, cost_usd: '0.06' }, zero]);
      const ny = await routerOverview(sql, q(at(10, 0, 0), at(13, 0, 0), { tz: 'America/New_York' }), ADMIN);
      assert.deepEqual(ny.buckets, [9, 10, 11, 12].map((d) => new Date(at(d, 5, 0)).toISOString()));
      assert.deepEqual(ny.series, [zero, { requests: 5, errors: 2, cost_usd: '0.6' }, { requests: 4, errors: 0, cost_usd: '0.06' }, zero]);

      // By kind: most requests first (ties by name), top 3 models per kind, the rest summed.
      assert.deepEqual(three.kinds, [
        { kind: 'code', requests: 6, share: 6 / 9, errors: 0, error_rate: 0, cost_usd: '0.65', cost_per_request_usd: '0.108333333333', no_route: 0,
          models: [{ model: 'mockai/alpha', requests: 3, share: 0.5 }, { model: 'mockai/beta', requests: 1, share: 1 / 6 }, { model: 'mockai/delta', requests: 1, share: 1 / 6 }],
          other: { models: 1, requests: 1, share: 1 / 6 } },
        { kind: markup, requests: 1, share: 1 / 9, errors: 0, error_rate: 0, cost_usd: '0.01', cost_per_request_usd: '0.01', no_route: 0,
          models: [{ model: 'mockai/gamma', requests: 1, share: 1 }], other: null },
        { kind: 'chat', requests: 1, share: 1 / 9, errors: 1, error_rate: 1, cost_usd: '0', cost_per_request_usd: '0', no_route: 1, models: [], other: null },
        { kind: 'math', requests: 1, share: 1 / 9, errors: 1, error_rate: 1, cost_usd: '0', cost_per_request_usd: '0', no_route: 0,
          models: [{ model: 'mockai/alpha', requests: 1, share: 1 }], other: null },
      ]);
      assert.equal(three.routed, 9);
      // Hours only (no whole UTC day), and hours around a whole day (day rows for it): the same decisions counted once.
      const counts = (o: { kinds: Array<{ kind: string; requests: number }> }): Array<[string, number]> => o.kinds.map((k) => [k.kind, k.requests]);
      for (const [from, to] of [[at(10, 10, 30), at(11, 9, 15)], [at(9, 12, 0), at(11, 9, 30)]] as const) {
        assert.deepEqual(counts(await routerOverview(sql, q(from, to), ADMIN)), [['code', 6], ['chat', 1], ['math', 1]], `${new Date(from).toISOString()} ${new Date(to).toISOString()}`);
      }

      // A member (through the API): her keys' rows only, in both parts.
      const mine = (await get('alice', `/router?from=${at(10, 0, 0)}&to=${at(13, 0, 0)}`)).body;
      assert.deepEqual(mine.series, [{ requests: 3, errors: 1, cost_usd: '0.3' }, { requests: 3, errors: 0, cost_usd: '0.05' }, zero]);
      assert.deepEqual(mine.kinds.map((k: { kind: string; requests: number; models: Array<{ model: string }>; other: unknown }) => [k.kind, k.requests, k.models.map((m) => m.model), k.other]),
        [['code', 5, ['mockai/alpha', 'mockai/beta', 'mockai/delta'], { models: 1, requests: 1, share: 0.2 }], ['chat', 1, [], null]]);
      const none = (await get('carol', `/router?from=${at(10, 0, 0)}&to=${at(13, 0, 0)}&bucket=day`)).body;
      assert.deepEqual([none.series, none.kinds], [[zero, zero, zero], []]);
    });

    test('the router rollups\' hour rows go with the dashboard\'s hour rollups (hour_rollups_days)', { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const sql = gw.services.store!.sql;
      const count = async (): Promise<number[]> => Promise.all(['router_rollup', 'router_rollup_version', 'router_rollup_excl', 'router_rollup_kind'].map(async (t) =>
        Number((await sql.all(`SELECT COUNT(*) AS n FROM ${t} WHERE t < ?`, [new Date(Date.UTC(2022, 0, 1)).toISOString()]))[0]!.n)));
      assert.ok((await count()).every((n) => n > 0), 'the 2021 rows of the tests above');
      const month = (await get('admin', `/router?from=${Date.now() - 30 * 86_400_000}`)).body;
      const pruned = await pruneRollups(sql, { hourRollupsDays: 90, dayRollupsDays: null });
      assert.ok(pruned.hourRows >= 3);
      assert.deepEqual(await count(), [0, 0, 0, 0]);
      assert.equal((await routerOverview(sql, dayOf(5), ADMIN)).routed, 0);
      assert.deepEqual((await get('admin', `/router?from=${Date.now() - 30 * 86_400_000}`)).body, month, 'the last 90 days are kept');
    });

    // Each migration's tables, with their columns and order, as the write path fills them.
    const BACKFILLED: Record<number, ReadonlyArray<readonly [string, string, string]>> = {
      21: [
        ['router_rollup', 'key_id, chosen, n, errors, cost, predicted_sum, predicted_n, quality_sum, quality_n, fallbacks, explored, affinity_known, affinity_chosen', 'key_id, chosen'],
        ['router_rollup_version', 'key_id, state_version, n, first_at, last_at', 'key_id, state_version'],
        ['router_rollup_excl', 'key_id, constraint_name, decisions, candidates', 'key_id, constraint_name'],
      ],
      22: [['router_rollup_kind', 'grain, span, key_id, kind, chosen, n, errors, cost', 'grain, span, key_id, kind, chosen']],
    };
    for (const version of [21, 22] as const) test(`migration ${version} fills its rollups from the decisions stored before it, as the write path counts them`, { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
      const dir = mkdtempSync(join(tmpdir(), `router-m${version}-`));
      const mkStore = (): SqliteStore | PostgresStore => (backend === 'sqlite' ? new SqliteStore({ path: join(dir, `${Math.random()}.db`) }) : new PostgresStore({ url: PG_URL, schema: freshSchema(`gw_router_m${version}`) }));
      const old = mkStore(); const now = mkStore();
      try {
        for (const s of [old, now]) if (s instanceof PostgresStore) await s.sql.run(`CREATE SCHEMA IF NOT EXISTS "${s.schema}"`);
        await old.sql.run(MIGRATIONS_TABLE_SQL);
        // Every step but this one (the stores' inserts need the later ones); migrate() then runs it alone.
        for (const m of [...MIGRATIONS].sort((x, y) => x.version - y.version).filter((x) => x.version !== version)) {
          for (const st of m[old.kind]) await old.sql.run(st);
          await old.sql.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, new Date().toISOString()]);
        }
        await now.migrate();
        // Decisions over two days and three hours, two keys and none, with records (status, cost) but one.
        const models = ['mockai/alpha', 'mockai/beta', null];
        const recs: InferenceRecord[] = [];
        const rows: DecisionRow[] = [];
        for (let i = 0; i < 60; i++) {
          const at = Date.UTC(2021, 1, 1 + (i % 2), 8 + (i % 3), i);
          const id = uuidv7(at);
          const key = i % 4 === 0 ? null : i % 2 ? 'k1' : 'k2';
          const chosen = models[i % 3]!;
          const kind = ['code', 'math', 'chat', 'extraction'][i % 4]!;
          const status = i % 7 === 0 ? 502 : 200;
          const costUsd = chosen ? `0.${(i % 9) + 1}` : '0';
          if (i !== 5) recs.push(inference(id, at, key, { model: chosen, status, cost: costUsd }));
          rows.push(decision(id, at + 200, key as string, {
            kind, status: i === 5 ? 0 : status, costUsd: i === 5 ? '0' : costUsd, chosen, q: (i % 5) / 4, cost: (i % 4) / 8, attempts: i % 6 === 0 ? 2 : undefined,
            explored: i % 8 === 0, affinity: i % 3 === 0 ? 'mockai/alpha' : null, version: 1 + (i % 2), excluded: i % 2 ? { max_cost: i % 3, 'capability:tools': 1 } : {},
          }));
        }
        for (const s of [old, now]) await s.insertInferences(recs);
        // The old shape: rows alone, as migration 20's writer stored them.
        for (const r of rows) {
          await old.sql.run('INSERT INTO router_decisions (inference_id, created_at, key_id, served_model, canonical, kind, features, decision) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
            [r.inferenceId, r.createdAt, r.keyId, r.servedModel, r.canonical, r.kind, JSON.stringify(r.features), JSON.stringify(r.decision)]);
        }
        await old.migrate(); // this version
        await insertDecisions(now.sql, rows.slice(0, 25));
        await insertDecisions(now.sql, rows.slice(25));
        const dump = async (s: SqliteStore | PostgresStore): Promise<unknown> => {
          const out: Record<string, unknown[]> = {};
          for (const [t, cols, order] of BACKFILLED[version]!) {
            out[t] = (await s.sql.all(`SELECT t, ${cols} FROM ${t} ORDER BY t, ${order}`)).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) =>
              [k, v instanceof Date ? v.toISOString() : k === 'cost' ? String(Number(v)) : typeof v === 'bigint' || (typeof v === 'string' && /^-?\d+$/.test(v)) ? Number(v) : typeof v === 'number' ? Number(v.toFixed(9)) : v])));
          }
          return out;
        };
        const got = await dump(old);
        assert.deepEqual(got, await dump(now));
        assert.ok((got as Record<string, unknown[]>)[BACKFILLED[version]![0]![0]]!.length >= 6, 'several cells');
        const o = await routerOverview(old.sql, { from: Date.UTC(2021, 1, 1), to: Date.UTC(2021, 1, 3), top: 10, qualitySignals: [] }, ADMIN);
        const cost = recs.reduce((a, r) => addDecimal(a, r.costUsd), '0');
        const errors = recs.filter((r) => r.status >= 400).length;
        // The other migration ran before the decisions were stored: only this one's tables hold them.
        if (version === 21) {
          assert.equal(o.routed, 60);
          assert.equal(compareDecimal(o.cost_usd, cost), 0);
          assert.equal(o.errors, errors);
        } else {
          assert.deepEqual(o.kinds.map((k) => [k.kind, k.requests]), [['chat', 15], ['code', 15], ['extraction', 15], ['math', 15]]);
          assert.equal(compareDecimal(o.kinds.reduce((a, k) => addDecimal(a, k.cost_usd), '0'), cost), 0);
          assert.equal(o.kinds.reduce((a, k) => a + k.errors, 0), errors);
        }
      } finally {
        await old.close(); await now.close();
        for (const s of [old, now]) if (s instanceof PostgresStore) await dropSchema(s.schema);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
