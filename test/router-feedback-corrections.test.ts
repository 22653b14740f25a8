// Feedback changed after its settle window corrects what the first value taught. The store reads
// each (inference, metric) as its first value (settled within the window) and then one correction
// per later row, from the value before it; train folds a correction so that first-then-correction
// learns what the corrected value alone would have.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { feedbackSince, insertDecisions, START, type Cursor, type FeedbackJoin } from '../src/router/store.ts';
import { cursorAt } from '../src/router/landing-order.ts';
import { nextFeedbackCursor, settleSpans } from '../src/router/train-pass.ts';
import { extractPromptFeatures, predict, train, type Outcome, type QualityState } from '../src/router/quality/index.ts';
import type { Learned } from '../src/router/quality/train.ts';
import { fitParams } from '../src/router/quality/model-fit.ts';
import { pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-router-fix-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_router_fix');
const backends: Array<{ name: string; open: () => Promise<Store> }> = [{ name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, 'r.db') }) }];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

const inference = (id: string, at: string): InferenceRecord => ({
  id, createdAt: at, keyId: 'k1', route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
  servedModel: 'p/m-a', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 10, ttftMs: 5, stream: false,
  inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

for (const b of backends) {
  test(`${b.name}: a first value settled in its window, then one correction per later row, each read once across batches`, async () => {
    const store = await b.open();
    try {
      const W = 30_000;
      const t = Date.now();
      const at = (ago: number): string => new Date(t - ago).toISOString();
      const features = extractPromptFeatures({ turns: ['Is this right?'] });
      const names = ['inWindow', 'after', 'flips', 'repeats', 'both', 'late'] as const;
      const inf = Object.fromEntries(names.map((n) => [n, uuidv7()])) as Record<(typeof names)[number], string>;
      await insertDecisions(store.sql, names.map((n) => ({ inferenceId: inf[n], createdAt: at(200_000), keyId: 'k1', servedModel: 'p/m-a', canonical: 'm-a', kind: features.kind, status: 200, costUsd: '0', features, decision: {} })));
      await store.insertInferences(names.map((n) => inference(inf[n], at(200_000))));
      const label = new Map<string, string>();
      const fb = (n: (typeof names)[number], value: string, ago: number): FeedbackRow => {
        const id = uuidv7();
        label.set(id, n);
        return { id, inferenceId: inf[n], keyId: 'k1', metric: 'good', type: 'boolean', value, reason: null, tags: {}, optimize: 'max', createdAt: at(ago) };
      };
      await store.insertFeedback([
        fb('inWindow', 'false', 150_000), fb('inWindow', 'true', 145_000), // undone 5 s later: learned as undone
        fb('after', 'false', 140_000), fb('after', 'true', 100_000), // changed 40 s later: a correction
        fb('flips', 'true', 139_000), fb('flips', 'false', 90_000), fb('flips', 'true', 80_000), fb('flips', 'false', 70_000),
        fb('repeats', 'false', 138_000), fb('repeats', 'false', 60_000), fb('repeats', 'false', 50_000),
        fb('both', 'false', 137_000), fb('both', 'true', 130_000), fb('both', 'false', 40_000), // undone in the window, then changed back
        fb('late', 'true', 136_000), fb('late', 'false', 5_000), // the change is not settled yet
      ]);
      const show = (f: FeedbackJoin) => [label.get(f.id), f.from ?? null, f.value, f.firstAt];
      const first = (n: string) => at({ inWindow: 150_000, after: 140_000, flips: 139_000, repeats: 138_000, both: 137_000, late: 136_000 }[n]!);
      // One batch, landed at one position: in time order (first values, then the corrections after them).
      const want = [
        ['inWindow', null, 'true'], ['after', null, 'false'], ['flips', null, 'true'], ['repeats', null, 'false'], ['both', null, 'true'], ['late', null, 'true'],
        ['after', 'false', 'true'], ['flips', 'true', 'false'], ['flips', 'false', 'true'], ['flips', 'true', 'false'],
        ['repeats', 'false', 'false'], ['repeats', 'false', 'false'], ['both', 'true', 'false'],
      ].map((r) => [...r, first(r[0]!)]);
      const settled = at(W);
      const all = await feedbackSince(store.sql, ['good'], START, 100, settled, W);
      assert.deepEqual(all.map(show), want);
      // Corrections telescope: the first value plus every correction is the latest value.
      const num = (v: string) => (v === 'true' ? 1 : 0);
      for (const n of ['after', 'flips', 'repeats', 'both']) {
        const mine = all.filter((f) => label.get(f.id) === n);
        const sum = mine.reduce((s, f) => s + num(f.value) - (f.from === undefined ? 0 : num(f.from)), 0);
        const latest = { after: 1, flips: 0, repeats: 0, both: 0 }[n]!;
        assert.equal(sum, latest, n);
      }
      // In batches of 1 and 2 from the cursor, every row comes once, in the same order.
      for (const limit of [1, 2]) {
        const got: FeedbackJoin[] = [];
        let c: Cursor = START;
        for (let i = 0; i < 50; i++) {
          const batch = await feedbackSince(store.sql, ['good'], c, limit, settled, W);
          if (batch.length === 0) break;
          assert.ok(batch.length <= limit);
          got.push(...batch);
          c = cursorAt(batch.at(-1)!.at, batch.at(-1)!.id, batch.at(-1)!.landed);
        }
        assert.deepEqual(got.map(show), want, `limit ${limit}`);
        // Later, the unsettled change comes after the cursor as a correction, and nothing else does.
        assert.deepEqual((await feedbackSince(store.sql, ['good'], c, 100, new Date(t).toISOString(), W)).map(show), [['late', 'true', 'false', first('late')]]);
      }
    } finally { await store.close(); }
  });
}

for (const b of backends) {
  test(`${b.name}: feedback_settle_ms changed between passes: each first value keeps the window it was read with (nothing skipped, nothing counted twice)`, async () => {
    const store = await b.open();
    try {
      await store.sql.run('DELETE FROM feedback', []); // this file's database: the test above's rows would move the cursors
      const t = Date.now();
      const at = (ago: number): string => new Date(t - ago).toISOString();
      const features = extractPromptFeatures({ turns: ['Is this right?'] });
      const longer = uuidv7(), shorter = uuidv7();
      await insertDecisions(store.sql, [longer, shorter].map((id) => ({ inferenceId: id, createdAt: at(400_000), keyId: 'k1', servedModel: 'p/m-a', canonical: 'm-a', kind: features.kind, status: 200, costUsd: '0', features, decision: {} })));
      await store.insertInferences([inference(longer, at(400_000)), inference(shorter, at(400_000))]);
      const label = new Map<string, string>();
      const row = (inf: string, value: string, ago: number): FeedbackRow => {
        const id = uuidv7();
        label.set(id, inf === longer ? 'longer' : 'shorter');
        return { id, inferenceId: inf, keyId: 'k1', metric: 'good', type: 'boolean', value, reason: null, tags: {}, optimize: 'max', createdAt: at(ago) };
      };
      await store.insertFeedback([
        row(shorter, 'false', 300_000), row(shorter, 'true', 260_000), // 40 s apart
        row(longer, 'false', 200_000), row(longer, 'true', 160_000), // 40 s apart
      ]);
      const show = (f: FeedbackJoin) => [label.get(f.id), f.from ?? null, f.value];
      // One pass as train-pass.ts runs it: the spans from the cursor, then the next cursor.
      const pass = async (c: Cursor, ms: number, ago: number): Promise<{ rows: FeedbackJoin[]; next: Cursor }> => {
        const earlier = settleSpans(c, ms);
        const rows = await feedbackSince(store.sql, ['good'], c, 100, at(ago + ms), ms, earlier);
        return { rows, next: nextFeedbackCursor(c, rows.at(-1), ms, earlier) };
      };
      // 60 s, a pass 170 s ago: "shorter"'s first value is read with its change 40 s later inside its window.
      const p1 = await pass(START, 60_000, 170_000);
      assert.deepEqual(p1.rows.map(show), [['shorter', null, 'true']]);
      // 30 s from then on, a pass 140 s ago: "longer"'s first value is read with nothing in its window;
      // "shorter"'s change, already in its first value (60 s), is not read again (before: read here as
      // a correction, counted twice).
      const p2 = await pass(p1.next, 30_000, 140_000);
      assert.deepEqual(p2.rows.map(show), [['longer', null, 'false']]);
      // Back to 60 s, a pass now: "longer"'s change, 40 s after its first value, corrects it (read with
      // 30 s, it was outside that window; before, the 60 s window left it out: skipped).
      const p3 = await pass(p2.next, 60_000, 0);
      assert.deepEqual(p3.rows.map(show), [['longer', 'false', 'true']]);
      assert.deepEqual(p3.next.earlier, [{ until: p1.rows[0]!.at, ms: 60_000 }, { until: p2.rows[0]!.at, ms: 30_000 }]);
      // The cursor's spans survive the store's JSON column (the state row keeps them).
      assert.deepEqual(JSON.parse(JSON.stringify(p3.next)), p3.next);
    } finally { await store.close(); }
  });
}

// Pure: train(first) then train(correction) against train(corrected value) directly.
const prompts = Array.from({ length: 24 }, (_, i) => extractPromptFeatures({ turns: [i % 2 ? `Write a function number ${i} that sorts a list` : `Which answer is right for question ${i}?\nA) one\nB) two`] }));
const T = Date.parse('2026-11-01T00:00:00Z');
const DAY = 86_400_000;
const base = (t0: number): Outcome[] => prompts.slice(1).map((f, i) => ({ features: f, model: i % 3 ? 'm-a' : 'm-b', score: (i * 7) % 5 / 4, time: t0 + i * 1000 }));
const x = (score: number, extra: Partial<Outcome> = {}): Outcome => ({ features: prompts[0]!, model: 'm-a', score, time: T, ...extra });
const qs = (s: QualityState) => prompts.flatMap((f) => predict(s, f, ['m-a', 'm-b'], { priors: null }).map((e) => e.q));
const near = (a: number[], b: number[], what: string, tol = 1e-9) => {
  assert.equal(a.length, b.length, what);
  a.forEach((v, i) => assert.ok(Math.abs(v - b[i]!) < tol, `${what}[${i}]: ${v} vs ${b[i]}`));
};
const flat = (x: unknown): number[] => (Array.isArray(x) ? x.flatMap(flat) : x && typeof x === 'object' ? Object.keys(x).sort().flatMap((k) => flat((x as Record<string, unknown>)[k])) : typeof x === 'number' ? [x] : []);
function same(a: QualityState, b: QualityState): void {
  const la = a.learned as Learned, lb = b.learned as Learned;
  near(flat(la.model), flat(lb.model), 'model tallies');
  near(flat(la.kind), flat(lb.kind), 'kind tallies');
  near(flat(la.clusters.map((c) => c.models)), flat(lb.clusters.map((c) => c.models)), 'cluster tallies');
  const ex = (l: Learned) => l.exemplars!.flatMap((e) => e.m.map((m, j) => [e.key, m, e.n[j]!, e.s[j]!] as const)).sort((p, q) => p[0] - q[0] || p[1].localeCompare(q[1]));
  near(ex(la).flatMap((e) => [e[0], e[2], e[3]]), ex(lb).flatMap((e) => [e[0], e[2], e[3]]), 'stored prompts');
  near([a.outcomes], [b.outcomes], 'outcomes');
  // The additive fit is iterative (it stops once a sweep moves less than 1e-6) and warm-started from
  // the previous one, so the two routes' fits agree to that tolerance; fitted cold from each state's
  // tallies they agree to 1e-9, so everything the fit sees is the same.
  const cold = (l: Learned) => fitParams(l.clusters, Object.keys(l.model).sort(), undefined);
  near(flat({ ...cold(la), sweeps: 0 }), flat({ ...cold(lb), sweeps: 0 }), 'cold fit');
  near(qs(a), qs(b), 'predictions', 1e-6);
}

test('train: a first outcome then its correction learns what the corrected outcome alone does', () => {
  const fixed = train([x(0), ...base(T)]);
  const corrected = train([x(1, { correction: { from: 0 } })], fixed);
  same(corrected, train([x(1), ...base(T)]));
  assert.equal(corrected.version, fixed.version + 1);
  assert.ok(qs(corrected)[0]! > qs(fixed)[0]!, 'm-a on the corrected prompt went up');
  // Back again, and a correction that changes nothing leaves the state as it is.
  same(train([x(0, { correction: { from: 1 } })], corrected), fixed);
  assert.deepEqual(train([x(0, { correction: { from: 0 } })], fixed), fixed);
});

test('train with a half-life: the correction weighs what the corrected outcome weighs now', () => {
  const opts = { halfLifeDays: 1 };
  // The corrected outcome is a day older than the batch's newest, and two days by the correction.
  const later = base(T + DAY);
  const newer: Outcome = { features: prompts[5]!, model: 'm-b', score: 1, time: T + 2 * DAY };
  const s1 = train([x(0.25), ...later], undefined, opts);
  const s2 = train([x(1, { correction: { from: 0.25 } }), newer], s1, opts);
  const d2 = train([newer], train([x(1), ...later], undefined, opts), opts);
  same(s2, d2);
  const w = (s: QualityState) => (s.learned as Learned).model['m-a']!;
  const f = 2 ** -((T + 2 * DAY - s1.trainedUntil) / DAY);
  assert.ok(Math.abs(w(s2)[0] - w(s1)[0] * f) < 1e-9, 'the weights only decay');
  assert.ok(w(s2)[1] > w(s1)[1] * f, 'the sum went up');
});
