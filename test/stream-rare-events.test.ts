// Rare but documented upstream stream events, in every upstream wire format, read through the gateway by
// the official SDKs on all three client routes (chat completions, Responses, Messages), translated and
// same-format: Anthropic pings anywhere, an error event after content, block and delta types the codec
// does not model (server tools, citations, redacted thinking, a future type), the cache-write split, the
// newer stop reasons; OpenAI chunks without choices (Azure filters, the usage chunk), refusals, logprobs,
// obfuscation, interleaved tool calls; SSE framing at its edges (CR/CRLF, comments, `data:` without a
// space, events without data, multi-line data, UTF-8 split across writes, a 1 MB event); Gemini and
// Bedrock streams. Each answer must parse in the SDK's own stream helper (which checks event order), its
// text and tool arguments arrive exact, and the record bill what the upstream reported; a failed upstream
// must reach the client as an error, recorded partial and billed. Scripted by the raw upstream, so the
// bytes are exactly the providers' (shapes from the SDKs' stream event types).
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { startRawUpstream, sse, type RawUpstream, type Script } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import { eventFrame, encodeFrame } from './mocks/eventstream.ts';

type Json = Record<string, any>;
type Client = 'chat' | 'responses' | 'messages';
const CLIENTS: Client[] = ['chat', 'responses', 'messages'];

let up: RawUpstream; let gw: TestGateway; let openai: OpenAI; let anthropic: Anthropic;
const MODELS = [{ name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true, prompt_caching: true } }];

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: MODELS },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1`, models: MODELS },
      { id: 'ge', format: 'gemini', base_url: `${up.url}/v1beta`, models: MODELS },
      { id: 'br', format: 'bedrock-converse', base_url: up.url, models: MODELS },
    ],
    gateway: { upstream: { max_attempts: 1 } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw?.stop(); await up.close(); });
beforeEach(() => up.reset());

// ---- Reading an answer with the SDKs ----------------------------------------------------------------

const TOOLS = {
  chat: [['get_weather', 'city'], ['get_time', 'tz']].map(([name, p]) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { [p!]: { type: 'string' } } } } })),
  responses: [['get_weather', 'city'], ['get_time', 'tz']].map(([name, p]) => ({ type: 'function', name, strict: false, parameters: { type: 'object', properties: { [p!]: { type: 'string' } } } })),
  messages: [['get_weather', 'city'], ['get_time', 'tz']].map(([name, p]) => ({ name, input_schema: { type: 'object', properties: { [p!]: { type: 'string' } } } })),
};

/** The events as JSON lines, the form the SDKs' stream helpers read back (fromReadableStream). */
const replay = (events: Json[]): ReadableStream => new ReadableStream({
  start(c) { const e = new TextEncoder(); for (const ev of events) c.enqueue(e.encode(`${JSON.stringify(ev)}\n`)); c.close(); },
});

type Answer = {
  id: string; events: Json[]; error: unknown;
  /** The whole answer as the SDK's stream helper accumulated it (null when it threw: `helperError`). */
  final: Json | null; helperError: unknown;
  text: string; tools: Array<[string, unknown]>; stop: string | null;
};

async function ask(client: Client, model: string): Promise<Answer> {
  const tools = TOOLS[client];
  const { data, response } = client === 'chat'
    ? await openai.chat.completions.create({ model, stream: true, stream_options: { include_usage: true }, tools, messages: [{ role: 'user', content: 'hi' }] } as OpenAI.Chat.ChatCompletionCreateParamsStreaming).withResponse()
    : client === 'responses'
      ? await openai.responses.create({ model, stream: true, tools, input: 'hi' } as OpenAI.Responses.ResponseCreateParamsStreaming).withResponse()
      : await anthropic.messages.create({ model, stream: true, max_tokens: 100, tools, messages: [{ role: 'user', content: 'hi' }] } as Anthropic.MessageCreateParamsStreaming).withResponse();
  const events: Json[] = [];
  let error: unknown = null;
  try { for await (const e of data as AsyncIterable<Json>) events.push(e); } catch (e) { error = e; }
  let final: Json | null = null; let helperError: unknown = null;
  try {
    final = client === 'chat' ? await ChatCompletionStream.fromReadableStream(replay(events)).finalChatCompletion()
      : client === 'responses' ? await ResponseStream.fromReadableStream(replay(events)).finalResponse()
        : await MessageStream.fromReadableStream(replay(events)).finalMessage();
  } catch (e) { helperError = e; }
  const a: Answer = { id: response.headers.get('x-inference-id')!, events, error, final, helperError, text: '', tools: [], stop: null };
  if (client === 'chat') {
    a.text = events.map((e) => e.choices?.[0]?.delta?.content ?? '').join('');
    const m = final?.choices[0]?.message;
    a.tools = (m?.tool_calls ?? []).map((c: Json) => [c.function.name, JSON.parse(c.function.arguments)]);
    a.stop = final?.choices[0]?.finish_reason ?? null;
  } else if (client === 'responses') {
    a.text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    a.tools = (final?.output ?? []).filter((i: Json) => i.type === 'function_call').map((i: Json) => [i.name, JSON.parse(i.arguments)]);
    a.stop = final ? `${final.status}${final.incomplete_details ? `:${final.incomplete_details.reason}` : ''}` : null;
  } else {
    a.text = events.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'text_delta').map((e) => e.delta.text).join('');
    a.tools = (final?.content ?? []).filter((b: Json) => b.type === 'tool_use').map((b: Json) => [b.name, b.input]);
    a.stop = final?.stop_reason ?? null;
  }
  return a;
}

/** A whole answer: no error, the SDK's helper accepted every event, nothing left in flight. */
async function whole(a: Answer) {
  assert.equal(a.error, null, `the SDK threw: ${String(a.error)}`);
  assert.equal(a.helperError, null, `the SDK's stream helper threw: ${String(a.helperError)}`);
  assert.equal(await settled(gw), 0, 'nothing left in flight');
  const rec = await recordOf(gw, a.id);
  assert.equal(rec.partial ?? false, false);
  return rec;
}

