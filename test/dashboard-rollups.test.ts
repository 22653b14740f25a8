// The dashboard's rollups against the raw records, on SQLite and PostgreSQL (a fresh schema, dropped after;
// CI fails when PostgreSQL is down): reports of every grain, bucket and zone equal sums over the stored
// records, money exactly; retried batches (rows already stored, ids repeated in a batch) never count twice;
// feedback stored before its inference counts once it lands; concurrent folds count each entry once;
// and migration 42 carries migration 41's trigger-kept rollups over.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addDecimal, compareDecimal } from '../src/catalog/decimal.ts';
import { KeysData } from '../src/dashboard/keys-data.ts';
import { compareModels } from '../src/dashboard/models.ts';
import { bucketStarts, quantile } from '../src/dashboard/rollup-math.ts';
import { usageReport, type UsageQuery } from '../src/dashboard/usage.ts';
import type { Access } from '../src/dashboard/access.ts';
import { MIGRATIONS, MIGRATIONS_TABLE_SQL } from '../src/store/migrations.ts';
import { PostgresStore } from '../src/store/postgres.ts';
import { foldAll, foldOnce, sweepPendingFeedback } from '../src/store/rollup-fold.ts';
import { addMoney, joinMoney, splitMoney } from '../src/store/rollup-cells.ts';
import { feedbackParams, inferenceParams } from '../src/store/rows.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { FeedbackRow, InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { PG_URL, pgTestDb } from './helpers/pg.ts';
import { add, bucketOfRecord, emptyAgg, rawRecords, type Agg, type Raw } from './helpers/rollup-expect.ts';

const END = Date.UTC(2026, 3, 2, 7, 30); // after both DST changes of 2026 (US 8 March, EU 29 March)
const DAY = 86_400_000;
const ADMIN: Access = { role: 'admin', userId: null };
const dir = mkdtempSync(join(tmpdir(), 'gw-rollups-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_rollups');

function rng(seed: number): () => number { let s = seed >>> 0; return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; }; }
const COSTS = ['0.000123', '0.00000008333333333333334', '12.5', '0', '0.0000004815', '1.000000000000000001', '0.999999999999'];

function makeRecords(n: number, seed: number): InferenceRecord[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const t = END - Math.floor(r() * 40 * DAY);
    const failed = r() < 0.1;
    const key = r() < 0.1 ? null : `k${1 + Math.floor(r() * 4)}`;
    const model = `p${Math.floor(r() * 3)}/m${Math.floor(r() * 4)}`;
    return {
      id: uuidv7(t), createdAt: i % 97 === 0 ? new Date(t).toISOString().replace('Z', '+00:00') : new Date(t).toISOString(), keyId: key,
      route: r() < 0.7 ? '/v1/chat/completions' : '/v1/messages', clientFormat: 'openai-chat', requestedModel: model, servedModel: failed ? null : model,
      provider: failed ? null : model.split('/')[0]!, attempts: [], status: failed ? 502 : 200, errorCode: null,
      latencyMs: [0, 24, 25, 119_999, 120_000, 500_000][i % 6]! + Math.floor(r() * 3000), ttftMs: r() < 0.5 ? Math.floor(r() * 2000) : null, stream: r() < 0.5,
      inputTokens: Math.floor(r() * 5000), outputTokens: Math.floor(r() * 900), cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0,
      costUsd: COSTS[Math.floor(r() * COSTS.length)]!, finishReason: null, metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
    };
  });
}

function feedbackOn(recs: readonly InferenceRecord[], seed: number): FeedbackRow[] {
  const r = rng(seed);
  return recs.filter(() => r() < 0.3).map((x) => {
    const boolean = r() < 0.5;
    return {
      id: uuidv7(), inferenceId: x.id, keyId: x.keyId, metric: boolean ? 'helpful' : 'quality', type: boolean ? 'boolean' as const : 'float' as const,
      value: boolean ? (r() < 0.6 ? 'true' : 'false') : String(Math.round(r() * 100) / 10), reason: null, tags: {}, optimize: 'max' as const,
      createdAt: new Date(Date.parse(x.createdAt) + 5000).toISOString(),
    };
  });
}

