// Dependencies failing under load (npm run test:reliability): PostgreSQL cut mid-run through a TCP
// proxy the test controls (never the shared server), SQLite on a filesystem that fills up (a tmpfs of
// its own, grown back afterwards), Redis flushed and then killed and restarted empty (a redis-server of
// the test's own). Figures: requests acknowledged (an inference id reached the client) vs records
// stored (must be equal), rows the writer dropped, and the budget and rpm still enforced.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from '../mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestProvider } from '../helpers/gateway.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { dropSchema, freshSchema, pgAvailable, PG_URL } from '../helpers/pg.ts';
import { startOwnRedis } from '../helpers/redis-server.ts';
import { reportFigures } from '../helpers/figures.ts';
import { runLoad, tally, type Shot } from './load.ts';

let oai: MockUpstream; let ant: MockUpstream;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

before(async () => { oai = await startMockOpenAI(); ant = await startMockAnthropic(); });
after(async () => { await oai.close(); await ant.close(); });

const providers = (): TestProvider[] => [
  { id: 'oai', format: 'openai-chat', base_url: oai.url, models: [{ name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 4096 }] },
  { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [{ name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 4096 }] },
];
const MODELS = ['oai/test-model', 'ant/test-model'];

/** Ids the gateway handed out (any status: every answered request has a record). */
const acked = (shots: Shot[]): string[] => shots.filter((s) => s.id !== null).map((s) => s.id!);

function compare(ackedIds: string[], storedIds: string[]): { acknowledged: number; stored: number; lost: number; duplicates: number } {
  const stored = new Set(storedIds);
  return { acknowledged: ackedIds.length, stored: storedIds.length, lost: ackedIds.filter((id) => !stored.has(id)).length, duplicates: storedIds.length - stored.size };
}

const pgUp = await pgAvailable();

test('PostgreSQL cut for 4 s mid-run (every connection dropped, new ones refused): every acknowledged record is stored once, none dropped', { skip: !pgUp }, async () => {
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
  const schema = freshSchema('gw_rel_pg');
  const gw = await startTestGateway({ providers: providers(), gateway: { storage: { database_url: proxy.url(), writer: { batch_size: 100, flush_ms: 100, max_queue: 200_000 } } }, env: { GATEWAY_PG_SCHEMA: schema } });
  try {
    let stop = false;
    const load = runLoad({ url: gw.url, models: MODELS, concurrency: 8, abortShare: 0.1, until: () => stop });
    await sleep(2000);
    proxy.down();
    await sleep(2000);
    const during = await (await fetch(`${gw.url}/health/ready`)).json() as { checks?: { database?: { ok: boolean } } };
    // Feedback while the database is away: a per-event 503, never a false "does not exist".
    const fb = await fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ id: '01a20000-0000-7000-8000-000000000000', feedback: { ok: true } }]) });
    const fbBody = await fb.json() as Array<{ error?: { status_code: number } }>;
    await sleep(2000);
    proxy.up();
    await sleep(3000);
    stop = true;
    const shots = await load;
    const stats = gw.services.writerStats?.();
    const report = await gw.stop();
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    const rows = (await c.query(`SELECT id FROM "${schema}".inferences`)).rows as Array<{ id: string }>;
    await c.end();
    const cmp = compare(acked(shots), rows.map((r) => r.id));
    reportFigures('deps-postgres-cut', { outageMs: 4000, load: tally(shots), ...cmp, writerDropped: report.dropped, writerFailures: stats?.failures ?? null, readyDuringOutage: during.checks?.database?.ok ?? null, feedbackDuringOutage: fbBody[0]?.error?.status_code ?? null });
    assert.equal(tally(shots).malformed ?? 0, 0, 'every answer well-formed');
    assert.equal(during.checks?.database?.ok, false, 'readiness saw the database down');
    assert.equal(fbBody[0]?.error?.status_code, 503);
    assert.equal(cmp.lost, 0, 'no acknowledged record lost');
    assert.equal(cmp.duplicates, 0, 'no record stored twice');
    assert.equal(report.dropped, 0);
  } finally {
    proxy.up(); await proxy.close(); await dropSchema(schema);
  }
});

