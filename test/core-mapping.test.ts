// Declarative parameter mappings: rename, drop, default, value maps, clamp or reject (never silent),
// json-logic conditions; applied on the way upstream and reported in x-gateway-adjustments.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileMapping } from '../src/mapping/compile.ts';
import { GatewayError } from '../src/gateway-error.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

test('rows rename, drop, default, map values and report each change', () => {
  const m = compileMapping([
    { param: 'max_tokens', rename: 'max_completion_tokens' },
    { param: 'user', drop: true },
    { param: 'seed', default: 7 },
    { param: 'tool_choice', values: { required: 'any' } },
    { param: 'stream_options.include_usage', drop: true },
  ]);
  const body: Record<string, unknown> = { max_tokens: 5, user: 'u', tool_choice: 'required', stream_options: { include_usage: true, other: 1 } };
  const adj = m(body, 'm');
  assert.deepEqual(body, { max_completion_tokens: 5, seed: 7, tool_choice: 'any', stream_options: { other: 1 } });
  assert.deepEqual(adj, ['max_tokens->max_completion_tokens', 'user=dropped', 'seed=default', 'tool_choice=required->any', 'stream_options.include_usage=dropped']);
});

test('min/max clamp when declared so, and reject otherwise', () => {
  const clamp = compileMapping([{ param: 'temperature', min: 0, max: 1.5, out_of_range: 'clamp' }]);
  const b1: Record<string, unknown> = { temperature: 2 };
  assert.deepEqual(clamp(b1, 'm'), ['temperature=2->1.5(clamped)']);
  assert.equal(b1.temperature, 1.5);
  const b2: Record<string, unknown> = { temperature: 1 };
  assert.deepEqual(clamp(b2, 'm'), []);
  const reject = compileMapping([{ param: 'max_tokens', max: 8192, out_of_range: 'reject' }]);
  assert.throws(() => reject({ max_tokens: 9000 }, 'm'), (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'max_tokens' && /8192/.test(e.message));
});

test('reject rows refuse a present parameter with their message', () => {
  const m = compileMapping([{ param: 'logit_bias', reject: 'no logit_bias here' }]);
  assert.deepEqual(m({}, 'x'), []);
  assert.throws(() => m({ logit_bias: { 1: 2 } }, 'x'), (e: unknown) => e instanceof GatewayError && e.code === 'unsupported_parameter' && e.message === 'no logit_bias here');
});

test('json-logic conditions see the upstream model and the body', () => {
  const m = compileMapping([
    { param: 'max_tokens', rename: 'max_completion_tokens', when: { starts_with: [{ var: 'model' }, 'o3'] } },
    { param: 'temperature', drop: true, when: { '>': [{ var: 'body.temperature' }, 1] } },
  ]);
  const a: Record<string, unknown> = { max_tokens: 1, temperature: 0.5 };
  m(a, 'gpt-4o');
  assert.deepEqual(a, { max_tokens: 1, temperature: 0.5 });
  const b: Record<string, unknown> = { max_tokens: 1, temperature: 1.5 };
  m(b, 'o3-mini');
  assert.deepEqual(b, { max_completion_tokens: 1 });
});

let oa: MockUpstream; let gw: TestGateway;
before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{
      id: 'quirky', format: 'openai-chat', base_url: oa.url,
      mappings: [
        { param: 'max_completion_tokens', rename: 'max_tokens' },
        { param: 'temperature', max: 1.5, out_of_range: 'clamp' },
        { param: 'logit_bias', reject: 'quirky does not support logit_bias' },
      ],
    }],
  });
});
after(async () => { await gw.stop(); await oa.close(); });

test('through the gateway: the upstream receives the mapped body and the client is told', async () => {
  const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'quirky/test-model', max_completion_tokens: 20, temperature: 1.9, messages: [{ role: 'user', content: 'x' }] }) });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-gateway-adjustments'), 'max_completion_tokens->max_tokens, temperature=1.9->1.5(clamped)');
  const sent = oa.requests.at(-1)!.body as Record<string, unknown>;
  assert.equal(sent.max_tokens, 20);
  assert.equal(sent.max_completion_tokens, undefined);
  assert.equal(sent.temperature, 1.5);
  const bad = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'quirky/test-model', logit_bias: { 50256: -100 }, messages: [{ role: 'user', content: 'x' }] }) });
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { message: string; param: string } }).error.param, 'logit_bias');
});

test('forward_headers relays the declared client headers and never credentials', async () => {
  const { startMockAnthropic } = await import('./mocks/index.ts');
  const an = await startMockAnthropic();
  const g = await startTestGateway({ providers: [{ id: 'ant', format: 'anthropic-messages', base_url: an.url, forward_headers: ['anthropic-beta', 'authorization', 'x-api-key'] }] });
  try {
    const r = await fetch(`${g.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-beta': 'context-management-2025-06-27', authorization: 'Bearer sk-gw-client', 'x-api-key': 'sk-gw-client' },
      body: JSON.stringify({ model: 'ant/test-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(r.status, 200);
    const h = an.requests.at(-1)!.headers;
    assert.equal(h['anthropic-beta'], 'context-management-2025-06-27');
    assert.equal(h['x-api-key'], 'sk-upstream-test');
    assert.equal(h.authorization, undefined);
  } finally { await g.stop(); await an.close(); }
});
