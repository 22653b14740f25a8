// Reasoning signatures crossing providers (src/formats/signatures.ts), end to end through the gateway
// with mocks as strict as the real APIs: each issues its own signatures (Gemini per model) and refuses
// any other (Anthropic "Invalid `signature`", Gemini "Corrupted thought signature."), and Gemini 3
// refuses a current-turn function call without one. Covered: the official `openai` SDK's tool loop on
// Gemini 3 (the signature rides on the tool call as extra_content.google.thought_signature); a
// conversation moving between Anthropic and Gemini either way, for Messages, Chat and Responses
// clients; one moving between two Gemini models; same-format relays left byte for byte as they were;
// and the router falling back mid-conversation to another provider.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { signatureFor, signatureIssuer } from './mocks/text.ts';
import { startTestGateway, TEST_PRICING, type TestGateway, type TestProvider } from './helpers/gateway.ts';

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const caps = { tools: true, vision: true, reasoning: true, structured_output: true, prompt_caching: true };
const model = (name: string) => ({ name, pricing: TEST_PRICING, capabilities: caps, max_completion_tokens: 64000, context_window: 1000000 });
const GEMINI_A = 'gemini-3-pro-preview';
const GEMINI_B = 'gemini-3.5-flash';
const DUMMY = 'skip_thought_signature_validator';

let anthropic: MockUpstream; let gemini: MockUpstream; let bedrock: MockUpstream; let chat: MockUpstream; let gw: TestGateway; let openai: OpenAI; let claude: Anthropic;

before(async () => {
  anthropic = await startMockAnthropic();
  gemini = await startMockGemini();
  bedrock = await startMockBedrock();
  chat = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [
      { id: 'anthropic', format: 'anthropic-messages', base_url: anthropic.url, models: [model('claude-opus-4-8')] },
      { id: 'google', format: 'gemini', base_url: gemini.url, models: [model(GEMINI_A), model(GEMINI_B)] },
      // A Chat Completions provider: relays an OpenAI client's body as it is.
      { id: 'chat', format: 'openai-chat', base_url: chat.url, models: [model('gpt-5.1')] },
      { id: 'bedrock', format: 'bedrock-converse', base_url: bedrock.url, models: [{ ...model('claude-opus-4-8'), upstream: 'anthropic.claude-opus-4-8-v1:0' }] },
    ],
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  claude = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw?.stop(); await anthropic?.close(); await gemini?.close(); await bedrock?.close(); await chat?.close(); });

const weatherSchema = { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] };
const anthropicTools = [{ name: 'get_weather', description: 'Weather for a city', input_schema: weatherSchema }];
const chatTools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weatherSchema } }];
const ASK = 'What is the weather in Paris? Use the tool.';

async function post(path: string, body: unknown): Promise<{ status: number; json: Rec; text: string; adjustments: string }> {
  const r = await fetch(gw.url + path, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body),
  });
  const text = await r.text();
  let json: Rec = {};
  try { json = JSON.parse(text) as Rec; } catch { /* a stream */ }
  return { status: r.status, json, text, adjustments: r.headers.get('x-gateway-adjustments') ?? '' };
}
const messages = (body: Rec) => post('/v1/messages', { max_tokens: 4096, tools: anthropicTools, ...body });

/** The Gemini request's model contents and the signatures on their parts. */
const geminiSent = (): Rec[] => (gemini.requests.at(-1)!.body as Rec).contents.filter((c: Rec) => c.role === 'model');
const firstCall = (c: Rec): Rec => c.parts.find((p: Rec) => p.functionCall);

