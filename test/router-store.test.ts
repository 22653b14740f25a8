// The router's queries on both backends (SQLite and PostgreSQL, a fresh schema dropped at the end):
// decisions stored once, feedback on quality signals joined to decisions and records, answers
// teaching expected output, versions racing, cursors so nothing is folded twice.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { insertDecisions, getDecision, saveState, loadState, latestVersion, feedbackSince, START } from '../src/router/store.ts';
import { cursorAt } from '../src/router/landing-order.ts';
import { nextLanding } from '../src/store/landing.ts';
import { RouterLearning, emptyStored } from '../src/router/learning.ts';
import { InlineBackend, WorkerBackend, type RouterBackend } from '../src/router/backend.ts';
import { RowEncoder } from '../src/router/decision-row.ts';
import type { Decision } from '../src/router/decide.ts';
import type { OpenStoreOptions } from '../src/store/open.ts';
import { compileRouterSettings } from '../src/router/settings.ts';
import { extractPromptFeatures, isPacked, predict } from '../src/router/quality/index.ts';
import { pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-router-store-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_router');

const backends: Array<{ name: string; opts: OpenStoreOptions; open: () => Promise<Store> }> = [{ name: 'sqlite', opts: { sqlitePath: join(tmp, 'r.db') }, open: () => openStore({ sqlitePath: join(tmp, 'r.db') }) }];
if (pgDb) backends.push({ name: 'postgres', opts: pgDb.storeOptions(), open: () => openStore(pgDb.storeOptions()) });

const settings = compileRouterSettings({ quality_signals: [{ metric: 'good', optimize: 'max' }], learning: { feedback_settle_ms: 0 } });
const inference = (id: string, outputTokens: number, at: string): InferenceRecord => ({
  id, createdAt: at, keyId: 'k1', route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
  servedModel: 'p/m-a', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 10, ttftMs: 5, stream: false,
  inputTokens: 10, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});
const feedback = (inferenceId: string, value: string, at: string): FeedbackRow => ({
  id: uuidv7(), inferenceId, keyId: 'k1', metric: 'good', type: 'boolean', value, reason: null, tags: {}, optimize: 'max', createdAt: at,
});

for (const b of backends) {
  test(`${b.name}: decisions, training join, cursors and versions`, async () => {
    const store = await b.open();
    try {
      const features = extractPromptFeatures({ turns: ['Which is right?\nA) x\nB) y'] });
      const old = new Date(Date.now() - 60_000).toISOString();
      const ids = Array.from({ length: 6 }, () => uuidv7());
      const rows = ids.map((id) => ({ inferenceId: id, createdAt: old, keyId: 'k1', servedModel: 'p/m-a', canonical: 'm-a', kind: features.kind, status: 200, costUsd: '0.001', features, decision: { chosen: 'p/m-a' } }));
      await insertDecisions(store.sql, rows);
      await insertDecisions(store.sql, rows.slice(0, 2)); // a retried batch: no error, no duplicate
      assert.deepEqual((await getDecision(store.sql, ids[0]!))?.decision, { chosen: 'p/m-a' });
      await store.insertInferences(ids.map((id, i) => inference(id, 100 + i, old)));
      await store.insertFeedback(ids.slice(0, 4).map((id, i) => feedback(id, 'false', new Date(Date.now() - 30_000 + i).toISOString())));
      const learning = new RouterLearning({ backend: new InlineBackend(store.sql), settings: () => settings });
      assert.equal(await learning.trainOnce(), true);
      const s1 = learning.state;
      assert.equal(s1.version, 1);
      assert.equal(s1.outcomes, 4);
      assert.equal(s1.output['m-a']![features.kind]![0], 6, 'six answers taught the expected output');
      assert.equal(Math.round(s1.output['m-a']![features.kind]![1]), 103);
      assert.ok(s1.quality.models['m-a'], 'the quality state learned about m-a');
      // Nothing new: no new version; new feedback: the next version folds only it.
      assert.equal(await learning.trainOnce(), false);
      await store.insertFeedback([feedback(ids[4]!, 'true', new Date().toISOString())]);
      await new Promise((r) => setTimeout(r, 5)); // settled (the window is 0 here) by the next pass
      assert.equal(await learning.trainOnce(), true);
      assert.equal(learning.state.version, 2);
      assert.equal(learning.state.outcomes, 5);
      // One outcome per answer and metric: repeats on an answer already folded, and a second value
      // on a new answer (a correction of its first, the window being 0 here), add no outcome.
      const t = Date.now();
      await store.insertFeedback([feedback(ids[0]!, 'false', new Date(t).toISOString()), feedback(ids[0]!, 'false', new Date(t + 1).toISOString()),
        feedback(ids[5]!, 'true', new Date(t + 2).toISOString()), feedback(ids[5]!, 'false', new Date(t + 3).toISOString())]);
      await new Promise((r) => setTimeout(r, 10)); // settled (the window is 0 here) by the next pass
      assert.equal(await learning.trainOnce(), true);
      assert.equal(learning.state.outcomes, 6);
      // A second replica loads the newest version; a version already taken is refused.
      const other = new RouterLearning({ backend: new InlineBackend(store.sql), settings: () => settings });
      assert.equal(await other.refresh(), true);
      assert.equal(other.state.version, 3);
      assert.equal(await saveState(store.sql, { ...emptyStored(), version: 3 }), false);
      assert.equal(await latestVersion(store.sql), 3);
      assert.equal((await loadState(store.sql))!.outcomes, 6);
      await learning.close(); await other.close();
    } finally { await store.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: feedback is learned once settled, with the value it settled on (a verdict corrected in the window counts as corrected)`, async () => {
    const store = await b.open();
    try {
      // The rows of the tests before this one (this file's database) are behind the cursor.
      const start = { ...START, landed: await nextLanding(store.sql) };
      const features = extractPromptFeatures({ turns: ['Is this right?'] });
      const ids = Array.from({ length: 3 }, () => uuidv7());
      const t = Date.now();
      const at = (ago: number): string => new Date(t - ago).toISOString();
      await insertDecisions(store.sql, ids.map((id) => ({ inferenceId: id, createdAt: at(120_000), keyId: 'k1', servedModel: 'p/m-a', canonical: 'm-a', kind: features.kind, status: 200, costUsd: '0', features, decision: {} })));
      await store.insertInferences(ids.map((id) => inference(id, 10, at(120_000))));
      await store.insertFeedback([
        feedback(ids[0]!, 'false', at(50_000)), feedback(ids[0]!, 'true', at(45_000)), // a mis-click undone 5 s later
        feedback(ids[1]!, 'true', at(40_000)),
        feedback(ids[2]!, 'false', at(10_000)), // still in its window
      ]);
      const settled = at(30_000);
      const mine = async (c: typeof START, before: string) => (await feedbackSince(store.sql, ['good'], c, 100, before, 30_000)).filter((f) => got0.has(f.id));
      const got0 = new Set((await store.sql.all(`SELECT id FROM feedback WHERE inference_id IN (?, ?, ?)`, ids)).map((r) => String(r.id)));
      const got = await mine(start, settled);
      assert.deepEqual(got.map((f) => [f.from, f.value]), [[undefined, 'true'], [undefined, 'true']], 'the corrected verdict, once per answer; the unsettled one waits');
      // Folded from the cursor on: a change after the window comes once settled, as a correction.
      const cursor = cursorAt(got.at(-1)!.at, got.at(-1)!.id, got.at(-1)!.landed);
      const change = feedback(ids[1]!, 'false', at(5_000));
      got0.add(change.id);
      await store.insertFeedback([change]);
      assert.deepEqual(await mine(cursor, settled), []);
      // Later, the third answer's window has passed: it comes with its value, and the change too.
      assert.deepEqual((await mine(cursor, new Date(t).toISOString())).map((f) => [f.from, f.value]), [[undefined, 'false'], ['true', 'false']]);
    } finally { await store.close(); }
  });
}

const ranked = { id: 'p/m-a', q: 0.81234567, expectedCostUsd: 0.00123456789, utility: 0.81234567, inputTokens: 12, outputTokens: 400, tokenMethod: 'o200k_base', excluded: null };
const decision = {
  w: null, policy: 'p', stateVersion: 3, kind: 'chat', candidates: 2, ranked: [ranked], excludedBy: { 'policy:x': 1 }, chosen: ranked,
  explored: false, affinity: null, plan: [{ candidate: { id: 'p/m-a' }, maxOutputTokens: 1000 }],
} as unknown as Decision;
const chunkOf = (rows: Array<[string, string]>) => {
  const enc = new RowEncoder();
  for (const [id, at] of rows) enc.add({ inferenceId: id, createdAt: at, keyId: 'k1', servedModel: 'p/m-a', canonical: 'm-a', kind: 'chat', status: 200, costUsd: '0' }, extractPromptFeatures({ turns: ['hello there'] }), decision, []);
  return enc.seal();
};

for (const b of backends) {
  test(`${b.name}: the router's worker and the inline backend store decisions, load and train states, and apply retention`, async () => {
    const store = await b.open();
    const worker = new WorkerBackend(b.opts);
    try {
      for (const [name, backend] of [['worker', worker], ['inline', new InlineBackend(store.sql)]] as Array<[string, RouterBackend]>) {
        const day = 86_400_000;
        const ids = Array.from({ length: 5 }, () => uuidv7());
        // Two rows 40 days old, three fresh; the worker rebuilds, rounds and serialises them.
        await backend.writeDecisions(chunkOf(ids.map((id, i) => [id, new Date(Date.now() - (i < 2 ? 40 : 0) * day).toISOString()])));
        const got = await getDecision(store.sql, ids[4]!);
        assert.deepEqual(got?.decision, {
          w: null, policy: 'p', state_version: 3, kind: 'chat', explored: false, affinity: null, chosen: 'p/m-a', chosen_quality: 0.8123, chosen_cost_usd: 0.00123457,
          input_tokens: 12, token_method: 'o200k_base', expected_output_tokens: 400, plan: [['p/m-a', 1000]], candidates: 2, excluded_by: { 'policy:x': 1 },
          included: [['p/m-a', 0.812, 0.00123, 0.8123]], excluded: {}, attempts: [],
        }, name);
        assert.deepEqual(got?.features.idx, extractPromptFeatures({ turns: ['hello there'] }).idx);
        const r = await backend.prune(30, { states: 2, days: 0 });
        assert.ok(r.decisions >= 2, `${name}: old decisions deleted (${r.decisions})`);
        assert.equal(await getDecision(store.sql, ids[0]!), null);
        assert.ok(await getDecision(store.sql, ids[2]!), 'fresh decisions stay');
      }
      // States: the worker loads the newest, trains on it, and retention keeps the newest two.
      const base = (await loadState(store.sql)) ?? emptyStored();
      for (let v = base.version + 1; v <= base.version + 4; v++) assert.equal(await saveState(store.sql, { ...emptyStored(), version: v }), true);
      const newest = base.version + 4;
      assert.equal((await worker.load(0))?.version, newest);
      assert.equal(await worker.load(newest), null);
      const pr = await worker.prune(null, { states: 2, days: 0 });
      assert.equal(pr.decisions, 0);
      assert.ok(pr.states >= 2);
      const left = await store.sql.all('SELECT version FROM router_state ORDER BY version');
      assert.deepEqual(left.map((x) => Number(x.version)), [newest - 1, newest]);
      // Those states' cursors are at the start: the worker folds the earlier test's feedback into the next version.
      const learned = await worker.learn(emptyStored(), { qualitySignals: settings.qualitySignals, halfLifeDays: null, feedbackSettleMs: 0 });
      assert.equal(learned.stored, true);
      assert.equal(learned.state?.version, newest + 1, 'trained on the newest stored state, not on what the caller passed');
      // The state comes back packed (stored prompts left in the worker, their index transferred) and
      // predicts as the stored full state does; it cannot be stored.
      const stored = (await loadState(store.sql, newest + 1))!;
      assert.ok(stored.quality.learned.exemplars, 'the store holds the stored prompts');
      assert.equal(isPacked(learned.state!.quality), true);
      assert.equal(learned.state!.quality.learned.exemplars, undefined);
      const f = extractPromptFeatures({ turns: ['Which is right?\nA) x\nB) y'] });
      assert.deepEqual(predict(learned.state!.quality, f, ['m-a'], { priors: null }), predict(stored.quality, f, ['m-a'], { priors: null }));
      await assert.rejects(saveState(store.sql, { ...learned.state!, version: newest + 9 }), /packed/);
      assert.equal(isPacked((await worker.load(newest))!.quality), true, 'a loaded state is packed too');
      assert.equal((await worker.learn(emptyStored(), { qualitySignals: settings.qualitySignals, halfLifeDays: null, feedbackSettleMs: 0 })).stored, false, 'nothing new since');
    } finally { await worker.close(); await store.close(); }
  });
}