/** A failed upstream: the client saw an error (thrown by the SDK), the record is partial and billed. */
async function failed(a: Answer, message: RegExp) {
  assert.match(String((a.error as Error | null)?.message ?? ''), message);
  assert.equal(await settled(gw), 0, 'nothing left in flight');
  const rec = await recordOf(gw, a.id);
  assert.equal(rec.partial, true);
  assert.ok(rec.inputTokens > 0 && rec.outputTokens > 0, `billed ${rec.inputTokens}/${rec.outputTokens}`);
  return rec;
}

// ---- Upstream streams ---------------------------------------------------------------------------------

const an = (data: Json): string => sse(data, data.type as string);
const anStart = (usage: Json = { input_tokens: 12, output_tokens: 1 }): string => an({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, stop_sequence: null, usage } });
const anOpen = (i: number, block: Json): string => an({ type: 'content_block_start', index: i, content_block: block });
const anDelta = (i: number, delta: Json): string => an({ type: 'content_block_delta', index: i, delta });
const anClose = (i: number): string => an({ type: 'content_block_stop', index: i });
const anText = (i: number, ...parts: string[]): string => anOpen(i, { type: 'text', text: '' }) + parts.map((text) => anDelta(i, { type: 'text_delta', text })).join('') + anClose(i);
const anTool = (i: number, id: string, name: string, parts: string[]): string => anOpen(i, { type: 'tool_use', id, name, input: {} }) + parts.map((partial_json) => anDelta(i, { type: 'input_json_delta', partial_json })).join('') + anClose(i);
const anEnd = (stop_reason: string, usage: Json = { output_tokens: 3 }): string => an({ type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage }) + an({ type: 'message_stop' });
const PING = 'event: ping\ndata: {"type": "ping"}\n\n';

const oa = (delta: Json, finish_reason: string | null = null, extra: Json = {}): string => sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt', choices: [{ index: 0, delta, logprobs: null, finish_reason }], ...extra });
const oaUsage = (p: number, c: number): string => sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt', choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } });
const DONE = 'data: [DONE]\n\n';

const ge = (parts: Json[], extra: Json = {}, usage?: Json): string => sse({ candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }], ...(usage ? { usageMetadata: usage } : {}), modelVersion: 'gemini-x', responseId: 'r1' });
/** Gemini 2.5's running usage: 20 prompt tokens (8 cached), 4 thought tokens. */
const GU = (out: number): Json => ({ promptTokenCount: 20, candidatesTokenCount: out, thoughtsTokenCount: 4, cachedContentTokenCount: 8, totalTokenCount: 24 + out });