test('SQLite on a full filesystem under load: rows wait while the disk is full and land when it grows', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-rel-full-'));
  try { execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', dir], { stdio: 'pipe' }); } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    if (process.env.CI === 'true') throw e;
    t.skip(`cannot mount a tmpfs here (${String(e).slice(0, 80)}); root can, as on CI`);
    return;
  }
  const gw = await startTestGateway({
    providers: providers(),
    gateway: { storage: { sqlite_path: join(dir, 'gateway.db'), log_bodies: 'full', writer: { batch_size: 50, flush_ms: 50, max_queue: 200_000 } } },
  });
  try {
    let stop = false;
    // Prompts of ~3 KB logged in full: the 3 MiB filesystem fills after some hundreds of records.
    const load = runLoad({ url: gw.url, models: MODELS, concurrency: 6, prompt: (i) => `request ${i} ${'fill the disk '.repeat(220)}`, until: () => stop });
    let full = false;
    for (let i = 0; i < 300 && !full; i++) {
      await sleep(100);
      full = (gw.services.writerStats?.().failures ?? 0) > 0;
    }
    await sleep(1500);
    stop = true;
    const shots = await load;
    const queuedWhileFull = gw.services.writerStats?.().queued ?? 0;
    // Space comes back: the tmpfs grows, and the writer's back-off retries the same rows.
    execFileSync('mount', ['-o', 'remount,size=256m', dir]);
    for (let i = 0; i < 200 && (gw.services.writerStats?.().queued ?? 1) > 0; i++) await sleep(100);
    const report = await gw.stopKeepingFiles();
    void report;
    const db = new DatabaseSync(join(dir, 'gateway.db'));
    const ids = (db.prepare('SELECT id FROM inferences').all() as Array<{ id: string }>).map((r) => r.id);
    const integrity = (db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check;
    db.close();
    const cmp = compare(acked(shots), ids);
    reportFigures('deps-sqlite-full', { filesystem: 'tmpfs 3 MiB, grown to 256 MiB', sawDiskFull: full, queuedWhileFull, load: tally(shots), ...cmp, integrity });
    assert.ok(full, 'the writer saw the disk full');
    assert.equal(integrity, 'ok');
    assert.equal(cmp.lost, 0, 'no acknowledged record lost');
    assert.equal(cmp.duplicates, 0);
  } finally {
    await gw.stop().catch(() => {});
    try { execFileSync('umount', ['-l', dir]); } catch { /* already gone */ }
    rmSync(dir, { recursive: true, force: true });
  }
});

const ADMIN = 'admin-key-for-the-reliability-suite-0123456789';
/** One request's reservation: ~20 input tokens at the prompt price plus max_tokens (256) at the completion price. */
const RESERVATION = 20e-6 + 256 * 2e-6;
const CONCURRENCY = 4;

