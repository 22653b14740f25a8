// A Messages document with `citations: {enabled: true}`: Anthropic answers citing it, no other
// format does. Relayed to Anthropic as sent; translated (an OpenAI chat or a Gemini upstream) the
// document is sent and the citations were dropped without a word (200, no x-gateway-adjustments);
// now each is reported as messages[i].content[j].citations=dropped. A malformed citations field is a
// 400 naming it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic, startMockGemini, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let ant: MockUpstream; let gem: MockUpstream; let gw: TestGateway; let client: Anthropic;

before(async () => {
  [oai, ant, gem] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini()]);
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true, vision: true } };
  gw = await startTestGateway({
    providers: [
      { id: 'oai', format: 'openai-chat', base_url: oai.url, models: [model] },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [model] },
      { id: 'gem', format: 'gemini', base_url: gem.url, models: [model] },
    ],
  });
  client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); for (const m of [oai, ant, gem]) await m.close(); });

// The documented example of citations on a plain-text document.
const messages: Anthropic.MessageParam[] = [
  { role: 'user', content: 'Hello.' },
  { role: 'assistant', content: 'Hi! What can I read for you?' },
  {
    role: 'user',
    content: [
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The grass is green. The sky is blue.' }, title: 'My Document', context: 'This is a trustworthy document.', citations: { enabled: true } },
      { type: 'text', text: 'What color is the grass and sky?' },
    ],
  },
];

describe('citations asked of a translated target', () => {
  for (const target of ['oai', 'gem']) {
    test(`${target}: reported where asked, the document still sent`, async () => {
      const { response } = await client.messages.create({ model: `${target}/test-model`, max_tokens: 100, messages }).withResponse();
      const adj = (response.headers.get('x-gateway-adjustments') ?? '').split(', ');
      assert.ok(adj.includes('messages[2].content[0].citations=dropped'), adj.join(', '));
      const mock = target === 'oai' ? oai : gem;
      assert.match(JSON.stringify(mock.requests.at(-1)!.body), /The grass is green/);
    });
  }

  test('citations off is nothing to report', async () => {
    const off = messages.map((m, i) => (i === 2 ? { ...m, content: (m.content as any[]).map((b) => (b.type === 'document' ? { ...b, citations: { enabled: false } } : b)) } : m));
    const { response } = await client.messages.create({ model: 'oai/test-model', max_tokens: 100, messages: off }).withResponse();
    assert.equal((response.headers.get('x-gateway-adjustments') ?? '').includes('citations'), false);
  });
});

describe('relayed to Anthropic', () => {
  test('the citations field arrives as sent', async () => {
    ant.reset();
    await client.messages.create({ model: 'ant/test-model', max_tokens: 100, messages });
    const sent = ant.requests.at(-1)!.body as Rec;
    assert.deepEqual(sent.messages[2].content[0].citations, { enabled: true });
  });

  test('a malformed citations field is a 400 naming it; nothing sent', async () => {
    ant.reset();
    const bad = messages.map((m, i) => (i === 2 ? { ...m, content: (m.content as any[]).map((b) => (b.type === 'document' ? { ...b, citations: { enabled: 'yes' } } : b)) } : m));
    const err = await client.messages.create({ model: 'ant/test-model', max_tokens: 100, messages: bad as any }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    assert.match(err.message, /messages\[2\]\.content\[0\]\.citations\.enabled/);
    assert.equal(ant.requests.length, 0);
  });
});
