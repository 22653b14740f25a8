// The official SDKs in router mode with requests that need a capability: an image (vision), an OpenAI
// json_schema response_format (structured output, parsed by the SDK's parse()), Anthropic extended
// thinking (reasoning, `thinking: { type: 'enabled', budget_tokens }`). The cheapest candidates lack
// the capability (and their mock upstreams refuse such requests as the real APIs do: gpt-3.5-turbo
// images and json_schema, claude-3-5 thinking), so a router that ignored the need would fail here;
// the answer must come from a capable model and parse in the SDK. With no capable candidate: a 400 in
// the route's envelope naming the constraint, and no upstream call.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockOpenAI, startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
const caps = (o: Rec = {}) => ({ tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false, ...o });
const model = (name: string, prompt: string, completion: string, c: Rec) => ({ name, pricing: { prompt, completion }, capabilities: caps(c), context_window: 128000, max_completion_tokens: 8000 });
// A 1x1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const JSON_ANSWER = '{"city":"Paris","temperature_c":21}';
const WEATHER_SCHEMA = { type: 'object', properties: { city: { type: 'string' }, temperature_c: { type: 'number' } }, required: ['city', 'temperature_c'], additionalProperties: false };

let oa: MockUpstream; let an: MockUpstream; let gw: TestGateway; let openai: OpenAI; let anthropic: Anthropic;
const EVERY = ['gpt-3.5-turbo', 'claude-3-5-haiku-20241022', 'gpt-4o', 'claude-sonnet-4-5'];
const INCAPABLE = ['gpt-3.5-turbo', 'claude-3-5-haiku-20241022'];

before(async () => {
  const reply = (t: string) => (t.includes('as JSON') ? JSON_ANSWER : `Echo: ${t.slice(0, 40)}`);
  oa = await startMockOpenAI({ reply });
  an = await startMockAnthropic({ reply });
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: oa.url, models: [
        model('gpt-3.5-turbo', '0.0000001', '0.0000002', {}),
        model('gpt-4o', '0.000001', '0.000002', { vision: true, structured_output: true }),
      ] },
      { id: 'an', format: 'anthropic-messages', base_url: an.url, models: [
        model('claude-3-5-haiku-20241022', '0.0000002', '0.0000004', {}),
        model('claude-sonnet-4-5', '0.000003', '0.000015', { vision: true, structured_output: true, reasoning: true }),
        model('claude-sonnet-4-6', '0.000004', '0.00002', { vision: true, structured_output: true, reasoning: true }),
      ] },
    ],
    gateway: { router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-none', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-none', maxRetries: 0 });
});
after(async () => { await gw?.stop(); await oa?.close(); await an?.close(); });

/** Which upstream models were called since `mark` (mock request bodies' model). */
const calledSince = (mark: [number, number]): string[] => [...oa.requests.slice(mark[0]), ...an.requests.slice(mark[1])].map((r) => String((r.body as Rec).model));
const mark = (): [number, number] => [oa.requests.length, an.requests.length];
const cheapFirst = { willingness_to_pay: 1e-9 };

