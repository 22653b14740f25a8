// Scale-out (npm run test:reliability): three gateway processes on one PostgreSQL (a fresh schema) and
// one Redis (a redis-server of the test's own) under concurrent load spread over all three. A key's
// budget holds globally (what it was billed passes the budget by at most one request's reservation), a
// key's rpm holds globally per UTC minute, a key revoked through one replica is refused by the others
// within auth.key_refresh_ms, and every acknowledged record is stored exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import pg from 'pg';
import { startMockAnthropic, startMockOpenAI } from '../mocks/index.ts';
import { TEST_PRICING, type TestProvider } from '../helpers/gateway.ts';
import { spawnGateway, writeGatewayConfig, type GatewayProcess } from '../helpers/process.ts';
import { dropSchema, freshSchema, pgAvailable, PG_URL } from '../helpers/pg.ts';
import { startOwnRedis } from '../helpers/redis-server.ts';
import { reportFigures } from '../helpers/figures.ts';
import { shoot, tally, type LoadOptions, type Shot } from './load.ts';

const ADMIN = 'admin-key-for-the-scale-out-suite-0123456789';
const KEY_REFRESH_MS = 1000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const pgUp = await pgAvailable();

test('three replicas on one PostgreSQL and one Redis: budget, rpm and revocation hold globally; every record stored once', { skip: !pgUp, timeout: 300_000 }, async () => {
  const [oai, ant] = await Promise.all([startMockOpenAI(), startMockAnthropic()]);
  const redis = await startOwnRedis();
  const schema = freshSchema('gw_rel_scale');
  const providers: TestProvider[] = [
    { id: 'oai', format: 'openai-chat', base_url: oai.url, models: [{ name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 4096 }] },
    { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [{ name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 4096 }] },
  ];
  const cfg = writeGatewayConfig(providers, {
    auth: { enabled: true, admin_key: ADMIN, key_refresh_ms: KEY_REFRESH_MS },
    storage: { database_url: PG_URL, redis_url: redis.url, redis_fail_open: false, writer: { batch_size: 100, flush_ms: 100, max_queue: 100_000 } },
  });
  const env = { GATEWAY_PG_SCHEMA: schema, GATEWAY_REDIS_PREFIX: `gw-scale-${process.pid}:` };
  const replicas: GatewayProcess[] = [];
  try {
    // The first creates the schema; the other two start on it.
    replicas.push(await spawnGateway(cfg.configFile, env));
    replicas.push(...await Promise.all([spawnGateway(cfg.configFile, env), spawnGateway(cfg.configFile, env)]));
    const admin = async (url: string, method: string, path: string, body?: unknown) => {
      const r = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return { status: r.status, json: (await r.json()) as Record<string, any> };
    };
    const budgetUsd = '0.005';
    const budgeted = (await admin(replicas[0]!.url, 'POST', '/admin/keys', { name: 'global budget', budget_usd: budgetUsd, budget_period: 'day' })).json as { id: string; key: string };
    const RPM = 60;
    const limited = (await admin(replicas[1]!.url, 'POST', '/admin/keys', { name: 'global rpm', rpm_limit: RPM })).json as { id: string; key: string };
    const victim = (await admin(replicas[2]!.url, 'POST', '/admin/keys', { name: 'to revoke' })).json as { id: string; key: string };
    await sleep(KEY_REFRESH_MS * 2); // every replica knows every key

    // Load: workers round-robin over the replicas, one group per key.
    let stop = false;
    let n = 0;
    const group = (key: string, workers: number): Promise<Shot[]> => Promise.all(Array.from({ length: workers }, async (_, w) => {
      const out: Shot[] = [];
      for (let i = 0; !stop; i++) {
        const url = replicas[(w + i) % replicas.length]!.url;
        const o: LoadOptions = { url, key, models: ['oai/test-model', 'ant/test-model'], until: () => stop, prompt: (j) => `scale-out request ${j}` };
        out.push(await shoot(o, n++));
      }
      return out;
    })).then((xs) => xs.flat());
    const budgetLoad = group(budgeted.key, 6);
    const rpmLoad = group(limited.key, 3);

    // Revocation through replica 0; replicas 1 and 2 must refuse the key within key_refresh_ms.
    await sleep(1500);
    const ok = await fetch(`${replicas[1]!.url}/v1/models`, { headers: { authorization: `Bearer ${victim.key}` } });
    assert.equal(ok.status, 200);
    const revokedAt = Date.now();
    assert.equal((await admin(replicas[0]!.url, 'DELETE', `/admin/keys/${victim.id}`)).status, 200);
    // Both other replicas polled at once, every 25 ms, until each refuses the key.
    const refusedAfter = await Promise.all(replicas.slice(1).map(async (rep) => {
      for (;;) {
        const r = await fetch(`${rep.url}/v1/models`, { headers: { authorization: `Bearer ${victim.key}` } });
        await r.text();
        if (r.status === 401) return Date.now() - revokedAt;
        assert.ok(Date.now() - revokedAt < KEY_REFRESH_MS * 5, 'the revoked key is still served');
        await sleep(25);
      }
    }));
    await sleep(6000);
    stop = true;
    const [bShots, rShots] = await Promise.all([budgetLoad, rpmLoad]);
    await sleep(500);
    for (const rep of replicas) assert.deepEqual(await rep.stop('SIGTERM'), { code: 0, signal: null }, rep.output().slice(-1500));

    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    const rows = (await c.query(`SELECT id, key_id, status, cost_usd, created_at FROM "${schema}".inferences`)).rows as Array<{ id: string; key_id: string; status: number; cost_usd: string; created_at: Date | string }>;
    await c.end();
    const stored = new Map<string, number>();
    for (const r of rows) stored.set(r.id, (stored.get(r.id) ?? 0) + 1);
    const all = [...bShots, ...rShots];
    const acked = all.filter((s) => s.id !== null);
    const lost = acked.filter((s) => !stored.has(s.id!)).length;
    const duplicates = [...stored.values()].filter((v) => v > 1).length;
    const billed = rows.filter((r) => r.key_id === budgeted.id).reduce((s, r) => s + Number(r.cost_usd), 0);
    const reservation = 20e-6 + 256 * 2e-6;
    const perMinute = new Map<string, number>();
    for (const r of rows) {
      if (r.key_id !== limited.id || r.status !== 200) continue;
      const minute = new Date(r.created_at).toISOString().slice(0, 16);
      perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
    }
    reportFigures('scale-out', {
      replicas: replicas.length, budgetUsd, billedUsd: billed.toFixed(6), overspendUsd: Math.max(0, billed - Number(budgetUsd)).toFixed(6), oneReservationUsd: reservation.toFixed(6),
      budgetServed: bShots.filter((s) => s.status === 200).length, refused402: bShots.filter((s) => s.status === 402).length,
      rpmLimit: RPM, acceptedPerMinute: Object.fromEntries(perMinute), refused429: rShots.filter((s) => s.status === 429).length,
      revokedRefusedAfterMs: refusedAfter, keyRefreshMs: KEY_REFRESH_MS, load: tally(all), acknowledged: acked.length, stored: stored.size, lost, duplicates,
    });
    assert.equal(tally(all).malformed ?? 0, 0);
    assert.equal(lost, 0, 'every acknowledged record stored');
    assert.equal(duplicates, 0, 'none stored twice');
    assert.ok(billed <= Number(budgetUsd) + reservation, `billed ${billed.toFixed(6)} within ${budgetUsd} + one reservation ${reservation.toFixed(6)}`);
    assert.ok(bShots.some((s) => s.status === 402), 'the budget ran out');
    for (const [minute, count] of perMinute) assert.ok(count <= RPM, `${count} accepted in ${minute} over all replicas (rpm ${RPM})`);
    for (const ms of refusedAfter) assert.ok(ms <= KEY_REFRESH_MS + 1000, `revocation seen after ${ms} ms (key_refresh_ms ${KEY_REFRESH_MS})`);
  } finally {
    for (const rep of replicas) await rep.stop('SIGKILL');
    await redis.stop();
    await oai.close(); await ant.close();
    await dropSchema(schema);
    rmSync(cfg.dir, { recursive: true, force: true });
  }
});
