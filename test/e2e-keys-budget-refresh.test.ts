// End to end: a budget changed by `keys edit` in another process (the command line writes the SQLite
// store directly) reaches a running gateway through its periodic key refresh, and the in-process
// limiter's counter for it starts from the store's spend of the period, not from 0: a budget added
// below what the key already spent, or a budget moved to another period, refuses the next request.
// The same with the Redis limiter (key ids are random, so counters of earlier runs never match).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { runCli } from './helpers/process.ts';
import { periodStart } from '../src/limits/limiter.ts';

const ADMIN = 'admin-secret-for-budget-refresh';
const REFRESH_MS = 200;
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
// A long prompt, unique so the mock upstream's prompt cache does not price it as cache reads.
let n = 0;
const long = (): string => `request ${++n} ${Math.random()} ${'budget '.repeat(2000)}`;
/** The spend a budget error names (open reservations included). */
const namedSpend = (text: string): number => Number(/\$([\d.]+) is spent or reserved/.exec(text)?.[1] ?? NaN);

for (const backend of ['memory', 'redis'] as const) describe(`keys edit budget reaches a running gateway (${backend} limiter, SQLite)`, () => {
  let up: MockUpstream; let gw: TestGateway;
  before(async () => {
    up = await startMockOpenAI();
    gw = await startTestGateway({
      providers: [{ id: 'mock', format: 'openai-chat', base_url: up.url }],
      gateway: {
        auth: { enabled: true, admin_key: ADMIN, key_refresh_ms: REFRESH_MS },
        ...(backend === 'redis' ? { storage: { redis_url: REDIS_URL } } : {}),
      },
    });
    assert.equal(gw.services.store!.kind, 'sqlite');
    assert.equal(gw.services.limiter!.status().backend, backend);
  });
  after(async () => { await gw.stop(); await up.close(); });

  const createKey = async (body: Record<string, unknown>) => {
    const r = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 201);
    return (await r.json()) as { id: string; key: string };
  };
  const chat = async (key: string, content: string, maxTokens = 16) => {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'mock/test-model', max_tokens: maxTokens, messages: [{ role: 'user', content }] }),
    });
    return { status: r.status, text: await r.text() };
  };
  /** Waits until the store holds at least `usd` of the key's spend since `since` (the writer flushes every 20 ms). */
  const storedAtLeast = async (id: string, since: number, usd: number): Promise<number> => {
    for (let i = 0; i < 100; i++) {
      const spent = Number(await gw.services.store!.keySpend(id, new Date(since).toISOString()));
      if (spent >= usd) return spent;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.fail(`the store never showed $${usd} spent by ${id}: $${await gw.services.store!.keySpend(id, new Date(since).toISOString())}`);
  };
  const edit = async (id: string, args: string[]) => {
    const r = await runCli(['keys', 'edit', id, ...args], { GATEWAY_CONFIG: gw.configFile });
    assert.equal(r.code, 0, r.stdout + r.stderr);
  };
  /** Past several refresh intervals: the gateway has loaded the edit. */
  const afterRefresh = () => new Promise((r) => setTimeout(r, 4 * REFRESH_MS));

  test('a budget added below the spend already recorded this period refuses the next request; raised, it admits again', async () => {
    const k = await createKey({ name: 'no-budget-yet' });
    for (let i = 0; i < 3; i++) assert.equal((await chat(k.key, long())).status, 200);
    const spent = await storedAtLeast(k.id, periodStart('day', Date.now()), 0.003);

    // The command line writes the store; the gateway is not told. Half of today's spend as a daily budget.
    const budget = (spent / 2).toFixed(6);
    await edit(k.id, ['--budget', budget, '--period', 'day']);
    await afterRefresh();
    const refused = await chat(k.key, 'hello');
    assert.equal(refused.status, 402, refused.text);
    assert.match(refused.text, new RegExp(`Budget exceeded: this API key's budget is \\$${budget.replace(/0+$/, '').replace('.', '\\.')} per day`));
    assert.ok(namedSpend(refused.text) >= spent, refused.text);

    // A higher amount for the same period keeps the counter (no reset either way) and admits again.
    await edit(k.id, ['--budget', '1']);
    await afterRefresh();
    assert.equal((await chat(k.key, 'hello')).status, 200);
  });

  test('a budget moved to another period counts the spend already recorded in the new period', async () => {
    // What one long request costs, measured on a key without a budget.
    const probe = await createKey({ name: 'probe' });
    assert.equal((await chat(probe.key, long(), 64)).status, 200);
    const c = await storedAtLeast(probe.id, periodStart('day', Date.now()), 0.0005);
    // 2.5 of them a month: two long requests (each reserving c plus 64 output tokens, $0.000128) are admitted.
    const budget = (2.5 * c).toFixed(6);
    const k = await createKey({ name: 'monthly', budget_usd: budget, budget_period: 'month' });
    for (let i = 0; i < 2; i++) { const r = await chat(k.key, long(), 64); assert.equal(r.status, 200, r.text); }
    const spent = await storedAtLeast(k.id, periodStart('day', Date.now()), 1.9 * c);

    // The same amount per day: today's spend counts, so a third long request does not fit.
    await edit(k.id, ['--period', 'day']);
    await afterRefresh();
    const refused = await chat(k.key, long(), 64);
    assert.equal(refused.status, 402, refused.text);
    assert.match(refused.text, / per day; /);
    assert.ok(namedSpend(refused.text) >= spent, refused.text);
    // A request that fits what is left is still admitted.
    assert.equal((await chat(k.key, 'hello', 16)).status, 200);
  });
});
