// Redis unreachable: with redis_fail_open the gateway keeps serving and says so (log line and
// gateway_limiter_errors_total); with it off, limited keys are refused with a 429; with it on, a budgeted key still holds its budget
// (its spend read from the store).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI } from './mocks/index.ts';
import { startTestGateway } from './helpers/gateway.ts';

for (const failOpen of [true, false]) {
  test(`redis down, fail ${failOpen ? 'open' : 'closed'}`, async () => {
    const mock = await startMockOpenAI();
    const gw = await startTestGateway({
      providers: [{ id: 'mockai', format: 'openai-chat', base_url: mock.url }],
      gateway: { auth: { enabled: true, admin_key: 'admin-key-for-redis-down-tests' }, storage: { redis_url: 'redis://127.0.0.1:9', redis_fail_open: failOpen } },
    });
    try {
      const created = await (await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: 'Bearer admin-key-for-redis-down-tests', 'content-type': 'application/json' }, body: JSON.stringify({ name: 'limited', rpm_limit: 100 }) })).json() as { key: string };
      const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'x' }] }) });
      assert.equal(r.status, failOpen ? 200 : 429);
      const m = await (await fetch(`${gw.url}/metrics`)).text();
      const errors = Number(/gateway_limiter_errors_total (\d+)/.exec(m)?.[1] ?? '0');
      assert.ok(errors >= 1, `limiter errors counted (${errors})`);
    } finally { await gw.stop(); await mock.close(); }
  });
}

test('redis down from the start, fail open: a budgeted key still holds its budget (its spend read from the store)', async () => {
  const mock = await startMockOpenAI({ chunkDelayMs: 80 });
  const admin = 'admin-key-for-redis-down-tests';
  const gw = await startTestGateway({
    providers: [{ id: 'mock', format: 'openai-chat', base_url: mock.url }],
    gateway: { auth: { enabled: true, admin_key: admin }, storage: { redis_url: 'redis://127.0.0.1:9', redis_fail_open: true } },
  });
  try {
    const created = await (await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'budget', budget_usd: '0.01', budget_period: 'day' }) })).json() as { key: string };
    // Each request may cost up to ~$0.0041 (max_tokens 2000 at $0.000002 a token): $0.01 admits 2 at once.
    const rs = await Promise.all(Array.from({ length: 8 }, async () => {
      const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock/test-model', stream: true, max_tokens: 2000, messages: [{ role: 'user', content: 'limit me' }] }) });
      return { status: r.status, text: await r.text() };
    }));
    const statuses = rs.map((r) => r.status).join(',');
    assert.equal(rs.filter((r) => r.status === 200).length, 2, `before: all 8 admitted; ${statuses}`);
    assert.equal(rs.filter((r) => r.status === 402).length, 6, statuses);
    for (const r of rs.filter((x) => x.status === 402)) assert.match(r.text, /Budget exceeded: this API key's budget is \$0\.01 per day/);
  } finally { await gw.stop(); await mock.close(); }
});
