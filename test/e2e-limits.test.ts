// End to end, through the real HTTP gateway: per-key rpm, tpm and budget limits under concurrency.
// Upstream replies are streamed slowly (chunkDelayMs) so every request of a burst holds its
// reservation while the others arrive: the counts below are exact, not "at most". Then two gateway
// processes (`node src/main.ts serve`) share Redis and one PostgreSQL store: a burst split across
// both admits exactly the key's limit in total.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { runCli, spawnGateway, writeGatewayConfig, type GatewayProcess } from './helpers/process.ts';
import { PG_URL, pgTestDb } from './helpers/pg.ts';

const ADMIN = 'admin-secret-for-limit-tests';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** Limits count per UTC minute: start a burst at least 6 s before a minute ends so it stays in one window. */
async function awayFromMinuteEdge(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 54_000) await new Promise((r) => setTimeout(r, 60_000 - into + 50));
}

type Result = { status: number; retryAfter: string | null; text: string };

async function call(url: string, key: string, opts: { maxTokens?: number; stream?: boolean; anthropic?: boolean } = {}): Promise<Result> {
  const anthropic = opts.anthropic === true;
  const r = await fetch(`${url}${anthropic ? '/v1/messages' : '/v1/chat/completions'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(anthropic ? { 'x-api-key': key } : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify({
      model: 'mock/test-model', stream: opts.stream ?? true, max_tokens: opts.maxTokens ?? 64,
      messages: [{ role: 'user', content: 'limit me' }],
    }),
  });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), text: await r.text() };
}

const count = (rs: Result[], status: number): number => rs.filter((r) => r.status === status).length;

describe('limits in one gateway (in-process limiter)', () => {
  let slow: MockUpstream; let gw: TestGateway;
  before(async () => {
    slow = await startMockOpenAI({ chunkDelayMs: 80 });
    gw = await startTestGateway({
      providers: [{ id: 'mock', format: 'openai-chat', base_url: slow.url }],
      gateway: { auth: { enabled: true, admin_key: ADMIN } },
    });
  });
  after(async () => { await gw.stop(); await slow.close(); });

  const createKey = async (body: Record<string, unknown>) => {
    const r = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 201);
    return (await r.json()) as { id: string; key: string };
  };

  test('rpm: N + k concurrent requests with rpm N -> exactly N succeed, k get 429 with retry-after', async () => {
    const N = 5; const k = 9;
    const key = await createKey({ name: 'rpm', rpm_limit: N });
    await awayFromMinuteEdge();
    const rs = await Promise.all(Array.from({ length: N + k }, (_, i) => call(gw.url, key.key, { anthropic: i % 2 === 1 })));
    assert.equal(count(rs, 200), N, rs.map((r) => r.status).join(','));
    assert.equal(count(rs, 429), k);
    for (const r of rs.filter((x) => x.status === 429)) {
      const secs = Number(r.retryAfter);
      assert.ok(Number.isInteger(secs) && secs >= 1 && secs <= 60, `retry-after ${r.retryAfter}`);
      assert.match(r.text, /Rate limit exceeded: this API key allows 5 requests per minute/);
      const body = JSON.parse(r.text) as { error: { type: string } };
      assert.equal(body.error.type, 'rate_limit_error');
    }
    // Successful streams were complete.
    for (const r of rs.filter((x) => x.status === 200)) assert.match(r.text, /data: \[DONE\]|event: message_stop/);
    const m = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(m, /gateway_rate_limited_total\{reason="rpm"\} (\d+)/);
    assert.ok(Number(/gateway_rate_limited_total\{reason="rpm"\} (\d+)/.exec(m)![1]) >= k);
  });

  test('budget: a burst cannot overspend; the refusals are 402 with a clear message', async () => {
    // Each request may cost up to ~2040 tokens x $0.000002 (max_tokens 2000) = ~$0.0041, so $0.01 admits exactly 2 at once.
    const key = await createKey({ name: 'budget', budget_usd: '0.01', budget_period: 'day' });
    const rs = await Promise.all(Array.from({ length: 12 }, () => call(gw.url, key.key, { maxTokens: 2000 })));
    assert.equal(count(rs, 200), 2, rs.map((r) => r.status).join(','));
    assert.equal(count(rs, 402), 10);
    for (const r of rs.filter((x) => x.status === 402)) {
      assert.match(r.text, /Budget exceeded: this API key's budget is \$0\.01 per day; \$[0-9.]+ is spent or reserved and this request may cost up to \$0\.00[0-9]+\. The budget resets at \d{4}-/);
    }
    // After settlement only the real (small) cost is spent: smaller requests fit again, and spend never passes the budget.
    await new Promise((r) => setTimeout(r, 50));
    const later = await call(gw.url, key.key, { maxTokens: 100, stream: false });
    assert.equal(later.status, 200, later.text);
    for (let i = 0; i < 50; i++) {
      const recs = (await gw.services.store!.listInferences({ limit: 200, keyId: key.id })).filter((x) => x.status === 200);
      if (recs.length === 3) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const spend = await gw.services.store!.keySpend(key.id, new Date(Date.now() - 86_400_000).toISOString());
    assert.ok(Number(spend) > 0 && Number(spend) <= 0.01, `spend ${spend}`);
  });

  test('budget: a request whose maximum cost alone exceeds the budget is refused with 402', async () => {
    const key = await createKey({ name: 'tiny', budget_usd: '0.0001' });
    const r = await call(gw.url, key.key, { maxTokens: 4000, stream: false });
    assert.equal(r.status, 402);
    assert.match(r.text, /Budget exceeded/);
    const a = await call(gw.url, key.key, { maxTokens: 4000, stream: false, anthropic: true });
    assert.equal(a.status, 402);
    const body = JSON.parse(a.text) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.match(body.error.message, /Budget exceeded/);
  });

  test('tpm: the token window admits exactly what fits, the rest get 429 with retry-after', async () => {
    // Each request reserves ~2040 tokens (input estimate + max_tokens 2000): 5000 tpm admits exactly 2.
    const key = await createKey({ name: 'tpm', tpm_limit: 5000 });
    await awayFromMinuteEdge();
    const rs = await Promise.all(Array.from({ length: 8 }, () => call(gw.url, key.key, { maxTokens: 2000 })));
    assert.equal(count(rs, 200), 2, rs.map((r) => r.status).join(','));
    assert.equal(count(rs, 429), 6);
    for (const r of rs.filter((x) => x.status === 429)) {
      assert.ok(Number(r.retryAfter) >= 1);
      assert.match(r.text, /5000 tokens per minute/);
    }
    // Settled with the real usage (a few tokens), so the window has room again.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await call(gw.url, key.key, { maxTokens: 2000 })).status, 200);
    // A single request larger than the whole window says to lower max_tokens.
    const huge = await call(gw.url, key.key, { maxTokens: 6000 });
    assert.equal(huge.status, 429);
    assert.match(huge.text, /lower max_tokens/);
  });
});

async function redisReachable(): Promise<boolean> {
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  r.on('error', () => {});
  try { await r.connect(); return (await r.ping()) === 'PONG'; } catch { return false; } finally { r.disconnect(); }
}
// A fresh schema for the two processes, dropped after the file's tests (null when PostgreSQL does not answer; throws under CI=true).
const pgDb = await pgTestDb('e2e_limits');

describe('two gateway processes sharing Redis and PostgreSQL', () => {
  let slow: MockUpstream;
  let procs: GatewayProcess[] = [];
  let dir = '';
  let skip: string | false = false;
  const schema = pgDb?.schema ?? '';
  let env: Record<string, string> = {};
  const keys: Record<string, { key: string; id: string }> = {};

  before(async () => {
    const redisOk = await redisReachable();
    const pgOk = pgDb !== null;
    if (!redisOk || !pgOk) {
      const what = `${redisOk ? '' : `Redis (${REDIS_URL}) `}${pgOk ? '' : `PostgreSQL (${PG_URL})`} unreachable`;
      if (process.env.CI === 'true') throw new Error(`${what} (CI=true: failing, not skipping)`);
      skip = what;
      return;
    }
    slow = await startMockOpenAI({ chunkDelayMs: 80 });
    const cfg = writeGatewayConfig([{ id: 'mock', format: 'openai-chat', base_url: slow.url }], {
      auth: { enabled: true, admin_key: ADMIN },
      storage: { database_url: PG_URL, redis_url: REDIS_URL },
    });
    dir = cfg.dir;
    env = { GATEWAY_CONFIG: cfg.configFile, GATEWAY_PG_SCHEMA: schema };
    // Keys are made before the processes start, so both load them at start-up (a key made through one
    // process reaches the other on its next key-ring refresh, up to 30 s later).
    for (const [name, flags] of [['rpm', ['--rpm', '7']], ['budget', ['--budget', '0.02', '--period', 'day']], ['tpm', ['--tpm', '9000']]] as const) {
      const out = await runCli(['keys', 'create', '--name', `two-proc-${name}`, ...flags, '--json'], env);
      assert.equal(out.code, 0, out.stdout + out.stderr);
      const j = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { key: string; id: string };
      keys[name] = j;
    }
    procs = await Promise.all([spawnGateway(cfg.configFile, env), spawnGateway(cfg.configFile, env)]);
    assert.notEqual(procs[0]!.url, procs[1]!.url);
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGTERM')));
    if (slow) await slow.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (!skip) {
      const r = new Redis(REDIS_URL);
      try {
        for (const k of Object.values(keys)) {
          const found = await r.keys(`gw:lim:{${k.id}}:*`);
          if (found.length) await r.del(...found);
        }
      } finally { r.disconnect(); }
    }
  });

  const burst = (key: string, n: number, maxTokens = 64) => Promise.all(Array.from({ length: n }, (_, i) => call(procs[i % 2]!.url, key, { maxTokens })));

  test('rpm 7: 20 concurrent requests split across both processes -> exactly 7 succeed', async (t) => {
    if (skip) { t.skip(skip); return; }
    await awayFromMinuteEdge();
    const rs = await burst(keys.rpm!.key, 20);
    assert.equal(count(rs, 200), 7, rs.map((r) => r.status).join(','));
    assert.equal(count(rs, 429), 13);
    // Both processes served some and refused some (the limit is shared, not per process).
    const byProc = [0, 1].map((p) => rs.filter((_, i) => i % 2 === p));
    assert.ok(byProc.every((x) => x.length === 10));
    for (const r of rs.filter((x) => x.status === 429)) assert.ok(Number(r.retryAfter) >= 1);
  });

  test('budget $0.02: concurrent requests across both processes cannot overspend', async (t) => {
    if (skip) { t.skip(skip); return; }
    // max_tokens 2000 -> up to ~$0.0041 per request: exactly 4 fit in $0.02.
    const rs = await burst(keys.budget!.key, 16, 2000);
    assert.equal(count(rs, 200), 4, rs.map((r) => r.status).join(','));
    assert.equal(count(rs, 402), 12);
  });

  test('tpm 9000: concurrent requests across both processes -> exactly what fits', async (t) => {
    if (skip) { t.skip(skip); return; }
    await awayFromMinuteEdge();
    // ~2040 tokens reserved per request: 4 fit in 9000.
    const rs = await burst(keys.tpm!.key, 12, 2000);
    assert.equal(count(rs, 200), 4, rs.map((r) => r.status).join(','));
    assert.equal(count(rs, 429), 8);
  });

  test('both processes wrote their records to the one store', async (t) => {
    if (skip) { t.skip(skip); return; }
    await new Promise((r) => setTimeout(r, 200));
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      const r = await c.query(`SELECT status, count(*)::int AS n FROM "${schema}".inferences WHERE key_id = $1 GROUP BY status ORDER BY status`, [keys.rpm!.id]);
      assert.deepEqual(r.rows, [{ status: 200, n: 7 }, { status: 429, n: 13 }]);
    } finally { await c.end(); }
  });
});
