// Records that land late still teach. The record writers queue and retry through a store outage, so a
// decision or inference record can land long after the time it carries, behind the training cursors:
// its answer must still count in the expected-output table and its feedback must still train, once,
// however many passes run. On SQLite and PostgreSQL.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { trainPass, emptyStored, newerState, nextFeedbackCursor } from '../src/router/train-pass.ts';
import { runTrain } from '../src/workers/router-train.ts';
import { InlineBackend } from '../src/router/backend.ts';
import { RowEncoder } from '../src/router/decision-row.ts';
import { extractPromptFeatures } from '../src/router/quality/index.ts';
import { compileRouterSettings } from '../src/router/settings.ts';
import { readFeedback, START, type Cursor, type StoredState } from '../src/router/store.ts';
import type { Decision } from '../src/router/decide.ts';
import { PG_URL, pgTestDb } from './helpers/pg.ts';
import pg from 'pg';
import { restoreState } from '../src/router/state-restore.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-train-late-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_train_late');
const backends: Array<{ name: string; open: (n: string) => Promise<Store> }> = [{ name: 'sqlite', open: (n) => openStore({ sqlitePath: join(tmp, `${n}.db`) }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions(pgDb.another())) });

const signals = compileRouterSettings({ quality_signals: [{ metric: 'good', optimize: 'max' }] }).qualitySignals;
const settle = (feedbackSettleMs: number) => ({ qualitySignals: signals, halfLifeDays: null, feedbackSettleMs });
const ranked = { id: 'p/m-a', q: 0.8, expectedCostUsd: 0.001, utility: 0.8, inputTokens: 1, outputTokens: 1, tokenMethod: 'o200k_base', excluded: null };
const decision = { w: null, policy: null, stateVersion: 0, kind: 'chat', candidates: 1, ranked: [ranked], excludedBy: {}, chosen: ranked, explored: false, affinity: null, plan: [] } as unknown as Decision;
const features = extractPromptFeatures({ turns: ['hello there'] });

