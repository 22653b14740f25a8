// Whose feedback trains the router: a quality signal with `keys` (globs over API key names) learns only
// feedback given with a matching key, corrections included; a signal without them learns every key's
// and feedback given without a key. The cursor passes the rows left out (they never train later), and a
// later change to one is not learned either, even once the key is trusted (renamed, or `keys` edited).
// On SQLite and PostgreSQL.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { insertDecisions, loadState } from '../src/router/store.ts';
import { emptyStored, trainPass } from '../src/router/train-pass.ts';
import { compileRouterSettings } from '../src/router/settings.ts';
import { extractPromptFeatures, type Outcome } from '../src/router/quality/index.ts';
import { runTrain, type TrainTask } from '../src/workers/router-train.ts';
import { pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-router-fbkeys-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_router_fbkeys');
const backends: Array<{ name: string; open: () => Promise<Store> }> = [{ name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, 'r.db') }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

const inference = (id: string, at: string, keyId: string | null): InferenceRecord => ({
  id, createdAt: at, keyId, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
  servedModel: 'p/m-a', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 10, ttftMs: 5, stream: false,
  inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

// The settings as gateway.yaml compiles them: `good` only from eval keys, `score` from anyone.
const settings = compileRouterSettings({ quality_signals: [{ metric: 'good', keys: ['eval-*', 'qa-bot'] }, { metric: 'score' }] });
const TRAIN = { qualitySignals: settings.qualitySignals, halfLifeDays: null, feedbackSettleMs: 1000 };

for (const b of backends) {
  test(`${b.name}: a signal with keys learns only the feedback its keys gave; one without learns everyone's`, async () => {
    const store = await b.open();
    try {
      for (const t of ['router_state', 'feedback', 'router_decisions', 'inferences']) await store.sql.run(`DELETE FROM ${t}`);
      const t = Date.now();
      const ago = (ms: number): string => new Date(t - ms).toISOString();
      const keys: Record<string, string> = {};
      for (const name of ['eval-1', 'eval-2', 'qa-bot', 'public-app', 'evaluator']) {
        keys[name] = uuidv7();
        await store.sql.run('INSERT INTO api_keys (id, name, hash, created_at) VALUES (?, ?, ?, ?)', [keys[name], name, `h-${keys[name]}`, ago(400_000)]);
      }
      const owners = [...Object.keys(keys), null] as const;
      const inf = new Map(owners.map((k) => [k, uuidv7()]));
      const features = extractPromptFeatures({ turns: ['Is this right?'] });
      await insertDecisions(store.sql, owners.map((k) => ({ inferenceId: inf.get(k)!, createdAt: ago(300_000), keyId: k === null ? null : keys[k]!, servedModel: 'p/m-a', canonical: 'm-a', kind: features.kind, status: 200, costUsd: '0', features, decision: {} })));
      await store.insertInferences(owners.map((k) => inference(inf.get(k)!, ago(300_000), k === null ? null : keys[k]!)));
      const fb = (k: (typeof owners)[number], metric: string, value: string, msAgo: number): FeedbackRow => ({
        id: uuidv7(), inferenceId: inf.get(k)!, keyId: k === null ? null : keys[k]!, metric, type: metric === 'good' ? 'boolean' : 'float', value, reason: null, tags: {}, optimize: 'max', createdAt: ago(msAgo),
      });
      // Each owner says `good` (eval-1 later changes its mind), public-app and the keyless caller also give a `score`.
      await store.insertFeedback([
        ...owners.map((k, i) => fb(k, 'good', 'false', 200_000 - i * 1000)),
        fb('eval-1', 'good', 'true', 100_000),
        fb('public-app', 'score', '0.25', 150_000), fb(null, 'score', '0.75', 149_000),
      ]);
      const seen: Outcome[][] = [];
      const run = (task: TrainTask) => { seen.push(task.outcomes); return runTrain(task); };
      const r = await trainPass(store.sql, emptyStored(), TRAIN, run);
      // good: eval-1 (first value and its correction), eval-2, qa-bot; not public-app, evaluator (no match) or the keyless one.
      // score: public-app's and the keyless one's.
      const got = seen[0]!.map((o) => [o.score, o.correction?.from ?? null]);
      assert.deepEqual(got, [[0, null], [0, null], [0, null], [0.25, null], [0.75, null], [1, 0]]);
      assert.equal(r.next!.outcomes, 5);
      // The rows left out are behind the cursor: a later pass finds nothing new.
      seen.length = 0;
      const again = await trainPass(store.sql, r.next!, TRAIN, run);
      assert.equal(again.next, null);
      // Without keys on the signal every row trains (the test can tell).
      seen.length = 0;
      const open = compileRouterSettings({ quality_signals: [{ metric: 'good' }, { metric: 'score' }] });
      await trainPass(store.sql, emptyStored(), { ...TRAIN, qualitySignals: open.qualitySignals }, run);
      assert.equal(seen[0]!.length, 9);
    } finally { await store.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: a key renamed into a signal's keys, or keys edited to take it, corrects only what its feedback taught, not the values left out before`, async () => {
    const store = await b.open();
    try {
      for (const t of ['router_state', 'feedback', 'router_decisions', 'inferences', 'api_keys']) await store.sql.run(`DELETE FROM ${t}`);
      const t = Date.now();
      const ago = (ms: number): string => new Date(t - ms).toISOString();
      const keys = { eval: uuidv7(), app: uuidv7() };
      for (const [name, id] of [['eval-1', keys.eval], ['public-app', keys.app]]) await store.sql.run('INSERT INTO api_keys (id, name, hash, created_at) VALUES (?, ?, ?, ?)', [id, name, `h-${id}`, ago(400_000)]);
      const answers = { e1: keys.eval, e2: keys.eval, e3: keys.eval, p1: keys.app, p2: keys.app, p3: keys.app, later: keys.app, anon: null } as const;
      type A = keyof typeof answers;
      const inf = Object.fromEntries(Object.keys(answers).map((a) => [a, uuidv7()])) as Record<A, string>;
      const features = extractPromptFeatures({ turns: ['Is this right?'] });
      const owned = Object.entries(answers) as Array<[A, string | null]>;
      await insertDecisions(store.sql, owned.map(([a, k]) => ({ inferenceId: inf[a], createdAt: ago(300_000), keyId: k, servedModel: 'p/m-a', canonical: 'm-a', kind: features.kind, status: 200, costUsd: '0', features, decision: {} })));
      await store.insertInferences(owned.map(([a, k]) => inference(inf[a], ago(300_000), k)));
      const fb = (a: A, value: string, msAgo: number): FeedbackRow => ({
        id: uuidv7(), inferenceId: inf[a], keyId: answers[a], metric: 'good', type: 'boolean', value, reason: null, tags: {}, optimize: 'max', createdAt: ago(msAgo),
      });
      const seen: Outcome[][] = [];
      const run = (task: TrainTask) => { seen.push(task.outcomes); return runTrain(task); };
      const shown = () => seen.splice(0).flat().map((o) => [o.score, o.correction?.from ?? null]);
      // eval-1's three positives train; public-app's and the keyless caller's are left out.
      await store.insertFeedback([fb('e1', 'true', 200_000), fb('e2', 'true', 199_000), fb('e3', 'true', 198_000),
        fb('p1', 'true', 197_000), fb('p2', 'true', 196_000), fb('p3', 'true', 195_000), fb('anon', 'true', 194_000)]);
      const v1 = (await trainPass(store.sql, emptyStored(), TRAIN, run)).next!;
      assert.deepEqual(shown(), [[1, null], [1, null], [1, null]]);
      // The admin renames public-app into eval-*; it then changes its three verdicts, and gives and changes a new one.
      await store.sql.run('UPDATE api_keys SET name = ? WHERE id = ?', ['eval-3', keys.app]);
      await store.insertFeedback([fb('p1', 'false', 100_000), fb('p2', 'false', 99_000), fb('p3', 'false', 98_000),
        fb('later', 'true', 97_000), fb('later', 'false', 50_000)]);
      const v2 = (await trainPass(store.sql, (await loadState(store.sql, v1.version))!, TRAIN, run)).next!;
      // Taking out three positives never put in wiped eval-1's three from m-a (mean 0 where 3 of 4 are positive).
      assert.deepEqual(shown(), [[1, null], [0, 1]], 'the new verdict and its change; no change of the values left out');
      assert.deepEqual(v2.quality.models['m-a'], { n: 4, mean: 0.75 });
      // `keys` removed from the signal: every key's feedback trains, but the keyless verdict left out is not corrected; eval-1's is.
      await store.insertFeedback([fb('anon', 'false', 20_000), fb('e1', 'false', 19_000)]);
      const open = compileRouterSettings({ quality_signals: [{ metric: 'good' }] });
      const v3 = (await trainPass(store.sql, (await loadState(store.sql, v2.version))!, { ...TRAIN, qualitySignals: open.qualitySignals }, run)).next!;
      assert.deepEqual(shown(), [[0, 1]]);
      assert.deepEqual(v3.quality.models['m-a'], { n: 4, mean: 0.5 });
    } finally { await store.close(); }
  });
}
