// Tests of the OpenAI mock upstream on the raw wire: shapes, tools, reasoning, caching, every
// fault kind and auth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI } from './mocks/openai.ts';
import { embeddingFor } from './mocks/openai-embeddings.ts';
import { call, parseSse, readAll, sseJson } from './mocks/client.ts';

const AUTH = { authorization: 'Bearer sk-test' };
type J = Record<string, any>;

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a place',
    parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location'] },
  },
};
const timeTool = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

test('openai mock: chat completions, streaming, tools, reasoning, caching', async (t) => {
  const mock = await startMockOpenAI();
  t.after(() => mock.close());
  const url = `${mock.url}/chat/completions`;

  await t.test('non-streaming reply echoes the last user message with usage and headers', async () => {
    const r = await call(url, { model: 'gpt-4o', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there, how are you today?' }] }, AUTH);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/);
    const b = r.json as J;
    assert.match(b.id, /^chatcmpl-/);
    assert.equal(b.object, 'chat.completion');
    assert.equal(b.model, 'gpt-4o');
    assert.equal(typeof b.created, 'number');
    assert.equal(b.choices[0].message.content, 'Echo: Hello there, how are you today?');
    assert.equal(b.choices[0].finish_reason, 'stop');
    const input = 'Be brief.\nHello there, how are you today?';
    assert.equal(b.usage.prompt_tokens, Math.ceil(input.length / 4));
    assert.equal(b.usage.completion_tokens, 7);
    assert.equal(b.usage.total_tokens, b.usage.prompt_tokens + 7);
    assert.equal(mock.requests.at(-1)?.headers.authorization, 'Bearer sk-test');
  });

  await t.test('streaming: role chunk, split content, finish chunk, usage chunk, [DONE]', async () => {
    const r = await call(url, { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'one two three four five' }] }, AUTH);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = parseSse(r.text);
    assert.equal(events.at(-1)?.data, '[DONE]');
    const chunks = sseJson(r.text) as J[];
    assert.equal(chunks[0]!.choices[0].delta.role, 'assistant');
    const content = chunks.filter((c) => c.choices.length > 0).map((c) => c.choices[0].delta.content ?? '').join('');
    assert.equal(content, 'Echo: one two three four five');
    assert.ok(chunks.filter((c) => c.choices[0]?.delta.content).length >= 3);
    assert.equal(chunks.at(-2)!.choices[0].finish_reason, 'stop');
    assert.deepEqual(chunks.at(-1)!.choices, []);
    assert.equal(chunks.at(-1)!.usage.completion_tokens, 6);
    assert.equal(chunks[0]!.usage, null);
    const plain = await call(url, { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }, AUTH);
    assert.ok(sseJson(plain.text).every((c) => !('usage' in c)));
  });

  await t.test('tool call from the word "weather", arguments from the schema', async () => {
    const r = await call(url, { model: 'gpt-4o', tools: [weatherTool], messages: [{ role: 'user', content: 'What is the weather?' }] }, AUTH);
    const c = (r.json as J).choices[0];
    assert.equal(c.finish_reason, 'tool_calls');
    assert.equal(c.message.content, null);
    assert.match(c.message.tool_calls[0].id, /^call_[A-Za-z0-9]{24}$/);
    assert.equal(c.message.tool_calls[0].function.name, 'get_weather');
    assert.deepEqual(JSON.parse(c.message.tool_calls[0].function.arguments), { location: 'Paris', unit: 'celsius' });
  });

  await t.test('forced tool_choice, "both" gives two parallel calls, streamed argument deltas', async () => {
    const forced = await call(url, { model: 'gpt-4o', tools: [weatherTool, timeTool], tool_choice: { type: 'function', function: { name: 'get_time' } }, messages: [{ role: 'user', content: 'hi' }] }, AUTH);
    assert.equal((forced.json as J).choices[0].message.tool_calls[0].function.name, 'get_time');
    const r = await call(url, { model: 'gpt-4o', stream: true, tools: [weatherTool, timeTool], messages: [{ role: 'user', content: 'weather and time, both please' }] }, AUTH);
    const chunks = sseJson(r.text) as J[];
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const args = [0, 1].map((i) => deltas.filter((d: J) => d.index === i).map((d: J) => d.function.arguments).join(''));
    assert.deepEqual(JSON.parse(args[0]!), { location: 'Paris', unit: 'celsius' });
    assert.deepEqual(JSON.parse(args[1]!), { city: 'London' });
    assert.ok(deltas.filter((d: J) => d.index === 0).length >= 3);
    assert.equal(chunks.at(-1)!.choices[0].finish_reason, 'tool_calls');
  });

  await t.test('a tool result yields text mentioning it', async () => {
    const r = await call(url, { model: 'gpt-4o', tools: [weatherTool], messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '21C and sunny' },
    ] }, AUTH);
    assert.equal((r.json as J).choices[0].message.content, 'The tool returned: 21C and sunny');
  });

  await t.test('reasoning_effort reports reasoning tokens; stop and max_tokens', async () => {
    const r = await call(url, { model: 'o3-mini', reasoning_effort: 'low', messages: [{ role: 'user', content: 'a b' }] }, AUTH);
    const u = (r.json as J).usage;
    assert.equal(u.completion_tokens_details.reasoning_tokens, 16);
    assert.equal(u.completion_tokens, 3 + 16);
    const s = await call(url, { model: 'gpt-4o', stop: ['three'], messages: [{ role: 'user', content: 'one two three four' }] }, AUTH);
    assert.equal((s.json as J).choices[0].message.content, 'Echo: one two ');
    assert.equal((s.json as J).choices[0].finish_reason, 'stop');
    const m = await call(url, { model: 'gpt-4o', max_tokens: 2, messages: [{ role: 'user', content: 'one two three four' }] }, AUTH);
    assert.equal((m.json as J).choices[0].message.content, 'Echo: one');
    assert.equal((m.json as J).choices[0].finish_reason, 'length');
  });

  await t.test('automatic caching: a repeated long prefix reports cached tokens in 128 steps', async () => {
    const long = 'lorem ipsum dolor sit amet '.repeat(200);
    const body = (q: string) => ({ model: 'gpt-4o', messages: [{ role: 'system', content: long }, { role: 'user', content: q }] });
    const first = (await call(url, body('first'), AUTH)).json as J;
    assert.equal(first.usage.prompt_tokens_details.cached_tokens, 0);
    const second = (await call(url, body('second'), AUTH)).json as J;
    const cached = second.usage.prompt_tokens_details.cached_tokens;
    assert.ok(cached >= 1024 && cached % 128 === 0 && cached <= second.usage.prompt_tokens, `cached ${cached}`);
    const short = (await call(url, { model: 'gpt-4o', messages: [{ role: 'user', content: 'short' }] }, AUTH)).json as J;
    await call(url, { model: 'gpt-4o', messages: [{ role: 'user', content: 'short' }] }, AUTH);
    assert.equal(short.usage.prompt_tokens_details.cached_tokens, 0);
  });

  await t.test('embeddings and models', async () => {
    const e = (await call(`${mock.url}/embeddings`, { model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 8 }, AUTH)).json as J;
    assert.equal(e.object, 'list');
    assert.equal(e.data.length, 2);
    assert.equal(e.data[1].index, 1);
    assert.deepEqual(e.data[0].embedding, embeddingFor('a', 8));
    assert.equal(e.usage.prompt_tokens, 2);
    const m = await call(`${mock.url}/models`, undefined, AUTH, 'GET');
    assert.ok(((m.json as J).data as J[]).some((x) => x.id === 'gpt-4o' && x.object === 'model'));
  });
});

