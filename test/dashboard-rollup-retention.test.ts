// Retention of the dashboard's rollups, on SQLite and PostgreSQL (a fresh schema, dropped after; CI fails
// when PostgreSQL is down): hour rows past hour_rollups_days and day rows past day_rollups_days are
// deleted and nothing newer; reports over ranges reaching past the hour retention read the day rows
// there (each UTC day in the bucket holding its midday) and still equal the raw records, money exactly.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareDecimal } from '../src/catalog/decimal.ts';
import { compareModels } from '../src/dashboard/models.ts';
import { bucketStarts, quantile } from '../src/dashboard/rollup-math.ts';
import { segments } from '../src/dashboard/rollup-query.ts';
import { usageReport, type UsageQuery } from '../src/dashboard/usage.ts';
import type { Access } from '../src/dashboard/access.ts';
import { PostgresStore } from '../src/store/postgres.ts';
import { foldAll } from '../src/store/rollup-fold.ts';
import { pruneRollups, readsFromDayRows, rollupRetentionOf, rollupRetentionProblem } from '../src/store/rollup-retention.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { PG_URL, pgTestDb } from './helpers/pg.ts';
import { add, bucketOfRecord, emptyAgg, rawRecords, type Agg, type Raw } from './helpers/rollup-expect.ts';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const END = Date.UTC(2026, 5, 20, 9, 40);
const RETENTION = { hourRollupsDays: 30, dayRollupsDays: 120 };
const HOUR_KEEP = Math.floor((END - 30 * DAY) / DAY) * DAY;
const DAY_KEEP = Math.floor((END - 120 * DAY) / DAY) * DAY;
const ADMIN: Access = { role: 'admin', userId: null };
const dir = mkdtempSync(join(tmpdir(), 'gw-rollup-retention-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_rollret');

function rng(seed: number): () => number { let s = seed >>> 0; return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; }; }
const COSTS = ['0.000123', '0.00000008333333333333334', '12.5', '0.0000004815', '1.000000000000000001'];

/** `n` records over the 200 days before END. */
function makeRecords(n: number, seed: number): InferenceRecord[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const t = END - 1 - Math.floor(r() * 200 * DAY);
    const model = `p${Math.floor(r() * 2)}/m${Math.floor(r() * 3)}`;
    return {
      id: uuidv7(t), createdAt: new Date(t).toISOString(), keyId: `k${1 + Math.floor(r() * 3)}`, route: '/v1/chat/completions', clientFormat: 'openai-chat',
      requestedModel: model, servedModel: model, provider: model.split('/')[0]!, attempts: [], status: r() < 0.1 ? 500 : 200, errorCode: null,
      latencyMs: [10, 80, 400, 2500][i % 4]! + Math.floor(r() * 100), ttftMs: r() < 0.5 ? Math.floor(r() * 900) : null, stream: false,
      inputTokens: Math.floor(r() * 3000), outputTokens: Math.floor(r() * 700), cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0,
      costUsd: COSTS[Math.floor(r() * COSTS.length)]!, finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
    };
  });
}

const feedbackOn = (recs: readonly InferenceRecord[]): FeedbackRow[] => recs.filter((_, i) => i % 5 === 0).map((x, i) => ({
  id: uuidv7(), inferenceId: x.id, keyId: x.keyId, metric: 'quality', type: 'float', value: String(i % 10), reason: null, tags: {}, optimize: 'max',
  createdAt: new Date(Date.parse(x.createdAt) + 1000).toISOString(),
}));

/**
 * The bucket a record counts in after pruning: as before for hours from HOUR_KEEP on; before it, its
 * whole UTC day counts where that day's midday falls; before DAY_KEEP, nowhere.
 */
function bucketAfterPrune(hour: number, from: number, to: number, starts: readonly number[]): number {
  if (hour >= HOUR_KEEP) return bucketOfRecord(hour, from, to, starts);
  if (hour < DAY_KEEP) return -1;
  return bucketOfRecord(Math.floor(hour / DAY) * DAY + 12 * HOUR, from, to, starts);
}

function expected(raw: readonly Raw[], q: UsageQuery): { total: Agg; series: Agg[]; groups: Map<string, Agg> } {
  const starts = bucketStarts(q.bucket, q.tz, q.from, q.to)!;
  const total = emptyAgg();
  const series = starts.map(() => emptyAgg());
  const groups = new Map<string, Agg>();
  for (const r of raw) {
    const b = bucketAfterPrune(r.hour, q.from, q.to, starts);
    if (b < 0) continue;
    add(total, r); add(series[b]!, r);
    if (q.group === 'model') { if (!groups.has(r.model)) groups.set(r.model, emptyAgg()); add(groups.get(r.model)!, r); }
  }
  return { total, series, groups };
}