describe('(a) the official openai SDK tool loop on a Gemini 3 model', () => {
  test('not streamed: the call comes back with its signature and turn 2 succeeds', async () => {
    gemini.reset();
    const history: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: ASK }];
    const first = await openai.chat.completions.create({ model: `google/${GEMINI_A}`, messages: history, tools: chatTools });
    const msg = first.choices[0]!.message;
    const call = msg.tool_calls![0]! as Rec;
    history.push(msg, { role: 'tool', tool_call_id: call.id, content: '18 degrees' });
    const second = await openai.chat.completions.create({ model: `google/${GEMINI_A}`, messages: history, tools: chatTools });
    assert.match(second.choices[0]!.message.content ?? '', /The tool returned: .*18 degrees/);
    const sig = call.extra_content?.google?.thought_signature as string;
    assert.match(sig, /^gwsig1:gemini:gemini-3-pro-preview:/, 'Google\'s OpenAI-compatible place, marked with its model');
    // The model's own signature went back on the function call, unwrapped.
    assert.equal(signatureIssuer(firstCall(geminiSent()[0]!).thoughtSignature), `gemini:${GEMINI_A}`);
  });

  test('streamed: the signature rides on the tool call delta and turn 2 succeeds', async () => {
    gemini.reset();
    const history: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: ASK }];
    const stream = await openai.chat.completions.create({ model: `google/${GEMINI_A}`, messages: history, tools: chatTools, stream: true });
    const calls: Rec[] = [];
    for await (const chunk of stream) {
      for (const d of chunk.choices[0]?.delta.tool_calls ?? []) {
        const c = calls[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
        if (d.id) c.id = d.id;
        if (d.function?.name) c.function.name += d.function.name;
        if (d.function?.arguments) c.function.arguments += d.function.arguments;
        const extra = (d as Rec).extra_content;
        if (extra) c.extra_content = extra;
      }
    }
    assert.equal(calls.length, 1);
    history.push({ role: 'assistant', content: null, tool_calls: calls as OpenAI.ChatCompletionMessageToolCall[] }, { role: 'tool', tool_call_id: calls[0]!.id, content: '18 degrees' });
    const again = await openai.chat.completions.create({ model: `google/${GEMINI_A}`, messages: history, tools: chatTools, stream: true });
    let text = '';
    for await (const chunk of again) text += chunk.choices[0]?.delta.content ?? '';
    assert.match(text, /The tool returned: .*18 degrees/);
    assert.match(calls[0]!.extra_content?.google?.thought_signature ?? '', /^gwsig1:gemini:gemini-3-pro-preview:/);
    assert.equal(signatureIssuer(firstCall(geminiSent()[0]!).thoughtSignature), `gemini:${GEMINI_A}`);
  });

  test('continued on a Chat Completions provider (a relayed body): the marked signature is not relayed', async () => {
    const history: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: ASK }];
    const first = await openai.chat.completions.create({ model: `google/${GEMINI_A}`, messages: history, tools: chatTools });
    const msg = first.choices[0]!.message;
    history.push(msg, { role: 'tool', tool_call_id: msg.tool_calls![0]!.id, content: '18 degrees' });
    chat.reset();
    const r = await post('/v1/chat/completions', { model: 'chat/gpt-5.1', messages: history, tools: chatTools });
    assert.equal(r.status, 200, r.text);
    const sent = chat.requests.at(-1)!.body as Rec;
    assert.equal(JSON.stringify(sent).includes('gwsig1'), false, 'the gateway\'s mark stays with the gateway');
    assert.equal(sent.messages[1].tool_calls[0].extra_content, undefined);
    assert.match(r.adjustments, /thinking=dropped\(1 block signed by another model\)/);
    // A raw signature (the provider's own, as Google's OpenAI-compatible endpoint gives it) is relayed as it is.
    const raw = structuredClone(history) as Rec[];
    raw[1]!.tool_calls[0].extra_content = { google: { thought_signature: 'cmF3' } };
    const again = await post('/v1/chat/completions', { model: 'chat/gpt-5.1', messages: raw, tools: chatTools });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual((chat.requests.at(-1)!.body as Rec).messages, raw);
  });

  test('a client that drops the signature (or a hand-built history): Google\'s dummy, reported', async () => {
    gemini.reset();
    const r = await post('/v1/chat/completions', {
      model: `google/${GEMINI_A}`, tools: chatTools, messages: [
        { role: 'user', content: ASK },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '18 degrees' },
      ],
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(firstCall(geminiSent()[0]!).thoughtSignature, DUMMY);
    assert.match(r.adjustments, /thoughtSignature=skip_thought_signature_validator\(1 function call turn without a signature of this model\)/);
  });
});