const br = eventFrame;
const BEDROCK = { 'content-type': 'application/vnd.amazon.eventstream' };
const brException = (name: string, message: string): Buffer => encodeFrame({ ':exception-type': name, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify({ message }));

// ---- Anthropic ------------------------------------------------------------------------------------------

for (const client of CLIENTS) {
  test(`Anthropic -> ${client}: pings before, between and after every event`, async () => {
    up.push({ chunks: [PING, anStart(), PING, anOpen(0, { type: 'text', text: '' }), PING, anDelta(0, { type: 'text_delta', text: 'Hello' }), PING,
      anDelta(0, { type: 'text_delta', text: ' world' }), anClose(0), PING, anEnd('end_turn'), PING] });
    const a = await ask(client, 'an/test-model');
    assert.equal(a.text, 'Hello world');
    const rec = await whole(a);
    assert.deepEqual([rec.inputTokens, rec.outputTokens], [12, 3]);
  });

  test(`Anthropic -> ${client}: overloaded_error after content is an error the client sees, billed`, async () => {
    up.push({ chunks: [anStart(), anOpen(0, { type: 'text', text: '' }), anDelta(0, { type: 'text_delta', text: 'Hello there friend' }), an({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })] });
    const a = await ask(client, 'an/test-model');
    assert.equal(a.text, 'Hello there friend');
    const rec = await failed(a, /Overloaded/);
    assert.deepEqual([rec.inputTokens, rec.outputTokens], [12, 5]);
  });

  test(`Anthropic -> ${client}: thinking, redacted thinking, server tools, citations and a future block type`, async () => {
    up.push({ chunks: [anStart(),
      anOpen(0, { type: 'thinking', thinking: '', signature: '' }), anDelta(0, { type: 'thinking_delta', thinking: 'Hmm.' }), anDelta(0, { type: 'signature_delta', signature: 'EqQBsig' }), anClose(0),
      anOpen(1, { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' }), anClose(1),
      anOpen(2, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }), anDelta(2, { type: 'input_json_delta', partial_json: '{"query": "x"}' }), anClose(2),
      anOpen(3, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', title: 't', url: 'https://example.com', encrypted_content: 'x', page_age: null }] }), anClose(3),
      anOpen(4, { type: 'text', text: '', citations: [] }),
      anDelta(4, { type: 'citations_delta', citation: { type: 'web_search_result_location', cited_text: 'c', encrypted_index: 'e', title: 't', url: 'https://example.com' } }),
      anDelta(4, { type: 'text_delta', text: 'Cited text.' }), anClose(4),
      anOpen(5, { type: 'future_block', foo: 1 }), anDelta(5, { type: 'future_delta', bar: 2 }), anClose(5),
      an({ type: 'future_event', x: 1 }),
      anText(6, ' More.'),
      anEnd('end_turn', { output_tokens: 30, server_tool_use: { web_search_requests: 1 } })] });
    const a = await ask(client, 'an/test-model');
    assert.equal(a.text, 'Cited text. More.');
    assert.equal(a.error, null, String(a.error));
    // The Messages route relays the future block as Anthropic sent it, which the SDK's helper cannot know.
    if (client !== 'messages') assert.equal(a.helperError, null, String(a.helperError));
    assert.equal(await settled(gw), 0);
    const rec = await recordOf(gw, a.id);
    assert.deepEqual([rec.partial ?? false, rec.inputTokens, rec.outputTokens], [false, 12, 30]);
  });

  test(`Anthropic -> ${client}: cache reads and a 5m/1h write split are billed each at its price`, async () => {
    up.push({ chunks: [anStart({ input_tokens: 5, cache_creation_input_tokens: 300, cache_read_input_tokens: 1000, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 }, output_tokens: 1 }),
      anText(0, 'Hi'), anEnd('end_turn', { input_tokens: 5, cache_creation_input_tokens: 300, cache_read_input_tokens: 1000, output_tokens: 7 })] });
    const a = await ask(client, 'an/test-model');
    const rec = await whole(a);
    assert.deepEqual([rec.inputTokens, rec.outputTokens, rec.cacheReadTokens, rec.cacheWriteTokens], [5, 7, 1000, 300]);
    // 5 x 0.000001 + 7 x 0.000002 + 1000 x 0.0000001 + 100 x 0.00000125 + 200 x 0.000002
    assert.equal(rec.costUsd, '0.000644');
    if (client === 'chat') assert.deepEqual([a.final!.usage.prompt_tokens, a.final!.usage.prompt_tokens_details.cached_tokens], [1305, 1000]);
    if (client === 'responses') assert.deepEqual([a.final!.usage.input_tokens, a.final!.usage.input_tokens_details.cached_tokens], [1305, 1000]);
  });

  // What each stop reason becomes for each client; the Messages route relays Anthropic's own.
  const STOPS: Record<string, Record<Client, string>> = {
    pause_turn: { chat: 'stop', responses: 'completed', messages: 'pause_turn' },
    refusal: { chat: 'content_filter', responses: 'incomplete:content_filter', messages: 'refusal' },
    model_context_window_exceeded: { chat: 'length', responses: 'incomplete:max_output_tokens', messages: 'model_context_window_exceeded' },
  };
  for (const [stop, want] of Object.entries(STOPS)) {
    test(`Anthropic -> ${client}: stop_reason ${stop} is ${want[client]}`, async () => {
      up.push({ chunks: [anStart(), anText(0, 'Part'), anEnd(stop)] });
      const a = await ask(client, 'an/test-model');
      assert.equal(a.stop, want[client]);
      await whole(a);
    });
  }

  test(`Anthropic -> ${client}: tool input in pieces after an empty first delta, and a tool with no input`, async () => {
    up.push({ chunks: [anStart(), PING, anText(0, 'Checking.'), anTool(1, 'toolu_a', 'get_weather', ['', '{"city"', ': "Par', 'is"}']), anTool(2, 'toolu_b', 'get_time', ['']), anEnd('tool_use', { output_tokens: 20 })] });
    const a = await ask(client, 'an/test-model');
    assert.equal(a.text, 'Checking.');
    assert.deepEqual(a.tools, [['get_weather', { city: 'Paris' }], ['get_time', {}]]);
    assert.equal(a.stop, { chat: 'tool_calls', responses: 'completed', messages: 'tool_use' }[client]);
    const rec = await whole(a);
    assert.equal(rec.outputTokens, 20);
  });

  test(`Anthropic -> ${client}: a stream that ends without message_stop is an error, billed`, async () => {
    up.push({ chunks: [anStart(), anOpen(0, { type: 'text', text: '' }), anDelta(0, { type: 'text_delta', text: 'Hello cut' })] });
    const a = await ask(client, 'an/test-model');
    assert.equal(a.text, 'Hello cut');
    await failed(a, /ended before/);
  });
}

// ---- OpenAI chat ----------------------------------------------------------------------------------------

const AZURE_PROMPT_FILTER = sse({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }] });
const AZURE_FILTER = sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt', choices: [{ index: 0, delta: {}, finish_reason: null, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }] });
const OPENAI: Array<{ name: string; chunks: string[]; text: string; tools?: Array<[string, unknown]>; usage: [number, number]; stop: Record<Client, string> }> = [
  { name: 'Azure prompt and content filter chunks (one without choices)', chunks: [AZURE_PROMPT_FILTER, oa({ role: 'assistant', content: '' }), oa({ content: 'Hello' }), AZURE_FILTER, oa({ content: ' world' }), oa({}, 'stop'), AZURE_FILTER, oaUsage(9, 2), DONE],
    text: 'Hello world', usage: [9, 2], stop: { chat: 'stop', responses: 'completed', messages: 'end_turn' } },
  { name: 'refusal deltas', chunks: [oa({ role: 'assistant', content: null, refusal: '' }), oa({ refusal: "I can't" }), oa({ refusal: ' help.' }), oa({}, 'stop'), oaUsage(9, 3), DONE],
    text: '', usage: [9, 3], stop: { chat: 'stop', responses: 'incomplete:content_filter', messages: 'refusal' } },
  { name: 'logprobs and obfuscation', chunks: [oa({ role: 'assistant', content: '' }, null, { obfuscation: 'abc' }),
    sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt', obfuscation: 'xy', choices: [{ index: 0, delta: { content: 'Hi' }, logprobs: { content: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [] }], refusal: null }, finish_reason: null }] }),
    oa({}, 'stop', { obfuscation: 'q' }), oaUsage(9, 1), DONE], text: 'Hi', usage: [9, 1], stop: { chat: 'stop', responses: 'completed', messages: 'end_turn' } },
  { name: 'two tool calls interleaved by index', chunks: [oa({ role: 'assistant', content: null }),
    oa({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
    oa({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
    oa({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }), oa({ tool_calls: [{ index: 1, function: { arguments: '{"tz":"UTC"' } }] }),
    oa({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }), oa({ tool_calls: [{ index: 1, function: { arguments: '}' } }] }),
    oa({}, 'tool_calls'), oaUsage(9, 12), DONE], text: '', tools: [['get_weather', { city: 'Paris' }], ['get_time', { tz: 'UTC' }]], usage: [9, 12],
    stop: { chat: 'tool_calls', responses: 'completed', messages: 'tool_use' } },
  { name: 'no role chunk, id and name in the first tool delta only, finish_reason in a chunk with arguments', chunks: [oa({ content: 'Let me check.' }),
    oa({ tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }),
    oa({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] }, 'tool_calls'), oaUsage(9, 8), DONE],
    text: 'Let me check.', tools: [['get_weather', { city: 'Oslo' }]], usage: [9, 8], stop: { chat: 'tool_calls', responses: 'completed', messages: 'tool_use' } },
  { name: 'finish_reason in a chunk with content', chunks: [oa({ role: 'assistant', content: 'All' }), oa({ content: ' done' }, 'stop'), oaUsage(9, 2), DONE],
    text: 'All done', usage: [9, 2], stop: { chat: 'stop', responses: 'completed', messages: 'end_turn' } },
];

for (const client of CLIENTS) {
  for (const c of OPENAI) {
    test(`OpenAI -> ${client}: ${c.name}`, async () => {
      up.push({ chunks: c.chunks });
      const a = await ask(client, 'oa/test-model');
      const rec = await whole(a);
      if (c.name === 'refusal deltas') {
        const refusal = client === 'chat' ? a.final!.choices[0].message.refusal : client === 'messages' ? a.final!.content[0].text : a.final!.output[0].content[0].text;
        assert.equal(refusal, "I can't help.");
      } else assert.equal(a.text, c.text);
      assert.deepEqual(a.tools, c.tools ?? []);
      assert.equal(a.stop, c.stop[client]);
      assert.deepEqual([rec.inputTokens, rec.outputTokens], c.usage);
    });
  }

  test(`OpenAI -> ${client}: a stream cut before its finish reason is an error, billed`, async () => {
    up.push({ chunks: [oa({ role: 'assistant', content: '' }), oa({ content: 'Hello cut off' })] });
    const a = await ask(client, 'oa/test-model');
    assert.equal(a.text, 'Hello cut off');
    await failed(a, /ended before completion/);
  });

  test(`OpenAI -> ${client}: a stream closed after its usage chunk, without [DONE], is whole`, async () => {
    up.push({ chunks: [oa({ role: 'assistant', content: '' }), oa({ content: 'Hello' }), oa({}, 'stop'), oaUsage(9, 1)] });
    const a = await ask(client, 'oa/test-model');
    assert.equal(a.text, 'Hello');
    const rec = await whole(a);
    assert.deepEqual([rec.inputTokens, rec.outputTokens], [9, 1]);
  });
}

// ---- SSE framing --------------------------------------------------------------------------------------

const TEXTS = ['Grüße, ', '世界 😀', ' done'];
const BIG = ['é'.repeat(300_000) + '😀'.repeat(100_000) + 'x'.repeat(100_000), ' end']; // one 1.1 MB event
const anStream = (texts: string[]): string => anStart() + anText(0, ...texts) + anEnd('end_turn');
const oaStream = (texts: string[]): string => oa({ role: 'assistant', content: '' }) + texts.map((content) => oa({ content })).join('') + oa({}, 'stop') + oaUsage(9, 3) + DONE;
const pieces = (s: string, n: number): Buffer[] => { const b = Buffer.from(s); const out: Buffer[] = []; for (let i = 0; i < b.length; i += n) out.push(b.subarray(i, i + n)); return out; };
const FRAMINGS: Array<[string, (s: string) => Script['chunks'], string[]?]> = [
  ['CRLF line ends', (s) => [s.replace(/\n/g, '\r\n')]],
  ['CR line ends', (s) => [s.replace(/\n/g, '\r')]],
  ['comment lines', (s) => [`: hello\n\n${s.replace(/\n\n/g, '\n: keep-alive\n\n:\n\n')}`]],
  ['data: without a space', (s) => [s.replace(/data: /g, 'data:')]],
  ['event lines without data', (s) => [`event: ping\n\n${s.replace(/\n\n/g, '\n\nevent: content_block_delta\n\n')}`]],
  ['multi-line data', (s) => [s.replace(/data: (\{.*\})\n/g, (_m, j: string) => `data: ${j.replace(/,"/g, ',\ndata: "')}\n`)]],
  ['one byte per write (UTF-8 split)', (s) => pieces(s, 1)],
  ['three bytes per write, CRLF split', (s) => pieces(s.replace(/\n/g, '\r\n'), 3)],
  ['a 1 MB event in 64 KB writes', (s) => pieces(s, 65536), BIG],
];
for (const from of ['an', 'oa'] as const) {
  for (const client of CLIENTS) {
    for (const [name, frame, texts = TEXTS] of FRAMINGS) {
      test(`SSE ${name}: ${from === 'an' ? 'Anthropic' : 'OpenAI'} -> ${client}`, async () => {
        up.push({ chunks: frame(from === 'an' ? anStream(texts) : oaStream(texts)) });
        const a = await ask(client, `${from}/test-model`);
        assert.equal(a.text, texts.join(''));
        const rec = await whole(a);
        assert.deepEqual([rec.inputTokens, rec.outputTokens], [from === 'an' ? 12 : 9, 3]);
      });
    }
  }
}

// ---- Gemini and Bedrock ---------------------------------------------------------------------------------

for (const client of CLIENTS) {
  test(`Gemini -> ${client}: running usage, thoughts, a signature on text, a finish chunk without content`, async () => {
    up.push({ chunks: [ge([{ text: 'thinking...', thought: true }], {}, GU(0)), ge([{ text: 'Ans', thoughtSignature: 'c2lnbmF0dXJl' }], {}, GU(1)), ge([{ text: 'wer.' }], {}, GU(2)),
      sse({ candidates: [{ finishReason: 'STOP', index: 0 }], usageMetadata: GU(3), modelVersion: 'gemini-x', responseId: 'r1' })] });
    const a = await ask(client, 'ge/test-model');
    assert.equal(a.text, 'Answer.');
    const rec = await whole(a);
    assert.deepEqual([rec.inputTokens, rec.cacheReadTokens, rec.outputTokens, rec.reasoningTokens], [12, 8, 7, 4]);
  });

  test(`Gemini -> ${client}: function calls arrive whole, two in one chunk`, async () => {
    up.push({ chunks: [ge([{ text: 'Checking.' }], {}, GU(1)), ge([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }], { finishReason: 'STOP' }, GU(16))] });
    const a = await ask(client, 'ge/test-model');
    assert.equal(a.text, 'Checking.');
    assert.deepEqual(a.tools, [['get_weather', { city: 'Paris' }], ['get_time', {}]]);
    await whole(a);
  });

  test(`Bedrock -> ${client}: reasoning, a citation delta, tool input in pieces, cache usage in metadata`, async () => {
    up.push({ headers: BEDROCK, chunks: [br('messageStart', { role: 'assistant' }),
      br('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Think.' } } }), br('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig' } } }), br('contentBlockStop', { contentBlockIndex: 0 }),
      br('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Hello' } }), br('contentBlockDelta', { contentBlockIndex: 1, delta: { citation: { title: 'x' } } }), br('contentBlockDelta', { contentBlockIndex: 1, delta: { text: ' there' } }), br('contentBlockStop', { contentBlockIndex: 1 }),
      br('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_a', name: 'get_weather' } } }),
      br('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city"' } } }), br('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: ': "Paris"}' } } }), br('contentBlockStop', { contentBlockIndex: 2 }),
      br('messageStop', { stopReason: 'tool_use' }),
      br('metadata', { usage: { inputTokens: 30, outputTokens: 6, totalTokens: 36, cacheReadInputTokens: 100, cacheWriteInputTokens: 50 }, metrics: { latencyMs: 100 } })] });
    const a = await ask(client, 'br/test-model');
    assert.equal(a.text, 'Hello there');
    assert.deepEqual(a.tools, [['get_weather', { city: 'Paris' }]]);
    const rec = await whole(a);
    assert.deepEqual([rec.inputTokens, rec.outputTokens, rec.cacheReadTokens, rec.cacheWriteTokens], [30, 6, 100, 50]);
  });

  test(`Bedrock -> ${client}: an exception after content is an error, billed`, async () => {
    up.push({ headers: BEDROCK, chunks: [br('messageStart', { role: 'assistant' }), br('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello there' } }), brException('modelStreamErrorException', 'Model stream error')] });
    const a = await ask(client, 'br/test-model');
    assert.equal(a.text, 'Hello there');
    await failed(a, /Model stream error/);
  });

  test(`Bedrock -> ${client}: a stream closed before messageStop is an error, billed`, async () => {
    up.push({ headers: BEDROCK, chunks: [br('messageStart', { role: 'assistant' }), br('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello there' } })] });
    const a = await ask(client, 'br/test-model');
    await failed(a, /ended before messageStop/);
  });
}
