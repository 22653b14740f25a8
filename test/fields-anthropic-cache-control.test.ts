// Anthropic's top-level `cache_control` (automatic caching: the marker goes on the last cacheable
// block of the request) across formats. Relayed to Anthropic as sent; translated for Bedrock it was
// dropped, so a Claude model on Bedrock got no cachePoint and cached nothing (every turn's prompt
// billed as uncached input, where the client asked for 5m or 1h caching); now the marker is put on the
// last cacheable block and becomes a cachePoint with its ttl. A malformed marker is a 400 naming it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic, startMockBedrock, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let ant: MockUpstream; let bed: MockUpstream; let gw: TestGateway; let client: Anthropic;

before(async () => {
  [ant, bed] = await Promise.all([startMockAnthropic(), startMockBedrock()]);
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true, prompt_caching: true } };
  gw = await startTestGateway({
    providers: [
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [model] },
      { id: 'bed', format: 'bedrock-converse', base_url: bed.url, models: [{ ...model, upstream: 'anthropic.claude-test-model' }] },
    ],
  });
  client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); await ant.close(); await bed.close(); });

const conversation: Anthropic.MessageParam[] = [
  { role: 'user', content: 'Read the attached design notes and remember them.' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'read_notes', input: { path: 'notes.md' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'The gateway keeps one canonical model.' }, { type: 'text', text: 'Now summarise them.' }] },
];
const tools: Anthropic.Tool[] = [{ name: 'read_notes', description: 'Reads a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];

describe('top-level cache_control to a Claude model on Bedrock', () => {
  for (const [ttl, point] of [[undefined, { type: 'default' }], ['1h', { type: 'default', ttl: '1h' }]] as const) {
    test(`ttl ${ttl ?? 'unset'}: a cachePoint after the last cacheable block, and only there`, async () => {
      bed.reset();
      await client.messages.create({
        model: 'bed/test-model', max_tokens: 200, system: 'You are terse.', tools, messages: conversation,
        cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) },
      });
      const sent = bed.requests.at(-1)!.body as Rec;
      const last = sent.messages.at(-1).content;
      assert.deepEqual(last.at(-1), { cachePoint: point });
      assert.equal(last.at(-2).text, 'Now summarise them.');
      const points = JSON.stringify(sent).match(/cachePoint/g) ?? [];
      assert.equal(points.length, 1, JSON.stringify(sent));
    });
  }

  test('a block that has its own marker keeps it (no second marker)', async () => {
    bed.reset();
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: [{ type: 'text', text: 'Hello', cache_control: { type: 'ephemeral', ttl: '1h' } }] }];
    await client.messages.create({ model: 'bed/test-model', max_tokens: 100, messages, cache_control: { type: 'ephemeral' } });
    const sent = bed.requests.at(-1)!.body as Rec;
    assert.deepEqual(sent.messages[0].content, [{ text: 'Hello' }, { cachePoint: { type: 'default', ttl: '1h' } }]);
  });
});

describe('relayed to Anthropic', () => {
  test('as sent: the top-level marker, no block marker added', async () => {
    ant.reset();
    await client.messages.create({ model: 'ant/test-model', max_tokens: 200, tools, messages: conversation, cache_control: { type: 'ephemeral', ttl: '1h' } });
    const sent = ant.requests.at(-1)!.body as Rec;
    assert.deepEqual(sent.cache_control, { type: 'ephemeral', ttl: '1h' });
    assert.equal(JSON.stringify(sent.messages).includes('cache_control'), false);
  });
});

describe('a malformed marker', () => {
  for (const [cc, param] of [[{ type: 'persistent' }, 'cache_control.type'], [{ type: 'ephemeral', ttl: '2h' }, 'cache_control.ttl']] as const) {
    test(`${JSON.stringify(cc)}: a 400 in the Messages error shape naming ${param}; nothing sent`, async () => {
      ant.reset(); bed.reset();
      for (const model of ['ant/test-model', 'bed/test-model']) {
        const err = await client.messages.create({ model, max_tokens: 100, messages: conversation, tools, cache_control: cc as any }).then(() => null, (e: unknown) => e);
        assert.ok(err instanceof Anthropic.BadRequestError, String(err));
        assert.equal((err.error as Rec).error.type, 'invalid_request_error');
        assert.match(err.message, new RegExp(param.replace('.', '\\.')));
      }
      assert.equal(ant.requests.length + bed.requests.length, 0);
    });
  }
});