/** An Anthropic-format turn 1 (thinking on, a tool call) on `m`, and the follow-up history with the tool result. */
async function anthropicTurn1(m: string, stream = false): Promise<Rec[]> {
  const history: Rec[] = [{ role: 'user', content: ASK }];
  const body = { model: m, max_tokens: 4096, tools: anthropicTools, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: history } as const;
  let content: Rec[];
  if (stream) content = (await claude.messages.stream(body as Anthropic.MessageCreateParamsStreaming).finalMessage()).content as Rec[];
  else {
    const r = await messages(body);
    assert.equal(r.status, 200, r.text);
    content = r.json.content;
  }
  const call = content.find((b: Rec) => b.type === 'tool_use')!;
  return [...history, { role: 'assistant', content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18 degrees' }] }];
}

describe('(b) an Anthropic-format conversation answered by Gemini, continued on Anthropic', () => {
  for (const stream of [false, true]) {
    test(`turn 2 succeeds, the Gemini thinking dropped and reported${stream ? ' (both turns streamed, turn 1 through the Anthropic SDK)' : ''}`, async () => {
      const history = await anthropicTurn1(`google/${GEMINI_A}`, stream);
      anthropic.reset();
      const r = await messages({ model: 'anthropic/claude-opus-4-8', stream, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: history });
      assert.equal(r.status, 200, r.text);
      const signed = history[1]!.content.filter((b: Rec) => b.type === 'thinking');
      assert.ok(signed.length > 0);
      for (const b of signed) assert.match(b.signature, /^gwsig1:gemini:gemini-3-pro-preview:/, 'a converted answer\'s signature names its signer');
      assert.match(r.text, /"stop_reason":"end_turn"/);
      assert.match(r.adjustments, /thinking=dropped\(\d blocks? signed by another model\)/);
      assert.match(r.adjustments, /thinking=dropped\(history has tool calls without signed thinking\)/);
      const sent = anthropic.requests.at(-1)!.body as Rec;
      assert.equal(sent.messages[1].content.some((b: Rec) => b.type === 'thinking'), false);
      assert.equal(sent.thinking, undefined);
    });
  }
});

describe('(c) a conversation answered by Anthropic, continued on Gemini 3 with its tool calls', () => {
  test('Anthropic-format client: Claude\'s thinking dropped, the function call gets Google\'s dummy', async () => {
    const history = await anthropicTurn1('anthropic/claude-opus-4-8');
    assert.equal(signatureIssuer(history[1]!.content[0].signature), 'anthropic', 'Anthropic to an Anthropic client: raw');
    gemini.reset();
    const r = await messages({ model: `google/${GEMINI_A}`, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: history });
    assert.equal(r.status, 200, r.text);
    const [turn] = geminiSent();
    assert.equal(turn!.parts.some((p: Rec) => p.thought === true), false, 'Claude\'s thinking is not sent to Gemini');
    assert.equal(firstCall(turn!).thoughtSignature, DUMMY);
    assert.match(r.adjustments, /thinking=dropped\(1 block signed by another model\)/);
  });

  test('OpenAI-format client (no signatures at all): turn 2 on Gemini 3 succeeds', async () => {
    const history: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: ASK }];
    const first = await openai.chat.completions.create({ model: 'anthropic/claude-opus-4-8', messages: history, tools: chatTools, reasoning_effort: 'low' });
    const msg = first.choices[0]!.message;
    history.push(msg, { role: 'tool', tool_call_id: msg.tool_calls![0]!.id, content: '18 degrees' });
    const second = await openai.chat.completions.create({ model: `google/${GEMINI_A}`, messages: history, tools: chatTools });
    assert.match(second.choices[0]!.message.content ?? '', /The tool returned/);
  });
});

describe('Claude on Bedrock signs as Claude on Anthropic does', () => {
  test('Bedrock to Anthropic: the signature is kept (one family), raw to an Anthropic client', async () => {
    const history = await anthropicTurn1('bedrock/claude-opus-4-8');
    assert.equal(signatureIssuer(history[1]!.content[0].signature), 'anthropic');
    anthropic.reset();
    const r = await messages({ model: 'anthropic/claude-opus-4-8', thinking: { type: 'enabled', budget_tokens: 2048 }, messages: history });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.adjustments, '');
    assert.deepEqual((anthropic.requests.at(-1)!.body as Rec).messages, history);
  });

  test('Gemini to Bedrock: the Gemini thinking dropped, reported', async () => {
    const history = await anthropicTurn1(`google/${GEMINI_A}`);
    const r = await messages({ model: 'bedrock/claude-opus-4-8', thinking: { type: 'enabled', budget_tokens: 2048 }, messages: history });
    assert.equal(r.status, 200, r.text);
    assert.match(r.adjustments, /thinking=dropped\(2 blocks signed by another model\)/);
  });
});

