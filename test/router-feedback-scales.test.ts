// A correction takes out what its first value taught on the scale that value was read with: an
// operator changing a float signal's min, max or optimize between a first value and its correction
// must not move the model by the difference of two scales (src/router/signal-scales.ts).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { insertDecisions, loadState, START } from '../src/router/store.ts';
import { emptyStored, trainPass } from '../src/router/train-pass.ts';
import { signalScales } from '../src/router/signal-scales.ts';
import { compileRouterSettings } from '../src/router/settings.ts';
import { extractPromptFeatures, type Outcome } from '../src/router/quality/index.ts';
import { runTrain, type TrainTask } from '../src/workers/router-train.ts';
import { pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-router-scales-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_router_scales');
const backends: Array<{ name: string; open: () => Promise<Store> }> = [{ name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, 'r.db') }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

const inference = (id: string, at: string): InferenceRecord => ({
  id, createdAt: at, keyId: null, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
  servedModel: 'p/m-a', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 10, ttftMs: 5, stream: false,
  inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

const train = (signal: Record<string, unknown>) => ({ qualitySignals: compileRouterSettings({ quality_signals: [{ metric: 'score', ...signal }] }).qualitySignals, halfLifeDays: null, feedbackSettleMs: 1000 });

for (const b of backends) {
  test(`${b.name}: a correction after the signal's range or direction changed takes out what its first value taught`, async () => {
    const store = await b.open();
    try {
      for (const t of ['router_state', 'feedback', 'router_decisions', 'inferences']) await store.sql.run(`DELETE FROM ${t}`);
      const t = Date.now();
      const ago = (ms: number): string => new Date(t - ms).toISOString();
      const inf = { a: uuidv7(), b: uuidv7() };
      const features = extractPromptFeatures({ turns: ['Rate this answer'] });
      await insertDecisions(store.sql, Object.values(inf).map((id) => ({ inferenceId: id, createdAt: ago(300_000), keyId: null, servedModel: 'p/m-a', canonical: 'm-a', kind: features.kind, status: 200, costUsd: '0', features, decision: {} })));
      await store.insertInferences(Object.values(inf).map((id) => inference(id, ago(300_000))));
      const fb = (which: keyof typeof inf, value: string, msAgo: number): FeedbackRow => ({
        id: uuidv7(), inferenceId: inf[which], keyId: null, metric: 'score', type: 'float', value, reason: null, tags: {}, optimize: 'max', createdAt: ago(msAgo),
      });
      const seen: Outcome[][] = [];
      const run = (task: TrainTask) => { seen.push(task.outcomes); return runTrain(task); };
      const shown = () => seen.splice(0).flat().map((o) => [o.score, o.correction?.from ?? null]);
      const mean = async (v: number) => (await loadState(store.sql, v))!.quality.models['m-a'];

      // Scored on 0-100: a's 80 teaches 0.8.
      await store.insertFeedback([fb('a', '80', 200_000)]);
      const v1 = (await trainPass(store.sql, emptyStored(), train({ min: 0, max: 100 }), run)).next!;
      assert.deepEqual(shown(), [[0.8, null]]);
      assert.deepEqual(await mean(v1.version), { n: 1, mean: 0.8 });

      // The range becomes 0-200: b's first value 100 teaches 0.5. a, corrected to 90, stays on the scale
      // its first value was learned with: it takes out the 0.8 put in and teaches 0.9 (on today's scale
      // the correction took out 0.4 and the model kept 0.4 of a score no answer had).
      await store.insertFeedback([fb('b', '100', 150_000), fb('a', '90', 100_000)]);
      const v2 = (await trainPass(store.sql, (await loadState(store.sql, v1.version))!, train({ min: 0, max: 200 }), run)).next!;
      assert.deepEqual(shown(), [[0.5, null], [0.9, 0.8]]);
      const m2 = (await mean(v2.version))!;
      assert.equal(m2.n, 2);
      assert.ok(Math.abs(m2.mean - 0.7) < 1e-9, `mean ${m2.mean}`);

      // Lower becomes better (latency-like), still 0-200: b (learned on 0-200, higher better) corrected
      // to 50 reads 0.25 for 0.5; a (0-100, higher better) corrected to 40 reads 0.4 for 0.9. A first
      // value given now would read on the new scale.
      await store.insertFeedback([fb('b', '50', 50_000), fb('a', '40', 40_000)]);
      const v3 = (await trainPass(store.sql, (await loadState(store.sql, v2.version))!, train({ min: 0, max: 200, optimize: 'min' }), run)).next!;
      assert.deepEqual(shown(), [[0.25, 0.5], [0.4, 0.9]]);
      const m3 = (await mean(v3.version))!;
      assert.ok(Math.abs(m3.mean - 0.325) < 1e-9, `mean ${m3.mean}`);
      // The cursor keeps the three scales, the first from the start.
      assert.deepEqual(v3.feedbackCursor.scales!.score!.map((s) => [s.after === '', s.max, s.optimize]), [[true, 100, 'max'], [false, 200, 'max'], [false, 200, 'min']]);
    } finally { await store.close(); }
  });
}

test('a cursor stored before scales were kept starts with the scale of now; a damaged one is ignored; the history is bounded', () => {
  const signals = (max: number) => new Map([['score', { metric: 'score', optimize: 'max' as const, min: 0, max }]]);
  assert.deepEqual(signalScales(START, signals(10)), { score: [{ after: '', optimize: 'max', min: 0, max: 10 }] });
  assert.deepEqual(signalScales({ ...START, scales: { score: 'junk' as never } }, signals(10)).score!.length, 1);
  let c = { ...START, landed: '1' };
  for (let i = 1; i <= 40; i++) c = { ...c, landed: String(i), scales: signalScales(c, signals(i)) };
  const kept = c.scales!.score!;
  assert.equal(kept.length, 16);
  assert.equal(kept[0]!.after, '', 'the oldest kept takes every first value before it');
  assert.equal(kept.at(-1)!.max, 40);
});
