// Log probabilities asked of the Responses API (`include: ["message.output_text.logprobs"]`,
// `top_logprobs`) when the model is reached by translation (Anthropic, or a chat-completions provider
// that does not serve the Responses API): they were dropped without a word (200, output_text.logprobs
// empty, no x-gateway-adjustments); now a 400 in the Responses error shape naming the field, with
// nothing sent. A provider serving the Responses API natively gets them as sent; a top_logprobs out of
// 0..20 is a 400 on both OpenAI routes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let nat: MockUpstream; let ant: MockUpstream; let gw: TestGateway; let client: OpenAI;

before(async () => {
  [oai, nat, ant] = await Promise.all([startMockOpenAI(), startMockOpenAI(), startMockAnthropic()]);
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true } };
  gw = await startTestGateway({
    providers: [
      { id: 'oai', format: 'openai-chat', base_url: oai.url, models: [model] },
      { id: 'nat', format: 'openai-chat', base_url: nat.url, paths: { responses: '/responses' }, models: [model] },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [model] },
    ],
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); for (const m of [oai, nat, ant]) await m.close(); });

const ASKS: Array<{ param: string; body: Rec }> = [
  { param: 'include', body: { include: ['message.output_text.logprobs'] } },
  { param: 'include', body: { include: ['reasoning.encrypted_content', 'message.output_text.logprobs'], top_logprobs: 5 } },
  { param: 'top_logprobs', body: { top_logprobs: 3 } },
];

describe('log probabilities asked of a model reached by translation', () => {
  for (const target of ['ant', 'oai']) {
    test(`${target}: a 400 naming the field, nothing sent`, async () => {
      ant.reset(); oai.reset();
      for (const ask of ASKS) {
        const err = await client.responses.create({ model: `${target}/test-model`, input: 'Pick a number.', ...ask.body } as any).then(() => null, (e: unknown) => e);
        assert.ok(err instanceof OpenAI.BadRequestError, `${JSON.stringify(ask.body)}: ${String(err)}`);
        assert.equal(err.param, ask.param);
        assert.match(err.message, /log probabilities/);
      }
      assert.equal(ant.requests.length + oai.requests.length, 0);
    });
  }

  test('not asked (top_logprobs 0, other includes): answered', async () => {
    ant.reset();
    const r = await client.responses.create({ model: 'ant/test-model', input: 'Pick a number.', top_logprobs: 0, include: ['reasoning.encrypted_content'] });
    assert.equal(r.status, 'completed');
    assert.equal(ant.requests.length, 1);
  });
});

describe('relayed to a Responses server', () => {
  test('include and top_logprobs arrive as sent', async () => {
    nat.reset();
    await client.responses.create({ model: 'nat/test-model', input: 'Pick a number.', include: ['message.output_text.logprobs'], top_logprobs: 3 });
    const sent = nat.requests.at(-1)!.body as Rec;
    assert.ok(sent.include.includes('message.output_text.logprobs'), JSON.stringify(sent.include));
    assert.equal(sent.top_logprobs, 3);
  });
});

describe('top_logprobs out of range', () => {
  for (const v of [21, -1, 2.5]) {
    test(`${v}: a 400 naming it on both routes`, async () => {
      nat.reset(); oai.reset();
      const resp = await client.responses.create({ model: 'nat/test-model', input: 'Hi', top_logprobs: v }).then(() => null, (e: unknown) => e);
      assert.ok(resp instanceof OpenAI.BadRequestError, String(resp));
      assert.equal(resp.param, 'top_logprobs');
      const chat = await client.chat.completions.create({ model: 'oai/test-model', messages: [{ role: 'user', content: 'Hi' }], logprobs: true, top_logprobs: v }).then(() => null, (e: unknown) => e);
      assert.ok(chat instanceof OpenAI.BadRequestError, String(chat));
      assert.equal(chat.param, 'top_logprobs');
      assert.equal(nat.requests.length + oai.requests.length, 0);
    });
  }
});
