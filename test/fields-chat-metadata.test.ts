// OpenAI's `metadata` ("Set of 16 key-value pairs... keys ... maximum length of 64 characters. Values
// ... maximum length of 512 characters", the openai package's Shared.Metadata) on the chat route.
// The Responses route held it to those limits; the chat route took any number of pairs of any length
// and sent them on (a Bedrock upstream got 17 requestMetadata entries, an OpenAI upstream refuses
// them). Now both routes answer the same 400 naming the field, and nothing is sent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockBedrock, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let bed: MockUpstream; let gw: TestGateway; let client: OpenAI;

before(async () => {
  [oai, bed] = await Promise.all([startMockOpenAI(), startMockBedrock()]);
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true } };
  gw = await startTestGateway({
    providers: [
      { id: 'oai', format: 'openai-chat', base_url: oai.url, models: [model] },
      { id: 'bed', format: 'bedrock-converse', base_url: bed.url, models: [{ ...model, upstream: 'anthropic.claude-test-model' }] },
    ],
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); await oai.close(); await bed.close(); });

const pairs = (n: number): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`key${i}`, 'v']));

const CASES: Array<{ what: string; metadata: Record<string, string>; param: string }> = [
  { what: '17 pairs', metadata: pairs(17), param: 'metadata' },
  { what: 'a 65-character key', metadata: { ['k'.repeat(65)]: 'v' }, param: `metadata.${'k'.repeat(64)}` },
  { what: 'a 513-character value', metadata: { note: 'x'.repeat(513) }, param: 'metadata.note' },
];

describe('metadata past OpenAI\'s limits', () => {
  for (const c of CASES) {
    test(`${c.what}: a 400 naming ${c.param.slice(0, 20)} on the chat and Responses routes; nothing sent`, async () => {
      oai.reset(); bed.reset();
      for (const model of ['oai/test-model', 'bed/test-model']) {
        const chat = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], metadata: c.metadata }).then(() => null, (e: unknown) => e);
        assert.ok(chat instanceof OpenAI.BadRequestError, `${model}: ${String(chat)}`);
        assert.equal(chat.param, c.param);
        const resp = await client.responses.create({ model, input: 'Hi', metadata: c.metadata }).then(() => null, (e: unknown) => e);
        assert.ok(resp instanceof OpenAI.BadRequestError, `${model}: ${String(resp)}`);
        assert.equal(resp.param, c.param);
      }
      assert.equal(oai.requests.length + bed.requests.length, 0);
    });
  }

  test('16 pairs at the limits pass, and arrive as sent', async () => {
    const metadata = { ...pairs(15), ['k'.repeat(64)]: 'x'.repeat(512) };
    await client.chat.completions.create({ model: 'oai/test-model', messages: [{ role: 'user', content: 'Hi' }], metadata });
    assert.deepEqual((oai.requests.at(-1)!.body as Rec).metadata, metadata);
    await client.chat.completions.create({ model: 'bed/test-model', messages: [{ role: 'user', content: 'Hi' }], metadata: pairs(16) });
    assert.deepEqual((bed.requests.at(-1)!.body as Rec).requestMetadata, pairs(16));
  });
});