test('openai mock: faults and auth', async (t) => {
  const mock = await startMockOpenAI({ apiKey: 'sk-right' });
  t.after(() => mock.close());
  const url = `${mock.url}/chat/completions`;
  const ok = { authorization: 'Bearer sk-right' };
  const req = (stream = false) => ({ model: 'gpt-4o', stream, messages: [{ role: 'user', content: 'one two three four five six' }] });

  await t.test('auth: missing and wrong keys get 401 in OpenAI shape', async () => {
    const missing = await call(url, req(), {});
    assert.equal(missing.status, 401);
    assert.equal((missing.json as J).error.type, 'invalid_request_error');
    const wrong = await call(url, req(), { authorization: 'Bearer sk-wrong' });
    assert.equal(wrong.status, 401);
    assert.equal((wrong.json as J).error.code, 'invalid_api_key');
  });

  await t.test('status faults, in order, with retry-after and custom body', async () => {
    mock.fault([{ status: 429, retryAfter: 2 }, { status: 503 }, { status: 400, body: { custom: true } }]);
    const a = await call(url, req(), ok);
    assert.equal(a.status, 429);
    assert.equal(a.headers.get('retry-after'), '2');
    assert.deepEqual((a.json as J).error, { message: 'Rate limit exceeded (injected fault).', type: 'requests', param: null, code: 'rate_limit_exceeded' });
    const b = await call(url, req(), ok);
    assert.equal(b.status, 503);
    assert.equal((b.json as J).error.type, 'server_error');
    assert.deepEqual((await call(url, req(), ok)).json, { custom: true });
    assert.equal((await call(url, req(), ok)).status, 200);
  });

  await t.test('delayFirstByteMs delays headers', async () => {
    mock.fault({ delayFirstByteMs: 200 });
    const start = Date.now();
    const r = await call(url, req(), ok);
    assert.equal(r.status, 200);
    assert.ok(Date.now() - start >= 190);
  });

  await t.test('disconnectAfterChunks cuts a stream after N events', async () => {
    mock.fault({ disconnectAfterChunks: 2 });
    const res = await fetch(url, { method: 'POST', headers: ok, body: JSON.stringify(req(true)) });
    assert.equal(res.status, 200);
    const { text, broken } = await readAll(res);
    assert.ok(broken);
    assert.equal(parseSse(text).length, 2);
  });

  await t.test('malformedSse sends an invalid data line; non-stream gets invalid JSON', async () => {
    mock.fault({ malformedSse: true });
    const r = await call(url, req(true), ok);
    const bad = parseSse(r.text).filter((e) => e.data !== '[DONE]' && !isJson(e.data));
    assert.equal(bad.length, 1);
    mock.fault({ malformedSse: true });
    const n = await call(url, req(false), ok);
    assert.equal(n.status, 200);
    assert.equal(n.json, undefined);
  });

  await t.test('hang never answers; resetConnection drops the socket', async () => {
    mock.fault({ hang: true });
    await assert.rejects(fetch(url, { method: 'POST', headers: ok, body: JSON.stringify(req()), signal: AbortSignal.timeout(300) }), /TimeoutError|aborted/i);
    mock.fault({ resetConnection: true });
    await assert.rejects(fetch(url, { method: 'POST', headers: ok, body: JSON.stringify(req()) }));
  });

  await t.test('stallAfterChunks stops a stream without closing it; string bodies go out raw', async () => {
    mock.fault({ stallAfterChunks: 2 });
    const ac = new AbortController();
    const res = await fetch(url, { method: 'POST', headers: ok, body: JSON.stringify(req(true)), signal: ac.signal });
    const reader = res.body!.getReader();
    let got = '';
    const timer = setTimeout(() => ac.abort(), 300);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        got += Buffer.from(value).toString();
      }
      assert.fail('a stalled stream must not end');
    } catch (e) {
      assert.equal((e as Error).name, 'AbortError');
    }
    clearTimeout(timer);
    assert.equal(parseSse(got).length, 2);
    mock.fault({ status: 502, body: '<html>Bad Gateway</html>' });
    const html = await call(url, req(), ok);
    assert.equal(html.status, 502);
    assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(html.text, '<html>Bad Gateway</html>');
  });

  await t.test('x-mock-fault header injects a fault without the queue', async () => {
    const r = await call(url, req(), { ...ok, 'x-mock-fault': JSON.stringify({ status: 500 }) });
    assert.equal(r.status, 500);
    assert.equal((await call(url, req(), ok)).status, 200);
    mock.reset();
    assert.equal(mock.requests.length, 0);
  });
});

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

