// The router's learning path against what clients and the store can hand it (both stores, a fresh
// PostgreSQL schema dropped at the end): feedback that carries no score trains nothing; a state a
// newer gateway stored is not trained over; a damaged state row is neither routed with nor copied on
// by the rollback or reset that gets past it; a replica whose clock runs ahead does not move the
// shared cursors past what the others write (PostgreSQL); a state trained while the store's clock ran
// a year ahead does not decay what is learned after it to nothing.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { FeedbackRow, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { insertDecisions, loadState, saveState } from '../src/router/store.ts';
import { trainPass } from '../src/router/train-pass.ts';
import { runTrain } from '../src/workers/router-train.ts';
import { RouterLearning, emptyStored } from '../src/router/learning.ts';
import { restoreState } from '../src/router/state-restore.ts';
import { STATE_SCHEMA, train, type QualityState } from '../src/router/quality/index.ts';
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
      await new Promise((r) => setTimeout(r, 5));
      assert.equal(await learning.trainOnce(), true);
      assert.equal(learning.state.quality.schema, STATE_SCHEMA);
    } finally { await store.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: a damaged newest state row is not adopted, and a reset or rollback gets every replica past it`, async () => {
    const store = await b.open();
    try {
      const errors: string[] = [];
      const learning = new RouterLearning({ backend: new InlineBackend(store.sql), settings: () => settings, onError: (what, e) => errors.push(`${what}: ${(e as Error).message}`) });
      await learning.refresh();
      await answered(store, 'boolean', 'true');
      await learning.trainOnce();
      const good = learning.state.version;
      assert.ok(good >= 1);
      // Valid JSON that is no output table: routing with it failed every routed request (expectedOutput read null).
      for (const [column, text, says] of [['output', 'null', /cannot be routed with \(the output table is null, not an object\)/], ['output', '{"m-a":{"chat":5}}', /cell "m-a"\/"chat" is not \[count, mean\]/],
        ['quality', 'null', /cannot be routed with/], ['output', '{"m-a":', /cannot be read \(output: /], ['feedback_cursor', '{"at":', /cannot be read \(feedback_cursor: /]] as const) {
        errors.length = 0;
        const v = learning.state.version + 1;
        assert.equal(await saveState(store.sql, { ...emptyStored(), version: v }), true);
        await store.sql.run(`UPDATE router_state SET ${column} = ? WHERE version = ?`, [text, v]);
        assert.equal(await learning.refresh(), false, `${column} ${text}: not adopted`);
        assert.equal(learning.state.version, v - 1, 'still routing with the state it had');
        assert.match(errors.join('\n'), new RegExp(`learned state v${v} `));
        assert.match(errors.join('\n'), says);
        // The rollback or reset an admin does then stores a usable version, copying nothing damaged on.
        const restored = await restoreState(store.sql, column === 'output' && text === 'null' ? { from: good, by: 'cli', reason: null } : { from: null, by: 'cli', reason: null });
        assert.equal(restored.version, v + 1);
        assert.equal(await learning.refresh(), true, `${column} ${text}: the restored version is adopted`);
        assert.equal(learning.state.version, v + 1);
        await new Promise((r) => setTimeout(r, 5));
        await answered(store, 'boolean', 'true', new Date().toISOString());
        await new Promise((r) => setTimeout(r, 5)); // read once it is older than now (feedback_settle_ms 0)
        assert.equal(await learning.trainOnce(), true, `${column} ${text}: training goes on from it`);
      }
    } finally { await store.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: with half_life_days, a state trained while the store's clock ran a year ahead does not decay later outcomes to nothing`, async () => {
    // A store of its own: the rows and versions the other tests leave would share the pass.
    const store = await openStore(b.name === 'sqlite' ? { sqlitePath: join(tmp, 'decay.db') } : pgDb!.storeOptions(pgDb!.another()));
    try {
      const year = 365 * 86_400_000;
      // What a pass made while the clock ran a year ahead (SQLite: the host's, which the store's is): its
      // newest outcome, and so the time evidence decays from, a year in the future.
      const ahead = train([{ features, model: 'm-b', score: 1, time: Date.now() + year }], undefined, { halfLifeDays: 7 });
      assert.ok(ahead.trainedUntil > Date.now() + year - 60_000);
      const base = { ...emptyStored(), version: 1, quality: ahead, feedbackCursor: { at: new Date(Date.now() - 30_000).toISOString(), id: '' } };
      // The clock is right again: three positives for m-a a few seconds old.
      for (let i = 0; i < 3; i++) await answered(store, 'boolean', 'true', new Date(Date.now() - 5000).toISOString());
      const r = await trainPass(store.sql, base, { qualitySignals: settings.qualitySignals, halfLifeDays: 7, feedbackSettleMs: 0 }, runTrain);
      const n = r.next!.quality.models['m-a']?.n ?? 0;
      assert.ok(n > 2.99, `m-a learned ${n} of 3 outcomes: weighed against a reference a year ahead they count 2^-52 each`);
      assert.ok(r.next!.quality.trainedUntil <= Date.now(), 'the decay reference is back at the store\'s clock');
      assert.ok((r.next!.quality.models['m-b']?.n ?? 0) > 0.99, 'what it learned then stays');
    } finally { await store.close(); }
  });
}

test('postgres: a replica whose clock runs ahead reads rows up to the store\'s clock, not past what the others write next', { skip: !pgDb }, async () => {
  const store = await openStore(pgDb!.storeOptions(pgDb!.another()));
  const realNow = Date.now;
  try {
    const learning = new RouterLearning({ backend: new InlineBackend(store.sql), settings: () => settings });
    // A replica with a correct clock gave one value; the one an hour ahead gave one, stamped by its clock.
    await answered(store, 'boolean', 'true', new Date(realNow() - 2000).toISOString());
    await answered(store, 'boolean', 'true', new Date(realNow() + 3_600_000).toISOString());
    Date.now = () => realNow() + 3_600_000; // the ahead replica's training pass
    try { assert.equal(await learning.trainOnce(), true); } finally { Date.now = realNow; }
    assert.equal(learning.state.outcomes, 1, 'the row stamped ahead waits until the store\'s clock reaches it');
    assert.ok(learning.state.feedbackCursor.at < new Date(realNow() + 60_000).toISOString(), `cursor ${learning.state.feedbackCursor.at} is not ahead of the store`);
    // What the correct replica writes next is learned: it was skipped for the hour the cursor ran ahead.
    await answered(store, 'boolean', 'false', new Date(realNow() - 10).toISOString());
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await learning.trainOnce(), true);
    assert.equal(learning.state.outcomes, 2);
  } finally { Date.now = realNow; await store.close(); }
});