test('the mocks refuse what the real APIs refuse: images and json_schema on gpt-3.5-turbo, thinking on claude-3-5', async () => {
  const named = (m: string, body: Rec) => openai.chat.completions.create({ model: m, messages: [{ role: 'user', content: 'hi' }], ...body } as never);
  await assert.rejects(named('oa/gpt-3.5-turbo', { messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }] }),
    (e: unknown) => e instanceof OpenAI.APIError && e.status === 400 && /image_url is only supported by certain models/.test(e.message));
  await assert.rejects(named('oa/gpt-3.5-turbo', { response_format: { type: 'json_schema', json_schema: { name: 'w', schema: WEATHER_SCHEMA, strict: true } } }),
    (e: unknown) => e instanceof OpenAI.APIError && e.status === 400 && /json_schema' is not supported/.test(e.message));
  await assert.rejects(anthropic.messages.create({ model: 'an/claude-3-5-haiku-20241022', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi' }] }),
    (e: unknown) => e instanceof Anthropic.APIError && e.status === 400 && /does not support thinking/.test(e.message));
});

test('openai SDK, image input: the router picks a vision model (streamed or not); the cheaper text-only ones are never called', async () => {
  const m = mark();
  const messages = [{ role: 'user', content: [{ type: 'text', text: 'what is in this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }];
  const res = await openai.chat.completions.create({ model: 'router', messages, models: EVERY, ...cheapFirst } as never) as OpenAI.ChatCompletion;
  assert.equal(res.model, 'oa/gpt-4o', 'the cheapest vision model');
  assert.match(res.choices[0]!.message.content!, /^Echo: what is in this picture/);
  const stream = await openai.chat.completions.create({ model: 'router', stream: true, messages, models: EVERY, ...cheapFirst } as never) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
  let text = ''; let served = '';
  for await (const ch of stream) { served = ch.model; text += ch.choices[0]?.delta?.content ?? ''; }
  assert.equal(served, 'oa/gpt-4o');
  assert.match(text, /^Echo: what is in this picture/);
  // The Anthropic side of the catalog only: its vision model.
  const a = await anthropic.messages.create({ model: 'router', max_tokens: 256, messages: [{ role: 'user', content: [{ type: 'text', text: 'describe it' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }], models: ['claude-3-5-haiku-20241022', 'claude-sonnet-4-5'], ...cheapFirst } as never);
  assert.equal(a.model, 'an/claude-sonnet-4-5');
  assert.equal(a.content[0]!.type, 'text');
  const called = calledSince(m);
  assert.deepEqual(called.filter((x) => INCAPABLE.includes(x)), [], `called: ${called.join(', ')}`);
  assert.equal(called.length, 3);
});

test('openai SDK, json_schema response_format: only structured-output models, and parse() returns the object', async () => {
  const m = mark();
  const res = await openai.chat.completions.parse({
    model: 'router', messages: [{ role: 'user', content: 'Give the weather in Paris as JSON' }],
    response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: WEATHER_SCHEMA, strict: true } },
    models: EVERY, ...cheapFirst,
  } as never) as OpenAI.Chat.Completions.ParsedChatCompletion<{ city: string; temperature_c: number }>;
  assert.equal(res.model, 'oa/gpt-4o');
  assert.deepEqual(res.choices[0]!.message.parsed, { city: 'Paris', temperature_c: 21 });
  assert.deepEqual((oa.requests.at(-1)!.body as Rec).response_format.type, 'json_schema', 'the schema reaches the upstream');
  // Only the Anthropic models: the structured one, through the translation, parsed the same way.
  const a = await openai.chat.completions.parse({
    model: 'router', messages: [{ role: 'user', content: 'Give the weather in Paris as JSON' }],
    response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: WEATHER_SCHEMA, strict: true } },
    models: ['claude-3-5-haiku-20241022', 'claude-sonnet-4-5'], ...cheapFirst,
  } as never) as OpenAI.Chat.Completions.ParsedChatCompletion<{ city: string; temperature_c: number }>;
  assert.equal(a.model, 'an/claude-sonnet-4-5');
  assert.deepEqual(a.choices[0]!.message.parsed, { city: 'Paris', temperature_c: 21 });
  // Streamed, through the SDK's stream helper: parsed at the end the same way.
  const streamed = await openai.chat.completions.stream({
    model: 'router', messages: [{ role: 'user', content: 'Give the weather in Paris as JSON' }],
    response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: WEATHER_SCHEMA, strict: true } },
    models: EVERY, ...cheapFirst,
  } as never).finalChatCompletion() as unknown as OpenAI.Chat.Completions.ParsedChatCompletion<{ city: string; temperature_c: number }>;
  assert.equal(streamed.model, 'oa/gpt-4o');
  assert.deepEqual(streamed.choices[0]!.message.parsed, { city: 'Paris', temperature_c: 21 });
  // The Anthropic SDK's structured output (output_config.format) is the same need: an OpenAI target gets it as response_format.
  const am = await anthropic.messages.create({ model: 'router', max_tokens: 256, messages: [{ role: 'user', content: 'Give the weather in Paris as JSON' }],
    output_config: { format: { type: 'json_schema', schema: WEATHER_SCHEMA } }, models: EVERY, ...cheapFirst } as never) as Anthropic.Message;
  assert.equal(am.model, 'oa/gpt-4o');
  assert.deepEqual(JSON.parse((am.content[0] as Anthropic.TextBlock).text), { city: 'Paris', temperature_c: 21 });
  assert.equal((oa.requests.at(-1)!.body as Rec).response_format.type, 'json_schema');
  const called = calledSince(m);
  assert.deepEqual(called.filter((x) => INCAPABLE.includes(x)), [], `called: ${called.join(', ')}`);
});

test('openai SDK, Responses route: an image goes to a vision model, a json_schema text format to a structured one, parsed by responses.parse()', async () => {
  const m = mark();
  const img = await openai.responses.create({ model: 'router', input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is in this picture?' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' }] }],
    models: EVERY, ...cheapFirst, store: false } as never) as OpenAI.Responses.Response;
  assert.equal(img.model, 'oa/gpt-4o');
  assert.match(img.output_text, /^Echo: what is in this picture/);
  const parsed = await openai.responses.parse({ model: 'router', input: 'Give the weather in Paris as JSON',
    text: { format: { type: 'json_schema', name: 'weather', schema: WEATHER_SCHEMA, strict: true } }, models: EVERY, ...cheapFirst, store: false } as never) as OpenAI.Responses.ParsedResponse<{ city: string; temperature_c: number }>;
  assert.equal(parsed.model, 'oa/gpt-4o');
  assert.deepEqual(parsed.output_parsed, { city: 'Paris', temperature_c: 21 });
  const called = calledSince(m);
  assert.deepEqual(called.filter((x) => INCAPABLE.includes(x)), [], `called: ${called.join(', ')}`);
  // No capable candidate: the router's 400 in the Responses (OpenAI) envelope.
  await assert.rejects(openai.responses.create({ model: 'router', input: 'hi', reasoning: { effort: 'low' }, models: INCAPABLE, store: false } as never), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.equal(e.code, 'no_route');
    assert.match(e.message, /capability:reasoning excluded 2/);
    return true;
  });
});

