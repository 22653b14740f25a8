// PostgreSQL connections terminated under the gateway (pg_terminate_backend by an admin or a pooler, a
// failover, an idle connection cut by a firewall or idle_session_timeout), on the shared server: each
// store here names its connections (application_name) and the test terminates only those, found in
// pg_stat_activity while they wait on a lock the test holds from its own connection. A plain read
// whose connection was lost is run once more and answers (before: its caller got the error, a 503 or
// for a new key a 401); a query error is not retried; a write whose outcome is unknown is not run
// again; idle connections killed in the pool do not end the process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { KeyAdmin } from '../src/auth/admin.ts';
import { openStore } from '../src/store/open.ts';
import { connectionLost, plainRead, retryingRead } from '../src/store/pg-read-retry.ts';
import { classifyStoreError } from '../src/store/errors.ts';
import type { InferenceRecord, KeyRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { PG_URL, pgTestDb } from './helpers/pg.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { responseStoreOf } from '../src/http/responses-route.ts';

const db = await pgTestDb('gw_conn_lost'); // null: PostgreSQL unreachable (CI=true throws instead)
const APP = `gw_conn_lost_${process.pid}`;
const withApp = (name: string): string => `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}application_name=${name}`;

const key = (id: string): KeyRecord => ({
  id, name: `key ${id}`, hash: `hash-${id}`, createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, expiresAt: null,
  revokedAt: null, allowedModels: [], budgetUsd: null, budgetPeriod: null, rpmLimit: null, tpmLimit: null,
});

const inference = (): InferenceRecord => ({
  id: uuidv7(), createdAt: '2026-02-01T10:00:00.000Z', keyId: 'k1', route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'oa/m', servedModel: 'oa/m', provider: 'oa', attempts: [], status: 200, errorCode: null, latencyMs: 40, ttftMs: 9,
  stream: false, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.25',
  finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

test('connection-level failures are told from query errors; only plain reads may run twice', () => {
  for (const code of ['57P01', '57P02', '57P03', '08006', '08003', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']) assert.ok(connectionLost(Object.assign(new Error('x'), { code })), code);
  assert.ok(connectionLost(new Error('Connection terminated unexpectedly')));
  assert.ok(connectionLost(new Error('Client has encountered a connection error and is not queryable')));
  // statement timeout / cancel, serialization failure, deadlock, unique and syntax errors, a connect timeout, our own end()
  for (const code of ['57014', '40001', '40P01', '23505', '42601', '53300']) assert.ok(!connectionLost(Object.assign(new Error('x'), { code })), code);
  assert.ok(!connectionLost(new Error('timeout exceeded when trying to connect')));
  assert.ok(!connectionLost(new Error('Connection terminated')));

  for (const sql of ['SELECT 1', '  (select id from t)', 'WITH x AS (SELECT 1) SELECT * FROM x', "SELECT id FROM t WHERE name = 'insert into'",
    'SELECT created_at, updated_at, catalog_refresh_runs FROM t -- delete']) assert.ok(plainRead(sql), sql);
  for (const sql of ['INSERT INTO t VALUES (1) RETURNING id', 'UPDATE t SET n = n + 1 RETURNING n', 'DELETE FROM t RETURNING id',
    'WITH p AS (DELETE FROM t RETURNING id) SELECT * FROM p', "SELECT nextval('s')", 'SELECT pg_advisory_lock(1)', 'SELECT * INTO u FROM t',
    'SELECT * FROM t FOR UPDATE']) assert.ok(!plainRead(sql), sql);
});

const lost = (): Error => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
const after_ = (ms: number): Promise<void> => new Promise((res) => setTimeout(res, ms));

test('the retry gets only what is left of the read deadline; none once it has passed', async () => {
  // First attempt lost after 1.5 s of a 2 s deadline, the retry never answers: refused at the deadline
  // (about 2 s), not 2 s after the retry began (3.5 s).
  let runs = 0;
  const t0 = Date.now();
  const hung = retryingRead('SELECT 1', async () => { if (runs++ === 0) { await after_(1500); throw lost(); } return new Promise<never>(() => {}); }, { count: 0 }, 2000);
  await assert.rejects(hung, { code: 'ETIMEDOUT' });
  assert.equal(runs, 2);
  assert.ok(Date.now() - t0 < 3300, `${Date.now() - t0} ms`);
  // Lost after the deadline: the error stands, no second attempt.
  runs = 0;
  const retries = { count: 0 };
  await assert.rejects(retryingRead('SELECT 1', async () => { runs++; await after_(300); throw lost(); }, retries, 200), { code: '57P01' });
  assert.deepEqual([runs, retries.count], [1, 0]);
});

describe('PostgreSQL connections terminated under the store', { skip: !db && 'PostgreSQL unreachable' }, () => {
  let store: Store;
  let admin: pg.Client;   // the test's own connection: locks and terminations (another application_name)
  let holder: pg.Client;  // holds a lock the store's statement waits on, so it is caught mid-query

  before(async () => {
    store = await openStore({ sqlitePath: '', databaseUrl: withApp(APP), pgSchema: db!.schema });
    admin = new pg.Client({ connectionString: PG_URL });
    holder = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${db!.schema}` });
    await admin.connect(); await holder.connect();
    await holder.query('CREATE TABLE probe_counter (k text PRIMARY KEY, n integer NOT NULL)');
  });
  after(async () => { await store.close(); await admin.end(); await holder.end(); });

  /** The pid of this store's statement waiting on a lock and matching `like`, once it waits (null after 10 s). */
  async function waiting(app: string, like: string): Promise<number | null> {
    for (let i = 0; i < 500; i++) {
      const r = await admin.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND query ILIKE $2`, [app, like]);
      if (r.rows[0]) return Number(r.rows[0].pid);
      await new Promise((res) => setTimeout(res, 20));
    }
    return null;
  }

  /** Runs `work` while `table` is locked; `during(pid)` acts on the backend caught waiting; the lock is then released. */
  async function caught<T>(table: string, like: string, work: () => Promise<T>, during: (pid: number) => Promise<unknown>, app = APP): Promise<PromiseSettledResult<T>> {
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    const out = work().then((v) => ({ status: 'fulfilled', value: v }) as const, (e: unknown) => ({ status: 'rejected', reason: e }) as const);
    try {
      const pid = await waiting(app, like);
      assert.ok(pid !== null, `a statement like ${like} waiting on the lock`);
      await during(pid);
    } finally {
      await new Promise((res) => setTimeout(res, 100)); // a retry, if any, is sent and waits on the lock as well
      await holder.query('COMMIT');
    }
    return out;
  }
  const terminate = (pid: number) => admin.query('SELECT pg_terminate_backend($1)', [pid]);

  test('a key read whose backend is terminated mid-query is run again and answers', async () => {
    await store.insertKey(key('kr1'));
    const before = store.readRetries ?? 0;
    const r = await caught('api_keys', 'SELECT%api_keys%', () => store.getKey('kr1'), terminate);
    assert.equal(r.status, 'fulfilled', r.status === 'rejected' ? String(r.reason) : '');
    assert.equal(r.status === 'fulfilled' && r.value?.id, 'kr1');
    assert.equal((store.readRetries ?? 0) - before, 1);
  });

  test('a runner read (sql.all) whose backend is terminated is run again; a spend read too', async () => {
    await store.insertInferences([inference()]);
    const before = store.readRetries ?? 0;
    const rows = await caught('inferences', 'SELECT%inferences%', () => store.sql.all('SELECT COUNT(*) AS n FROM inferences WHERE key_id = ?', ['k1']), terminate);
    assert.equal(rows.status === 'fulfilled' && Number(rows.value[0]?.n), 1, rows.status === 'rejected' ? String(rows.reason) : '');
    const spend = await caught('inferences', 'SELECT%inferences%', () => store.keySpend('k1', '2026-01-01T00:00:00.000Z'), terminate);
    assert.equal(spend.status === 'fulfilled' && Number(spend.value), 0.25, spend.status === 'rejected' ? String(spend.reason) : '');
    assert.equal((store.readRetries ?? 0) - before, 2);
  });

  test('a read cancelled by a query error (57014, as a statement timeout) is not run again', async () => {
    const before = store.readRetries ?? 0;
    const r = await caught('api_keys', 'SELECT%api_keys%', () => store.listKeys(), (pid) => admin.query('SELECT pg_cancel_backend($1)', [pid]));
    assert.equal(r.status, 'rejected');
    assert.equal(r.status === 'rejected' && (r.reason as { code?: string }).code, '57014');
    assert.equal((store.readRetries ?? 0) - before, 0);
  });

  test('a write whose connection is lost (outcome unknown) is not run again, even through sql.all', async () => {
    const before = store.readRetries ?? 0;
    const inc = () => store.sql.all('INSERT INTO probe_counter (k, n) VALUES (?, 1) ON CONFLICT (k) DO UPDATE SET n = probe_counter.n + 1 RETURNING n', ['c']);
    const r = await caught('probe_counter', 'INSERT%probe_counter%', inc, terminate);
    assert.equal(r.status, 'rejected');
    assert.equal(classifyStoreError(r.status === 'rejected' ? r.reason : null), 'unavailable');
    // Run again, the increment would have landed once the lock was released.
    assert.deepEqual((await admin.query(`SELECT n FROM "${db!.schema}".probe_counter`)).rows, []);
    const upd = await caught('api_keys', 'UPDATE%api_keys%', () => store.revokeKey('kr1', '2026-03-01T00:00:00.000Z'), terminate);
    assert.equal(upd.status, 'rejected');
    assert.equal((await store.getKey('kr1'))?.revokedAt, null);
    assert.equal((store.readRetries ?? 0) - before, 0);
  });

  test('a record batch cut mid-transaction fails as unavailable; the writer\'s retry (idempotent by id) lands each row once', async () => {
    const batch = [inference(), inference()];
    const r = await caught('inferences', 'COPY%inferences%', () => store.insertInferences(batch), terminate);
    assert.equal(r.status, 'rejected');
    assert.equal(classifyStoreError(r.status === 'rejected' ? r.reason : null), 'unavailable');
    const ids = batch.map((x) => x.id);
    const count = async () => Number((await store.sql.all(`SELECT COUNT(*) AS n FROM inferences WHERE id IN (?, ?)`, ids))[0]?.n);
    assert.equal(await count(), 0, 'the transaction died with its connection');
    await store.insertInferences(batch); // the writer's retry
    await store.insertInferences(batch); // and once more, as after a COMMIT whose answer was lost
    assert.equal(await count(), 2);
    assert.equal(Number(await store.keySpend('k1', '2026-01-01T00:00:00.000Z')), 0.75);
  });

  test('idle connections terminated in the pool: the process lives on and the next reads answer', async () => {
    await Promise.all(Array.from({ length: 6 }, () => store.sql.all('SELECT pg_sleep(0.05)')));
    const killed = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle'`, [APP]);
    assert.ok(killed.rowCount! >= 2, `${killed.rowCount} idle connections`);
    await new Promise((res) => setTimeout(res, 300)); // the pool hears of each (an 'error' on an idle client)
    await store.ping();
    assert.equal((await store.getKey('kr1'))?.id, 'kr1');
    assert.equal((await Promise.all(Array.from({ length: 6 }, () => store.listKeys()))).length, 6);
  });
});

describe('client routes: reads whose connection is cut', { skip: !db && 'PostgreSQL unreachable' }, () => {
  const app = `${APP}_gw`;
  let oa: MockUpstream; let gw: TestGateway; let other: Store; let admin: pg.Client; let holder: pg.Client;
  const schema = db?.another() ?? '';
  before(async () => {
    oa = await startMockOpenAI();
    gw = await startTestGateway({
      providers: [{ id: 'oa', format: 'openai-chat', base_url: oa.url }],
      gateway: { auth: { enabled: true }, storage: { database_url: withApp(app) }, reload: { watch: false } },
      env: { GATEWAY_PG_SCHEMA: schema },
    });
    other = await openStore(db!.storeOptions(schema));
    admin = new pg.Client({ connectionString: PG_URL });
    holder = new pg.Client({ connectionString: PG_URL });
    await admin.connect(); await holder.connect();
  });
  after(async () => { await gw.stop(); await other.close(); await oa.close(); await admin.end(); await holder.end(); });

  /** `call()`'s answer, while `table` is locked and the gateway's read of it (a SELECT) is terminated once it waits. */
  async function cutWhile(table: string, call: () => Promise<{ status: number; body: string }>): Promise<{ status: number; body: string }> {
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE "${schema}".${table} IN ACCESS EXCLUSIVE MODE`);
    const answer = call();
    let pid: number | null = null;
    try {
      for (let i = 0; i < 500 && pid === null; i++) {
        const r = await admin.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND query ILIKE $2`, [app, `%SELECT%${table}%`]);
        if (r.rows[0]) pid = Number(r.rows[0].pid); else await new Promise((res) => setTimeout(res, 20));
      }
      assert.ok(pid !== null, `the gateway's read of ${table} waiting on the lock`);
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await new Promise((res) => setTimeout(res, 100));
      await holder.query('COMMIT');
    }
    return answer;
  }
  const send = (secret: string, method: string, path: string, body?: unknown) => fetch(`${gw.url}${path}`, {
    method, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body), signal: AbortSignal.timeout(20_000),
  }).then(async (r) => ({ status: r.status, body: await r.text() }));

  test('a key made by another process, looked up while its read is terminated: 200, not 503 or 401', async () => {
    // Made elsewhere (the CLI, another replica): this gateway's key ring reloads when it is first presented.
    const { key: secret } = await new KeyAdmin(other).createKey({ name: 'late' });
    const a = await cutWhile('api_keys', () => send(secret, 'POST', '/v1/chat/completions', { model: 'oa/test-model', messages: [{ role: 'user', content: 'hi' }] }));
    assert.equal(a.status, 200, a.body);
    assert.match(gw.services.metrics.registry.render(), /^gateway_store_read_retries_total 1$/m);
  });

  test('a stored response read (GET, previous_response_id) while its read is terminated: 200, not 503', async () => {
    const { key: secret } = await gw.services.admin!.createKey({ name: 'responses' });
    const first = await send(secret, 'POST', '/v1/responses', { model: 'oa/test-model', input: 'hi' });
    assert.equal(first.status, 200, first.body);
    const id = (JSON.parse(first.body) as { id: string }).id;
    await responseStoreOf(gw.services)!.settle(); // written: read from the database from now on
    const got = await cutWhile('stored_responses', () => send(secret, 'GET', `/v1/responses/${id}`));
    assert.equal(got.status, 200, got.body);
    const next = await cutWhile('stored_responses', () => send(secret, 'POST', '/v1/responses', { model: 'oa/test-model', input: 'again', previous_response_id: id }));
    assert.equal(next.status, 200, next.body);
    assert.match(gw.services.metrics.registry.render(), /^gateway_store_read_retries_total 3$/m);
  });
});
