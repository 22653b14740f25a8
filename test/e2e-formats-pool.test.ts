// Large bodies go through the conversion worker pool (workers.convert_threshold_bytes) and give the
// same upstream body, headers and client answer as the inline path: translated, relayed, signed
// (Bedrock), with mapping rows compiled in the worker, on fallback targets, and with errors in
// the client's envelope.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway, type TestProvider } from './helpers/gateway.ts';

type Rec = Record<string, any>;
let mocks: Record<'oai' | 'ant' | 'gem' | 'bed', MockUpstream>;
let pooled: TestGateway; let inline: TestGateway;
let poolCalls = 0;

const THRESHOLD = 64 * 1024;

before(async () => {
  const [oai, ant, gem, bed] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini(), startMockBedrock()]);
  mocks = { oai, ant, gem, bed };
  const providers: TestProvider[] = [
    { id: 'oai', format: 'openai-chat', base_url: oai.url },
    // Mapping rows are compiled inside the worker from the raw rows: clamp temperature, default top_k.
    { id: 'ant', format: 'anthropic-messages', base_url: ant.url, mappings: [{ param: 'temperature', max: 0.5, out_of_range: 'clamp' }, { param: 'top_k', default: 40 }] },
    { id: 'gem', format: 'gemini', base_url: gem.url },
    { id: 'bed', format: 'bedrock-converse', base_url: bed.url },
  ];
  const gateway = { fallbacks: { 'oai/test-model': ['ant/test-model'] }, upstream: { max_attempts: 2, retry_budget_floor: 100 } };
  pooled = await startTestGateway({ providers, gateway: { ...gateway, workers: { threads: 2, convert_threshold_bytes: THRESHOLD } } });
  inline = await startTestGateway({ providers, gateway: { ...gateway, workers: { threads: 0 } } });
  const pool = pooled.services.convert!;
  const prepare = pool.prepare.bind(pool);
  pool.prepare = (...a) => { poolCalls++; return prepare(...a); };
});
after(async () => { await pooled.stop(); await inline.stop(); for (const m of Object.values(mocks)) await m.close(); });

