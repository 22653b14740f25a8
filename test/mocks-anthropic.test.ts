// Tests of the Anthropic mock upstream: raw Messages wire shapes, SSE event order, tool_use,
// thinking, cache breakpoints, faults, auth, and @anthropic-ai/sdk pointed straight at it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startMockAnthropic } from './mocks/anthropic.ts';
import { call, parseSse, readAll } from './mocks/client.ts';

const H = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
type J = Record<string, any>;
const weather = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } };
const time = { name: 'get_time', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };
const user = (text: string) => [{ role: 'user', content: text }];

test('anthropic mock: messages, streaming, tools, thinking, caching', async (t) => {
  const mock = await startMockAnthropic();
  t.after(() => mock.close());
  const url = `${mock.url}/messages`;

  await t.test('non-streaming reply with ids, usage and request-id', async () => {
    const r = await call(url, { model: 'claude-sonnet-5-5', max_tokens: 100, system: 'Be brief.', messages: user('Hello Claude, nice day') }, H);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('request-id') ?? '', /^req_011C/);
    const b = r.json as J;
    assert.match(b.id, /^msg_01[A-Za-z0-9]{22}$/);
    assert.equal(b.type, 'message');
    assert.equal(b.model, 'claude-sonnet-5-5');
    assert.deepEqual(b.content, [{ type: 'text', text: 'Echo: Hello Claude, nice day' }]);
    assert.equal(b.stop_reason, 'end_turn');
    assert.equal(b.stop_sequence, null);
    assert.equal(b.usage.input_tokens, Math.ceil('Be brief.\nHello Claude, nice day'.length / 4));
    assert.equal(b.usage.output_tokens, 5);
    assert.equal(b.usage.cache_read_input_tokens, 0);
  });

  await t.test('streaming: the full event sequence with event: lines', async () => {
    const r = await call(url, { model: 'claude-sonnet-5-5', max_tokens: 100, stream: true, messages: user('one two three four') }, H);
    const events = parseSse(r.text);
    const names = events.map((e) => e.event);
    assert.deepEqual(names.slice(0, 3), ['message_start', 'content_block_start', 'ping']);
    assert.deepEqual(names.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    for (const e of events) assert.equal(JSON.parse(e.data).type, e.event);
    const text = events.filter((e) => e.event === 'content_block_delta').map((e) => JSON.parse(e.data).delta.text).join('');
    assert.equal(text, 'Echo: one two three four');
    assert.ok(names.filter((n) => n === 'content_block_delta').length >= 3);
    const delta = JSON.parse(events.at(-2)!.data);
    assert.equal(delta.delta.stop_reason, 'end_turn');
    assert.equal(delta.usage.output_tokens, 5);
  });

  await t.test('tool_use from "weather", forced tool, "both", input_json_delta', async () => {
    const r = (await call(url, { model: 'claude-sonnet-5-5', max_tokens: 100, tools: [weather], messages: user('weather please') }, H)).json as J;
    assert.equal(r.stop_reason, 'tool_use');
    assert.match(r.content[0].id, /^toolu_01/);
    assert.deepEqual(r.content[0].input, { location: 'Paris' });
    const f = (await call(url, { model: 'claude-sonnet-5-5', max_tokens: 100, tools: [weather, time], tool_choice: { type: 'tool', name: 'get_time' }, messages: user('hi') }, H)).json as J;
    assert.equal(f.content[0].name, 'get_time');
    const s = await call(url, { model: 'claude-sonnet-5-5', max_tokens: 100, stream: true, tools: [weather, time], messages: user('both tools') }, H);
    const ev = parseSse(s.text).map((e) => JSON.parse(e.data) as J);
    const json = [0, 1].map((i) => ev.filter((e) => e.type === 'content_block_delta' && e.index === i).map((e) => e.delta.partial_json).join(''));
    assert.deepEqual(JSON.parse(json[0]!), { location: 'Paris' });
    assert.deepEqual(JSON.parse(json[1]!), { city: 'London' });
  });

  await t.test('tool_result gets a text reply mentioning it', async () => {
    const r = (await call(url, { model: 'claude-sonnet-5-5', max_tokens: 100, tools: [weather], messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny 21C' }] },
    ] }, H)).json as J;
    assert.equal(r.content[0].text, 'The tool returned: sunny 21C');
  });

  await t.test('thinking block with signature, streamed as thinking_delta + signature_delta', async () => {
    const body = { model: 'claude-sonnet-5-5', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: user('why is the sky blue') };
    const r = (await call(url, body, H)).json as J;
    assert.equal(r.content[0].type, 'thinking');
    assert.ok(r.content[0].signature.length > 20);
    assert.equal(r.content[1].type, 'text');
    const s = await call(url, { ...body, stream: true }, H);
    const deltas = parseSse(s.text).map((e) => JSON.parse(e.data) as J).filter((e) => e.type === 'content_block_delta' && e.index === 0);
    assert.equal(deltas.at(-1)!.delta.type, 'signature_delta');
    assert.equal(deltas.at(-1)!.delta.signature, r.content[0].signature);
    assert.equal(deltas.slice(0, -1).map((d) => d.delta.thinking).join(''), r.content[0].thinking);
  });

  await t.test('stop_sequences and max_tokens', async () => {
    const s = (await call(url, { model: 'claude-sonnet-5-5', max_tokens: 100, stop_sequences: ['three'], messages: user('one two three') }, H)).json as J;
    assert.equal(s.stop_reason, 'stop_sequence');
    assert.equal(s.stop_sequence, 'three');
    assert.equal(s.content[0].text, 'Echo: one two ');
    const m = (await call(url, { model: 'claude-sonnet-5-5', max_tokens: 2, messages: user('one two three') }, H)).json as J;
    assert.equal(m.stop_reason, 'max_tokens');
    assert.equal(m.content[0].text, 'Echo: one');
  });

  await t.test('cache_control: write on first sight, read on repeat, nothing below the minimum', async () => {
    const long = 'lorem ipsum dolor sit amet '.repeat(200);
    const body = (q: string, ttl?: string) => ({ model: 'claude-sonnet-5-5', max_tokens: 50,
      system: [{ type: 'text', text: long, cache_control: ttl ? { type: 'ephemeral', ttl } : { type: 'ephemeral' } }], messages: user(q) });
    const first = ((await call(url, body('first'), H)).json as J).usage;
    const prefix = Math.ceil(long.length / 4);
    assert.equal(first.cache_creation_input_tokens, prefix);
    assert.equal(first.cache_creation.ephemeral_5m_input_tokens, prefix);
    assert.equal(first.cache_read_input_tokens, 0);
    const second = ((await call(url, body('second'), H)).json as J).usage;
    assert.equal(second.cache_read_input_tokens, prefix);
    assert.equal(second.cache_creation_input_tokens, 0);
    assert.equal(second.input_tokens, Math.ceil(`${long}\nsecond`.length / 4) - prefix);
    const hour = ((await call(url, { ...body('x', '1h'), model: 'claude-opus-5-5' }, H)).json as J).usage;
    assert.equal(hour.cache_creation.ephemeral_1h_input_tokens, prefix);
    const haiku = ((await call(url, { ...body('x'), model: 'claude-haiku-4-5' }, H)).json as J).usage;
    assert.equal(haiku.cache_creation_input_tokens, 0, 'haiku needs 2048 tokens');
  });
});