/** A Responses turn 1 (reasoning, a tool call) on `m`, and the input of turn 2 with the tool output. */
async function responsesTurn1(m: string): Promise<Rec[]> {
  const input: Rec[] = [{ role: 'user', content: ASK }];
  const r = await post('/v1/responses', { model: m, input, tools: [{ type: 'function', name: 'get_weather', parameters: weatherSchema }], reasoning: { effort: 'low' }, store: false });
  assert.equal(r.status, 200, r.text);
  const call = r.json.output.find((o: Rec) => o.type === 'function_call');
  assert.ok(r.json.output.some((o: Rec) => o.type === 'reasoning'), 'a reasoning item to give back');
  return [...input, ...r.json.output, { type: 'function_call_output', call_id: call.call_id, output: '18 degrees' }];
}
const responses = (m: string, input: Rec[]) => post('/v1/responses', { model: m, input, tools: [{ type: 'function', name: 'get_weather', parameters: weatherSchema }], reasoning: { effort: 'low' }, store: false });

describe('(d) a Responses client moving between providers and models', () => {
  test('turn 1 on Anthropic, turn 2 on Gemini 3', async () => {
    const input = await responsesTurn1('anthropic/claude-opus-4-8');
    gemini.reset();
    const r = await responses(`google/${GEMINI_A}`, input);
    assert.equal(r.status, 200, r.text);
    assert.equal(firstCall(geminiSent()[0]!).thoughtSignature, DUMMY);
  });

  test('turn 1 on one Gemini model, turn 2 on another; on the same model the signature goes back', async () => {
    const input = await responsesTurn1(`google/${GEMINI_A}`);
    gemini.reset();
    const r = await responses(`google/${GEMINI_B}`, input);
    assert.equal(r.status, 200, r.text);
    const [turn] = geminiSent();
    assert.equal(firstCall(turn!).thoughtSignature, DUMMY, 'model A\'s signature is not model B\'s');
    assert.equal(turn!.parts.some((p: Rec) => p.thought === true), false);
    const same = await responses(`google/${GEMINI_A}`, input);
    assert.equal(same.status, 200, same.text);
    assert.equal(signatureIssuer(firstCall(geminiSent()[0]!).thoughtSignature), `gemini:${GEMINI_A}`);
  });

  test('streamed turn 1 on Gemini: the reasoning item carries the signature marked; turn 2 on another model', async () => {
    const input: Rec[] = [{ role: 'user', content: ASK }];
    const r = await post('/v1/responses', { model: `google/${GEMINI_A}`, input, tools: [{ type: 'function', name: 'get_weather', parameters: weatherSchema }], reasoning: { effort: 'low' }, store: false, stream: true });
    assert.equal(r.status, 200, r.text);
    const done = r.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Rec).find((e) => e.type === 'response.completed')!;
    const output = done.response.output as Rec[];
    const reasoning = output.filter((o) => o.type === 'reasoning');
    assert.ok(reasoning.length > 0);
    for (const item of reasoning) {
      const packed = JSON.parse(Buffer.from(String(item.encrypted_content).slice('gwr1.'.length), 'base64url').toString('utf8')) as Rec;
      assert.match(packed.s, /^gwsig1:gemini:gemini-3-pro-preview:/);
    }
    const call = output.find((o) => o.type === 'function_call')!;
    gemini.reset();
    const next = await responses(`google/${GEMINI_B}`, [...input, ...output, { type: 'function_call_output', call_id: call.call_id, output: '18 degrees' }]);
    assert.equal(next.status, 200, next.text);
    assert.equal(firstCall(geminiSent()[0]!).thoughtSignature, DUMMY);
  });

  test('turn 1 on Gemini, turn 2 on Anthropic (thinking on): Gemini\'s reasoning dropped', async () => {
    const input = await responsesTurn1(`google/${GEMINI_A}`);
    anthropic.reset();
    const r = await responses('anthropic/claude-opus-4-8', input);
    assert.equal(r.status, 200, r.text);
    assert.match(r.adjustments, /signed by another model/);
  });
});

