// Tests of the Bedrock mock upstream: Converse JSON, ConverseStream binary frames (CRCs checked),
// toolUse, reasoningContent, cachePoint caching, faults and SigV4-shaped auth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockBedrock } from './mocks/bedrock.ts';
import { decodeFrames, encodeFrame } from './mocks/eventstream.ts';
import { call, readAll } from './mocks/client.ts';

const SIG = 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261121/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=deadbeef';
const H = { authorization: SIG, 'x-amz-date': '20261121T000000Z' };
const MODEL = encodeURIComponent('anthropic.claude-sonnet-4-20250514-v1:0');
type J = Record<string, any>;
const user = (text: string) => [{ role: 'user', content: [{ text }] }];
const toolConfig = { tools: [
  { toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: { type: 'object', properties: { location: { type: 'string' } } } } } },
  { toolSpec: { name: 'get_time', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } },
] };

async function streamEvents(url: string, body: unknown, headers: Record<string, string> = H): Promise<{ type: string; payload: J }[]> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  assert.equal(res.headers.get('content-type'), 'application/vnd.amazon.eventstream');
  const { frames, rest } = decodeFrames(Buffer.from(await res.arrayBuffer()));
  assert.equal(rest.length, 0);
  return frames.map((f) => {
    assert.equal(f.headers[':message-type'], 'event');
    assert.equal(f.headers[':content-type'], 'application/json');
    return { type: f.headers[':event-type']!, payload: JSON.parse(f.payload.toString('utf8')) as J };
  });
}

test('eventstream encoder round-trips and detects corruption', () => {
  const frame = encodeFrame({ ':event-type': 'x', a: 'b' }, '{"k":1}');
  const { frames } = decodeFrames(frame);
  assert.deepEqual(frames[0]!.headers, { ':event-type': 'x', a: 'b' });
  assert.equal(frames[0]!.payload.toString(), '{"k":1}');
  const bad = Buffer.from(frame);
  bad[bad.length - 6] ^= 0xff;
  assert.throws(() => decodeFrames(bad), /CRC/);
});

test('bedrock mock: converse, stream, tools, reasoning, caching', async (t) => {
  const mock = await startMockBedrock();
  t.after(() => mock.close());
  const converse = `${mock.url}/model/${MODEL}/converse`;
  const stream = `${mock.url}/model/${MODEL}/converse-stream`;

  await t.test('converse: output message, stopReason, usage, metrics, request id', async () => {
    const r = await call(converse, { system: [{ text: 'Be brief.' }], messages: user('Hello Bedrock there') }, H);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('x-amzn-requestid') ?? '', /^[0-9a-f-]{36}$/);
    const b = r.json as J;
    assert.deepEqual(b.output.message, { role: 'assistant', content: [{ text: 'Echo: Hello Bedrock there' }] });
    assert.equal(b.stopReason, 'end_turn');
    assert.equal(b.usage.inputTokens, Math.ceil('Be brief.\nHello Bedrock there'.length / 4));
    assert.equal(b.usage.outputTokens, 4);
    assert.equal(b.usage.totalTokens, b.usage.inputTokens + 4);
    assert.ok(b.metrics.latencyMs >= 1);
    assert.equal(mock.requests.at(-1)!.headers.authorization, SIG);
  });

  await t.test('converse-stream: framed events in order with correct CRCs', async () => {
    const ev = await streamEvents(stream, { messages: user('one two three four') });
    const types = ev.map((e) => e.type);
    assert.equal(types[0], 'messageStart');
    assert.deepEqual(types.slice(-3), ['contentBlockStop', 'messageStop', 'metadata']);
    assert.equal(ev.filter((e) => e.type === 'contentBlockDelta').map((e) => e.payload.delta.text).join(''), 'Echo: one two three four');
    assert.ok(types.filter((x) => x === 'contentBlockDelta').length >= 3);
    assert.equal(ev.at(-2)!.payload.stopReason, 'end_turn');
    assert.equal(ev.at(-1)!.payload.usage.outputTokens, 5);
  });

  await t.test('toolUse: keyword, forced, both (streamed input deltas), toolResult', async () => {
    const r = (await call(converse, { toolConfig, messages: user('weather?') }, H)).json as J;
    assert.equal(r.stopReason, 'tool_use');
    assert.match(r.output.message.content[0].toolUse.toolUseId, /^tooluse_/);
    assert.deepEqual(r.output.message.content[0].toolUse.input, { location: 'Paris' });
    const f = (await call(converse, { toolConfig: { ...toolConfig, toolChoice: { tool: { name: 'get_time' } } }, messages: user('hi') }, H)).json as J;
    assert.equal(f.output.message.content[0].toolUse.name, 'get_time');
    const ev = await streamEvents(stream, { toolConfig, messages: user('weather for both') });
    const starts = ev.filter((e) => e.type === 'contentBlockStart');
    assert.deepEqual(starts.map((s) => s.payload.start.toolUse.name), ['get_weather', 'get_time']);
    const input = (i: number) => ev.filter((e) => e.type === 'contentBlockDelta' && e.payload.contentBlockIndex === i).map((e) => e.payload.delta.toolUse.input).join('');
    assert.deepEqual(JSON.parse(input(0)), { location: 'Paris' });
    assert.deepEqual(JSON.parse(input(1)), { city: 'London' });
    const res = (await call(converse, { toolConfig, messages: [
      ...user('weather?'),
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { location: 'Paris' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ json: { temp: 21 } }] } }] },
    ] }, H)).json as J;
    assert.equal(res.output.message.content[0].text, 'The tool returned: {"temp":21}');
  });

  await t.test('reasoningContent with signature, streamed as reasoning deltas', async () => {
    // Claude on Bedrock needs maxTokens above the thinking budget, as the mock (like Bedrock) checks.
    const body = { messages: user('ponder this'), inferenceConfig: { maxTokens: 4096 }, additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 } } };
    const r = (await call(converse, body, H)).json as J;
    const rc = r.output.message.content[0].reasoningContent.reasoningText;
    assert.ok(rc.text.length > 0 && rc.signature.length > 20);
    assert.equal(r.output.message.content[1].text, 'Echo: ponder this');
    const ev = (await streamEvents(stream, body)).filter((e) => e.type === 'contentBlockDelta' && e.payload.contentBlockIndex === 0);
    assert.equal(ev.slice(0, -1).map((e) => e.payload.delta.reasoningContent.text).join(''), rc.text);
    assert.equal(ev.at(-1)!.payload.delta.reasoningContent.signature, rc.signature);
  });

  await t.test('stopSequences and maxTokens', async () => {
    const s = (await call(converse, { messages: user('one two three'), inferenceConfig: { stopSequences: ['two'] } }, H)).json as J;
    assert.equal(s.stopReason, 'stop_sequence');
    assert.equal(s.output.message.content[0].text, 'Echo: one ');
    const m = (await call(converse, { messages: user('one two three'), inferenceConfig: { maxTokens: 2 } }, H)).json as J;
    assert.equal(m.stopReason, 'max_tokens');
  });

  await t.test('cachePoint: write then read', async () => {
    const long = 'lorem ipsum dolor sit amet '.repeat(200);
    const body = (q: string) => ({ system: [{ text: long }, { cachePoint: { type: 'default' } }], messages: user(q) });
    const first = ((await call(converse, body('a'), H)).json as J).usage;
    const prefix = Math.ceil(long.length / 4);
    assert.equal(first.cacheWriteInputTokens, prefix);
    assert.equal(first.cacheReadInputTokens, 0);
    const second = ((await call(converse, body('b'), H)).json as J).usage;
    assert.equal(second.cacheReadInputTokens, prefix);
    assert.equal(second.cacheWriteInputTokens, 0);
    assert.equal(second.inputTokens, Math.ceil(`${long}\nb`.length / 4) - prefix);
    assert.deepEqual(first.cacheDetails, [{ ttl: '5m', inputTokens: prefix }]);
    assert.equal(second.cacheDetails, undefined, 'no write, no cacheDetails');
    // A 1h cachePoint's write is reported under ttl 1h.
    const hour = (q: string) => ({ system: [{ text: `hour ${long}` }, { cachePoint: { type: 'default', ttl: '1h' } }], messages: user(q) });
    const h = ((await call(converse, hour('c'), H)).json as J).usage;
    assert.deepEqual(h.cacheDetails, [{ ttl: '1h', inputTokens: h.cacheWriteInputTokens }]);
    assert.ok(h.cacheWriteInputTokens > 0);
  });
});

