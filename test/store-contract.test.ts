// One contract suite for every Store: the same cases run against SQLite (temp file) and PostgreSQL
// (a fresh schema per run, dropped at the end). PostgreSQL being down fails the run when CI=true.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, describe, test } from 'node:test';
import { claimMetricDefs, loadMetricDefs } from '../src/feedback/metric-store.ts';
import { MIGRATIONS, MIGRATIONS_TABLE_SQL } from '../src/store/migrations.ts';
import { openStore } from '../src/store/open.ts';
import { PostgresStore } from '../src/store/postgres.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { FeedbackRow, InferenceRecord, KeyRecord, MetricType, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { PG_URL, pgTestDb } from './helpers/pg.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-store-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const pgDb = await pgTestDb('gw_test');

const key = (id: string, over: Partial<KeyRecord> = {}): KeyRecord => ({
  id, name: `key ${id}`, hash: `hash-${id}`, createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, expiresAt: null,
  revokedAt: null, allowedModels: [], budgetUsd: null, budgetPeriod: null, rpmLimit: null, tpmLimit: null, ...over,
});

const inference = (over: Partial<InferenceRecord> = {}): InferenceRecord => ({
  id: uuidv7(), createdAt: '2026-02-01T10:00:00.000Z', keyId: 'k1', route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'openai/gpt-x', servedModel: 'openai/gpt-x', provider: 'openai',
  attempts: [{ provider: 'openai', model: 'gpt-x', status: 200, error: null, latencyMs: 12 }], status: 200, errorCode: null,
  latencyMs: 40, ttftMs: 9, stream: true, inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 1,
  reasoningTokens: 3, costUsd: '0.1', finishReason: 'stop', metadata: { user: 'u1' }, extra: { n: 1 }, clientIp: '127.0.0.1',
  requestBody: null, responseBody: null, ...over,
});

const fb = (inferenceId: string, metric: string, type: FeedbackRow['type'], value: string, createdAt = '2026-02-01T12:00:00.000Z'): FeedbackRow => ({
  id: uuidv7(), inferenceId, keyId: 'k1', metric, type, value, reason: null, tags: { env: 'test' }, optimize: 'max', createdAt,
});

type Backend = { name: string; open: () => Promise<Store> };
const backends: Backend[] = [
  { name: 'sqlite', open: () => openStore({ sqlitePath: join(tmp, 'nested', 'dir', 'gw.db') }) },
];
if (pgDb) backends.push({ name: 'postgres', open: () => openStore(pgDb.storeOptions()) });

