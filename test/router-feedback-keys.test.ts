// Whose feedback trains the router: a quality signal with `keys` (globs over API key names) learns only
// feedback given with a matching key, corrections included; a signal without them learns every key's
// and feedback given without a key. The cursor passes the rows left out (they never train later).
// On SQLite and PostgreSQL.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { insertDecisions } from '../src/router/store.ts';
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