/** `open` makes a fresh database; `again` a second connection to the same one. */
type Backend = { name: string; open(): Promise<Store>; again(s: Store): Promise<Store> };
const paths = new WeakMap<Store, string>();
const backends: Backend[] = [
  {
    name: 'sqlite',
    open: async () => { const path = join(dir, `${Math.random().toString(36).slice(2)}.db`); const s = new SqliteStore({ path }); paths.set(s, path); await s.migrate(); return s; },
    again: async (s) => new SqliteStore({ path: paths.get(s)! }),
  },
  ...(pgDb ? [{
    name: 'postgres',
    open: async () => { const s = new PostgresStore({ url: PG_URL, schema: pgDb.another() }); await s.migrate(); return s; },
    again: async (s: Store) => new PostgresStore({ url: PG_URL, schema: (s as PostgresStore).schema }),
  }] : []),
];

function expected(raw: readonly Raw[], q: UsageQuery, keys: readonly string[] | null): { total: Agg; series: Agg[]; groups: Map<string, Agg>; groupSeries: Map<string, Agg[]> } {
  const starts = bucketStarts(q.bucket, q.tz, q.from, q.to)!;
  const dim = q.group === 'none' ? null : q.group === 'key' ? 'key' : q.group;
  const total = emptyAgg(); const series = starts.map(() => emptyAgg());
  const groups = new Map<string, Agg>(); const groupSeries = new Map<string, Agg[]>();
  for (const r of raw) {
    if (keys && !keys.includes(r.key)) continue;
    if (q.filter.models && !q.filter.models.includes(r.model)) continue;
    if (q.filter.providers && !q.filter.providers.includes(r.provider)) continue;
    const b = bucketOfRecord(r.hour, q.from, q.to, starts);
    if (b < 0) continue;
    add(total, r); add(series[b]!, r);
    if (dim) {
      const g = r[dim as 'key' | 'model' | 'provider' | 'route'];
      if (!groups.has(g)) { groups.set(g, emptyAgg()); groupSeries.set(g, starts.map(() => emptyAgg())); }
      add(groups.get(g)!, r); add(groupSeries.get(g)![b]!, r);
    }
  }
  return { total, series, groups, groupSeries };
}

function sameMetrics(got: { requests: number; errors: number; input_tokens: number; output_tokens: number; cost_usd: string; latency_ms: { p50: number | null; p95: number | null }; ttft_ms: { p95: number | null } }, want: Agg, what: string): void {
  assert.deepEqual([got.requests, got.errors, got.input_tokens, got.output_tokens], [want.requests, want.errors, want.input, want.output], what);
  assert.equal(compareDecimal(got.cost_usd, want.cost), 0, `${what}: cost ${got.cost_usd} != ${want.cost}`);
  assert.equal(got.latency_ms.p50, quantile(want.lat, 0.5), `${what}: p50`);
  assert.equal(got.latency_ms.p95, quantile(want.lat, 0.95), `${what}: p95`);
  assert.equal(got.ttft_ms.p95, quantile(want.ttft, 0.95), `${what}: ttft p95`);
}

test('money splits into integers and joins back exactly (more than 18 decimals, negative, large)', () => {
  for (const s of ['0', '0.000123', '0.00000008333333333333334', '12.5', '1.000000000000000001', '-3.25', '9000000000', '0.0000000000000000001']) {
    const m = splitMoney(s);
    assert.ok(Math.abs(m.lo) < 1e12 && Number.isSafeInteger(m.hi));
    assert.equal(compareDecimal(joinMoney(m.hi, m.lo, m.rest), s), 0, s);
  }
  // Past 9e9 USD in a record or a cell (no real bill), the amount rides in the exact part: never refused.
  const huge = splitMoney('90000000000.5');
  assert.equal(joinMoney(huge.hi, huge.lo, huge.rest), '90000000000.5');
  const sum = splitMoney('8000000000');
  addMoney(sum, splitMoney('8000000000.000000000000000000001'));
  assert.equal(joinMoney(sum.hi, sum.lo, sum.rest), '16000000000.000000000000000000001');
});