test('anthropic SDK, extended thinking: only reasoning models; the SDK reads the thinking and text blocks (streamed or not)', async () => {
  const m = mark();
  const body = { model: 'router', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'Why is the sky blue?' }], models: EVERY, ...cheapFirst };
  const res = await anthropic.messages.create(body as never) as Anthropic.Message;
  assert.equal(res.model, 'an/claude-sonnet-4-5');
  assert.deepEqual(res.content.map((b) => b.type), ['thinking', 'text']);
  assert.match((res.content[0] as Anthropic.ThinkingBlock).thinking, /step by step/);
  assert.ok((res.content[0] as Anthropic.ThinkingBlock).signature);
  assert.equal((an.requests.at(-1)!.body as Rec).thinking.budget_tokens, 1024);
  const final = await anthropic.messages.stream(body as never).finalMessage();
  assert.equal(final.model, 'an/claude-sonnet-4-5');
  assert.deepEqual(final.content.map((b) => b.type), ['thinking', 'text']);
  const called = calledSince(m);
  assert.deepEqual(called.filter((x) => x !== 'claude-sonnet-4-5'), [], `called: ${called.join(', ')}`);
});

test('adaptive thinking needs a reasoning model as enabled thinking does; disabled thinking needs none', async () => {
  const m = mark();
  // Adaptive thinking (Claude 4.6): before, only `enabled` counted as a need, so the cheapest model won and the thinking was dropped.
  const res = await anthropic.messages.create({ model: 'router', max_tokens: 2048, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'Why is the sky blue?' }],
    models: ['claude-3-5-haiku-20241022', 'claude-sonnet-4-6'], ...cheapFirst } as never) as Anthropic.Message;
  assert.equal(res.model, 'an/claude-sonnet-4-6');
  assert.deepEqual(res.content.map((b) => b.type), ['thinking', 'text']);
  assert.deepEqual((an.requests.at(-1)!.body as Rec).thinking, { type: 'adaptive' });
  // Thinking disabled asks for no reasoning: a model that does not reason qualifies.
  const off = await anthropic.messages.create({ model: 'router', max_tokens: 256, thinking: { type: 'disabled' }, messages: [{ role: 'user', content: 'hi' }], models: INCAPABLE, ...cheapFirst } as never) as Anthropic.Message;
  assert.equal(off.model, 'oa/gpt-3.5-turbo');
  assert.deepEqual(calledSince(m).sort(), ['claude-sonnet-4-6', 'gpt-3.5-turbo']);
});

