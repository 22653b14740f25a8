// Retries on the raw pass-through routes (/v1/embeddings, ...) follow the same rules as chat: they
// share the retry budget (counting their requests, paying for every attempt after a failure), retry
// the last target in place honouring retry-after up to its cap, and fall back before the first byte.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

let a: MockUpstream; let c: MockUpstream; let ant: MockUpstream;
before(async () => { [a, c, ant] = await Promise.all([startMockOpenAI(), startMockOpenAI(), startMockAnthropic()]); });
after(async () => { await a.close(); await c.close(); await ant.close(); });
beforeEach(() => { a.reset(); c.reset(); ant.reset(); });

const post = (gw: TestGateway, route: string, body: Record<string, unknown>) =>
  fetch(`${gw.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const embed = (gw: TestGateway, model: string) => post(gw, '/v1/embeddings', { model, input: 'embed me' });
const chat = (gw: TestGateway, model: string) => post(gw, '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'x' }] });

/** p (mock a) falls back to q (mock c), both OpenAI-compatible. */
async function pair(upstream: Record<string, unknown>): Promise<TestGateway> {
  return startTestGateway({
    providers: [{ id: 'p', format: 'openai-chat', base_url: a.url }, { id: 'q', format: 'openai-chat', base_url: c.url }],
    gateway: { fallbacks: { 'p/test-model': ['q/test-model'] }, upstream: { ejection: { consecutive_failures: 1000 }, ...upstream } },
  });
}

test('embeddings fall back on a 5xx, and stop falling back once the retry budget is spent', async () => {
  const gw = await pair({ retry_budget_ratio: 0, retry_budget_floor: 2 });
  try {
    a.fault([{ status: 500 }, { status: 500 }, { status: 500 }]);
    for (let n = 0; n < 2; n++) {
      const r = await embed(gw, 'p/test-model');
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-gateway-provider'), 'q');
      assert.ok(((await r.json()) as any).data[0].embedding.length > 0);
    }
    const third = await embed(gw, 'p/test-model');
    assert.equal(third.status, 502);
    const err = ((await third.json()) as any).error;
    assert.match(err.message, /retry budget exhausted/);
    assert.equal(err.type, 'api_error');
    assert.ok(third.headers.get('x-inference-id'));
    assert.equal(a.requests.length, 3);
    assert.equal(c.requests.length, 2, 'the third request must not reach the fallback');
  } finally { await gw.stop(); }
});

test('a provider that always fails: embeddings retry it in place within the budget, then answer without retrying', async () => {
  const gw = await startTestGateway({
    providers: [{ id: 'solo', format: 'openai-chat', base_url: a.url }],
    gateway: { upstream: { retry_budget_ratio: 0, retry_budget_floor: 2, max_attempts: 3, ejection: { consecutive_failures: 1000 } } },
  });
  try {
    a.fault(Array.from({ length: 10 }, () => ({ status: 500 })));
    // The first request spends the whole budget (2 retries after its first failure, 3 attempts = max_attempts);
    // its last failure has nothing left to try and is answered as an upstream error (5xx -> 502, redacted
    // message in the route's envelope), like every other upstream failure.
    const first = await embed(gw, 'solo/test-model');
    assert.equal(first.status, 502);
    assert.match(((await first.json()) as any).error.message, /^SOLO: /);
    assert.equal(a.requests.length, 3);
    for (let n = 0; n < 3; n++) {
      const r = await embed(gw, 'solo/test-model');
      assert.equal(r.status, 502);
      assert.match(((await r.json()) as any).error.message, /^SOLO: .*\(retry budget exhausted\)$/);
    }
    assert.equal(a.requests.length, 6, 'one upstream call per request once the budget is spent: no retry storm');
  } finally { await gw.stop(); }
});

test('embeddings requests count toward the retry budget shared with chat', async () => {
  // ratio 0.5, no floor: retries may add half the recent requests. Two chat requests alone allow one
  // retry (the second one's fallback is refused); two embeddings requests before them allow two.
  const gw = await pair({ retry_budget_ratio: 0.5, retry_budget_floor: 0 });
  try {
    for (let n = 0; n < 2; n++) assert.equal((await embed(gw, 'p/test-model')).status, 200);
    a.fault([{ status: 500 }, { status: 500 }]);
    for (let n = 0; n < 2; n++) {
      const r = await chat(gw, 'p/test-model');
      assert.equal(r.status, 200, `chat request ${n + 1}: ${await r.clone().text()}`);
      assert.equal(r.headers.get('x-gateway-provider'), 'q');
      await r.text();
    }
    assert.equal(c.requests.length, 2);
  } finally { await gw.stop(); }
});

test('embeddings honour retry-after within the cap on the last target, and relay a 429 over the cap', async () => {
  const gw = await startTestGateway({ providers: [{ id: 'solo', format: 'openai-chat', base_url: a.url }], gateway: { upstream: { retry_after_cap_ms: 1000 } } });
  try {
    a.fault({ status: 429, retryAfter: '0.3' });
    const t0 = Date.now();
    const r = await embed(gw, 'solo/test-model');
    assert.equal(r.status, 200);
    await r.text();
    assert.ok(Date.now() - t0 >= 280, 'waited for retry-after');
    assert.equal(a.requests.length, 2);

    a.reset();
    a.fault({ status: 429, retryAfter: 7 });
    const over = await embed(gw, 'solo/test-model');
    assert.equal(over.status, 429);
    assert.equal(over.headers.get('retry-after'), '7');
    await over.text();
    assert.equal(a.requests.length, 1);
  } finally { await gw.stop(); }
});

test('a fallback that cannot serve the route is left out of the plan instead of answering 400', async () => {
  const gw = await startTestGateway({
    providers: [{ id: 'p', format: 'openai-chat', base_url: a.url }, { id: 'ant', format: 'anthropic-messages', base_url: ant.url }],
    gateway: { fallbacks: { 'p/test-model': ['ant/test-model'] } },
  });
  try {
    a.fault({ status: 503 });
    const r = await embed(gw, 'p/test-model');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-gateway-provider'), 'p');
    await r.text();
    assert.equal(a.requests.length, 2);
    assert.equal(ant.requests.length, 0);
  } finally { await gw.stop(); }
});