for (const b of backends) {
  describe(`rollups on ${b.name}`, () => {
    test('reports of every grain, bucket and zone equal the raw records; retried batches and repeated ids count once', async () => {
      const store = await b.open();
      try {
        const recs = makeRecords(2500, 7);
        const fb = feedbackOn(recs, 11);
        // Feedback on the first 200 records is stored before them: it waits, then counts when they land.
        await store.insertFeedback(fb.filter((f) => recs.findIndex((x) => x.id === f.inferenceId) < 200));
        const r = rng(3);
        for (let i = 0; i < recs.length;) {
          const n = 1 + Math.floor(r() * 300);
          const batch = recs.slice(i, i + n);
          if (r() < 0.15 && i > 0) batch.push(...recs.slice(Math.max(0, i - 40), i)); // a retry: rows already stored
          if (r() < 0.1) batch.push(batch[0]!); // an id twice in one batch
          await store.insertInferences(batch);
          if (r() < 0.3) await foldAll(store.sql);
          i += n;
        }
        await store.insertFeedback(fb);
        await store.insertFeedback(fb.slice(0, 50)); // a retried feedback batch
        const raw = await rawRecords(store.sql);
        assert.equal(raw.length, recs.length);
        const ctx = { owners: new Map<string, string>(), label: (_g: string, v: string) => v };
        const queries: Array<[Partial<UsageQuery>, Access]> = [
          [{ bucket: 'day', tz: 'UTC', group: 'model', from: END - 30 * DAY }, ADMIN],
          [{ bucket: 'day', tz: 'America/New_York', group: 'key', from: END - 35 * DAY + 5_400_000 }, ADMIN],
          [{ bucket: 'week', tz: 'Europe/Berlin', group: 'provider', from: END - 40 * DAY }, ADMIN],
          [{ bucket: 'month', tz: 'Asia/Kolkata', group: 'route', from: END - 40 * DAY }, ADMIN],
          [{ bucket: 'hour', tz: 'UTC', group: 'model', from: END - 2 * DAY + 1234 }, ADMIN],
          [{ bucket: 'day', tz: 'UTC', group: 'model', from: END - 20 * DAY, filter: { keys: ['k2'] } }, ADMIN],
          [{ bucket: 'day', tz: 'America/New_York', group: 'key', from: END - 20 * DAY, filter: { models: ['p1/m2'], providers: ['p1'] } }, ADMIN],
          [{ bucket: 'day', tz: 'UTC', group: 'none', from: END - 12 * DAY }, { role: 'member', userId: 'u', keyIds: ['k1', 'k3'] }],
        ];
        for (const [part, access] of queries) {
          const q: UsageQuery = { from: END - 7 * DAY, to: END, bucket: 'day', tz: 'UTC', group: 'none', top: 3, filter: {}, ...part };
          const what = `${q.bucket}/${q.tz}/${q.group}/${JSON.stringify(q.filter)}/${access.role}`;
          const got = await usageReport(store.sql, q, access, ctx);
          const keys = access.role === 'member' ? access.keyIds : q.filter.keys ?? null;
          const want = expected(raw, q, keys);
          sameMetrics(got.totals, want.total, `${what} totals`);
          got.total_series.forEach((m, i) => sameMetrics(m, want.series[i]!, `${what} bucket ${i}`));
          for (const g of got.groups) {
            sameMetrics(g.totals, want.groups.get(g.group)!, `${what} group ${g.group}`);
            g.points.forEach((p, i) => assert.equal(p.requests, want.groupSeries.get(g.group)![i]!.requests, `${what} group ${g.group} bucket ${i}`));
          }
          if (got.other) {
            const rest = [...want.groups].filter(([g]) => !got.groups.some((x) => x.group === g)).reduce((a, [, x]) => ({ requests: a.requests + x.requests, cost: addDecimal(a.cost, x.cost) }), { requests: 0, cost: '0' });
            assert.equal(got.other.totals.requests, rest.requests, `${what} other`);
            assert.equal(compareDecimal(got.other.totals.cost_usd, rest.cost), 0, `${what} other cost`);
          }
        }
        // Feedback per model: every stored feedback row on an answered inference, once.
        const cmp = await compareModels(store.sql, { from: END - 60 * DAY, to: END + DAY }, ADMIN);
        const fbRows = await store.sql.all('SELECT i.served_model AS m, COUNT(*) AS n FROM feedback f JOIN inferences i ON i.id = f.inference_id WHERE i.served_model IS NOT NULL GROUP BY i.served_model');
        for (const row of fbRows) {
          const p = cmp.models.find((x) => x.model === String(row.m))!;
          assert.equal(p.metrics.reduce((a, m) => a + m.count, 0), Number(row.n), `feedback on ${String(row.m)}`);
        }
        const totalCost = raw.reduce((a, x) => addDecimal(a, x.cost), '0');
        assert.equal(compareDecimal(cmp.models.reduce((a, m) => addDecimal(a, m.cost_usd), '0'), totalCost), 0, 'compare: exact total cost');
        // Key stats at the data's end: the last 24 h and 7 days.
        for (const k of ['k1', 'k2']) await store.insertKey({ id: k, name: k, hash: `h-${k}`, createdAt: new Date(END - 50 * DAY).toISOString(), lastUsedAt: null, expiresAt: null, revokedAt: null, allowedModels: [], budgetUsd: '100', budgetPeriod: 'total', rpmLimit: null, tpmLimit: null });
        const views = (await new KeysData(store, async () => {}).list(ADMIN, new Map(), new Map(), END)).data;
        for (const v of views) {
          const since = (ms: number) => raw.filter((x) => x.key === v.id && x.hour >= Math.floor((END - ms) / 3_600_000) * 3_600_000);
          assert.equal(v.stats.requests_24h, since(DAY).length, `${v.id} requests 24 h`);
          assert.equal(compareDecimal(v.stats.spend_7d_usd, since(7 * DAY).reduce((a, x) => addDecimal(a, x.cost), '0')), 0, `${v.id} spend 7 d`);
          assert.equal(compareDecimal(v.stats.period_spend_usd, raw.filter((x) => x.key === v.id).reduce((a, x) => addDecimal(a, x.cost), '0')), 0, `${v.id} all-time spend`);
        }
      } finally {
        await store.close();
      }
    });

    // SQLite connections of one thread cannot interleave transactions (the second would wait on the first
    // while blocking it): there, folds on one runner are chained, and other connections are other threads.
    test('concurrent folds (two connections on PostgreSQL, one runner on SQLite) fold each journal entry once', async () => {
      const store = await b.open();
      const other = await b.again(store);
      try {
        const recs = makeRecords(600, 21);
        for (let i = 0; i < recs.length; i += 20) await store.insertInferences(recs.slice(i, i + 20));
        if (b.name === 'postgres') await Promise.all([foldOnce(store.sql, 7), foldOnce(other.sql, 9), foldOnce(other.sql, 500), foldOnce(store.sql, 500)]);
        else { await Promise.all([foldAll(store.sql), foldAll(store.sql), foldAll(store.sql)]); await foldOnce(other.sql); }
        await foldAll(store.sql);
        const n = await store.sql.all("SELECT SUM(requests) AS n FROM usage_rollup WHERE span = 'd' AND grain = 'total'");
        assert.equal(Number(n[0]!.n), recs.length);
        assert.equal(Number((await store.sql.all('SELECT COUNT(*) AS n FROM rollup_journal'))[0]!.n), 0);
      } finally {
        await other.close();
        await store.close();
      }
    });

    test('the sweep counts feedback a race left waiting although its inference is stored, and drops waiting rows whose inference never came', async () => {
      const store = await b.open();
      try {
        const [x] = makeRecords(1, 31);
        const rec = { ...x!, servedModel: 'p1/m1', requestedModel: 'p1/m1', provider: 'p1', status: 200 };
        await store.insertInferences([rec]);
        // What two batches committing at once leave behind: feedback stored, waiting, its inference already there.
        const [f] = feedbackOn([rec, rec, rec, rec, rec, rec, rec, rec], 2);
        await store.sql.run('INSERT INTO feedback (id, inference_id, key_id, metric, type, value, reason, tags, optimize, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', feedbackParams(f!));
        await store.sql.run('INSERT INTO feedback_rollup_pending (feedback_id, inference_id, created_at) VALUES (?, ?, ?)', [f!.id, rec.id, f!.createdAt]);
        await store.sql.run('INSERT INTO feedback_rollup_pending (feedback_id, inference_id, created_at) VALUES (?, ?, ?)', ['lost-feedback', uuidv7(END - 3 * DAY), new Date(END - 3 * DAY).toISOString()]);
        const before = await compareModels(store.sql, { from: END - 60 * DAY, to: END + DAY }, ADMIN);
        assert.equal(before.models.find((m) => m.model === 'p1/m1')?.metrics.length ?? 0, 0);
        assert.equal(await sweepPendingFeedback(store.sql, END), 1);
        const after = await compareModels(store.sql, { from: END - 60 * DAY, to: END + DAY }, ADMIN);
        assert.deepEqual(after.models.find((m) => m.model === 'p1/m1')!.metrics.map((m) => [m.metric, m.count]), [[f!.metric, 1]]);
        assert.equal(Number((await store.sql.all('SELECT COUNT(*) AS n FROM feedback_rollup_pending'))[0]!.n), 0, 'the stale waiting row is gone');
        assert.equal(await sweepPendingFeedback(store.sql, END), 0, 'a second sweep counts nothing again');
      } finally {
        await store.close();
      }
    });

    test('migration 42 carries the trigger-kept rollups of migration 41 over, and feedback waiting for its inference', async () => {
      const store = b.name === 'sqlite' ? new SqliteStore({ path: join(dir, `m41-${Math.random()}.db`) }) : new PostgresStore({ url: PG_URL, schema: pgDb!.another() });
      try {
        if (store instanceof PostgresStore) await store.sql.run(`CREATE SCHEMA IF NOT EXISTS "${store.schema}"`);
        await store.sql.run(MIGRATIONS_TABLE_SQL);
        for (const m of [...MIGRATIONS].sort((x, y) => x.version - y.version).filter((x) => x.version <= 41)) {
          for (const s of m[store.kind]) await store.sql.run(s);
          await store.sql.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, new Date().toISOString()]);
        }
        const recs = makeRecords(400, 5);
        const cols = 'id, created_at, key_id, route, client_format, requested_model, served_model, provider, attempts, status, error_code, latency_ms, ttft_ms, stream, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, finish_reason, metadata, extra, client_ip, request_body, response_body, partial';
        const early = recs.slice(0, 380);
        for (const x of early) await store.sql.run(`INSERT INTO inferences (${cols}) VALUES (${cols.split(', ').map(() => '?').join(', ')})`, inferenceParams(x, x.stream, false));
        const fb = feedbackOn(recs, 9);
        for (const f of fb) await store.sql.run('INSERT INTO feedback (id, inference_id, key_id, metric, type, value, reason, tags, optimize, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', feedbackParams(f));
        await store.migrate(); // 42 (and later steps)
        await store.insertInferences(recs.slice(380)); // their feedback was stored before the migration
        const raw = await rawRecords(store.sql);
        const got = await usageReport(store.sql, { from: END - 41 * DAY, to: END + DAY, bucket: 'week', tz: 'UTC', group: 'model', top: 20, filter: {} }, ADMIN, { owners: new Map(), label: (_g, v) => v });
        assert.equal(got.totals.requests, raw.length);
        assert.equal(compareDecimal(got.totals.cost_usd, raw.reduce((a, x) => addDecimal(a, x.cost), '0')), 0, 'exact cost after conversion');
        const cmp = await compareModels(store.sql, { from: END - 60 * DAY, to: END + DAY }, ADMIN);
        const answered = new Set(recs.filter((x) => x.servedModel).map((x) => x.id));
        assert.equal(cmp.models.reduce((a, m) => a + m.metrics.reduce((s, x) => s + x.count, 0), 0), fb.filter((f) => answered.has(f.inferenceId)).length);
        for (const t of ['usage_hourly', 'feedback_hourly']) await assert.rejects(store.sql.all(`SELECT 1 FROM ${t}`), `${t} is dropped`);
      } finally {
        await store.close();
      }
    });
  });
}