// A one-page PDF, base64: a document a model without image input cannot read.
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 3 3]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n').toString('base64');
const pdfTurn = [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } }, { type: 'text', text: 'summarise it' }] }];

test('a PDF document needs a model that reads images: the cheaper one without them is passed over', async () => {
  const m = mark();
  const res = await anthropic.messages.create({ model: 'router', max_tokens: 256, messages: pdfTurn, models: ['claude-3-5-haiku-20241022', 'claude-sonnet-4-5'], ...cheapFirst } as never) as Anthropic.Message;
  assert.equal(res.model, 'an/claude-sonnet-4-5');
  assert.deepEqual(calledSince(m), ['claude-sonnet-4-5']);
});

test('no candidate has the capability: a 400 in the route\'s envelope naming the constraint, and no upstream call', async () => {
  const m = mark();
  const image = [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }];
  const openaiNoRoute = (body: Rec, constraint: string) => assert.rejects(openai.chat.completions.create({ model: 'router', messages: [{ role: 'user', content: 'hi as JSON' }], models: INCAPABLE, ...body } as never), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.equal(e.status, 400);
    assert.equal(e.code, 'no_route');
    assert.equal(e.param, 'model');
    assert.match(e.message, new RegExp(`${constraint} excluded 2: an/claude-3-5-haiku-20241022|${constraint} excluded 2: oa/gpt-3.5-turbo`));
    return true;
  });
  await openaiNoRoute({ messages: image }, 'capability:vision');
  await openaiNoRoute({ response_format: { type: 'json_schema', json_schema: { name: 'w', schema: WEATHER_SCHEMA, strict: true } } }, 'capability:json_schema');
  await openaiNoRoute({ reasoning_effort: 'low' }, 'capability:reasoning');
  const anthropicNoRoute = (body: Rec, constraint: string) => assert.rejects(anthropic.messages.create({ model: 'router', max_tokens: 2048, messages: [{ role: 'user', content: 'hi' }], models: INCAPABLE, ...body } as never), (e: unknown) => {
    assert.ok(e instanceof Anthropic.BadRequestError, String(e));
    assert.equal(e.status, 400);
    const env = e.error as Rec;
    assert.equal(env.type, 'error', 'the Anthropic envelope');
    assert.equal(env.error.type, 'invalid_request_error');
    assert.match(env.error.message, new RegExp(`${constraint} excluded 2`));
    return true;
  });
  await anthropicNoRoute({ thinking: { type: 'enabled', budget_tokens: 1024 } }, 'capability:reasoning');
  await anthropicNoRoute({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }, { type: 'text', text: 'what is it' }] }] }, 'capability:vision');
  await anthropicNoRoute({ messages: pdfTurn }, 'capability:vision');
  assert.deepEqual(calledSince(m), [], 'no upstream call');
});