describe('(e) same-format relays stay byte for byte', () => {
  test('Anthropic to Anthropic: the signature reaches the client raw and goes back untouched', async () => {
    const history = await anthropicTurn1('anthropic/claude-opus-4-8');
    const thinking = history[1]!.content[0];
    assert.equal(thinking.signature, signatureFor(thinking.thinking, 'anthropic'));
    anthropic.reset();
    const body = { model: 'anthropic/claude-opus-4-8', max_tokens: 4096, tools: anthropicTools, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: history };
    const r = await messages(body);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.adjustments, '');
    const sent = anthropic.requests.at(-1)!.body as Rec;
    assert.deepEqual(sent.messages, history);
    assert.equal(JSON.stringify(sent).includes('gwsig1'), false);
  });
});

describe('(f) router: a conversation moved by fallback to another provider', () => {
  let rgw: TestGateway;
  before(async () => {
    const providers: TestProvider[] = [
      // Gemini is the cheaper: the router tries it first.
      { id: 'google', format: 'gemini', base_url: gemini.url, models: [{ ...model(GEMINI_A), pricing: { prompt: '0.0000001', completion: '0.0000002' } }] },
      { id: 'anthropic', format: 'anthropic-messages', base_url: anthropic.url, models: [{ ...model('claude-opus-4-8'), pricing: { prompt: '0.00001', completion: '0.00005' } }] },
    ];
    rgw = await startTestGateway({
      providers,
      gateway: {
        reload: { watch: false },
        upstream: { max_attempts: 3, retry_budget_floor: 1000, ejection: { consecutive_failures: 1, base_ms: 400, max_ms: 400 } },
        router: {
          exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 },
          // `extra.prefer` names the provider to rank first, so a test knows which one the fallback leaves.
          default_policy: 'steer',
          policies: { steer: ['google', 'anthropic'].map((p) => ({ when: { '==': [{ var: 'extra.prefer' }, p] }, prefer: { '==': [{ var: 'candidate.provider' }, p] }, weight: 1 })) },
        },
      },
    });
  });
  after(async () => { await rgw?.stop(); });

  const routed = async (body: Rec) => {
    const r = await fetch(`${rgw.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'router', max_tokens: 4096, tools: anthropicTools, thinking: { type: 'enabled', budget_tokens: 2048 }, ...body }),
    });
    return { status: r.status, text: await r.text(), adjustments: r.headers.get('x-gateway-adjustments') ?? '' };
  };

  // Turn 1 is answered by one provider (the router restricted to it by `models`); for turn 2 the router
  // ranks that provider first, it answers 503, and the attempt falls back to the other one, with the
  // first one's signed thinking in the history.
  for (const [first, label] of [[`google/${GEMINI_A}`, 'Gemini to Anthropic'], ['anthropic/claude-opus-4-8', 'Anthropic to Gemini']] as const) {
    test(`${label}: turn 2 falls back from the 503 and succeeds`, async () => {
      gemini.reset(); anthropic.reset();
      const [picked, other] = first.startsWith('google/') ? [gemini, anthropic] : [anthropic, gemini];
      const history: Rec[] = [{ role: 'user', content: ASK }];
      const one = await routed({ models: [first], messages: history });
      assert.equal(one.status, 200, one.text);
      assert.equal(picked.requests.length, 1);
      const content = JSON.parse(one.text).content as Rec[];
      assert.ok(content.some((b) => b.type === 'thinking' && b.signature !== ''), 'turn 1 has signed thinking');
      const call = content.find((b) => b.type === 'tool_use')!;
      history.push({ role: 'assistant', content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18 degrees' }] });
      picked.fault([{ status: 503 }, { status: 503 }, { status: 503 }]);
      try {
        const two = await routed({ extra: { prefer: picked === gemini ? 'google' : 'anthropic' }, messages: history });
        assert.equal(two.status, 200, two.text);
        assert.equal(other.requests.length, 1, 'turn 2 answered by the other provider');
        assert.equal(picked.requests.length, 2, 'turn 2 tried the first provider first, and fell back');
        assert.match(two.text, /The tool returned/);
        assert.match(two.adjustments, /signed by another model/);
      } finally { picked.reset(); }
    });
  }
});
