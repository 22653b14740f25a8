// OpenAI's prompt cache routing across formats (CanonicalRequest.prompt_cache_key / prompt_cache_retention):
// a Responses client's prompt_cache_key and prompt_cache_retention reach an OpenAI chat upstream as
// the same fields (they were left out, so requests sharing a prefix were no longer routed to the same
// cache and the 24h retention fell back to the default: more input billed uncached); a value of the
// wrong type is a 400 naming the field on both OpenAI routes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let gw: TestGateway; let client: OpenAI;

before(async () => {
  oai = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'oai', format: 'openai-chat', base_url: oai.url, models: [{ name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true } }] }],
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); await oai.close(); });

describe('a Responses client to an OpenAI chat upstream', () => {
  test('prompt_cache_key and prompt_cache_retention arrive as sent', async () => {
    for (const retention of ['24h', 'in_memory'] as const) {
      oai.reset();
      const r = await client.responses.create({ model: 'oai/test-model', input: 'Summarise the design document.', prompt_cache_key: 'tenant-42-docs', prompt_cache_retention: retention });
      assert.equal(r.status, 'completed');
      const sent = oai.requests.at(-1)!.body as Rec;
      assert.equal(sent.prompt_cache_key, 'tenant-42-docs');
      assert.equal(sent.prompt_cache_retention, retention);
    }
  });

  test('null is taken as absent', async () => {
    oai.reset();
    await client.responses.create({ model: 'oai/test-model', input: 'Hello', prompt_cache_key: null, prompt_cache_retention: null });
    const sent = oai.requests.at(-1)!.body as Rec;
    assert.equal('prompt_cache_key' in sent, false);
    assert.equal('prompt_cache_retention' in sent, false);
  });
});

describe('a value of the wrong type', () => {
  const cases: Array<[string, Rec]> = [['prompt_cache_key', { prompt_cache_key: 42 }], ['prompt_cache_retention', { prompt_cache_retention: '1h' }]];
  for (const [param, extra] of cases) {
    test(`${param}: a 400 naming it on both routes, nothing sent`, async () => {
      oai.reset();
      const chat = await client.chat.completions.create({ model: 'oai/test-model', messages: [{ role: 'user', content: 'Hi' }], ...extra } as any).then(() => null, (e: unknown) => e);
      assert.ok(chat instanceof OpenAI.BadRequestError, String(chat));
      assert.equal(chat.param, param);
      const resp = await client.responses.create({ model: 'oai/test-model', input: 'Hi', ...extra } as any).then(() => null, (e: unknown) => e);
      assert.ok(resp instanceof OpenAI.BadRequestError, String(resp));
      assert.equal(resp.param, param);
      assert.equal(oai.requests.length, 0);
    });
  }
});
