// POST /v1/responses/compact under auth: the key's allowed models, its stored conversations only
// (previous_response_id of another key is not found), its budget (refused before any upstream call),
// and no key at all, each in OpenAI's envelope and recorded; a key that may compact does.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
let ant: MockUpstream; let gw: TestGateway;
const keys: Record<string, string> = {};
const client = (k: string): OpenAI => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: k, maxRetries: 0 });

before(async () => {
  ant = await startMockAnthropic();
  gw = await startTestGateway({
    providers: [{ id: 'ant', format: 'anthropic-messages', base_url: ant.url }, { id: 'other', format: 'anthropic-messages', base_url: ant.url }],
    gateway: { auth: { enabled: true } },
  });
  const admin = gw.services.admin!;
  keys.a = (await admin.createKey({ name: 'a', allowed_models: ['ant/*'] })).key;
  keys.b = (await admin.createKey({ name: 'b' })).key;
  keys.poor = (await admin.createKey({ name: 'poor', budget_usd: '0.000001' })).key;
});
after(async () => { await gw.stop(); await ant.close(); });

async function compact(key: string | null, body: Rec): Promise<{ status: number; j: Rec; id: string | null }> {
  const res = await fetch(`${gw.url}/v1/responses/compact`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body),
  });
  return { status: res.status, j: await res.json() as Rec, id: res.headers.get('x-inference-id') };
}

test('a key compacts its own conversation; another key cannot reach it; models and budgets are enforced before any upstream call', async () => {
  const first = await client(keys.a!).responses.create({ model: 'ant/test-model', input: 'my conversation' });
  const ok = await client(keys.a!).responses.compact({ model: 'ant/test-model', previous_response_id: first.id, input: 'more' });
  assert.equal(ok.output.at(-1)!.type, 'compaction');
  assert.equal(ok.output.filter((o) => o.type === 'message').length, 2);

  ant.reset();
  const other = await compact(keys.b!, { model: 'ant/test-model', previous_response_id: first.id, input: 'x' });
  assert.equal(other.status, 400);
  assert.equal(other.j.error.param, 'previous_response_id');
  const notAllowed = await compact(keys.a!, { model: 'other/test-model', input: 'x' });
  assert.equal(notAllowed.status, 403);
  assert.equal(notAllowed.j.error.param, 'model');
  const poor = await compact(keys.poor!, { model: 'ant/test-model', input: 'x' });
  assert.ok(poor.status === 402 || poor.status === 429, `budget refusal ${poor.status} ${JSON.stringify(poor.j)}`);
  assert.equal(typeof poor.j.error.message, 'string');
  const anonymous = await compact(null, { model: 'ant/test-model', input: 'x' });
  assert.equal(anonymous.status, 401);
  assert.equal(ant.requests.length, 0, 'nothing reached the upstream');
  // The refusals are recorded like any inference's.
  await new Promise((r) => setTimeout(r, 150));
  for (const id of [other.id, notAllowed.id, poor.id]) {
    const rows = await gw.services.store!.sql.all('SELECT route, status FROM inferences WHERE id = ?', [id]);
    assert.equal(rows.length, 1, String(id));
    assert.equal(rows[0]!.route, '/v1/responses/compact');
    assert.ok(Number(rows[0]!.status) >= 400);
  }
});

test('a budget that cannot cover a pricier configured fallback: compaction keeps the model it can afford and never falls back past the budget', async () => {
  const [up, dear] = await Promise.all([startMockAnthropic(), startMockAnthropic()]);
  const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
  const g = await startTestGateway({
    providers: [
      { id: 'cheap', format: 'anthropic-messages', base_url: up.url, models: [{ name: 'small', pricing: { prompt: '0.000001', completion: '0.000001' }, capabilities: caps, context_window: 32000, max_completion_tokens: 1000 }] },
      { id: 'pricey', format: 'anthropic-messages', base_url: dear.url, models: [{ name: 'big', pricing: { prompt: '0.0001', completion: '0.0001' }, capabilities: caps, context_window: 32000, max_completion_tokens: 1000 }] },
    ],
    gateway: { auth: { enabled: true }, fallbacks: { 'cheap/small': ['pricey/big'] } },
  });
  const compactAs = (key: string) => fetch(`${g.url}/v1/responses/compact`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ model: 'cheap/small', input: 'a long conversation' }),
  });
  try {
    // The cheap model's worst case (~$0.001) fits $0.01; the pricey one's (~$0.1) does not.
    const key = (await g.services.admin!.createKey({ name: 'near', budget_usd: '0.01', budget_period: 'day' })).key;
    up.fault(Array.from({ length: 5 }, () => ({ status: 503 })));
    const res = await compactAs(key);
    const j = await res.json() as Rec;
    assert.ok(res.status >= 500, `the cheap model's failure is the answer (${res.status} ${JSON.stringify(j)})`);
    assert.equal(res.headers.get('x-gateway-budget-dropped'), 'pricey/big');
    assert.equal(dear.requests.length, 0, 'never sent to the dropped model');
    // With room for both, the fallback serves.
    const rich = (await g.services.admin!.createKey({ name: 'rich', budget_usd: '10', budget_period: 'day' })).key;
    up.reset();
    up.fault(Array.from({ length: 5 }, () => ({ status: 503 })));
    const ok = await compactAs(rich);
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(ok.headers.get('x-gateway-budget-dropped'), null);
    assert.equal(dear.requests.length, 1, 'the fallback served');
  } finally { await g.stop(); await up.close(); await dear.close(); }
});
