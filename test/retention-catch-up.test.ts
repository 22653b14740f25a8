// Retention that keeps up with the traffic: a pass is bounded (the records' pass a million rows, the
// router's decisions' pass 100,000), and one that stops at its bound with rows left says so and is
// followed by the next within a second instead of an hour later. Before, any traffic above what one
// pass an hour deletes (about 28 routed requests a second for the decisions) grew the tables for good.
// The passes on SQLite and PostgreSQL; the timer with real (short) delays.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { pruneOnce, sqlSteps } from '../src/dashboard/retention.ts';
import { catchUpTimer } from '../src/util/catch-up.ts';
import { pruneRouterData } from '../src/router/store.ts';
import { InlineBackend } from '../src/router/backend.ts';
import { RowEncoder } from '../src/router/decision-row.ts';
import { extractPromptFeatures } from '../src/router/quality/index.ts';
import type { Decision } from '../src/router/decide.ts';
import { pgTestDb } from './helpers/pg.ts';
import { WriteThread } from '../src/store/write-thread.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-retention-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_retention');
const backends: Array<{ name: string; open: () => Promise<Store> }> = [{ name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, 'r.db') }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

const DAY = 86_400_000;
const record = (id: string, body: string | null): InferenceRecord => ({
  id, createdAt: new Date().toISOString(), keyId: null, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'm',
  servedModel: 'p/m', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 1, ttftMs: 1, stream: false,
  inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: body, responseBody: body,
});
const count = async (s: Store, sql: string, p: unknown[] = []): Promise<number> => Number((await s.sql.all(sql, p))[0]!.n);

for (const b of backends) {
  test(`${b.name}: a records pass stopped at its bound says more are left; passes delete every old record (and its feedback) and clear old bodies, fresh ones stay`, async () => {
    const s = await b.open();
    try {
      const now = Date.now();
      const old = Array.from({ length: 4_100 }, (_, i) => uuidv7(now - 40 * DAY + i));
      const aged = Array.from({ length: 10 }, (_, i) => uuidv7(now - 10 * DAY + i));
      const fresh = Array.from({ length: 5 }, () => uuidv7(now));
      await s.insertInferences([...old.map((id) => record(id, null)), ...aged.map((id) => record(id, '{"x":1}')), ...fresh.map((id) => record(id, '{"x":1}'))]);
      await s.insertFeedback([old[0]!, fresh[0]!].map((inferenceId) => ({ id: uuidv7(), inferenceId, keyId: null, metric: 'good', type: 'boolean', value: 'true', reason: null, tags: {}, optimize: 'max', createdAt: new Date().toISOString() })));
      const settings = { recordsDays: 30, bodiesDays: 7 };
      const passes = [];
      for (let i = 0; i < 4; i++) passes.push(await pruneOnce(sqlSteps(s.sql), settings, now, 1));
      assert.deepEqual(passes.map((p) => [p.records, p.more]), [[2000, true], [2000, true], [100, false], [0, false]]);
      assert.equal(passes.reduce((t, p) => t + p.bodies, 0), 10, 'the aged records\' bodies cleared once');
      assert.equal(await count(s, `SELECT COUNT(*) AS n FROM inferences WHERE id IN (${old.map(() => '?').join(', ')})`, old), 0);
      assert.equal(await count(s, 'SELECT COUNT(*) AS n FROM feedback WHERE inference_id = ?', [old[0]]), 0, 'an old record\'s feedback goes with it');
      assert.equal(await count(s, 'SELECT COUNT(*) AS n FROM feedback WHERE inference_id = ?', [fresh[0]]), 1);
      assert.equal(await count(s, `SELECT COUNT(*) AS n FROM inferences WHERE id IN (${aged.map(() => '?').join(', ')}) AND request_body IS NULL AND response_body IS NULL`, aged), 10);
      assert.equal(await count(s, `SELECT COUNT(*) AS n FROM inferences WHERE id IN (${fresh.map(() => '?').join(', ')}) AND request_body IS NOT NULL`, fresh), 5);
    } finally { await s.close(); }
  });

  test(`${b.name}: a decisions pass stopped at its bound says more are left, until every old decision is gone`, async () => {
    const s = await b.open();
    try {
      const ranked = { id: 'p/m', q: 0.8, expectedCostUsd: 0.001, utility: 0.8, inputTokens: 1, outputTokens: 1, tokenMethod: 'o200k_base', excluded: null };
      const d = { w: null, policy: null, stateVersion: 0, kind: 'chat', candidates: 1, ranked: [ranked], excludedBy: {}, chosen: ranked, explored: false, affinity: null, plan: [] } as unknown as Decision;
      const enc = new RowEncoder();
      const features = extractPromptFeatures({ turns: ['hello'] });
      const at = (ms: number): string => new Date(ms).toISOString();
      for (let i = 0; i < 4_100; i++) enc.add({ inferenceId: uuidv7(), createdAt: at(Date.now() - 400 * DAY + i), keyId: null, servedModel: 'p/m', canonical: 'm', kind: 'chat', status: 200, costUsd: '0' }, features, d, []);
      const freshId = uuidv7();
      enc.add({ inferenceId: freshId, createdAt: at(Date.now()), keyId: null, servedModel: 'p/m', canonical: 'm', kind: 'chat', status: 200, costUsd: '0' }, features, d, []);
      await new InlineBackend(s.sql).writeDecisions(enc.seal());
      const before = at(Date.now() - 300 * DAY);
      const passes = [];
      for (let i = 0; i < 3; i++) passes.push(await pruneRouterData(s.sql, 300, { states: 50, days: 0 }, 1));
      assert.deepEqual(passes.map((p) => [p.decisions, p.more]), [[2000, true], [2000, true], [100, false]]);
      assert.equal(await count(s, 'SELECT COUNT(*) AS n FROM router_decisions WHERE created_at < ?', [before]), 0);
      assert.equal(await count(s, 'SELECT COUNT(*) AS n FROM router_decisions WHERE inference_id = ?', [freshId]), 1);
    } finally { await s.close(); }
  });
}