for (const b of backends) {
  describe(`store contract: ${b.name}`, () => {
    let store: Store;

    test('migrations are idempotent and safe when several replicas start at once', async () => {
      const replicas: Store[] = b.name === 'sqlite'
        ? [0, 1, 2].map(() => new SqliteStore({ path: join(tmp, 'nested', 'dir', 'gw.db') }))
        : [0, 1, 2].map(() => new PostgresStore({ url: PG_URL, schema: pgDb!.schema }));
      await Promise.all(replicas.map((s) => s.migrate()));
      await Promise.all(replicas.map((s) => s.close()));
      store = await b.open();
      assert.equal(store.kind, b.name);
      await store.migrate();
    });

    test('api keys: insert, get, list, revoke, touch', async () => {
      await store.insertKey(key('k1', { allowedModels: ['openai/*'], budgetUsd: '10.50', budgetPeriod: 'month', rpmLimit: 60, tpmLimit: 1000 }));
      await store.insertKey(key('k2', { createdAt: '2026-01-02T00:00:00.000Z', expiresAt: '2027-01-01T00:00:00.000Z' }));
      const k1 = await store.getKey('k1');
      assert.deepEqual(k1, key('k1', { allowedModels: ['openai/*'], budgetUsd: '10.5', budgetPeriod: 'month', rpmLimit: 60, tpmLimit: 1000 }));
      assert.equal(await store.getKey('nope'), null);
      assert.deepEqual((await store.listKeys()).map((k) => k.id), ['k1', 'k2']);
      assert.equal(await store.revokeKey('k2', '2026-03-01T00:00:00.000Z'), true);
      assert.equal(await store.revokeKey('k2', '2026-03-02T00:00:00.000Z'), false);
      assert.equal((await store.getKey('k2'))?.revokedAt, '2026-03-01T00:00:00.000Z');
      await store.touchKeys([{ id: 'k1', at: '2026-03-05T00:00:00.000Z' }, { id: 'k1', at: '2026-03-04T00:00:00.000Z' }]);
      await store.touchKeys([{ id: 'k1', at: '2026-03-03T00:00:00.000Z' }]); // older: ignored
      assert.equal((await store.getKey('k1'))?.lastUsedAt, '2026-03-05T00:00:00.000Z');
      await assert.rejects(store.insertKey(key('k1')));
    });

    const recs = [
      inference({ costUsd: '0.1' }),
      inference({ costUsd: '0.2', createdAt: '2026-02-01T11:00:00.000Z', stream: false, metadata: null, extra: null }),
      inference({ costUsd: '0.0000001', createdAt: '2026-02-02T09:00:00.000Z', servedModel: 'anthropic/claude-y', provider: 'anthropic' }),
      inference({ costUsd: '0', keyId: 'k2', status: 502, errorCode: 'upstream_error', servedModel: null, provider: null, requestedModel: 'openai/gpt-x' }),
      inference({ costUsd: '5', keyId: 'k1', createdAt: '2026-01-15T00:00:00.000Z' }),
    ];

    test('inferences: batch insert round-trips every field and retries are idempotent', async () => {
      await store.insertInferences(recs);
      await store.insertInferences(recs.slice(0, 2)); // a retried batch must not fail or duplicate
      const all = await store.listInferences({ limit: 100 });
      assert.equal(all.length, recs.length);
      const byId = new Map(all.map((r) => [r.id, r]));
      for (const r of recs) assert.deepEqual(byId.get(r.id), r);
      assert.deepEqual(all.map((r) => r.id), recs.map((r) => r.id).sort().reverse());
      const page = await store.listInferences({ limit: 2, before: all[1]!.id, keyId: 'k1' });
      assert.deepEqual(page.map((r) => r.id), all.slice(2).filter((r) => r.keyId === 'k1').slice(0, 2).map((r) => r.id));
      assert.deepEqual(await store.getInference(recs[2]!.id),
        { id: recs[2]!.id, keyId: 'k1', servedModel: 'anthropic/claude-y', createdAt: '2026-02-02T09:00:00.000Z' });
      assert.equal(await store.getInference(uuidv7()), null);
    });

    test('keySpend sums exactly since a time', async () => {
      assert.equal(await store.keySpend('k1', '2026-02-01T00:00:00.000Z'), '0.3000001');
      assert.equal(await store.keySpend('k1', '2026-01-01T00:00:00.000Z'), '5.3000001');
      assert.equal(await store.keySpend('k2', '2026-01-01T00:00:00.000Z'), '0');
      assert.equal(await store.keySpend('none', '2026-01-01T00:00:00.000Z'), '0');
    });

    test('usage groups by model, key and day with exact cost sums', async () => {
      const w = { since: '2026-02-01T00:00:00.000Z', until: '2026-03-01T00:00:00.000Z' };
      const byModel = await store.usage({ ...w, groupBy: 'model' });
      assert.deepEqual(byModel, [
        { group: 'anthropic/claude-y', requests: 1, errors: 0, inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 1, costUsd: '0.0000001' },
        { group: 'openai/gpt-x', requests: 3, errors: 1, inputTokens: 30, outputTokens: 15, cacheReadTokens: 6, cacheWriteTokens: 3, costUsd: '0.3' },
      ]);
      const byKey = await store.usage({ ...w, groupBy: 'key' });
      assert.deepEqual(byKey.map((r) => [r.group, r.requests, r.costUsd]), [['k1', 3, '0.3000001'], ['k2', 1, '0']]);
      const byDay = await store.usage({ ...w, groupBy: 'day', keyId: 'k1' });
      assert.deepEqual(byDay.map((r) => [r.group, r.requests, r.costUsd]), [['2026-02-01', 2, '0.3'], ['2026-02-02', 1, '0.0000001']]);
      assert.deepEqual(await store.usage({ since: '2025-01-01T00:00:00.000Z', until: '2025-02-01T00:00:00.000Z', groupBy: 'day' }), []);
    });

    test('metric definitions: fixed on first use, per scope (key), with the optimize direction', async () => {
      const def = async (scope: string, metric: string, type: MetricType, optimize: 'max' | 'min' | null) =>
        (await claimMetricDefs(store.sql, scope, [{ metric, type, optimize }])).get(metric);
      assert.deepEqual(await def('k1', 'quality.accuracy', 'float', 'min'), { type: 'float', optimize: 'min' });
      assert.deepEqual(await def('k1', 'quality.accuracy', 'boolean', 'max'), { type: 'float', optimize: 'min' });
      // Another key's first value is its own: it neither sees nor inherits k1's definition.
      assert.deepEqual(await def('k2', 'quality.accuracy', 'boolean', 'max'), { type: 'boolean', optimize: 'max' });
      assert.deepEqual(await def('k1', 'note', 'comment', null), { type: 'comment', optimize: null });
      const k1 = await loadMetricDefs(store.sql, 'k1', ['quality.accuracy', 'note', 'unknown']);
      assert.deepEqual([...k1.entries()].sort(), [['note', { type: 'comment', optimize: null }], ['quality.accuracy', { type: 'float', optimize: 'min' }]]);
      assert.equal((await loadMetricDefs(store.sql, 'k3', ['quality.accuracy'])).size, 0);
      assert.equal((await loadMetricDefs(store.sql, 'k1', [])).size, 0);
    });

    test('feedbackStats joins by served model: count, mean, rate and the time window', async () => {
      const [a, b2, , failed] = recs;
      const c = recs[2]!;
      const rows = [
        fb(a!.id, 'thumbs', 'boolean', 'true'), fb(b2!.id, 'thumbs', 'boolean', 'false'), fb(a!.id, 'thumbs', 'boolean', 'true'),
        fb(a!.id, 'quality.accuracy', 'float', '0.5'), fb(b2!.id, 'quality.accuracy', 'float', '1'),
        fb(c.id, 'quality.accuracy', 'float', '0.25'), fb(a!.id, 'note', 'comment', 'nice'),
        fb(failed!.id, 'thumbs', 'boolean', 'true'), // no served model: excluded
        fb(a!.id, 'thumbs', 'boolean', 'false', '2026-04-01T00:00:00.000Z'), // outside the window
      ];
      await store.insertFeedback(rows);
      await store.insertFeedback(rows.slice(0, 1)); // idempotent retry
      const w = { since: '2026-02-01T00:00:00.000Z', until: '2026-03-01T00:00:00.000Z' };
      const stats = await store.feedbackStats(w);
      assert.deepEqual(stats, [
        { model: 'anthropic/claude-y', metric: 'quality.accuracy', type: 'float', count: 1, mean: 0.25, rate: null },
        { model: 'openai/gpt-x', metric: 'note', type: 'comment', count: 1, mean: null, rate: null },
        { model: 'openai/gpt-x', metric: 'quality.accuracy', type: 'float', count: 2, mean: 0.75, rate: null },
        { model: 'openai/gpt-x', metric: 'thumbs', type: 'boolean', count: 3, mean: 2 / 3, rate: 2 / 3 },
      ]);
      const one = await store.feedbackStats({ ...w, model: 'openai/gpt-x', metric: 'thumbs' });
      assert.equal(one.length, 1);
      assert.equal(one[0]!.count, 3);
      const later = await store.feedbackStats({ since: '2026-03-01T00:00:00.000Z', until: '2026-05-01T00:00:00.000Z' });
      assert.deepEqual(later, [{ model: 'openai/gpt-x', metric: 'thumbs', type: 'boolean', count: 1, mean: 0, rate: 0 }]);
    });

    test('a batch spanning several insert statements, with repeated ids, lands each row once with exact values', async () => {
      // 1203 rows: postgres sends statements of 1000 and 203 rows. Key and time are outside every window above.
      const distinct = Array.from({ length: 1200 }, (_, i) => inference({
        keyId: 'bulk', createdAt: new Date(Date.UTC(2031, 0, 1) + i * 1001).toISOString(), costUsd: `0.${String(i).padStart(4, '0')}000000000000001`,
        stream: i % 2 === 0, ttftMs: i % 3 === 0 ? null : i, inputTokens: i, metadata: i % 5 === 0 ? null : { i, s: `é ${i}` },
      }));
      const stored = inference({ keyId: 'bulk', createdAt: '2031-02-01T00:00:00.000Z' });
      await store.insertInferences([stored]);
      const batch = [...distinct.slice(0, 4), distinct[3]!, ...distinct.slice(4, 699), distinct[10]!, ...distinct.slice(699), stored];
      assert.equal(batch.length, 1203);
      await store.insertInferences(batch);
      await store.insertInferences(batch.slice(490, 510)); // a retry across a chunk boundary
      const all = await store.listInferences({ limit: 10_000, keyId: 'bulk' });
      assert.equal(all.length, 1201);
      const byId = new Map(all.map((r) => [r.id, r]));
      for (const r of [...distinct, stored]) assert.deepEqual(byId.get(r.id), r);
    });

    test('inferences: text a provider could send (NUL, lone surrogate, unicode, control characters) never fails a batch', async () => {
      const tail = ' \t|\\N|\r\n|\\';
      const odd = `a\0b\ud800c é 世 🎉${tail}`;
      const r = inference({ finishReason: odd, errorCode: odd, requestBody: odd, responseBody: `{"text":"${odd}"}`, metadata: { note: odd } });
      await store.insertInferences([r]);
      const got = (await store.listInferences({ limit: 1000 })).find((x) => x.id === r.id);
      assert.ok(got, 'stored');
      // SQLite keeps NUL; PostgreSQL text cannot hold it. A lone surrogate becomes U+FFFD in both.
      const stored = (b.name === 'postgres' ? 'a\uFFFDb\uFFFDc é 世 🎉' : 'a\0b\uFFFDc é 世 🎉') + tail;
      assert.equal(got.finishReason, stored);
      assert.equal(got.errorCode, stored);
      assert.equal(got.requestBody, stored);
      assert.deepEqual(got.metadata, { note: odd }, 'metadata is JSON text: escapes keep it exact');
      await store.insertInferences([r]); // idempotent
    });

    test('feedback: text a client could send (NUL, lone surrogate) in a comment or reason never fails a batch', async () => {
      // POST /v1/feedback answers with ids before the write: a refused row would be feedback lost after a success.
      const odd = 'a\0b\ud800c é';
      const rows = [{ ...fb(uuidv7(), 'odd', 'comment', odd), reason: odd, keyId: 'odd-text' }, { ...fb(uuidv7(), 'plain', 'comment', 'ok'), keyId: 'odd-text' }];
      await store.insertFeedback(rows);
      const got = await store.sql.all('SELECT metric, value, reason FROM feedback WHERE key_id = ? ORDER BY metric', ['odd-text']);
      const stored = b.name === 'postgres' ? 'a\uFFFDb\uFFFDc é' : 'a\0b\uFFFDc é';
      assert.deepEqual(got.map((r) => ({ ...r })), [
        { metric: 'odd', value: stored, reason: stored },
        { metric: 'plain', value: 'ok', reason: null },
      ]);
      await store.insertFeedback(rows); // idempotent
    });

    test('sql runner: the same ? placeholders, row counts and transactions on both backends', async () => {
      const q = store.sql;
      assert.equal(q.dialect, b.name);
      await q.run('CREATE TABLE IF NOT EXISTS runner_probe (k TEXT PRIMARY KEY, v INTEGER NOT NULL, note TEXT)');
      assert.equal(await q.run('INSERT INTO runner_probe (k, v, note) VALUES (?, ?, ?)', ['a', 1, "it's ? here"]), 1);
      // A `?` inside a string literal is text, not a parameter.
      assert.equal(await q.run("INSERT INTO runner_probe (k, v, note) VALUES ('b?', ?, 'why?')", [2]), 1);
      const rows = await q.all('SELECT k, v, note FROM runner_probe WHERE v >= ? ORDER BY k', [1]);
      assert.deepEqual(rows.map((r) => [r.k, Number(r.v), r.note]), [['a', 1, "it's ? here"], ['b?', 2, 'why?']]);
      await assert.rejects(q.tx(async (t) => {
        await t.run('UPDATE runner_probe SET v = ? WHERE k = ?', [10, 'a']);
        throw new Error('roll back');
      }), /roll back/);
      assert.equal(Number((await q.all('SELECT v FROM runner_probe WHERE k = ?', ['a']))[0]!.v), 1);
      assert.equal(await q.tx(async (t) => t.run('UPDATE runner_probe SET v = v + 1')), 2);
      await q.run('DROP TABLE runner_probe');
    });

    test('close', async () => { await store.close(); });
  });
}