const record = (id: string, t: number): InferenceRecord => ({
  id, createdAt: new Date(t).toISOString(), keyId: 'k1', route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
  servedModel: 'p/m-a', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 1, ttftMs: 1, stream: false,
  inputTokens: 10, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

async function decide(s: Store, id: string, t: number): Promise<void> {
  const enc = new RowEncoder();
  enc.add({ inferenceId: id, createdAt: new Date(t).toISOString(), keyId: 'k1', servedModel: 'p/m-a', canonical: 'm-a', kind: 'chat', status: 200, costUsd: '0.001' }, features, decision, []);
  await new InlineBackend(s.sql).writeDecisions(enc.seal());
}
const feedback = (s: Store, inferenceId: string, t: number): Promise<void> => s.insertFeedback([{
  id: uuidv7(t), inferenceId, keyId: 'k1', metric: 'good', type: 'boolean', value: 'true', reason: null, tags: {}, optimize: 'max', createdAt: new Date(t).toISOString(),
}]);
/** Answers counted in the expected-output table (m-a, chat). */
const counted = (st: StoredState): number => st.output['m-a']?.chat?.[0] ?? 0;

/** One pass on `base` (unchanged when it found nothing new). */
async function pass(s: Store, base: StoredState, settleMs: number): Promise<StoredState> {
  const r = await trainPass(s.sql, base, settle(settleMs), runTrain);
  assert.equal(r.raced, false);
  return r.next ?? base;
}

for (const b of backends) {
  for (const settleMs of [0, 10_000]) {
    test(`${b.name}, feedback_settle_ms ${settleMs}: a decision or inference record landing a minute late still teaches its answer and its feedback, once`, async () => {
      const s = await b.open(`late-${settleMs}`);
      try {
        const now = Date.now();
        // On time: an answer (decision, record, feedback) 30 s old. Behind it in time, 90 s old: a
        // decision whose record lands late, and a record and feedback whose decision lands late.
        const [onTime, lateRecord, lateDecision] = [now - 30_000, now - 90_000, now - 80_000].map((t) => uuidv7(t)) as [string, string, string];
        await decide(s, onTime, now - 30_000);
        await s.insertInferences([record(onTime, now - 30_000)]);
        await feedback(s, onTime, now - 29_000);
        await decide(s, lateRecord, now - 90_000);
        await s.insertInferences([record(lateDecision, now - 80_000)]);
        await feedback(s, lateDecision, now - 79_000);
        const first = await pass(s, emptyStored(), settleMs);
        assert.deepEqual([counted(first), first.outcomes], [1, 1], 'the one complete answer and its feedback');
        // The writers' retries land the missing rows now, with the times they were made.
        await s.insertInferences([record(lateRecord, now - 90_000)]);
        await decide(s, lateDecision, now - 80_000);
        const second = await pass(s, first, settleMs);
        assert.deepEqual([counted(second), second.outcomes], [3, 2], 'both late answers counted, the late decision\'s feedback learned');
        const third = await pass(s, second, settleMs);
        assert.deepEqual([counted(third), third.outcomes], [3, 2], 'nothing counted twice');
      } finally { await s.close(); }
    });
  }
}

/** Undoes migration 24 on `s` (its rows keep their data, lose their positions), as a database from before it. */
async function beforeLandingOrder(s: Store): Promise<void> {
  for (const t of ['router_decisions', 'inferences', 'feedback']) {
    await s.sql.run(`DROP INDEX ${t}_landed_idx`);
    await s.sql.run(`ALTER TABLE ${t} DROP COLUMN landed`);
  }
  if (s.kind === 'sqlite') await s.sql.run('DROP TABLE record_landing');
  await s.sql.run('DELETE FROM schema_migrations WHERE version = 24');
}

for (const b of backends) {
  test(`${b.name}: a database from before landing order migrates, and a state's time cursors go on from where they stopped (nothing read twice, nothing skipped)`, async () => {
    const name = `migrate-${b.name}`;
    let s = await b.open(name);
    const schema = s.kind === 'postgres' ? (s as unknown as { schema: string }).schema : '';
    const reopen = (): Promise<Store> => (s.kind === 'postgres' ? openStore(pgDb!.storeOptions(schema)) : openStore({ sqlitePath: join(tmp, `${name}.db`) }));
    try {
      const t0 = Date.now() - 600_000;
      const [a1, a2, a3, a4] = [0, 10_000, 20_000, 30_000].map((d) => uuidv7(t0 + d)) as [string, string, string, string];
      // Before the upgrade: two complete answers with feedback, a decision whose record has not landed,
      // and feedback whose decision has not.
      for (const [id, d] of [[a1, 0], [a2, 10_000], [a3, 20_000]] as const) await decide(s, id, t0 + d);
      await s.insertInferences([record(a1, t0), record(a2, t0 + 10_000), record(a4, t0 + 30_000)]);
      await feedback(s, a1, t0 + 1_000);
      await feedback(s, a2, t0 + 11_000);
      await feedback(s, a4, t0 + 31_000);
      // The state an older gateway stored: a1 and its feedback learned, cursors on their times.
      const old = await pass(s, emptyStored(), 0);
      const oldState: StoredState = {
        ...old, version: old.version + 1, output: { 'm-a': { chat: [1, 7] } }, outcomes: 1,
        decisionCursor: { at: new Date(t0).toISOString(), id: a1 },
        feedbackCursor: { at: new Date(t0 + 1_000).toISOString(), id: (await s.sql.all('SELECT id FROM feedback WHERE inference_id = ?', [a1]))[0]!.id as string },
      };
      await beforeLandingOrder(s);
      await s.close();
      s = await reopen();
      const positions = await s.sql.all('SELECT landed FROM inferences UNION ALL SELECT landed FROM feedback UNION ALL SELECT landed FROM router_decisions');
      assert.deepEqual(new Set(positions.map((r) => Number(r.landed))), new Set([0]), 'the rows from before keep position 0');
      // After it, the missing rows land, with their old times.
      await s.insertInferences([record(a3, t0 + 20_000)]);
      await decide(s, a4, t0 + 30_000);
      const first = await pass(s, oldState, 0);
      assert.deepEqual([counted(first), first.outcomes], [4, 3], 'a2 (old, after the cursor), a3 and a4 counted, a2\'s and a4\'s feedback learned; a1 not again');
      assert.ok(first.decisionCursor.landed !== undefined && first.feedbackCursor.landed !== undefined, 'the cursors now hold positions');
      const second = await pass(s, first, 0);
      assert.equal(second, first, 'nothing new');
    } finally { await s.close(); }
  });
}

test('postgres: a transaction still in flight holds the read at its position: rows that commit after a later one are not passed', { skip: !pgDb }, async () => {
  const pg = (await import('pg')).default;
  const s = await backends[1]!.open('inflight');
  const schema = (s as unknown as { schema: string }).schema;
  const slow = new pg.Client({ connectionString: pgDb!.storeOptions(schema).databaseUrl, options: `-c search_path=${schema}` });
  await slow.connect();
  try {
    const now = Date.now();
    const [held, quick] = [uuidv7(now - 20_000), uuidv7(now - 10_000)] as [string, string];
    // The slow writer's transaction takes its position first and commits last.
    await slow.query('BEGIN');
    await slow.query(`INSERT INTO router_decisions (inference_id, created_at, key_id, served_model, canonical, kind, features, decision) VALUES ($1, $2, 'k1', 'p/m-a', 'm-a', 'chat', $3, '{}')`,
      [held, new Date(now - 20_000).toISOString(), JSON.stringify(features)]);
    await s.insertInferences([record(held, now - 20_000)]);
    await decide(s, quick, now - 10_000);
    await s.insertInferences([record(quick, now - 10_000)]);
    const first = await pass(s, emptyStored(), 0);
    assert.equal(counted(first), 0, 'nothing past the transaction in flight');
    await slow.query('COMMIT');
    const second = await pass(s, first, 0);
    assert.equal(counted(second), 2, 'both, once it committed');
  } finally { await slow.end(); await s.close(); }
});

for (const b of backends) {
  test(`${b.name}: feedback stamped ahead of the store's clock holds back none landing after it, and is learned once its window has passed`, async () => {
    const s = await b.open(`ahead-${b.name}`);
    try {
      const now = Date.now();
      const iso = (t: number): string => new Date(t).toISOString();
      const [early, ahead, later] = [uuidv7(now - 60_000), uuidv7(now - 50_000), uuidv7(now - 40_000)] as [string, string, string];
      for (const id of [early, ahead, later]) await decide(s, id, now - 60_000);
      await feedback(s, early, now - 30_000);
      await feedback(s, ahead, now + 3_600_000); // a replica an hour ahead
      await feedback(s, later, now - 20_000); // landed after it
      const W = 10_000;
      const read = async (c: Cursor, at: number) => {
        const r = await readFeedback(s.sql, ['good'], c, 100, iso(at - W), W, [], { now: iso(at) });
        return { rows: r.rows, next: nextFeedbackCursor(c, r.last, W, [], r.ahead) };
      };
      const inference = async (f: { id: string }): Promise<string> => String((await s.sql.all('SELECT inference_id FROM feedback WHERE id = ?', [f.id]))[0]!.inference_id);
      const first = await read(START, now);
      assert.deepEqual(await Promise.all(first.rows.map(inference)), [early, later], 'the row after the one stamped ahead is not held');
      assert.equal(first.next.ahead?.length, 1, 'the cursor keeps the row stamped ahead');
      assert.deepEqual((await read(first.next, now)).rows, [], 'nothing read twice');
      // Once the store's clock has passed it and its window: learned, and no longer kept.
      const later2 = await read(first.next, now + 3_600_000 + W + 1_000);
      assert.deepEqual(await Promise.all(later2.rows.map(inference)), [ahead]);
      assert.equal(later2.next.ahead, undefined);
      assert.deepEqual((await read(later2.next, now + 3_600_000 + W + 2_000)).rows, []);
    } finally { await s.close(); }
  });
}

/** A routed answer a minute old (decision, record, feedback), learned by a first pass from nothing. */
async function oneAnswerLearned(s: Store, now: number): Promise<StoredState> {
  const one = uuidv7(now - 60_000);
  await decide(s, one, now - 60_000);
  await s.insertInferences([record(one, now - 60_000)]);
  await feedback(s, one, now - 59_000);
  return await pass(s, emptyStored(), 0);
}

for (const b of backends) {
  test(`${b.name}: a store whose landing positions started again (restored into another cluster, an older file) goes on learning from the rows landing after it`, async () => {
    const s = await b.open('moved');
    try {
      const now = Date.now();
      const first = await oneAnswerLearned(s, now);
      assert.deepEqual([counted(first), first.outcomes], [1, 1]);
      // The move: the new cluster's transaction ids are far below the old one's, which the stored cursors
      // stand for here (positions the old cluster gave). (A SQLite file holds its cursors with its counter.)
      const base = { ...first, feedbackCursor: { ...first.feedbackCursor, landed: '900000000000' }, decisionCursor: { ...first.decisionCursor, landed: '900000000000' } };
      const logged: string[] = [];
      const err = console.error;
      console.error = (m: unknown) => { logged.push(String(m)); };
      let rebased: StoredState;
      try { rebased = await pass(s, base, 0); } finally { console.error = err; }
      assert.match(logged.join('\n'), /landing positions started again/);
      assert.ok(rebased.version > base.version, 'the re-based cursors are stored though nothing was new');
      assert.deepEqual([counted(rebased), rebased.outcomes], [1, 1], 'nothing read twice');
      const two = uuidv7(now - 1000);
      await decide(s, two, now - 1000);
      await s.insertInferences([record(two, now - 1000)]);
      await feedback(s, two, now - 900);
      const after = await pass(s, rebased, 0);
      assert.deepEqual([counted(after), after.outcomes], [2, 2], 'the answer and feedback landing after the move are learned');
    } finally { await s.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: after a rollback or reset, training neither re-bases the cursor nor learns feedback that landed before it, even while a write transaction is open`, async () => {
    const s = await b.open('restored');
    // PostgreSQL: a write transaction held open across the reset keeps the landing horizon below the
    // cursor the reset stores (the next transaction id), which is no sign of positions starting again.
    const hold = b.name === 'postgres' ? new pg.Client({ connectionString: PG_URL }) : null;
    try {
      const now = Date.now();
      const first = await oneAnswerLearned(s, now);
      assert.equal(first.outcomes, 1);
      if (hold) { await hold.connect(); await hold.query('BEGIN'); await hold.query('SELECT pg_current_xact_id()'); }
      const two = uuidv7(now - 30_000);
      await decide(s, two, now - 30_000);
      await s.insertInferences([record(two, now - 30_000)]);
      await feedback(s, two, now - 29_000);
      await restoreState(s.sql, { from: null, by: 'cli', reason: null });
      const reset = (await newerState(s.sql, first.version))!;
      const logged: string[] = [];
      const err = console.error;
      console.error = (m: unknown) => { logged.push(String(m)); };
      let held: StoredState;
      try { held = await pass(s, reset, 0); } finally { console.error = err; }
      assert.doesNotMatch(logged.join('\n'), /landing positions started again/);
      assert.equal(held.feedbackCursor.landed, reset.feedbackCursor.landed, 'the feedback cursor stays where the reset put it');
      if (hold) await hold.query('COMMIT');
      const after = await pass(s, held, 0);
      assert.equal(after.outcomes, 0, 'feedback given before the reset is not learned after it');
    } finally { await hold?.end(); await s.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: cursors an older gateway stored after the upgrade (a rolling upgrade: it reads by time) are not read again from the first position`, async () => {
    const s = await b.open('rolling');
    try {
      const now = Date.now();
      const first = await oneAnswerLearned(s, now);
      assert.deepEqual([counted(first), first.outcomes], [1, 1]);
      // An older replica trained these rows by time and stored its cursors as it writes them, without `landed`.
      const old = (c: Cursor): Cursor => ({ at: c.at, id: c.id, ...(c.settleMs !== undefined ? { settleMs: c.settleMs } : {}) });
      const base = { ...first, feedbackCursor: old(first.feedbackCursor), decisionCursor: old(first.decisionCursor) };
      const again = await pass(s, base, 0);
      assert.deepEqual([counted(again), again.outcomes], [1, 1], 'nothing read twice');
      const two = uuidv7(now - 1000);
      await decide(s, two, now - 1000);
      await s.insertInferences([record(two, now - 1000)]);
      await feedback(s, two, now - 900);
      const after = await pass(s, again, 0);
      assert.deepEqual([counted(after), after.outcomes], [2, 2], 'what lands after is learned');
      assert.ok(after.feedbackCursor.landed !== undefined && after.decisionCursor.landed !== undefined, 'the cursors hold positions again');
    } finally { await s.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: a first value landing after a later value of the same feedback (another replica's writer held it back) is not learned a second time`, async () => {
    const s = await b.open('first-late');
    try {
      const now = Date.now();
      const [one, two] = [uuidv7(now - 120_000), uuidv7(now - 110_000)];
      for (const id of [one, two]) { await decide(s, id, now - 120_000); await s.insertInferences([record(id, now - 120_000)]); }
      const give = (inferenceId: string, t: number, value: string) => s.insertFeedback([{
        id: uuidv7(t), inferenceId, keyId: 'k1', metric: 'good', type: 'boolean', value, reason: null, tags: {}, optimize: 'max', createdAt: new Date(t).toISOString(),
      }]);
      // one: the change lands first, 30 s after its first value (a window of 10 s); two: a change within the window.
      await give(one, now - 60_000, 'false');
      await give(two, now - 85_000, 'false');
      const first = await pass(s, emptyStored(), 10_000);
      assert.equal(first.outcomes, 2);
      await give(one, now - 90_000, 'true');
      await give(two, now - 90_000, 'true');
      const second = await pass(s, first, 10_000);
      assert.equal(second.outcomes, 2, 'each feedback learned once');
    } finally { await s.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: a change to a first value that landed late (created before the first its key had learned) is learned as a correction`, async () => {
    const s = await b.open('trust-late');
    try {
      const now = Date.now();
      const key = uuidv7(now - 600_000);
      await s.sql.run('INSERT INTO api_keys (id, name, hash, created_at) VALUES (?, ?, ?, ?)', [key, 'eval-1', `h-${key}`, new Date(now - 600_000).toISOString()]);
      const keyed = compileRouterSettings({ quality_signals: [{ metric: 'good', optimize: 'max', keys: ['eval-*'] }] }).qualitySignals;
      const [early, later] = [uuidv7(now - 120_000), uuidv7(now - 110_000)];
      for (const id of [early, later]) { await decide(s, id, now - 120_000); await s.insertInferences([record(id, now - 120_000)]); }
      const give = (inferenceId: string, t: number, value: string) => s.insertFeedback([{
        id: uuidv7(t), inferenceId, keyId: key, metric: 'good', type: 'boolean', value, reason: null, tags: {}, optimize: 'max', createdAt: new Date(t).toISOString(),
      }]);
      const seen: Array<{ score: number; from: number | null }> = [];
      const run = (task: Parameters<typeof runTrain>[0]) => { for (const o of task.outcomes) seen.push({ score: o.score, from: o.correction?.from ?? null }); return runTrain(task); };
      const step = async (base: StoredState): Promise<StoredState> => (await trainPass(s.sql, base, { qualitySignals: keyed, halfLifeDays: null, feedbackSettleMs: 1000 }, run)).next ?? base;
      await give(later, now - 60_000, 'false');
      const one = await step(emptyStored());
      await give(early, now - 90_000, 'false'); // its writer held it back
      const two = await step(one);
      assert.equal(two.outcomes, 2);
      await give(early, now - 30_000, 'true');
      await step(two);
      assert.deepEqual(seen, [{ score: 0, from: null }, { score: 0, from: null }, { score: 1, from: 0 }], 'the change of the late first value is learned');
    } finally { await s.close(); }
  });
}
