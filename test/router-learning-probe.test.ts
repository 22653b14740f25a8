// The router's learning path against what clients and the store can hand it (both stores, a fresh
// PostgreSQL schema dropped at the end): feedback that carries no score trains nothing; a state a
// newer gateway stored is not trained over.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { FeedbackRow, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { insertDecisions, loadState, saveState } from '../src/router/store.ts';
import { RouterLearning, emptyStored } from '../src/router/learning.ts';
import { restoreState } from '../src/router/state-restore.ts';
import { STATE_SCHEMA, type QualityState } from '../src/router/quality/index.ts';
import { InlineBackend } from '../src/router/backend.ts';
import { compileRouterSettings } from '../src/router/settings.ts';
import { extractPromptFeatures } from '../src/router/quality/index.ts';
import { pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-router-probe-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_router_probe');

const backends: Array<{ name: string; open: () => Promise<Store> }> = [{ name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, 'r.db') }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

const settings = compileRouterSettings({ quality_signals: [{ metric: 'ok', optimize: 'max' }], learning: { feedback_settle_ms: 0 } });
const features = extractPromptFeatures({ turns: ['Which is right?\nA) x\nB) y'] });

/** A routed answer of m-a, a minute ago (or at `at`), with one feedback row on `ok` of the given type and value. */
async function answered(store: Store, type: FeedbackRow['type'], value: string, at = new Date(Date.now() - 60_000).toISOString()): Promise<void> {
  const id = uuidv7();
  await insertDecisions(store.sql, [{ inferenceId: id, createdAt: at, keyId: null, servedModel: 'p/m-a', canonical: 'm-a', kind: features.kind, status: 200, costUsd: '0.001', features, decision: {} }]);
  await store.insertFeedback([{ id: uuidv7(), inferenceId: id, keyId: null, metric: 'ok', type, value, reason: null, tags: {}, optimize: 'max', createdAt: at }]);
}

for (const b of backends) {
  test(`${b.name}: comments on a quality signal's metric train nothing, whatever their text looks like`, async () => {
    const store = await b.open();
    try {
      // A key whose first value for `ok` was a string made `ok` a comment metric for it: "" and " "
      // were read as the number 0 (a negative), "0.9" as a score and "true" as a thumbs-up.
      for (const v of ['', ' ', '0.9', 'true', '1e3', 'fine']) await answered(store, 'comment', v);
      const learning = new RouterLearning({ backend: new InlineBackend(store.sql), settings: () => settings });
      await learning.trainOnce();
      assert.equal(learning.state.outcomes, 0, 'no comment became an outcome');
      assert.equal(learning.state.quality.models['m-a'], undefined, 'm-a learned nothing');
      // Booleans and floats on the same metric still train.
      await answered(store, 'boolean', 'false');
      await answered(store, 'float', '0.75');
      assert.equal(await learning.trainOnce(), true);
      assert.equal(learning.state.outcomes, 2);
    } finally { await store.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: a replica meeting a state of a newer format routes with it but does not train over it`, async () => {
    const store = await b.open();
    try {
      const errors: string[] = [];
      const learning = new RouterLearning({ backend: new InlineBackend(store.sql), settings: () => settings, onError: (what, e) => errors.push(`${what}: ${(e as Error).message}`) });
      await learning.refresh();
      const v = learning.state.version + 1;
      // What a newer gateway (rolling upgrade) stored: train() reads no other schema and started over from an empty model.
      const newer = { schema: STATE_SCHEMA + 1, version: 7, trainedUntil: Date.now() - 1e6, outcomes: 40, models: { 'm-b': { n: 40 } }, learned: { newThing: [1, 2, 3] } } as unknown as QualityState;
      assert.equal(await saveState(store.sql, { ...emptyStored(), version: v, outcomes: 40, quality: newer }), true);
      await answered(store, 'boolean', 'true');
      assert.equal(await learning.trainOnce(), false);
      assert.equal(learning.state.version, v, 'it routes with the newer state');
      const kept = (await loadState(store.sql))!;
      assert.equal(kept.version, v, 'no version stored over it');
      assert.deepEqual(kept.quality, newer);
      assert.match(errors.join('\n'), new RegExp(`training: learned state v${v} has a newer format \\(quality schema ${STATE_SCHEMA + 1}, this gateway reads ${STATE_SCHEMA}\\)`));
      // An admin's reset (or a rollback to a version it reads) lets it learn again.
      await restoreState(store.sql, { from: null, by: 'cli', reason: null });
      await new Promise((r) => setTimeout(r, 5));
      await answered(store, 'boolean', 'true', new Date().toISOString());
      assert.equal(await learning.trainOnce(), true);
      assert.equal(learning.state.quality.schema, STATE_SCHEMA);
    } finally { await store.close(); }
  });
}
