// Stop sequences and each API's limit on them. OpenAI chat completions takes up to 4 ("Up to 4
// sequences"; the API refuses a longer array), Gemini's generationConfig up to 5; Anthropic's
// stop_sequences has no such limit. Before: a chat request with 5 was relayed to OpenAI (refused
// upstream) or translated as is, and a Messages request with 6 went to an OpenAI or a Gemini upstream
// that refuses it. Now the chat route refuses more than 4 in its own error shape, and a translation
// that cannot carry them all is a 400 naming stop_sequences: never some dropped (the answer would run
// past them) and never sent to an upstream that refuses them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { MockUpstream } from './mocks/index.ts';
import { oneModelOnEach, startFourMocks } from './helpers/four-formats.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let ant: MockUpstream; let gem: MockUpstream; let bed: MockUpstream; let gw: TestGateway;
let openai: OpenAI; let anthropic: Anthropic;

before(async () => {
  ({ oai, ant, gem, bed } = await startFourMocks());
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true } };
  gw = await startTestGateway({ providers: oneModelOnEach({ oai, ant, gem, bed }, model) });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw.stop(); for (const m of [oai, ant, gem, bed]) await m.close(); });

const seqs = (n: number): string[] => Array.from({ length: n }, (_, i) => `\nEND${i}`);
const reset = (): void => { for (const m of [oai, ant, gem, bed]) m.reset(); };
const sentCount = (): number => [oai, ant, gem, bed].reduce((n, m) => n + m.requests.length, 0);

describe('a chat client', () => {
  test('4 stop sequences pass to every target', async () => {
    for (const target of ['oai', 'ant', 'gem', 'bed']) {
      const r = await openai.chat.completions.create({ model: `${target}/test-model`, messages: [{ role: 'user', content: 'Count to ten.' }], stop: seqs(4) });
      assert.equal(r.object, 'chat.completion', target);
    }
    assert.deepEqual((oai.requests.at(-1)!.body as Rec).stop, seqs(4));
    assert.deepEqual((ant.requests.at(-1)!.body as Rec).stop_sequences, seqs(4));
  });

  test('5 are a 400 naming stop, whatever the target; nothing sent', async () => {
    reset();
    for (const target of ['oai', 'ant', 'gem', 'bed']) {
      const err = await openai.chat.completions.create({ model: `${target}/test-model`, messages: [{ role: 'user', content: 'Count to ten.' }], stop: seqs(5) }).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof OpenAI.BadRequestError, `${target}: ${String(err)}`);
      assert.equal(err.param, 'stop');
    }
    assert.equal(sentCount(), 0);
  });
});

describe('a Messages client with more than a target takes', () => {
  for (const [target, limit] of [['oai', 4], ['gem', 5]] as const) {
    test(`${target}: ${limit} pass, ${limit + 1} are a 400 naming stop_sequences; nothing sent`, async () => {
      reset();
      await anthropic.messages.create({ model: `${target}/test-model`, max_tokens: 50, messages: [{ role: 'user', content: 'Count to ten.' }], stop_sequences: seqs(limit) });
      assert.equal(sentCount(), 1);
      reset();
      const err = await anthropic.messages.create({ model: `${target}/test-model`, max_tokens: 50, messages: [{ role: 'user', content: 'Count to ten.' }], stop_sequences: seqs(limit + 1) }).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof Anthropic.BadRequestError, String(err));
      assert.equal((err.error as Rec).error.type, 'invalid_request_error');
      assert.match(err.message, new RegExp(`'stop_sequences': ${limit + 1} were given`));
      assert.equal(sentCount(), 0);
    });
  }

  test('Anthropic and Bedrock take 8', async () => {
    reset();
    for (const target of ['ant', 'bed']) {
      const r = await anthropic.messages.create({ model: `${target}/test-model`, max_tokens: 50, messages: [{ role: 'user', content: 'Count to ten.' }], stop_sequences: seqs(8) });
      assert.equal(r.type, 'message');
    }
    assert.deepEqual((ant.requests.at(-1)!.body as Rec).stop_sequences, seqs(8));
    assert.deepEqual((bed.requests.at(-1)!.body as Rec).inferenceConfig.stopSequences, seqs(8));
  });
});