for (const failOpen of [true, false]) {
  test(`Redis flushed, then killed and restarted empty, under load (fail ${failOpen ? 'open' : 'closed'}): budget and rpm hold, every record stored`, async () => {
    const redis = await startOwnRedis();
    const gw = await startTestGateway({
      providers: providers(),
      gateway: { auth: { enabled: true, admin_key: ADMIN }, storage: { redis_url: redis.url, redis_fail_open: failOpen, writer: { batch_size: 50, flush_ms: 50, max_queue: 200_000 } } },
      env: { GATEWAY_REDIS_PREFIX: `gw-rel-${process.pid}-${failOpen}:` },
    });
    try {
      const mk = async (body: Record<string, unknown>) => (await (await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as { id: string; key: string };
      // A budget a few hundred requests deep (spent within the first second), and on another key an rpm limit.
      const budgetUsd = '0.004';
      const budgeted = await mk({ name: 'budgeted', budget_usd: budgetUsd, budget_period: 'day' });
      const RPM = 40;
      const limited = await mk({ name: 'rpm', rpm_limit: RPM });
      let stop = false;
      const prompt = (i: number) => `budget request ${i}`;
      // The load (8.5 s) within one UTC minute: a record's time is taken before the limiter's, so a request
      // admitted in a minute's first milliseconds can be counted in the minute before, one over the limit there.
      const second = new Date().getUTCSeconds();
      if (second > 48) await sleep((61 - second) * 1000);
      const loads = [
        runLoad({ url: gw.url, key: budgeted.key, models: MODELS, concurrency: CONCURRENCY, prompt, until: () => stop }),
        runLoad({ url: gw.url, key: limited.key, models: MODELS, concurrency: 2, prompt, until: () => stop }),
      ];
      const client = redis.client();
      const marks: Record<string, number> = { start: Date.now() };
      await sleep(2000);
      marks.flush = Date.now();
      await client.flushall();
      await sleep(2000);
      marks.kill = Date.now();
      await redis.kill();
      await sleep(1500);
      marks.restart = Date.now();
      await redis.restart();
      await sleep(3000);
      marks.end = Date.now();
      stop = true;
      const [bShots, rShots] = await Promise.all(loads);
      for (let i = 0; i < 100 && (gw.services.writerStats?.().queued ?? 0) > 0; i++) await sleep(50);
      const stored = new Map((await gw.services.store!.listInferences({ limit: 100_000 })).map((r) => [r.id, r]));
      const all = [...bShots, ...rShots];
      const cmp = compare(acked(all), [...stored.keys()]);
      // Spend and accepted requests per phase, by the records' own times.
      const phases = [['before the flush', marks.start, marks.flush], ['after FLUSHALL', marks.flush, marks.kill], ['Redis down', marks.kill, marks.restart], ['after the restart', marks.restart, marks.end + 60_000]] as const;
      const byPhase: Record<string, { billedUsd: string; budgetServed: number; rpmAccepted: number }> = {};
      const rpmPerMinute = new Map<string, number>();
      const rpmPerMinuteBeforeKill = new Map<string, number>();
      for (const [name, from, to] of phases) {
        const inPhase = [...stored.values()].filter((r) => { const t = Date.parse(r.createdAt); return t >= from && t < to; });
        const b = inPhase.filter((r) => r.keyId === budgeted.id && r.status === 200);
        byPhase[name] = { billedUsd: b.reduce((s, r) => s + Number(r.costUsd), 0).toFixed(6), budgetServed: b.length, rpmAccepted: inPhase.filter((r) => r.keyId === limited.id && r.status === 200).length };
        for (const r of inPhase) {
          if (r.keyId !== limited.id || r.status !== 200) continue;
          const minute = r.createdAt.slice(0, 16);
          rpmPerMinute.set(minute, (rpmPerMinute.get(minute) ?? 0) + 1);
          if (Date.parse(r.createdAt) < marks.kill!) rpmPerMinuteBeforeKill.set(minute, (rpmPerMinuteBeforeKill.get(minute) ?? 0) + 1);
        }
      }
      const billed = [...stored.values()].filter((r) => r.keyId === budgeted.id).reduce((s, r) => s + Number(r.costUsd), 0);
      const lastTen = bShots.slice(-10).map((s) => s.status);
      // When the limits were in force again after the restart: the rpm key's first 429 after it.
      const back = rShots.filter((x) => x.status === 429 && x.at > marks.restart!).map((x) => x.at).sort((a, b) => a - b)[0];
      reportFigures(`deps-redis-flush-restart-fail-${failOpen ? 'open' : 'closed'}`, {
        budgetUsd, billedUsd: billed.toFixed(6), overspendUsd: Math.max(0, billed - Number(budgetUsd)).toFixed(6), oneReservationUsd: RESERVATION.toFixed(6),
        byPhase, rpmLimit: RPM, acceptedPerMinute: Object.fromEntries(rpmPerMinute), acceptedPerMinuteBeforeKill: Object.fromEntries(rpmPerMinuteBeforeKill), rpmRefusingAgainMsAfterRestart: back === undefined ? null : back - marks.restart!, refused402: bShots.filter((s) => s.status === 402).length,
        refused429: rShots.filter((s) => s.status === 429).length, lastTenBudgetStatuses: lastTen, budgetLoad: tally(bShots), rpmLoad: tally(rShots), ...cmp,
      });
      assert.equal(cmp.lost, 0, 'no acknowledged record lost');
      assert.equal(cmp.duplicates, 0);
      // The budget: fail closed, at most one reservation over it across the flush and the restart (each
      // lost counter is rebuilt from the last view and re-seeded from the store). Fail open serves while
      // Redis is away and until the breaker closes after the restart, but within what this replica can see
      // (its view of the counter, what it admitted since and what is running): at most the requests running
      // at once over the budget, the outage included. Before 2026-11-29 fail open admitted without limit
      // there: 1,893 requests and $0.0246 of a spent $0.004 budget while Redis was down, and $0.0038 more
      // in the 274 ms after the restart (past this bound on a loaded machine).
      const allowed = Number(budgetUsd) + (failOpen ? CONCURRENCY : 1) * RESERVATION;
      assert.ok(billed <= allowed, `billed ${billed.toFixed(6)}: within ${budgetUsd} + ${failOpen ? CONCURRENCY : 1} reservation(s)`);
      if (!failOpen) assert.equal(byPhase['Redis down']!.budgetServed, 0, 'fail closed: nothing served while Redis is down');
      assert.ok(lastTen.every((s) => s === 402), `still refused at the end: ${lastTen.join(',')}`);
      // rpm: a minute's count lost with Redis's data is rebuilt and re-seeded, so each UTC minute holds across
      // the flush and the restart; fail open, while Redis is away, counts the minute as this replica saw it
      // plus what it admitted meanwhile (before 2026-11-29 it admitted without limit: 934 requests in the
      // outage against rpm 40).
      for (const [minute, accepted] of rpmPerMinute) assert.ok(accepted <= RPM, `rpm ${RPM}: ${accepted} accepted in ${minute}`);
      assert.ok(back !== undefined, 'the rpm limit refuses again after the restart');
    } finally {
      await gw.stop();
      await redis.stop();
    }
  });
}