test('sqlite: several processes migrating one new file at once apply each step once', async () => {
  const file = join(tmp, 'race', 'gw.db');
  const mod = pathToFileURL(join(import.meta.dirname, '../src/store/sqlite.ts')).href;
  const script = `import { SqliteStore } from ${JSON.stringify(mod)}; const s = new SqliteStore({ path: process.argv[1] }); await s.migrate(); await s.close();`;
  const run = promisify(execFile);
  await Promise.all([0, 1, 2, 3].map(() => run(process.execPath, ['--input-type=module', '-e', script, file])));
  const db = new DatabaseSync(file);
  const rows = db.prepare('SELECT version FROM schema_migrations').all();
  db.close();
  assert.deepEqual(rows.map((r) => r.version), MIGRATIONS.map((m) => m.version));
});

test('sqlite: a database made by an older build is upgraded in place, its rows kept', async () => {
  const file = join(tmp, 'upgrade', 'gw.db');
  const old = new SqliteStore({ path: file }); // creates the directory
  await old.close();
  const db = new DatabaseSync(file);
  db.exec(MIGRATIONS_TABLE_SQL);
  for (const stmt of MIGRATIONS[0]!.sqlite) db.exec(stmt);
  db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, ?, ?)').run(MIGRATIONS[0]!.name, new Date().toISOString());
  db.prepare("INSERT INTO inferences (id, created_at, route, client_format, requested_model, status, latency_ms, stream) VALUES ('i1', '2026-01-01T00:00:00.000Z', '/v1/chat/completions', 'openai-chat', 'openai/x', 200, 5, 0)").run();
  const indexes = (): string[] => db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'inferences' AND name NOT LIKE 'sqlite_%' ORDER BY name").all().map((r) => String(r.name));
  assert.ok(indexes().includes('inferences_model_created_idx'));
  const store = new SqliteStore({ path: file });
  await store.migrate();
  // The model index dropped (migration 2); the landing order's added (24), the old row at position 0.
  assert.deepEqual(indexes(), ['inferences_created_idx', 'inferences_key_created_idx', 'inferences_landed_idx']);
  assert.equal(db.prepare("SELECT landed FROM inferences WHERE id = 'i1'").get()?.landed, 0);
  assert.deepEqual(db.prepare('SELECT version FROM schema_migrations ORDER BY version').all().map((r) => r.version), MIGRATIONS.map((m) => m.version));
  assert.equal((await store.getInference('i1'))?.createdAt, '2026-01-01T00:00:00.000Z');
  await store.close();
  db.close();
});
