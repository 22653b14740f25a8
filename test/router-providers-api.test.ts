// GET /admin/api/v1/router/providers against a real gateway: a provider failing twice in a row (the
// test's ejection threshold) is listed first, ejected until about a minute from now, with its error rate;
// a healthy one with its measured latency and no errors; one never called says nothing yet. /health's
// upstreams carry the same ejection time. Every signed-in user may read it (members too); anonymous
// callers are refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { createApiKey, sessionHeaders } from './helpers/admin-api.ts';

const ADMIN_KEY = 'admin-key-for-the-router-providers-test-0123';
const PW = 'a long enough password';
let good: MockUpstream; let bad: MockUpstream;
let gw: TestGateway;
let member: Record<string, string>;
let apiKey: string;
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

before(async () => {
  good = await startMockOpenAI();
  bad = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [
      { id: 'good', format: 'openai-chat', base_url: good.url },
      { id: 'bad', format: 'openai-chat', base_url: bad.url },
      { id: 'idle', format: 'openai-chat', base_url: good.url },
    ],
    gateway: {
      auth: { enabled: true, admin_key: ADMIN_KEY },
      upstream: { max_attempts: 1, ejection: { consecutive_failures: 2, base_ms: 60_000, max_ms: 60_000 } },
    },
  });
  await gw.services.dashboard!.users.create({ email: 'mo@example.com', role: 'member', password: PW });
  member = await sessionHeaders(gw.url, 'mo@example.com', PW);
  apiKey = (await createApiKey(gw.url, admin, { name: 'app' })).key;
});
after(async () => { await gw?.stop(); await good?.close(); await bad?.close(); });

async function chat(model: string): Promise<number> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await r.arrayBuffer();
  return r.status;
}

test('the providers now: ejected first with its time and error rate, a healthy one with its latency, an idle one empty', async () => {
  for (let i = 0; i < 3; i++) assert.equal(await chat('good/test-model'), 200);
  bad.fault([{ status: 503 }, { status: 503 }]);
  for (let i = 0; i < 2; i++) assert.ok((await chat('bad/test-model')) >= 500);
  const t = Date.now();
  const r = await fetch(`${gw.url}/admin/api/v1/router/providers`, { headers: admin });
  assert.equal(r.status, 200);
  const body = (await r.json()) as { data: Array<Record<string, any>>; as_of: string };
  assert.ok(Math.abs(Date.parse(body.as_of) - t) < 5_000);
  assert.deepEqual(body.data.map((p) => p.provider), ['bad', 'good', 'idle']);
  const [b, g, idle] = body.data as [Record<string, any>, Record<string, any>, Record<string, any>];
  assert.equal(b.ejected, true);
  const until = Date.parse(b.ejected_until);
  assert.ok(until > t + 50_000 && until <= t + 61_000, `ejected for about a minute: ${b.ejected_until}`);
  assert.equal(b.consecutive_failures, 0, 'the count starts again once it ejects');
  assert.ok(b.error_rate > 0.15 && b.error_rate < 0.2, `two failures of two: ${b.error_rate}`);
  assert.equal(b.latency_ms, null, 'no answer measured');
  assert.deepEqual([g.ejected, g.ejected_until, g.consecutive_failures, g.error_rate], [false, null, 0, 0]);
  assert.equal(typeof g.latency_ms, 'number');
  assert.deepEqual(idle, { provider: 'idle', ejected: false, ejected_until: null, consecutive_failures: 0, latency_ms: null, error_rate: 0 });

  const health = (await (await fetch(`${gw.url}/health`)).json()) as { upstreams: Record<string, { ejected: boolean; ejected_until: string | null }> };
  assert.equal(health.upstreams.bad!.ejected_until, b.ejected_until);

  // Every signed-in user; nobody else.
  assert.equal((await fetch(`${gw.url}/admin/api/v1/router/providers`, { headers: member })).status, 200);
  const anon = await fetch(`${gw.url}/admin/api/v1/router/providers`);
  assert.equal(anon.status, 401);
  assert.equal(typeof ((await anon.json()) as { error: { message: string } }).error.message, 'string');
});
