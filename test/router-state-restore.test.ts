// An operator undoing what the router learned (src/router/state-restore.ts), on SQLite and PostgreSQL:
// a rollback stores the next version with the earlier version's quality model and the newest output
// table; a reset stores an empty quality model; a version not stored is refused naming what is kept;
// a training replica storing the same version first makes the restore retry on top of it. Training
// after a rollback learns only feedback given after it: not what was given before (learned or not),
// nor a later change to it. Retention keeps the newest versions and the last of each recent day.
import { after, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../src/store/types.ts';
import type { SqlRunner } from '../src/store/sql-runner.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { insertDecisions, loadState, pruneStates, saveState, type StoredState } from '../src/router/store.ts';
import { nextLanding } from '../src/store/landing.ts';
import { emptyStored, trainPass } from '../src/router/train-pass.ts';
import { describeOrigin, listStates, restoreState, StateNotFound } from '../src/router/state-restore.ts';
import { runRouterCommand } from '../src/router/state-cli.ts';
import { emptyState, extractPromptFeatures, type Outcome } from '../src/router/quality/index.ts';
import { runTrain, type TrainTask } from '../src/workers/router-train.ts';
import { RouterLearning } from '../src/router/learning.ts';
import { InlineBackend } from '../src/router/backend.ts';
import { compileRouterSettings } from '../src/router/settings.ts';
import { pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-router-restore-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_router_restore');
const backends: Array<{ name: string; open: () => Promise<Store> }> = [{ name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, `r-${uuidv7()}.db`) }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

const SETTINGS = { qualitySignals: [{ metric: 'good', optimize: 'max' as const }], halfLifeDays: null, feedbackSettleMs: 1000 };

const inference = (id: string, at: string): InferenceRecord => ({
  id, createdAt: at, keyId: 'k1', route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
  servedModel: 'p/m-a', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 10, ttftMs: 5, stream: false,
  inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

/** A state told apart by its quality model (a marker tally) and output table. */
const marked = (version: number, mark: number, createdAt = new Date().toISOString()): StoredState => {
  const quality = emptyState();
  (quality as unknown as { mark: number }).mark = mark;
  return { ...emptyStored(), version, createdAt, quality, output: { [`m${mark}`]: { chat: [mark, mark] } }, outcomes: mark * 10, decisionCursor: { at: createdAt, id: `d${mark}` } };
};

async function clear(sql: SqlRunner): Promise<void> {
  for (const t of ['router_state', 'feedback', 'router_decisions', 'inferences']) await sql.run(`DELETE FROM ${t}`);
}

for (const b of backends) {
  test(`${b.name}: rollback and reset store the next version; the output table and answers' cursor stay the newest's`, async () => {
    const store = await b.open();
    try {
      await clear(store.sql);
      // Nothing stored: a rollback has nothing to go back to; a reset stores version 1.
      await assert.rejects(restoreState(store.sql, { from: 1, by: 'cli', reason: null }), (e: unknown) => e instanceof StateNotFound && /no learned state is stored yet/.test(e.message));
      const r0 = await restoreState(store.sql, { from: null, by: 'cli', reason: 'fresh' });
      assert.equal(r0.version, 1);
      await clear(store.sql);
      for (const v of [1, 2, 3]) assert.equal(await saveState(store.sql, marked(v, v)), true);
      const at = new Date(Date.now() + 1000);
      const r = await restoreState(store.sql, { from: 1, by: 'ops@example.com', reason: 'bad feedback flood' }, () => at);
      assert.equal(r.version, 4);
      assert.deepEqual(r.origin, { kind: 'rollback', from: 1, by: 'ops@example.com', reason: 'bad feedback flood' });
      const s4 = (await loadState(store.sql, 4))!;
      const s1 = (await loadState(store.sql, 1))!;
      const s3 = (await loadState(store.sql, 3))!;
      assert.deepEqual(s4.quality, s1.quality, 'the quality model of version 1');
      assert.equal(s4.outcomes, 10);
      assert.deepEqual(s4.output, s3.output, 'the newest output table');
      assert.deepEqual(s4.decisionCursor, s3.decisionCursor);
      // The feedback cursor is at the landing position next given out: feedback landed before is not learned.
      const { landed, ...time } = s4.feedbackCursor;
      assert.deepEqual(time, { at: at.toISOString(), id: '' });
      assert.ok(landed !== undefined && BigInt(landed) > 0n && BigInt(landed) <= BigInt(await nextLanding(store.sql)), `landed ${landed}`);
      assert.equal(s4.restoredAt, at.toISOString());
      // A reset: nothing learned, the same output table.
      const z = await restoreState(store.sql, { from: null, by: 'cli', reason: null });
      const s5 = (await loadState(store.sql, z.version))!;
      assert.equal(z.version, 5);
      assert.deepEqual(s5.quality, emptyState());
      assert.equal(s5.outcomes, 0);
      assert.deepEqual(s5.output, s3.output);
      // The feedback cursor never moves backwards (a replica whose clock ran ahead stored a later one).
      assert.ok(s5.feedbackCursor.at >= s4.feedbackCursor.at);
      // Listed newest first with their origins and sizes.
      const list = await listStates(store.sql);
      assert.deepEqual(list.map((s) => [s.version, s.origin?.kind ?? 'trained']), [[5, 'reset'], [4, 'rollback'], [3, 'trained'], [2, 'trained'], [1, 'trained']]);
      assert.ok(list.every((s) => s.bytes > 0));
      // Not stored: refused naming what is kept.
      await assert.rejects(restoreState(store.sql, { from: 99, by: 'cli', reason: null }), (e: unknown) => e instanceof StateNotFound && /99 is not stored \(kept: 5, 4, 3, 2, 1/.test(e.message));
    } finally { await store.close(); }
  });

  test(`${b.name}: a training replica storing the next version first makes the restore retry on top of it`, async () => {
    const store = await b.open();
    try {
      await clear(store.sql);
      for (const v of [1, 2]) await saveState(store.sql, marked(v, v));
      let raced = 0;
      // The first insert the restore tries finds version 3 just stored by a training pass.
      const sql: SqlRunner = Object.assign(Object.create(store.sql) as SqlRunner, {
        run: async (q: string, p?: readonly unknown[]) => {
          if (raced === 0 && q.startsWith('INSERT INTO router_state')) { raced++; await saveState(store.sql, marked(3, 3)); }
          return store.sql.run(q, p);
        },
      });
      const r = await restoreState(sql, { from: 1, by: 'cli', reason: null });
      assert.equal(raced, 1);
      assert.equal(r.version, 4, 'stored on top of the version the trainer won');
      const s4 = (await loadState(store.sql, 4))!;
      assert.deepEqual(s4.quality, (await loadState(store.sql, 1))!.quality);
      assert.deepEqual(s4.output, (await loadState(store.sql, 3))!.output, 'the output table of the version that won');
    } finally { await store.close(); }
  });

  test(`${b.name}: after a rollback, training learns the feedback given after it, not what came before nor a change to it`, async () => {
    const store = await b.open();
    try {
      await clear(store.sql);
      const t = Date.now();
      const ago = (ms: number): string => new Date(t - ms).toISOString();
      const names = ['a', 'b', 'c', 'd'] as const;
      const inf = Object.fromEntries(names.map((n) => [n, uuidv7()])) as Record<(typeof names)[number], string>;
      const features = Object.fromEntries(names.map((n) => [n, extractPromptFeatures({ turns: [`Question ${n}: is this right?`] })]));
      await insertDecisions(store.sql, names.map((n) => ({ inferenceId: inf[n], createdAt: ago(300_000), keyId: 'k1', servedModel: 'p/m-a', canonical: 'm-a', kind: features[n]!.kind, status: 200, costUsd: '0', features: features[n]!, decision: {} })));
      await store.insertInferences(names.map((n) => inference(inf[n], ago(300_000))));
      const fb = (n: (typeof names)[number], value: string, msAgo: number): FeedbackRow =>
        ({ id: uuidv7(), inferenceId: inf[n], keyId: 'k1', metric: 'good', type: 'boolean', value, reason: null, tags: {}, optimize: 'max', createdAt: ago(msAgo) });
      const seen: Outcome[][] = [];
      const run = (task: TrainTask) => { seen.push(task.outcomes); return runTrain(task); };

      // v1 learns a's verdict, v2 b's.
      await store.insertFeedback([fb('a', 'false', 200_000)]);
      const v1 = (await trainPass(store.sql, emptyStored(), SETTINGS, run)).next!;
      await store.insertFeedback([fb('b', 'false', 150_000)]);
      const v2 = (await trainPass(store.sql, v1, SETTINGS, run)).next!;
      assert.deepEqual([v1.outcomes, v2.outcomes], [1, 2]);
      // d's verdict is given but not yet learned when the operator rolls back to v1 (100 s ago).
      await store.insertFeedback([fb('d', 'false', 120_000)]);
      const r = await restoreState(store.sql, { from: 1, by: 'cli', reason: null }, () => new Date(t - 100_000));
      const v3 = (await loadState(store.sql, r.version))!;
      assert.deepEqual(v3.quality, (await loadState(store.sql, 1))!.quality);
      // After it: a changes its verdict (learned in v1), b changes its (learned only in the discarded v2),
      // c gets its first verdict.
      await store.insertFeedback([fb('a', 'true', 90_000), fb('b', 'true', 85_000), fb('c', 'false', 80_000)]);
      seen.length = 0;
      const v4 = (await trainPass(store.sql, v3, SETTINGS, run)).next!;
      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0]!.map((o) => [o.time, o.score, o.correction ?? null]), [[Date.parse(ago(80_000)), 0, null]], 'only c, a first value');
      assert.equal(v4.outcomes, v3.outcomes + 1);
      assert.equal(v4.restoredAt, v3.restoredAt, 'trained states inherit the restore time');
      assert.equal(v4.origin, null);
      // Without the restore time the same pass would have learned both changes as corrections.
      seen.length = 0;
      await trainPass(store.sql, { ...v3, version: 90, restoredAt: null }, SETTINGS, run);
      assert.equal(seen[0]!.filter((o) => o.correction).length, 2);
    } finally { await store.close(); }
  });

  test(`${b.name}: retention keeps the newest versions and the last version of each recent UTC day`, async () => {
    const store = await b.open();
    try {
      await clear(store.sql);
      const now = Date.parse('2026-11-20T12:00:00.000Z');
      const day = 86_400_000;
      const days = [5, 5, 3, 3, 2, 1, 0, 0, 0];
      for (const [i, d] of days.entries()) await saveState(store.sql, marked(i + 1, i + 1, new Date(now - d * day + i * 1000).toISOString()));
      const n = await pruneStates(store.sql, 2, 3, now);
      const left = (await store.sql.all('SELECT version FROM router_state ORDER BY version')).map((r) => Number(r.version));
      // Newest two (8, 9); the last of days -3 (4), -2 (5), -1 (6) and today (9); days -5 are past the window.
      assert.deepEqual(left, [4, 5, 6, 8, 9]);
      assert.equal(n, 4);
      // days 0: only the newest.
      assert.equal(await pruneStates(store.sql, 2, 0, now), 3);
      assert.deepEqual((await store.sql.all('SELECT version FROM router_state ORDER BY version')).map((r) => Number(r.version)), [8, 9]);
    } finally { await store.close(); }
  });

  test(`${b.name}: the router command lists, rolls back and resets; a reason is trimmed as the admin API trims it; usage errors exit 2 (a reason past 500 characters among them), a version not stored 1`, async () => {
    const store = await b.open();
    try {
      await clear(store.sql);
      const lines: string[] = [];
      const errs: string[] = [];
      const cmd = (...argv: string[]) => runRouterCommand(argv, store.sql, { out: (s) => lines.push(s), err: (s) => errs.push(s) });
      assert.equal(await cmd('states'), 0);
      assert.match(lines.pop()!, /no learned state stored yet/);
      for (const v of [1, 2]) await saveState(store.sql, marked(v, v));
      assert.equal(await cmd('rollback', '--to', '1', '--reason', '  undo the flood '), 0);
      assert.match(lines.pop()!, /^stored v3: rollback to v1 by cli: undo the flood;/);
      assert.equal(await cmd('reset', '--reason', '   '), 0);
      assert.match(lines.pop()!, /^stored v4: reset to the priors by cli;/);
      assert.equal(await cmd('states', '--limit', '3'), 0);
      assert.deepEqual(lines.splice(0).map((l) => l.replace(/\s+/g, ' ').replace(/ \S+Z /, ' T ')), [
        'v4 T 0 outcomes 1 KB reset to the priors by cli', 'v3 T 10 outcomes 1 KB rollback to v1 by cli: undo the flood', 'v2 T 20 outcomes 1 KB trained',
      ]);
      assert.equal(await cmd('states', '--json'), 0);
      assert.equal((JSON.parse(lines.pop()!) as unknown[]).length, 4);
      assert.equal(await cmd('rollback'), 2);
      assert.match(errs.pop()!, /needs --to VERSION/);
      assert.equal(await cmd('rollback', '--to', 'x'), 2);
      assert.equal(await cmd('states', '--limit', '0'), 2);
      assert.equal(await cmd('undo'), 2);
      assert.equal(await cmd('reset', '--reason', 'x'.repeat(501)), 2);
      assert.match(errs.at(-1)!, /--reason must be at most 500 characters/);
      // A reset with a version meant a rollback; a mistyped or foreign flag is not ignored: nothing is stored.
      assert.equal(await cmd('reset', '--to', '1'), 2);
      assert.match(errs.pop()!, /reset takes no version/);
      assert.equal(await cmd('rollback', '--to', '1', '--reson', 'typo'), 2);
      assert.match(errs.pop()!, /unknown option --reson/);
      assert.equal(await cmd('states', '--json', 'extra'), 2);
      assert.equal(await cmd('rollback', '--to', '77'), 1);
      assert.match(errs.pop()!, /77 is not stored/);
      assert.equal((await listStates(store.sql)).length, 4, 'nothing stored by the refused commands');
    } finally { await store.close(); }
  });
}

test('postgres: a restore run on a machine whose clock runs a year ahead moves the feedback cursor to the store\'s clock, not past the feedback replicas then write', { skip: !pgDb }, async () => {
  const store = await openStore(pgDb!.storeOptions(pgDb!.another()));
  try {
    await saveState(store.sql, marked(1, 1));
    const real = Date.now();
    // The admin's machine (router rollback) or one replica (the admin API) a year ahead.
    mock.timers.enable({ apis: ['Date'], now: real + 365 * 86_400_000 });
    try { await restoreState(store.sql, { from: null, by: 'cli', reason: null }); } finally { mock.timers.reset(); }
    const s = (await loadState(store.sql))!;
    const near = (at: string | null) => Math.abs(Date.parse(at!) - real) < 60_000;
    assert.ok(near(s.feedbackCursor.at), `cursor ${s.feedbackCursor.at}: a year ahead, every value given in that year would be passed unlearned`);
    assert.ok(near(s.restoredAt), `restored at ${s.restoredAt}`);
    assert.ok(near(s.createdAt), `created at ${s.createdAt}`);
  } finally { await store.close(); }
});

test('a replica adopting a restored state says so (onRestored), once per version, and not for trained states', async () => {
  const store = await backends[0]!.open();
  try {
    await clear(store.sql);
    const told: string[] = [];
    const learning = new RouterLearning({ backend: new InlineBackend(store.sql), settings: () => compileRouterSettings({}), onRestored: (s) => told.push(`v${s.version} ${s.origin?.kind}`) });
    await saveState(store.sql, marked(1, 1));
    assert.equal(await learning.refresh(), true);
    await restoreState(store.sql, { from: null, by: 'cli', reason: null });
    assert.equal(await learning.refresh(), true);
    assert.equal(await learning.refresh(), false);
    await saveState(store.sql, marked(3, 3));
    assert.equal(await learning.refresh(), true);
    assert.deepEqual(told, ['v2 reset']);
    await learning.close();
  } finally { await store.close(); }
});

test('a restore\'s reason is shown with its control, line-separator and bidirectional characters escaped: it cannot forge a log line', () => {
  const shown = describeOrigin({ kind: 'rollback', from: 9, by: 'a@b.c', reason: 'bad feed\nERROR router: fake line\u2028\u202eevil\u0007 ok é 日本' });
  assert.equal(shown, 'rollback to v9 by a@b.c: bad feed\\u000aERROR router: fake line\\u2028\\u202eevil\\u0007 ok é 日本');
  assert.doesNotMatch(shown, /[\n\u2028\u202e\u0007]/);
});