/** A conversation of about `bytes` bytes: many earlier turns, then a question. */
function bigMessages(bytes: number, last = 'what now?'): Rec[] {
  const turn = 'This earlier turn talks about the weather in several cities and what to pack. '.repeat(20);
  const out: Rec[] = [];
  for (let i = 0; out.length * turn.length < bytes; i++) out.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i}: ${turn}` });
  if (out.at(-1)!.role === 'user') out.push({ role: 'assistant', content: 'ok' });
  out.push({ role: 'user', content: last });
  return out;
}

async function post(gw: TestGateway, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

/** Sends `body` to both gateways; returns both answers and both upstream requests as the mock saw them. */
async function both(mock: MockUpstream, path: string, body: unknown): Promise<{ a: Awaited<ReturnType<typeof post>>; b: Awaited<ReturnType<typeof post>>; ua: Rec; ub: Rec }> {
  mock.reset();
  const before = poolCalls;
  const a = await post(pooled, path, body);
  assert.equal(poolCalls, before + 1, 'the pooled gateway used the pool');
  const ua = mock.requests.at(-1)!;
  mock.reset();
  const b = await post(inline, path, body);
  const ub = mock.requests.at(-1)!;
  return { a, b, ua: ua as unknown as Rec, ub: ub as unknown as Rec };
}

/** Response bodies minus the per-request id and timestamps. */
const stable = (text: string): string => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID').replace(/"created":\d+/g, '"created":0');

test('a large OpenAI body converted for Anthropic in the pool equals the inline conversion (mapping rows applied)', async () => {
  const body = { model: 'ant/test-model', temperature: 0.9, max_tokens: 100, messages: bigMessages(300_000) };
  assert.ok(JSON.stringify(body).length > THRESHOLD);
  const { a, b, ua, ub } = await both(mocks.ant, '/v1/chat/completions', body);
  assert.equal(a.status, 200, a.text);
  assert.deepEqual(ua.body, ub.body);
  assert.equal(ua.body.temperature, 0.5);
  assert.equal(ua.body.top_k, 40);
  assert.equal(a.headers.get('x-gateway-adjustments'), b.headers.get('x-gateway-adjustments'));
  assert.match(a.headers.get('x-gateway-adjustments')!, /temperature=0.9->0.5\(clamped\)/);
  assert.equal(stable(a.text), stable(b.text));
  assert.equal(JSON.parse(a.text).choices[0].message.content, 'Echo: what now?');
});

test('same format (pass-through) and streaming: identical upstream bodies and streamed text', async () => {
  const body = { model: 'oai/test-model', stream: true, messages: bigMessages(200_000, 'stream it back') };
  const { a, b, ua, ub } = await both(mocks.oai, '/v1/chat/completions', body);
  assert.equal(a.status, 200);
  assert.deepEqual(ua.body, ub.body);
  assert.equal(ua.body.model, 'test-model');
  assert.equal(ua.body.stream_options.include_usage, true);
  assert.match(a.headers.get('content-type')!, /text\/event-stream/);
  assert.equal(stable(a.text), stable(b.text));
  assert.match(a.text, /back/);
});

test('Anthropic client to Gemini and Bedrock: same bodies; the Bedrock signature covers the worker bytes', async () => {
  const body = { model: 'gem/test-model', max_tokens: 200, system: 'Be brief.', messages: bigMessages(150_000, 'gemini please') };
  const g = await both(mocks.gem, '/v1/messages', body);
  assert.equal(g.a.status, 200, g.a.text);
  assert.deepEqual(g.ua.body, g.ub.body);
  assert.equal(g.ua.path, g.ub.path);
  assert.equal(JSON.parse(g.a.text).content[0].text, 'Echo: gemini please');

  const bb = { ...body, model: 'bed/test-model', stream: true };
  const d = await both(mocks.bed, '/v1/messages', bb);
  assert.equal(d.a.status, 200);
  assert.deepEqual(d.ua.body, d.ub.body);
  assert.equal(d.ua.path, d.ub.path);
  const sha = createHash('sha256').update(JSON.stringify(d.ua.body)).digest('hex');
  assert.equal(d.ua.headers['x-amz-content-sha256'], sha, 'signed over the bytes sent');
  assert.match(d.ua.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDTEST\//);
  assert.equal(stable(d.a.text), stable(d.b.text));
});

test('a fallback target is encoded by a second worker task', async () => {
  mocks.oai.reset(); mocks.ant.reset();
  mocks.oai.fault({ status: 500 });
  const body = { model: 'oai/test-model', max_tokens: 50, messages: bigMessages(100_000, 'fall back please') };
  const r = await post(pooled, '/v1/chat/completions', body);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-gateway-provider'), 'ant');
  assert.equal(JSON.parse(r.text).choices[0].message.content, 'Echo: fall back please');
  const sent = mocks.ant.requests.at(-1)!.body as Rec;
  assert.equal(sent.model, 'test-model');
  assert.equal(sent.messages.at(-1).content.at?.(-1)?.text ?? sent.messages.at(-1).content, 'fall back please');
});

test('errors of a large body: validation 400 and unknown model 404 in each envelope, as inline; refusals too', async () => {
  const cases: Array<[string, Rec]> = [
    ['/v1/chat/completions', { model: 'oai/test-model', temperature: 5, messages: bigMessages(100_000) }],
    ['/v1/chat/completions', { model: 'oai/nope', messages: bigMessages(100_000) }],
    ['/v1/messages', { model: 'ant/test-model', messages: bigMessages(100_000) }],
    // Refused by the Gemini encoder (a tool result answering no call), in the worker as inline.
    ['/v1/messages', { model: 'gem/test-model', max_tokens: 10, messages: [...bigMessages(100_000), { role: 'assistant', content: 'ok' }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] }] }],
  ];
  for (const [path, body] of cases) {
    const a = await post(pooled, path, body);
    const b = await post(inline, path, body);
    assert.ok(a.status >= 400 && a.status < 500, `${a.status} ${a.text}`);
    assert.equal(a.status, b.status);
    assert.equal(stable(a.text), stable(b.text));
  }
  const bad = await post(pooled, '/v1/messages', { model: 'ant/test-model', messages: bigMessages(100_000) });
  assert.equal(JSON.parse(bad.text).type, 'error');
  const r = await fetch(`${pooled.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"model":"oai/test-model","messages":[${'{"role":"user","content":"x"},'.repeat(5000)}` });
  assert.equal(r.status, 400);
  assert.match(((await r.json()) as Rec).error.message, /not valid JSON/);
});

test('small bodies stay inline', async () => {
  const before = poolCalls;
  const r = await post(pooled, '/v1/chat/completions', { model: 'oai/test-model', messages: [{ role: 'user', content: 'tiny' }] });
  assert.equal(r.status, 200);
  assert.equal(poolCalls, before);
});