test('openai mock: web search on the Responses API, refused as the API refuses it when malformed', async (t) => {
  const mock = await startMockOpenAI();
  t.after(() => mock.close());
  const url = `${mock.url}/responses`;
  // ResponseFunctionWebSearch (openai package): id, status and action are required; ids carry the ws_ prefix.
  const ws = { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'oslo', sources: [{ type: 'url', url: 'https://example.com' }] } };
  const turn = (item: J): J => ({ model: 'gpt-5', input: [{ role: 'user', content: 'weather?' }, item, { role: 'user', content: 'and tomorrow?' }], tools: [{ type: 'web_search' }] });
  assert.equal((await call(url, turn(ws), AUTH)).status, 200);
  for (const [item, message] of [
    [{ ...ws, action: undefined }, "Missing required parameter: 'input[1].action'."],
    [{ ...ws, id: 'msg_1' }, "Invalid 'input[].id': 'msg_1'. Expected an ID that begins with 'ws'."],
    [{ ...ws, status: 'done' }, /Invalid value: 'done'/],
    [{ ...ws, action: { type: 'find_in_page', url: 'https://example.com' } }, "Missing required parameter: 'input[1].action.pattern'."],
  ] as const) {
    const r = await call(url, turn(item), AUTH);
    assert.equal(r.status, 400, JSON.stringify(item));
    if (typeof message === 'string') assert.equal((r.json as J).error.message, message); else assert.match((r.json as J).error.message, message);
  }
  // A hosted tool forced (ToolChoiceTypes) must be offered; forced, it runs before the answer.
  const missing = await call(url, { model: 'gpt-5', input: 'x', tool_choice: { type: 'web_search_preview' } }, AUTH);
  assert.equal(missing.status, 400);
  assert.equal((missing.json as J).error.message, "Tool choice 'web_search_preview' not found in 'tools' parameter.");
  const forced = await call(url, { model: 'gpt-5', input: 'oslo weather', tools: [{ type: 'web_search_preview' }], tool_choice: { type: 'web_search_preview' } }, AUTH);
  assert.equal(forced.status, 200);
  assert.deepEqual((forced.json as J).output.map((o: J) => o.type), ['web_search_call', 'message']);
  assert.match((forced.json as J).output[0].id, /^ws_/);
});
