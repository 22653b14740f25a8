// Chat-completions asks only an OpenAI chat server answers (src/formats/openai-chat/decode-request.ts
// openAIOnly): log probabilities, an audio answer, a web search, legacy function calling. Sent through
// the official SDK to a model reached by translation (Anthropic, Gemini, Bedrock) they were dropped
// without a word (200, no x-gateway-adjustments, the answer without what was asked); now each is a 400
// in the chat error shape naming the field, and nothing reaches the upstream. Relayed to an OpenAI
// chat upstream they arrive as sent, and asked off they are nothing to refuse.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { MockUpstream } from './mocks/index.ts';
import { oneModelOnEach, startFourMocks } from './helpers/four-formats.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let ant: MockUpstream; let gem: MockUpstream; let bed: MockUpstream; let gw: TestGateway; let client: OpenAI;

before(async () => {
  ({ oai, ant, gem, bed } = await startFourMocks());
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true } };
  gw = await startTestGateway({ providers: oneModelOnEach({ oai, ant, gem, bed }, model) });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); for (const m of [oai, ant, gem, bed]) await m.close(); });

const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
const fn = { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

/** Each ask as the SDK types it, and the field the 400 must name. */
const ASKS: Array<{ param: string; body: Rec }> = [
  { param: 'logprobs', body: { logprobs: true } },
  { param: 'logprobs', body: { logprobs: true, top_logprobs: 2 } },
  { param: 'top_logprobs', body: { top_logprobs: 3 } },
  { param: 'modalities', body: { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } } },
  { param: 'audio', body: { audio: { voice: 'alloy', format: 'mp3' } } },
  { param: 'web_search_options', body: { web_search_options: { search_context_size: 'low' } } },
  { param: 'web_search_options', body: { web_search_options: {} } },
  { param: 'functions', body: { functions: [fn] } },
  { param: 'function_call', body: { functions: [], function_call: { name: 'get_weather' } } },
  {
    param: 'messages[1].function_call',
    body: {
      messages: [
        ...messages,
        { role: 'assistant', content: 'Let me look.', function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { role: 'user', content: 'And?' },
      ],
    },
  },
];

describe('an OpenAI-only ask to a model reached by translation', () => {
  for (const target of ['ant', 'gem', 'bed']) {
    test(`${target}: a 400 in the chat error shape naming the field; the upstream is not called`, async () => {
      const mock = { ant, gem, bed }[target]!;
      mock.reset();
      for (const ask of ASKS) {
        const err = await client.chat.completions.create({ model: `${target}/test-model`, messages, ...ask.body } as any).then(() => null, (e: unknown) => e);
        assert.ok(err instanceof OpenAI.BadRequestError, `${ask.param} ${JSON.stringify(ask.body)}: ${String(err)}`);
        assert.equal(err.param, ask.param);
        assert.equal(err.code, 'unsupported_parameter');
        assert.match(err.message, new RegExp(`'${ask.param.replace(/[[\].]/g, '\\$&')}'`));
      }
      assert.equal(mock.requests.length, 0);
    });
  }

  test('asked off (logprobs false, top_logprobs 0, text only, no functions, null options), it is answered', async () => {
    ant.reset();
    const r = await client.chat.completions.create({
      model: 'ant/test-model', messages, logprobs: false, top_logprobs: 0, modalities: ['text'], audio: null, functions: [], function_call: 'auto',
    } as any);
    assert.equal(r.object, 'chat.completion');
    assert.equal(ant.requests.length, 1);
    const sent = ant.requests[0]!.body as Rec;
    for (const k of ['logprobs', 'top_logprobs', 'modalities', 'audio', 'functions', 'function_call']) assert.equal(sent[k], undefined, k);
  });
});

describe('relayed to an OpenAI chat upstream', () => {
  test('each ask arrives as sent', async () => {
    for (const ask of ASKS) {
      if (ask.param.startsWith('messages') || ask.param === 'function_call' || ask.param === 'top_logprobs') continue;
      oai.reset();
      await client.chat.completions.create({ model: 'oai/test-model', messages, ...ask.body } as any);
      const sent = oai.requests.at(-1)!.body as Rec;
      for (const [k, v] of Object.entries(ask.body)) assert.deepEqual(sent[k], v, k);
    }
  });
});