test('bedrock mock: faults and auth', async (t) => {
  const mock = await startMockBedrock({ apiKey: 'AKIDEXAMPLE' });
  t.after(() => mock.close());
  const converse = `${mock.url}/model/${MODEL}/converse`;
  const stream = `${mock.url}/model/${MODEL}/converse-stream`;
  const body = { messages: user('one two three four five') };

  await t.test('auth: missing token and unknown key get 403 with error type header', async () => {
    const missing = await call(converse, body, {});
    assert.equal(missing.status, 403);
    assert.deepEqual(missing.json, { message: 'Missing Authentication Token' });
    assert.match(missing.headers.get('x-amzn-errortype') ?? '', /^MissingAuthenticationTokenException/);
    const wrong = await call(converse, body, { authorization: SIG.replace('AKIDEXAMPLE', 'AKIDOTHER') });
    assert.match(wrong.headers.get('x-amzn-errortype') ?? '', /^UnrecognizedClientException/);
  });

  await t.test('status faults: throttling with retry-after, 500', async () => {
    mock.fault([{ status: 429, retryAfter: 1 }, { status: 500 }]);
    const a = await call(converse, body, H);
    assert.equal(a.status, 429);
    assert.match(a.headers.get('x-amzn-errortype') ?? '', /^ThrottlingException/);
    assert.equal(typeof (a.json as J).message, 'string');
    assert.match((await call(converse, body, H)).headers.get('x-amzn-errortype') ?? '', /^InternalServerException/);
  });

  await t.test('delay, disconnect, malformed, hang, reset, header fault', async () => {
    mock.fault({ delayFirstByteMs: 120 });
    const t0 = Date.now();
    await call(converse, body, H);
    assert.ok(Date.now() - t0 >= 110);
    mock.fault({ disconnectAfterChunks: 2 });
    const res = await fetch(stream, { method: 'POST', headers: H, body: JSON.stringify(body) });
    const cut = await readAll(res);
    assert.ok(cut.broken);
    assert.equal(decodeFrames(cut.bytes).frames.length, 2);
    mock.fault({ malformedSse: true });
    const raw = Buffer.from(await (await fetch(stream, { method: 'POST', headers: H, body: JSON.stringify(body) })).arrayBuffer());
    const bad = decodeFrames(raw).frames.filter((f) => { try { JSON.parse(f.payload.toString()); return false; } catch { return true; } });
    assert.equal(bad.length, 1);
    mock.fault({ hang: true });
    await assert.rejects(fetch(converse, { method: 'POST', headers: H, body: JSON.stringify(body), signal: AbortSignal.timeout(200) }));
    mock.fault({ resetConnection: true });
    await assert.rejects(fetch(converse, { method: 'POST', headers: H, body: JSON.stringify(body) }));
    assert.equal((await call(converse, body, { ...H, 'x-mock-fault': '{"status":503}' })).status, 503);
  });
});