test('anthropic mock: faults and auth', async (t) => {
  const mock = await startMockAnthropic({ apiKey: 'sk-ant-right' });
  t.after(() => mock.close());
  const url = `${mock.url}/messages`;
  const ok = { ...H, 'x-api-key': 'sk-ant-right' };
  const body = (stream = false) => ({ model: 'claude-sonnet-5-5', max_tokens: 100, stream, messages: user('one two three four five') });

  await t.test('auth failures in Anthropic shape', async () => {
    const missing = await call(url, body(), { 'anthropic-version': '2023-06-01' });
    assert.equal(missing.status, 401);
    assert.equal((missing.json as J).type, 'error');
    assert.equal((missing.json as J).error.type, 'authentication_error');
    assert.equal((missing.json as J).request_id, missing.headers.get('request-id'));
    assert.equal((await call(url, body(), { ...H, 'x-api-key': 'nope' })).status, 401);
    assert.equal((await call(url, body(), { 'x-api-key': 'sk-ant-right' })).status, 400);
  });

  await t.test('529 overloaded and 429 with retry-after', async () => {
    mock.fault([{ status: 529 }, { status: 429, retryAfter: 3 }]);
    const a = await call(url, body(), ok);
    assert.equal(a.status, 529);
    assert.equal((a.json as J).error.type, 'overloaded_error');
    const b = await call(url, body(), ok);
    assert.equal(b.status, 429);
    assert.equal(b.headers.get('retry-after'), '3');
    assert.equal((b.json as J).error.type, 'rate_limit_error');
  });

  await t.test('delay, disconnect, malformed, hang, reset, header fault', async () => {
    mock.fault({ delayFirstByteMs: 150 });
    const t0 = Date.now();
    assert.equal((await call(url, body(), ok)).status, 200);
    assert.ok(Date.now() - t0 >= 140);
    mock.fault({ disconnectAfterChunks: 3 });
    const cut = await readAll(await fetch(url, { method: 'POST', headers: ok, body: JSON.stringify(body(true)) }));
    assert.ok(cut.broken);
    assert.equal(parseSse(cut.text).length, 3);
    mock.fault({ malformedSse: true });
    const bad = parseSse((await call(url, body(true), ok)).text).filter((e) => { try { JSON.parse(e.data); return false; } catch { return true; } });
    assert.equal(bad.length, 1);
    mock.fault({ hang: true });
    await assert.rejects(fetch(url, { method: 'POST', headers: ok, body: JSON.stringify(body()), signal: AbortSignal.timeout(200) }));
    mock.fault({ resetConnection: true });
    await assert.rejects(fetch(url, { method: 'POST', headers: ok, body: JSON.stringify(body()) }));
    const h = await call(url, body(), { ...ok, 'x-mock-fault': '{"status":500}' });
    assert.equal((h.json as J).error.type, 'api_error');
  });
});

