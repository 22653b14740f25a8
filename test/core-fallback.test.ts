// Fallback and retry: each fault kind before the first byte moves to the next target; nothing is
// replayed after the first byte; retry-after is honoured up to its cap; a client that hangs up
// cancels the upstream request at once.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { startMockOpenAI, startMockAnthropic, type MockUpstream, type Fault } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

let a: MockUpstream; let b: MockUpstream; let gw: TestGateway;
let hanging: Server; let hangingClosed = 0; let hangingOpened = 0;

before(async () => {
  a = await startMockOpenAI();
  b = await startMockAnthropic();
  // An upstream that starts a stream and then dribbles forever, counting when its client goes away.
  hanging = createServer((req, res) => {
    hangingOpened++;
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"tick"},"finish_reason":null}]}\n\n');
    const t = setInterval(() => res.write(': keep-alive\n\n'), 50);
    res.on('close', () => { clearInterval(t); hangingClosed++; });
  });
  hanging.listen(0, '127.0.0.1');
  await once(hanging, 'listening');
  const hport = (hanging.address() as { port: number }).port;
  gw = await startTestGateway({
    providers: [
      { id: 'primary', format: 'openai-chat', base_url: a.url },
      { id: 'backup', format: 'anthropic-messages', base_url: b.url },
      { id: 'dead', format: 'openai-chat', base_url: 'http://127.0.0.1:9' },
      { id: 'hang', format: 'openai-chat', base_url: `http://127.0.0.1:${hport}/v1` },
    ],
    gateway: {
      fallbacks: { 'primary/test-model': ['backup/test-model'], 'dead/test-model': ['primary/test-model'] },
      upstream: { first_byte_timeout_ms: 400, idle_timeout_ms: 1000, retry_after_cap_ms: 300, max_attempts: 3, retry_budget_floor: 1000, ejection: { consecutive_failures: 1000 } },
    },
  });
});
after(async () => { await gw.stop(); await a.close(); await b.close(); hanging.closeAllConnections(); hanging.close(); });
beforeEach(() => { a.reset(); b.reset(); });

const ask = (model: string, stream = false, signal?: AbortSignal) => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, ...(signal ? { signal } : {}),
  body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'fallback please' }] }),
});

async function recordOf(id: string) {
  for (let i = 0; i < 50; i++) {
    const rec = (await gw.services.store!.listInferences({ limit: 50 })).find((r) => r.id === id);
    if (rec) return rec;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no record for ${id}`);
}

const faults: Array<[string, Fault]> = [
  ['500', { status: 500 }], ['503', { status: 503 }], ['429 over the cap', { status: 429, retryAfter: 5 }],
  ['slow first byte', { delayFirstByteMs: 1500 }], ['hang', { hang: true }], ['connection reset', { resetConnection: true }],
];
for (const stream of [false, true]) {
  for (const [name, fault] of faults) {
    test(`${stream ? 'streaming' : 'non-streaming'}: ${name} on the primary falls back to the backup`, async () => {
      a.fault(fault);
      const r = await ask('primary/test-model', stream);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-gateway-provider'), 'backup');
      const text = await r.text();
      assert.match(text, /Echo: fallback please|Echo: fallback/);
      assert.equal(b.requests.length, 1);
      const rec = await recordOf(r.headers.get('x-inference-id')!);
      assert.deepEqual(rec.attempts.map((x) => x.provider), ['primary', 'backup']);
      assert.equal(rec.servedModel, 'backup/test-model');
    });
  }
}

test('a stream that breaks before its first byte falls back too', async () => {
  a.fault({ disconnectAfterChunks: 0 });
  const r = await ask('primary/test-model', true);
  assert.equal(r.headers.get('x-gateway-provider'), 'backup');
  assert.match(await r.text(), /\[DONE\]/);
});

test('connect errors fall back', async () => {
  const r = await ask('dead/test-model');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-gateway-provider'), 'primary');
});

test('no fallback after the first byte: the client sees the partial stream and an error event', async () => {
  a.fault({ disconnectAfterChunks: 2 });
  const r = await ask('primary/test-model', true);
  assert.equal(r.status, 200);
  const text = await r.text();
  assert.match(text, /"error"/);
  assert.equal(b.requests.length, 0, 'the backup must not be called once output reached the client');
  const rec = await recordOf(r.headers.get('x-inference-id')!);
  assert.equal(rec.attempts.length, 1);
});

test('retry-after within the cap retries the same target after waiting', async () => {
  const only = await startTestGateway({ providers: [{ id: 'solo', format: 'openai-chat', base_url: a.url }], gateway: { upstream: { retry_after_cap_ms: 1000 } } });
  try {
    a.fault({ status: 429, retryAfter: '0.3' });
    const t0 = Date.now();
    const r = await fetch(`${only.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'solo/test-model', messages: [{ role: 'user', content: 'x' }] }) });
    assert.equal(r.status, 200);
    assert.ok(Date.now() - t0 >= 280, 'waited for retry-after');
    assert.equal(a.requests.length, 2);
  } finally { await only.stop(); }
});