function same(got: { requests: number; errors: number; input_tokens: number; cost_usd: string; latency_ms: { p50: number | null; p95: number | null } }, want: Agg, what: string): void {
  assert.deepEqual([got.requests, got.errors, got.input_tokens], [want.requests, want.errors, want.input], what);
  assert.equal(compareDecimal(got.cost_usd, want.cost), 0, `${what}: cost ${got.cost_usd} != ${want.cost}`);
  assert.equal(got.latency_ms.p50, quantile(want.lat, 0.5), `${what}: p50`);
  assert.equal(got.latency_ms.p95, quantile(want.lat, 0.95), `${what}: p95`);
}

const count = async (s: Store, table: string, where: string, params: unknown[]): Promise<number> =>
  Number((await s.sql.all(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`, params))[0]?.n ?? 0);

test('settings: defaults, null keeps, day rows must outlive hour rows', () => {
  assert.deepEqual(rollupRetentionOf({}), { hourRollupsDays: 90, dayRollupsDays: 1095 });
  assert.deepEqual(rollupRetentionOf({ hour_rollups_days: null, day_rollups_days: null }), { hourRollupsDays: null, dayRollupsDays: null });
  assert.equal(rollupRetentionProblem({ hourRollupsDays: 30, dayRollupsDays: 30 }), null);
  assert.equal(rollupRetentionProblem({ hourRollupsDays: 30, dayRollupsDays: null }), null);
  assert.match(rollupRetentionProblem({ hourRollupsDays: 30, dayRollupsDays: 7 }) ?? '', /day_rollups_days \(7\) must be at least hour_rollups_days \(30\)/);
  assert.match(rollupRetentionProblem({ hourRollupsDays: null, dayRollupsDays: 365 }) ?? '', /needs hour_rollups_days/);
});

test('segments before the hour rows kept become day segments, each UTC day in the one segment holding its midday', () => {
  const keep = Date.UTC(2026, 0, 10);
  // Hourly buckets across keep; a range starting at 05:00 and at 14:00 (that day's midday is before the start: not counted).
  for (const from of [Date.UTC(2026, 0, 7, 5), Date.UTC(2026, 0, 7, 14)]) {
    const to = Date.UTC(2026, 0, 11, 3);
    const starts = bucketStarts('hour', 'UTC', from, to)!;
    const segs = readsFromDayRows(segments(from, to, starts), keep);
    const days = segs.filter((s) => s.span === 'd');
    const covered = days.flatMap((s) => Array.from({ length: (s.hi - s.lo) / DAY }, (_, i) => s.lo + i * DAY));
    const want = from === Date.UTC(2026, 0, 7, 5) ? [7, 8, 9] : [8, 9];
    assert.deepEqual(covered, want.map((d) => Date.UTC(2026, 0, d)));
    for (const s of days) assert.equal(starts[s.b], s.lo + 12 * HOUR, 'in the hour bucket of its midday');
    assert.ok(segs.filter((s) => s.span === 'h').every((s) => s.lo >= keep));
    assert.equal(segs.filter((s) => s.span === 'h').reduce((a, s) => a + s.hi - s.lo, 0), to - keep);
  }
  // Day buckets in New York (05:00 UTC): UTC day D has its midday in the local day D.
  const from = Date.UTC(2026, 0, 3, 5); const to = Date.UTC(2026, 0, 12, 5);
  const starts = bucketStarts('day', 'America/New_York', from, to)!;
  const segs = readsFromDayRows(segments(from, to, starts), keep);
  const dayOf = new Map<number, number>();
  for (const s of segs.filter((x) => x.span === 'd')) for (let d = s.lo; d < s.hi; d += DAY) { assert.ok(!dayOf.has(d), 'a day counted once'); dayOf.set(d, s.b); }
  for (const [d, b] of dayOf) if (d < keep) assert.equal(new Date(starts[b]!).getUTCDate(), new Date(d).getUTCDate());
  // Nothing before keep: unchanged.
  const later = segments(keep + 3 * HOUR, keep + 5 * DAY);
  assert.deepEqual(readsFromDayRows(later, keep), later);
});

type Backend = { name: string; open(): Promise<Store> };
const backends: Backend[] = [
  { name: 'sqlite', open: async () => { const s = new SqliteStore({ path: join(dir, `${Math.random().toString(36).slice(2)}.db`) }); await s.migrate(); return s; } },
  ...(pgDb ? [{
    name: 'postgres',
    open: async () => { const s = new PostgresStore({ url: PG_URL, schema: pgDb.another() }); await s.migrate(); return s; },
  }] : []),
];

for (const b of backends) {
  describe(`rollup retention on ${b.name}`, () => {
    test('prunes hour rows past 30 days and day rows past 120, whole UTC days; reports past the hour retention read day rows', async () => {
      const store = await b.open();
      try {
        const recs = makeRecords(5000, 17);
        for (let i = 0; i < recs.length; i += 250) await store.insertInferences(recs.slice(i, i + 250));
        await store.insertFeedback(feedbackOn(recs));
        await foldAll(store.sql);
        const raw = await rawRecords(store.sql);
        assert.equal(raw.length, recs.length);
        const keptHours = await count(store, 'usage_rollup', "span = 'h' AND t >= ?", [new Date(HOUR_KEEP).toISOString()]);
        const keptDays = await count(store, 'usage_rollup', "span = 'd' AND t >= ?", [new Date(DAY_KEEP).toISOString()]);
        const oldHours = await count(store, 'usage_rollup', "span = 'h' AND t < ?", [new Date(HOUR_KEEP).toISOString()]);
        const oldDays = await count(store, 'usage_rollup', "span = 'd' AND t < ?", [new Date(DAY_KEEP).toISOString()]);
        const oldFeedback = await count(store, 'feedback_rollup', "span = 'h' AND t < ?", [new Date(HOUR_KEEP).toISOString()]);
        assert.ok(oldHours > 0 && oldDays > 0 && oldFeedback > 0);

        const pruned = await pruneRollups(store.sql, RETENTION, END);
        assert.ok(pruned.hourRows >= oldHours + oldFeedback, JSON.stringify(pruned));
        for (const table of ['usage_rollup', 'feedback_rollup']) {
          assert.equal(await count(store, table, "span = 'h' AND t < ?", [new Date(HOUR_KEEP).toISOString()]), 0, `${table}: old hour rows`);
          assert.equal(await count(store, table, "span = 'd' AND t < ?", [new Date(DAY_KEEP).toISOString()]), 0, `${table}: old day rows`);
          assert.ok(await count(store, table, "span = 'd' AND t < ?", [new Date(HOUR_KEEP).toISOString()]) > 0, `${table}: day rows past the hour retention kept`);
        }
        assert.equal(await count(store, 'usage_rollup', "span = 'h' AND t >= ?", [new Date(HOUR_KEEP).toISOString()]), keptHours, 'newer hour rows untouched');
        assert.equal(await count(store, 'usage_rollup', "span = 'd' AND t >= ?", [new Date(DAY_KEEP).toISOString()]), keptDays, 'newer day rows untouched');
        assert.deepEqual(await pruneRollups(store.sql, RETENTION, END), { hourRows: 0, dayRows: 0 }, 'a second pass finds nothing');
        // Raw records are the rollups' business no longer: retention of rollups never touches them.
        assert.equal((await rawRecords(store.sql)).length, recs.length);

        const ctx = { owners: new Map<string, string>(), label: (_g: string, v: string) => v };
        const queries: Array<Partial<UsageQuery>> = [
          { bucket: 'day', tz: 'UTC', group: 'model', from: END - 100 * DAY + 5 * HOUR },
          { bucket: 'day', tz: 'America/New_York', group: 'none', from: END - 60 * DAY },
          { bucket: 'week', tz: 'Europe/Berlin', group: 'model', from: END - 90 * DAY },
          { bucket: 'hour', tz: 'UTC', group: 'none', from: END - 33 * DAY + 14 * HOUR, to: END - 28 * DAY },
          { bucket: 'day', tz: 'Asia/Kolkata', group: 'none', from: END - 150 * DAY, to: END - 110 * DAY },
          { bucket: 'day', tz: 'UTC', group: 'model', from: END - 10 * DAY + 7 * HOUR },
        ];
        for (const part of queries) {
          const q: UsageQuery = { from: END - 7 * DAY, to: END, bucket: 'day', tz: 'UTC', group: 'none', top: 10, filter: {}, ...part };
          const what = `${q.bucket}/${q.tz}/${new Date(q.from).toISOString()}..${new Date(q.to).toISOString()}`;
          const got = await usageReport(store.sql, q, ADMIN, ctx);
          const want = expected(raw, q);
          assert.ok(want.total.requests > 0, what);
          same(got.totals, want.total, `${what} totals`);
          got.total_series.forEach((m, i) => same(m, want.series[i]!, `${what} bucket ${i}`));
          for (const g of got.groups) same(g.totals, want.groups.get(g.group)!, `${what} group ${g.group}`);
        }
        // Feedback past the hour retention is read from its day rows too.
        const from = END - 100 * DAY;
        const cmp = await compareModels(store.sql, { from, to: END }, ADMIN);
        const fb = feedbackOn(recs).filter((f) => { const h = Math.floor(Date.parse(f.createdAt) / HOUR) * HOUR; return bucketAfterPrune(h, from, END, [from]) === 0; });
        assert.equal(cmp.models.reduce((a, m) => a + m.metrics.reduce((x, y) => x + y.count, 0), 0), fb.length);
      } finally {
        await store.close();
      }
    });
  });
}