test('anthropic mock: @anthropic-ai/sdk works against it, including the stream helper', async (t) => {
  const mock = await startMockAnthropic();
  t.after(() => mock.close());
  // The SDK appends /v1/messages itself, so its baseURL is the mock's origin.
  const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url.replace(/\/v1$/, ''), maxRetries: 0 });

  const m = await client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'hello sdk' }] });
  assert.deepEqual(m.content, [{ type: 'text', text: 'Echo: hello sdk' }]);

  const stream = client.messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 },
    messages: [{ role: 'user', content: 'stream with thought' }] });
  let text = '';
  let thinking = '';
  stream.on('text', (d) => { text += d; });
  stream.on('thinking', (d) => { thinking += d; });
  const final = await stream.finalMessage();
  assert.equal(text, 'Echo: stream with thought');
  assert.ok(thinking.length > 0);
  assert.equal(final.content[0]!.type, 'thinking');
  assert.equal(final.usage.output_tokens, m.usage.output_tokens + 1 + countWords(thinking));

  const tools = client.messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 100, tools: [weather as Anthropic.Tool], messages: [{ role: 'user', content: 'weather?' }] });
  const tm = await tools.finalMessage();
  const use = tm.content[0]!;
  assert.ok(use.type === 'tool_use');
  assert.deepEqual(use.input, { location: 'Paris' });

  mock.fault({ status: 529 });
  await assert.rejects(client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    (e: unknown) => e instanceof Anthropic.APIError && e.status === 529);
});

function countWords(s: string): number {
  return s.trim().split(/\s+/).length;
}