test('retry-after beyond the cap with nowhere to go relays the 429 and its retry-after', async () => {
  const only = await startTestGateway({ providers: [{ id: 'solo', format: 'openai-chat', base_url: a.url }], gateway: { upstream: { retry_after_cap_ms: 100 } } });
  try {
    a.fault({ status: 429, retryAfter: 7 });
    const r = await fetch(`${only.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'solo/test-model', messages: [{ role: 'user', content: 'x' }] }) });
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '7');
    assert.equal(((await r.json()) as any).error.type, 'rate_limit_error');
    assert.equal(a.requests.length, 1);
  } finally { await only.stop(); }
});

test('a 400 from the upstream is final: no fallback, the upstream message in the client envelope', async () => {
  a.fault({ status: 400 });
  const r = await ask('primary/test-model');
  assert.equal(r.status, 400);
  assert.equal(b.requests.length, 0);
  assert.equal(((await r.json()) as any).error.type, 'invalid_request_error');
});

test('a client that disconnects cancels the upstream request at once', async () => {
  const before = hangingClosed;
  const ac = new AbortController();
  const r = await ask('hang/test-model', true, ac.signal);
  const reader = r.body!.getReader();
  const first = await reader.read();
  assert.match(new TextDecoder().decode(first.value), /tick/);
  ac.abort();
  const t0 = Date.now();
  while (hangingClosed === before && Date.now() - t0 < 2000) await new Promise((res) => setTimeout(res, 10));
  assert.equal(hangingClosed, before + 1, 'upstream connection closed');
  assert.ok(Date.now() - t0 < 500, `closed within ${Date.now() - t0} ms`);
  assert.equal(hangingOpened, 1);
});

test('the retry budget caps amplification: past it a failure is answered instead of retried', async () => {
  const tight = await startTestGateway({
    providers: [{ id: 'p', format: 'openai-chat', base_url: a.url }, { id: 'q', format: 'anthropic-messages', base_url: b.url }],
    gateway: { fallbacks: { 'p/test-model': ['q/test-model'] }, upstream: { retry_budget_ratio: 0, retry_budget_floor: 2, ejection: { consecutive_failures: 1000 } } },
  });
  try {
    const call = () => fetch(`${tight.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'p/test-model', messages: [{ role: 'user', content: 'x' }] }) });
    a.fault([{ status: 500 }, { status: 500 }, { status: 500 }]);
    assert.equal((await call()).status, 200);
    assert.equal((await call()).status, 200);
    const third = await call();
    assert.equal(third.status, 502);
    assert.match(((await third.json()) as any).error.message, /retry budget exhausted/);
    assert.equal(b.requests.length, 2);
  } finally { await tight.stop(); }
});

test('a provider failing repeatedly is ejected and tried last while ejected', async () => {
  const ej = await startTestGateway({
    providers: [{ id: 'p', format: 'openai-chat', base_url: a.url }, { id: 'q', format: 'anthropic-messages', base_url: b.url }],
    gateway: { fallbacks: { 'p/test-model': ['q/test-model'] }, upstream: { retry_budget_floor: 100, ejection: { consecutive_failures: 2, base_ms: 60000, max_ms: 60000 } } },
  });
  try {
    const call = () => fetch(`${ej.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'p/test-model', messages: [{ role: 'user', content: 'x' }] }) });
    a.fault([{ status: 500 }, { status: 500 }]);
    await (await call()).text(); await (await call()).text();
    const before = a.requests.length;
    const r = await call();
    assert.equal(r.headers.get('x-gateway-provider'), 'q');
    assert.equal(a.requests.length, before, 'the ejected provider was not tried first');
    const h = await (await fetch(`${ej.url}/health`)).json() as any;
    assert.equal(h.upstreams.p.ejected, true);
  } finally { await ej.stop(); }
});

test('a stream that goes idle past the idle timeout ends with an error event, not a hung client', async () => {
  a.fault({ stallAfterChunks: 2 });
  const t0 = Date.now();
  const r = await ask('primary/test-model', true);
  const text = await r.text();
  assert.match(text, /idle/);
  assert.ok(Date.now() - t0 < 3000, `ended after ${Date.now() - t0} ms`);
  assert.equal(b.requests.length, 0);
});
