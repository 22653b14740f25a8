// Training keeps up with the traffic: one pass folds up to 50,000 routed answers (10 reads of
// 5,000; before, one read a pass every 30 s left the output table further behind with every pass
// above ~167 routed requests a second) and 5,000 feedback rows; a pass that stops at either bound says
// so (`more`), and RouterLearning runs the next within a second. On SQLite and PostgreSQL.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { trainPass, emptyStored } from '../src/router/train-pass.ts';
import { START } from '../src/router/store.ts';
import { nextLanding } from '../src/store/landing.ts';
import { runTrain } from '../src/workers/router-train.ts';
import { InlineBackend, type LearnResult, type RouterBackend } from '../src/router/backend.ts';
import { RouterLearning } from '../src/router/learning.ts';
import { RowEncoder } from '../src/router/decision-row.ts';
import { extractPromptFeatures } from '../src/router/quality/index.ts';
import { compileRouterSettings } from '../src/router/settings.ts';
import type { Decision } from '../src/router/decide.ts';
import { pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-train-catch-up-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_train_catch_up');
const backends: Array<{ name: string; open: () => Promise<Store> }> = [{ name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, 'r.db') }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

const settings = { qualitySignals: compileRouterSettings({ quality_signals: [{ metric: 'good', optimize: 'max' }] }).qualitySignals, halfLifeDays: null, feedbackSettleMs: 0 };
const ranked = { id: 'p/m-a', q: 0.8, expectedCostUsd: 0.001, utility: 0.8, inputTokens: 1, outputTokens: 1, tokenMethod: 'o200k_base', excluded: null };
const decision = { w: null, policy: null, stateVersion: 0, kind: 'chat', candidates: 1, ranked: [ranked], excludedBy: {}, chosen: ranked, explored: false, affinity: null, plan: [] } as unknown as Decision;
const record = (id: string, outputTokens: number): InferenceRecord => ({
  id, createdAt: new Date().toISOString(), keyId: 'k1', route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
  servedModel: 'p/m-a', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 1, ttftMs: 1, stream: false,
  inputTokens: 10, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

/** `n` routed answers a minute old (decision and inference record), oldest first; their ids. */
async function answers(s: Store, n: number, outputTokens: number): Promise<string[]> {
  const t0 = Date.now() - 60_000 - n;
  const ids = Array.from({ length: n }, (_, i) => uuidv7(t0 + i));
  const features = extractPromptFeatures({ turns: ['hello there'] });
  for (let i = 0; i < n; i += 5000) {
    const enc = new RowEncoder();
    for (const [k, id] of ids.slice(i, i + 5000).entries()) enc.add({ inferenceId: id, createdAt: new Date(t0 + i + k).toISOString(), keyId: 'k1', servedModel: 'p/m-a', canonical: 'm-a', kind: 'chat', status: 200, costUsd: '0.001' }, features, decision, []);
    await new InlineBackend(s.sql).writeDecisions(enc.seal());
    await s.insertInferences(ids.slice(i, i + 5000).map((id) => record(id, outputTokens)));
  }
  return ids;
}

for (const b of backends) {
  test(`${b.name}: a pass folds every answer up to 50,000 and every feedback row up to 5,000, and says when more are left`, async () => {
    const s = await b.open();
    try {
      const ids = await answers(s, 12_001, 321);
      // With a bound of two reads a pass stops at 10,000 answers and says more are left.
      const bounded = await trainPass(s.sql, emptyStored(), settings, runTrain, 2);
      assert.deepEqual([bounded.more, bounded.next?.output['m-a']?.chat?.[0], bounded.next?.decisionCursor.id], [true, 10_000, ids[9_999]]);
      const rest = await trainPass(s.sql, bounded.next!, settings, runTrain, 2);
      assert.deepEqual([rest.more, rest.next?.output['m-a']?.chat?.[0]], [false, 12_001]);
      // Unbounded (the default, ten reads): every answer in one pass, read again from the start.
      const first = await trainPass(s.sql, { ...emptyStored(), version: rest.next!.version }, settings, runTrain);
      assert.ok(first.next);
      assert.equal(first.more, false, 'three reads took every answer');
      assert.equal(first.next.decisionCursor.id, ids.at(-1), 'the cursor is past the last answer');
      assert.deepEqual(first.next.output['m-a']?.chat?.[0], 12_001, 'every answer counted in the output table');
      // 5,001 feedback rows: a pass takes 5,000 and says one is left; the next takes it.
      const at = Date.now() - 30_000;
      await s.insertFeedback(ids.slice(0, 5_001).map((inferenceId, i) => ({ id: uuidv7(at + i), inferenceId, keyId: 'k1', metric: 'good', type: 'boolean', value: i % 2 ? 'true' : 'false', reason: null, tags: {}, optimize: 'max', createdAt: new Date(at + i).toISOString() })));
      const second = await trainPass(s.sql, first.next, settings, runTrain);
      assert.ok(second.next);
      assert.equal(second.more, true);
      assert.equal(second.next.outcomes - first.next.outcomes, 5_000);
      const third = await trainPass(s.sql, second.next, settings, runTrain);
      assert.ok(third.next);
      assert.equal(third.more, false);
      assert.equal(third.next.outcomes - second.next.outcomes, 1);
    } finally { await s.close(); }
  });
}

test('RouterLearning: a training pass with more left is followed by the next within a second, not a train interval later', async () => {
  const calls: number[] = [];
  const t0 = performance.now();
  let left = 3;
  const backend = {
    async learn(): Promise<LearnResult> { calls.push(performance.now() - t0); left--; return { state: null, stored: false, more: left > 0 }; },
    async load() { return null; }, async prune() { return { decisions: 0, states: 0, more: false }; }, async writeDecisions() {}, async close() {},
  } as unknown as RouterBackend;
  const r = compileRouterSettings({ learning: { train_interval_ms: 300, state_poll_ms: 3_600_000 } });
  const learning = new RouterLearning({ backend, settings: () => r });
  await learning.start();
  try {
    await new Promise((res) => setTimeout(res, 3_500));
    // The first after 300 ms, the next two about a second apart (more left), then 300 ms intervals again.
    assert.ok(calls.length >= 4, calls.map((x) => x.toFixed(0)).join(', '));
    assert.ok(calls[1]! - calls[0]! >= 900 && calls[2]! - calls[1]! >= 900, calls.map((x) => x.toFixed(0)).join(', '));
    assert.ok(calls[3]! - calls[2]! < 900, calls.map((x) => x.toFixed(0)).join(', '));
  } finally { await learning.close(); }
});

for (const b of backends) {
  test(`${b.name}: feedback whose decision has not landed is learned when the decision lands, and holds back no feedback after it (before landing order it was passed by the cursor and never learned)`, async () => {
    const s = b.name === 'sqlite' ? await openStore({ sqlitePath: join(tmp, 'late.db') }) : await b.open();
    try {
      const from = await nextLanding(s.sql);
      const now = Date.now();
      const [a, late, c] = [now - 3000, now - 2000, now - 1000].map((t) => uuidv7(t)) as [string, string, string];
      const features = extractPromptFeatures({ turns: ['hello there'] });
      const decide = async (id: string, t: number): Promise<void> => {
        const enc = new RowEncoder();
        enc.add({ inferenceId: id, createdAt: new Date(t).toISOString(), keyId: 'k1', servedModel: 'p/m-a', canonical: 'm-a', kind: 'chat', status: 200, costUsd: '0.001' }, features, decision, []);
        await new InlineBackend(s.sql).writeDecisions(enc.seal());
      };
      await decide(a, now - 3000);
      await decide(c, now - 1000);
      await s.insertInferences([a, late, c].map((id) => record(id, 5)));
      await s.insertFeedback([[a, now - 2900], [late, now - 1900], [c, now - 900]].map(([inferenceId, t]) => ({ id: uuidv7(t as number), inferenceId: inferenceId as string, keyId: 'k1', metric: 'good', type: 'boolean', value: 'true', reason: null, tags: {}, optimize: 'max', createdAt: new Date(t as number).toISOString() })));
      const v = Number((await s.sql.all('SELECT MAX(version) AS v FROM router_state'))[0]?.v ?? 0);
      // Cursors past the rows of the test before (this file's database).
      const base = { ...emptyStored(), version: v, feedbackCursor: { ...START, landed: from }, decisionCursor: { ...START, landed: from } };
      const first = await trainPass(s.sql, base, settings, runTrain);
      assert.ok(first.next);
      assert.equal(first.next.outcomes, 2, 'the feedback before and after the one waiting for its decision');
      await decide(late, now - 2000);
      const second = await trainPass(s.sql, first.next, settings, runTrain);
      assert.ok(second.next);
      assert.equal(second.next.outcomes, 3, 'the late decision joined');
    } finally { await s.close(); }
  });
}