test('sqlite: the records\' retention runs on the store\'s write thread: its chunks delete the same rows, and the event loop keeps turning while one is deleted', async () => {
  const path = join(tmp, 'thread.db');
  const s = await openStore({ sqlitePath: path });
  const thread = new WriteThread({ sqlitePath: path });
  try {
    await thread.ready();
    const now = Date.now();
    const old = Array.from({ length: 2_500 }, (_, i) => uuidv7(now - 40 * DAY + i));
    const fresh = uuidv7(now);
    await s.insertInferences([...old, fresh].map((id) => record(id, '{"x":1}')));
    await s.insertFeedback([old[0]!].map((inferenceId) => ({ id: uuidv7(), inferenceId, keyId: null, metric: 'good', type: 'boolean', value: 'true', reason: null, tags: {}, optimize: 'max', createdAt: new Date().toISOString() })));
    // The first chunk (2,000 records) is deleted by the thread while this loop spins: it turns meanwhile
    // (on the main store's connection the chunk's statements would run synchronously, with no turn).
    let turns = 0;
    let done = false;
    const spin = (): void => { if (!done) { turns++; setImmediate(spin); } };
    setImmediate(spin);
    const r = await pruneOnce({ records: thread.pruneRecords, bodies: thread.clearBodies }, { recordsDays: 30, bodiesDays: null }, now, 1);
    done = true;
    assert.deepEqual([r.records, r.more], [2000, true]);
    assert.ok(turns > 0, 'the event loop turned while the thread deleted the chunk');
    const rest = await pruneOnce({ records: thread.pruneRecords, bodies: thread.clearBodies }, { recordsDays: 30, bodiesDays: null }, now);
    assert.deepEqual([rest.records, rest.more], [500, false]);
    assert.equal(await count(s, 'SELECT COUNT(*) AS n FROM inferences'), 1, 'only the fresh record is left');
    assert.equal(await count(s, 'SELECT COUNT(*) AS n FROM feedback'), 0, 'the old record\'s feedback went with it');
  } finally { await thread.close(); await s.close(); }
});

test('catch-up timer: passes that leave work come back to back (againMs), then the next waits everyMs; a failed pass counts as done; stop ends it', async () => {
  const times: number[] = [];
  let left = 3;
  let fail = false;
  const t0 = performance.now();
  const timer = catchUpTimer(async () => {
    times.push(performance.now() - t0);
    if (fail) throw new Error('store down');
    return --left > 0;
  }, { firstMs: 10, everyMs: 400, againMs: 10 });
  await new Promise((r) => setTimeout(r, 250));
  // Three passes: the first after ~10 ms, two more ~10 ms apart (work left), then a wait of 400 ms.
  assert.equal(times.length, 3, times.join(', '));
  assert.ok(times[2]! < 200, times.join(', '));
  fail = true;
  left = 10;
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(times.length, 4, `the failed pass is followed by a full wait: ${times.join(', ')}`);
  timer.stop();
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(times.length, 4, 'no pass after stop');
});

test('postgres: a replica whose clock runs a year ahead deletes nothing fresh: records, bodies, rollups and router decisions are aged by the store\'s clock', { skip: !pgDb }, async () => {
  const { startTestGateway } = await import('./helpers/gateway.ts');
  const { PG_URL } = await import('./helpers/pg.ts');
  const schema = pgDb!.another();
  const gw = await startTestGateway({ providers: [], gateway: { storage: { database_url: PG_URL }, dashboard: { retention: { records_days: 30, bodies_days: 7 } } }, env: { GATEWAY_PG_SCHEMA: schema } });
  try {
    const s = gw.services.store!;
    const fresh = Array.from({ length: 3 }, () => uuidv7());
    await s.insertInferences(fresh.map((id) => record(id, '{"x":1}')));
    const ranked = { id: 'p/m', q: 0.8, expectedCostUsd: 0.001, utility: 0.8, inputTokens: 1, outputTokens: 1, tokenMethod: 'o200k_base', excluded: null };
    const d = { w: null, policy: null, stateVersion: 0, kind: 'chat', candidates: 1, ranked: [ranked], excludedBy: {}, chosen: ranked, explored: false, affinity: null, plan: [] } as unknown as Decision;
    const enc = new RowEncoder();
    enc.add({ inferenceId: fresh[0]!, createdAt: new Date().toISOString(), keyId: null, servedModel: 'p/m', canonical: 'm', kind: 'chat', status: 200, costUsd: '0' }, extractPromptFeatures({ turns: ['hello'] }), d, []);
    await new InlineBackend(s.sql).writeDecisions(enc.seal());
    const realNow = Date.now;
    Date.now = () => realNow() + 366 * DAY;
    try {
      await gw.services.dashboard!.retentionPass();
      await pruneRouterData(s.sql, 30, { states: 50, days: 14 });
    } finally { Date.now = realNow; }
    assert.equal(await count(s as Store, `SELECT COUNT(*) AS n FROM inferences WHERE id IN (?, ?, ?) AND request_body IS NOT NULL`, fresh), 3, 'records and their bodies kept');
    assert.equal(await count(s as Store, 'SELECT COUNT(*) AS n FROM router_decisions WHERE inference_id = ?', [fresh[0]]), 1, 'the decision kept');
  } finally { await gw.stop(); }
});
