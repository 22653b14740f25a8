// Router mode with an ask only an OpenAI chat-completions server answers (log probabilities, an audio
// answer, web search, legacy functions): the translators refuse such a request with a 400 naming the
// field (src/workers/convert-core.ts, CanonicalRequest.native_only), so the router keeps it to the
// candidates that speak chat completions natively (capability:native_chat), the others excluded with
// the field named; with none of those among the candidates it is the router's 400 naming the
// constraint, no upstream called. Before, the router chose a translated candidate as it would without
// the ask, and that attempt ended the request in a 400. A Responses request asking for log
// probabilities is held to the native Responses candidates the same way.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
let oai: MockUpstream; let ant: MockUpstream; let gw: TestGateway; let client: OpenAI;
const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const model = (name: string, prompt: string, completion: string) => ({ name, pricing: { prompt, completion }, capabilities: caps, context_window: 64000, max_completion_tokens: 4000 });

before(async () => {
  [oai, ant] = await Promise.all([startMockOpenAI(), startMockAnthropic()]);
  gw = await startTestGateway({
    providers: [
      // The cheapest candidate is reached by translation; the chat-completions one costs 20x more.
      { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models: [model('chat-1', '0.000002', '0.000004')] },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [model('cheap-1', '0.0000001', '0.0000002')] },
    ],
    gateway: {
      reload: { watch: false },
      router: { exploration: { share: 0 }, affinity: { enabled: false }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
    },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw?.stop(); await Promise.all([oai?.close(), ant?.close()]); });

const ALL = ['chat-1', 'cheap-1'];
const routed = (p: Rec): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming => ({ model: 'router', messages: [{ role: 'user', content: 'Say hi' }], ...p }) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
const reset = (): void => { oai.reset(); ant.reset(); };

test('log probabilities asked: routed to the chat-completions candidate, the cheaper translated one excluded naming the field', async () => {
  reset();
  // Cost first (a tiny W): without the ask the translated ant/cheap-1 is chosen (the control below).
  const { data: r, response: http } = await client.chat.completions.create(routed({ models: ALL, willingness_to_pay: 1e-12, logprobs: true, top_logprobs: 2 })).withResponse();
  assert.equal(r.model, 'oai/chat-1');
  assert.equal(http.headers.get('x-router-model'), 'oai/chat-1');
  assert.match(http.headers.get('x-router-excluded') ?? '', /capability:native_chat=1/);
  assert.equal((oai.requests.at(-1)!.body as Rec).logprobs, true, 'the ask reaches the upstream as sent');
  assert.equal(ant.requests.length, 0);
  const plain = await client.chat.completions.create(routed({ models: ALL, willingness_to_pay: 1e-12 }));
  assert.equal(plain.model, 'ant/cheap-1');
});

test('the dry run shows the exclusion and its reason; an audio answer and web search are held the same way', async () => {
  for (const ask of [{ logprobs: true }, { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }, { web_search_options: {} }]) {
    const res = await fetch(`${gw.url}/v1/router/rank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ models: ALL, messages: [{ role: 'user', content: 'hi' }], ...ask }) });
    assert.equal(res.status, 200);
    const j = await res.json() as Rec;
    assert.deepEqual(j.excluded_by, { 'capability:native_chat': 1 }, JSON.stringify(ask));
    const out = j.candidates.find((c: Rec) => c.id === 'ant/cheap-1');
    assert.equal(out.excluded.constraint, 'capability:native_chat');
    assert.match(out.excluded.reason, /only an OpenAI chat-completions server answers/);
    assert.match(out.excluded.reason, new RegExp(`'${Object.keys(ask)[0]}'`));
  }
});

test('only translated candidates: the router\'s 400 names capability:native_chat, no upstream called', async () => {
  reset();
  await assert.rejects(client.chat.completions.create(routed({ models: ['cheap-1'], logprobs: true })), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.match(e.message, /capability:native_chat excluded 1: ant\/cheap-1 \(the request asks for 'logprobs', which only an OpenAI chat-completions server answers/);
    return true;
  });
  assert.equal(oai.requests.length + ant.requests.length, 0);
});

test('a Responses request asking for log probabilities goes to the native Responses candidate', async () => {
  reset();
  const r = await client.responses.create({ model: 'router', models: ALL, willingness_to_pay: 1e-12, input: 'Say hi', top_logprobs: 2 } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
  assert.equal(r.model, 'oai/chat-1');
  assert.equal(oai.requests.at(-1)!.path, '/v1/responses');
  assert.equal(ant.requests.length, 0);
});
