// The HTTP layer: routes and aliases, both error envelopes, body and JSON limits, validation with
// stable codes, the prefix-required and n>1 rules, and 501 for what is not built.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

let oa: MockUpstream; let an: MockUpstream; let gw: TestGateway;
before(async () => {
  oa = await startMockOpenAI();
  an = await startMockAnthropic();
  gw = await startTestGateway({
    providers: [
      { id: 'mockai', format: 'openai-chat', base_url: oa.url, models: [{ name: 'test-model' }, { name: 'shared' }] },
      { id: 'mockant', format: 'anthropic-messages', base_url: an.url, models: [{ name: 'claude-test' }, { name: 'shared' }] },
    ],
    gateway: { server: { body_limit_bytes: 4096, json_max_depth: 16 } },
  });
});
after(async () => { await gw.stop(); await oa.close(); await an.close(); });

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const r = await fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: r.status, headers: r.headers, json: await r.json() as Record<string, any> };
};
const chat = (extra: Record<string, unknown>) => ({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'hi' }], ...extra });
const msgs = (extra: Record<string, unknown>) => ({ model: 'mockant/claude-test', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('error envelopes', () => {
  test('chat-completions errors use the OpenAI envelope with a stable code and param', async () => {
    const r = await post('/v1/chat/completions', chat({ temperature: 3 }));
    assert.equal(r.status, 400);
    assert.deepEqual(Object.keys(r.json.error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.equal(r.json.error.code, 'invalid_parameter');
    assert.equal(r.json.error.param, 'temperature');
  });
  test('messages errors use the Anthropic envelope', async () => {
    const r = await post('/v1/messages', msgs({ temperature: 1.5 }));
    assert.equal(r.status, 400);
    assert.equal(r.json.type, 'error');
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.match(r.json.error.message, /temperature/);
  });
  test('unknown routes answer 404 and wrong methods 405, in the route family envelope', async () => {
    const a = await fetch(`${gw.url}/v2/nothing-here`);
    assert.equal(a.status, 404);
    assert.equal((await a.json() as any).error.code, 'route_not_found');
    const b = await fetch(`${gw.url}/v1/chat/completions`);
    assert.equal(b.status, 405);
    assert.equal(b.headers.get('allow'), 'POST');
    const c = await fetch(`${gw.url}/v1/messages`);
    assert.equal(c.status, 405);
    assert.equal((await c.json() as any).type, 'error');
  });
});

describe('bad input never crashes', () => {
  test('malformed JSON is a 400 in each envelope', async () => {
    const a = await post('/v1/chat/completions', '{"model": ');
    assert.equal(a.status, 400); assert.equal(a.json.error.code, 'invalid_json');
    const b = await post('/v1/messages', 'not json');
    assert.equal(b.status, 400); assert.equal(b.json.type, 'error');
  });
  test('a body over the limit is a 413', async () => {
    const r = await post('/v1/chat/completions', chat({ messages: [{ role: 'user', content: 'x'.repeat(5000) }] }));
    assert.equal(r.status, 413); assert.equal(r.json.error.code, 'body_too_large');
  });
  test('a 413 closes the connection instead of reading the rest of the body', async () => {
    const { connect } = await import('node:net');
    const u = new URL(gw.url);
    /** Sends `head` and `first`, then nothing more: what the gateway answers and whether it closed the connection. */
    const refused = (head: string, first: string): Promise<{ out: string; closed: boolean }> => new Promise((ok) => {
      const s = connect(Number(u.port), u.hostname);
      let out = '';
      s.setEncoding('latin1');
      s.on('data', (d: string) => { out += d; });
      s.on('end', () => { s.destroy(); ok({ out, closed: true }); });
      s.on('error', () => ok({ out, closed: true }));
      setTimeout(() => { s.destroy(); ok({ out, closed: false }); }, 1500);
      s.write(head + first);
    });
    // Declared past the limit: refused at the headers (a client might go on to send all 50 MB of it).
    const declared = await refused('POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n', '{"model":');
    assert.match(declared.out, /^HTTP\/1\.1 413 .*connection: close\r\n.*"type":"request_too_large"/is);
    assert.ok(declared.closed, 'closed after the 413, not kept open for the other 49.99 MB');
    // Chunked, passing the limit on the way.
    const chunked = await refused('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n', `2000\r\n${' '.repeat(0x2000)}\r\n`);
    assert.match(chunked.out, /^HTTP\/1\.1 413 .*"code":"body_too_large"/s);
    assert.ok(chunked.closed);
    // A body read whole keeps its connection.
    const ok = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat({})) });
    assert.equal(ok.status, 200); assert.notEqual(ok.headers.get('connection'), 'close');
    await ok.text();
  });
  test('Expect: 100-continue: the go-ahead for a body within the limit, the 413 at once for one past it', async () => {
    const { request } = await import('node:http');
    const u = new URL(gw.url);
    const ask = (length: number, body: string): Promise<{ continued: boolean; status: number; json: Record<string, any> }> => new Promise((ok, fail) => {
      let continued = false;
      const r = request({ host: u.hostname, port: u.port, method: 'POST', path: '/v1/messages', headers: { 'content-type': 'application/json', 'content-length': String(length), expect: '100-continue' } }, (res) => {
        let b = ''; res.setEncoding('utf8'); res.on('data', (d: string) => { b += d; }); res.on('end', () => ok({ continued, status: res.statusCode!, json: JSON.parse(b) }));
      });
      r.on('continue', () => { continued = true; r.end(body); });
      r.on('error', fail);
      r.flushHeaders();
    });
    const body = JSON.stringify(msgs({}));
    const small = await ask(Buffer.byteLength(body), body);
    assert.equal(small.continued, true); assert.equal(small.status, 200);
    const big = await ask(50_000_000, '');
    assert.equal(big.continued, false, 'no 100 Continue for a body the gateway refuses'); assert.equal(big.status, 413); assert.equal(big.json.type, 'error');
  });
  test('a compressed body (Content-Encoding) is decompressed under the body limit', async () => {
    const { gzipSync, brotliCompressSync, deflateSync, zstdCompressSync } = await import('node:zlib');
    const send = async (path: string, encoding: string, body: Buffer) => {
      const r = await fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });
      return { status: r.status, json: await r.json() as Record<string, any> };
    };
    const m = Buffer.from(JSON.stringify(msgs({})));
    for (const [encoding, body] of [['gzip', gzipSync(m)], ['x-gzip', gzipSync(m)], ['deflate', deflateSync(m)], ['br', brotliCompressSync(m)], ['zstd', zstdCompressSync(m)], ['gzip, br', brotliCompressSync(gzipSync(m))], ['identity', m]] as const) {
      const r = await send('/v1/messages', encoding, body);
      assert.equal(r.status, 200, `${encoding}: ${JSON.stringify(r.json)}`); assert.equal(r.json.content[0].text, 'Echo: hi');
    }
    const chatGzip = await send('/v1/chat/completions', 'gzip', gzipSync(JSON.stringify(chat({}))));
    assert.equal(chatGzip.status, 200);
    // Corrupt or cut short: a 400 saying so, in the route's envelope.
    const corrupt = await send('/v1/messages', 'gzip', Buffer.from('not gzip at all'));
    assert.equal(corrupt.status, 400); assert.equal(corrupt.json.type, 'error'); assert.match(corrupt.json.error.message, /not valid gzip data/);
    const cut = await send('/v1/chat/completions', 'br', brotliCompressSync(JSON.stringify(chat({}))).subarray(0, 10));
    assert.equal(cut.status, 400); assert.equal(cut.json.error.code, 'invalid_body');
    // A bomb: 1 KiB of gzip holding 1 MB of zeros stops at the 4 KiB limit.
    const bomb = await send('/v1/messages', 'gzip', gzipSync(Buffer.alloc(1_000_000)));
    assert.equal(bomb.status, 413); assert.equal(bomb.json.error.type, 'request_too_large');
    // A coding not decoded here.
    const other = await send('/v1/chat/completions', 'compress', m);
    assert.equal(other.status, 415); assert.equal(other.json.error.code, 'unsupported_media_type'); assert.match(other.json.error.message, /Content-Encoding compress/);
  });
  test('a body that is not UTF-8 is a 400; a leading byte order mark is dropped', async () => {
    const send = async (path: string, body: Buffer) => {
      const r = await fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: r.status, json: await r.json() as Record<string, any> };
    };
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const m = await send('/v1/messages', Buffer.concat([bom, Buffer.from(JSON.stringify(msgs({})))]));
    assert.equal(m.status, 200, JSON.stringify(m.json)); assert.equal(m.json.content[0].text, 'Echo: hi');
    const c = await send('/v1/chat/completions', Buffer.concat([bom, Buffer.from(JSON.stringify(chat({})))]));
    assert.equal(c.status, 200, JSON.stringify(c.json));
    // 'hé' in Latin-1: the é is one byte 0xE9, no UTF-8. It reached the model as U+FFFD ("Echo: h\uFFFD"), answered 200.
    const latin1 = (body: unknown) => Buffer.from(JSON.stringify(body).replace('"hi"', '"h\u00e9"'), 'latin1');
    const bad = await send('/v1/messages', latin1(msgs({})));
    assert.equal(bad.status, 400); assert.equal(bad.json.type, 'error'); assert.match(bad.json.error.message, /not valid UTF-8/);
    const badChat = await send('/v1/chat/completions', latin1(chat({})));
    assert.equal(badChat.status, 400); assert.equal(badChat.json.error.code, 'invalid_json');
  });
  test('a client that leaves before its body is in is recorded as a hang-up (499), not as a bad request', async () => {
    const { connect } = await import('node:net');
    const u = new URL(gw.url);
    const body = JSON.stringify(msgs({}));
    const s = connect(Number(u.port), u.hostname);
    s.on('error', () => {});
    s.write(`POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`);
    await new Promise((r) => setTimeout(r, 200));
    s.destroy();
    let rec;
    for (let i = 0; i < 50 && !rec; i++) {
      await new Promise((r) => setTimeout(r, 50));
      rec = (await gw.services.store!.listInferences({ limit: 5 })).find((x) => x.route === '/v1/messages' && (x.errorCode === 'client_disconnected' || x.errorCode === 'invalid_body'));
    }
    assert.ok(rec, 'the request is recorded');
    assert.equal(rec.status, 499); assert.equal(rec.errorCode, 'client_disconnected');
  });
  test('JSON nested beyond the limit is refused before parsing', async () => {
    const deep = '['.repeat(50) + ']'.repeat(50);
    const r = await post('/v1/chat/completions', `{"model":"mockai/test-model","messages":${deep}}`);
    assert.equal(r.status, 400); assert.equal(r.json.error.code, 'json_too_deep');
  });
  test('a JSON array where an object is expected', async () => {
    const r = await post('/v1/chat/completions', '[1,2]');
    assert.equal(r.status, 400); assert.equal(r.json.error.code, 'invalid_body');
  });
  test('a non-JSON content type is a 415', async () => {
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<a/>' });
    assert.equal(r.status, 415);
  });
  test('wrong types and ranges name the parameter', async () => {
    for (const [extra, param] of [[{ frequency_penalty: -3 }, 'frequency_penalty'], [{ presence_penalty: 2.5 }, 'presence_penalty'],
      [{ max_tokens: 'ten' }, 'max_tokens'], [{ stream: 'yes' }, 'stream'], [{ tools: 'x' }, 'tools']] as const) {
      const r = await post('/v1/chat/completions', chat(extra));
      assert.equal(r.status, 400, JSON.stringify(extra));
      assert.equal(r.json.error.param, param);
    }
  });
  test('n other than 1 is refused, telling the caller to make separate calls', async () => {
    const r = await post('/v1/chat/completions', chat({ n: 2 }));
    assert.equal(r.status, 400);
    assert.equal(r.json.error.param, 'n');
    assert.match(r.json.error.message, /separate/);
    assert.equal((await post('/v1/chat/completions', chat({ n: 1 }))).status, 200);
  });
  test('a model without provider prefix is refused, naming the matching ids', async () => {
    const r = await post('/v1/chat/completions', chat({ model: 'shared' }));
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'model_prefix_required');
    assert.match(r.json.error.message, /mockai\/shared/);
    assert.match(r.json.error.message, /mockant\/shared/);
  });
  test('unknown models and providers are 404s', async () => {
    const a = await post('/v1/chat/completions', chat({ model: 'mockai/nope' }));
    assert.equal(a.status, 404); assert.equal(a.json.error.code, 'model_not_found');
    const b = await post('/v1/messages', msgs({ model: 'nobody/x' }));
    assert.equal(b.status, 404); assert.match(b.json.error.message, /unknown provider/);
  });
  test('router mode routes among the named models and says which it chose (test/router-*.test.ts test it in depth)', async () => {
    const r = await post('/v1/chat/completions', chat({ model: 'router', models: ['test-model'] }));
    assert.equal(r.status, 200);
    assert.match(r.json.model, /\/test-model$/);
    const bad = await post('/v1/chat/completions', chat({ model: 'router', models: ['nope-model'] }));
    assert.equal(bad.status, 400); assert.equal(bad.json.error.param, 'models[0]');
  });
  test('a slow client is cut off by the headers timeout, others keep working', async () => {
    const { connect } = await import('node:net');
    const u = new URL(gw.url);
    const sock = connect(Number(u.port), u.hostname);
    sock.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n');
    const ok = await post('/v1/chat/completions', chat({}));
    assert.equal(ok.status, 200);
    sock.destroy();
  });
});

describe('malformed HTTP at the socket', () => {
  /** Writes `parts` on one connection and returns every byte the gateway sent until it closed. */
  const raw = async (parts: string[]): Promise<string> => {
    const { connect } = await import('node:net');
    const u = new URL(gw.url);
    return new Promise((ok) => {
      const s = connect(Number(u.port), u.hostname);
      let out = '';
      s.setEncoding('latin1');
      s.on('data', (d: string) => { out += d; });
      s.on('close', () => ok(out)).on('error', () => ok(out));
      s.setTimeout(5000, () => s.destroy());
      (async () => { for (const p of parts) { s.write(p); await new Promise((r) => setTimeout(r, 100)); } })();
    });
  };
  test('headers past the limit and a bad header are answered in the route\'s envelope, with the status\'s own reason', async () => {
    const big = await raw([`POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`]);
    assert.match(big, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.deepEqual(JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4)), { type: 'error', error: { type: 'request_too_large', message: "request headers are too large: past the limit of 16384 bytes (server.max_header_bytes), as the HTTP parser counts them (many small headers count for more than their bytes)" } });
    const many = await raw([`POST /v1/messages HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: 1\r\n`).join('')}\r\n`]);
    assert.match(many, /^HTTP\/1\.1 431 .*\{"type":"error","error":\{"type":"request_too_large"/s);
    const bad = await raw(['POST /v1/messages HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n']);
    assert.match(bad, /^HTTP\/1\.1 400 Bad Request\r\n.*\{"type":"error","error":\{"type":"invalid_request_error","message":"bad request: HPE_INVALID_HEADER_TOKEN"\}\}$/s);
    const chat = await raw(['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n']);
    assert.match(chat, /\{"error":\{"message":"bad request: HPE_INVALID_HEADER_TOKEN","type":"invalid_request_error","param":null,"code":"bad_request"\}\}$/);
  });
  test('a body not received within the request timeout: a 408 in the route\'s envelope, recorded as such', async () => {
    const { connect } = await import('node:net');
    const u = new URL(gw.url);
    // Node's connections check (every 5 s) raises ERR_HTTP_REQUEST_TIMEOUT on the server's socket as a
    // clientError; the test raises it at once on the connection that holds a half-sent body.
    const accepted = new Promise<import('node:net').Socket>((ok) => gw.server.once('connection', ok));
    const s = connect(Number(u.port), u.hostname);
    let out = '';
    s.setEncoding('latin1');
    s.on('data', (d: string) => { out += d; });
    const closed = new Promise((ok) => s.on('close', ok));
    s.write('POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":');
    const server = await accepted;
    await new Promise((r) => setTimeout(r, 150));
    gw.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), server);
    await closed;
    assert.match(out, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.deepEqual(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)).error.type, 'invalid_request_error');
    let rec;
    for (let i = 0; i < 50 && !rec; i++) {
      await new Promise((r) => setTimeout(r, 50));
      rec = (await gw.services.store!.listInferences({ limit: 5 })).find((x) => x.route === '/v1/messages' && ['request_timeout', 'client_disconnected', 'invalid_body'].includes(x.errorCode!));
    }
    assert.ok(rec, 'the request is recorded');
    assert.equal(rec.status, 408); assert.equal(rec.errorCode, 'request_timeout');
  });
  test('a body trickled past server.request_timeout_ms is cut within the connections check (5 s), not Node\'s 30 s', async (t) => {
    const slow = await startTestGateway({
      providers: [{ id: 'mockant', format: 'anthropic-messages', base_url: `${an.url}/v1` }],
      gateway: { server: { request_timeout_ms: 1000, headers_timeout_ms: 500 } },
    });
    t.after(() => slow.stop());
    const { connect } = await import('node:net');
    const u = new URL(slow.url);
    const started = Date.now();
    const out = await new Promise<string>((ok) => {
      const s = connect(Number(u.port), u.hostname);
      let got = '';
      s.setEncoding('latin1');
      s.on('data', (d: string) => { got += d; });
      s.on('close', () => { clearInterval(drip); ok(got); });
      s.setTimeout(15_000, () => s.destroy());
      s.write('POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
      const drip = setInterval(() => { if (!s.destroyed) s.write(' '); }, 200);
    });
    assert.match(out, /^HTTP\/1\.1 408 /, out);
    assert.ok(Date.now() - started < 1000 + 5000 + 1500, `cut after ${Date.now() - started} ms`);
  });
  test('an idle keep-alive connection does not hold its last request', async () => {
    const { Agent, request } = await import('node:http');
    const v8 = await import('node:v8');
    const vm = await import('node:vm');
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const u = new URL(gw.url);
    let ref: WeakRef<object> | undefined;
    const grab = (_req: unknown, res: object): void => { ref = new WeakRef(res); };
    gw.server.once('request', grab);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const body = JSON.stringify(chat({}));
    await new Promise<void>((ok, fail) => {
      const r = request({ agent, host: u.hostname, port: u.port, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } }, (res) => { res.resume(); res.on('end', ok); });
      r.on('error', fail); r.end(body);
    });
    for (let i = 0; i < 10 && ref!.deref() !== undefined; i++) { await new Promise((r) => setTimeout(r, 50)); gc(); }
    assert.equal(ref!.deref(), undefined, 'the answered response (and the handler state it holds, the body included) is collected while the connection stays open');
    agent.destroy();
  });
  test('a transfer coding other than chunked (gzip, chunked) is a 501 in the route\'s envelope, never read as the body', async () => {
    const body = JSON.stringify(msgs({}));
    const out = await raw([`POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`]);
    assert.match(out, /^HTTP\/1\.1 501 /, out);
    const json = JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)) as { type: string; error: { message: string } };
    assert.equal(json.type, 'error');
    assert.match(json.error.message, /Transfer-Encoding gzip, chunked is not supported/);
  });
  test('an expectation other than 100-continue is a 417 in the route\'s envelope', async () => {
    const out = await raw(['POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 200-ok\r\n\r\n']);
    assert.match(out, /^HTTP\/1\.1 417 /, out);
    const json = JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)) as { type: string; error: { message: string } };
    assert.equal(json.type, 'error');
    assert.match(json.error.message, /Expect: 200-ok cannot be met/);
  });
  test('a request answered before its body ended gets no second answer when the rest of its body is malformed', async () => {
    // 415 as soon as the headers are read; then a chunk size that is no number.
    const out = await raw(['POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n', '5\r\nhello\r\n', 'zz\r\n']);
    assert.equal(out.match(/HTTP\/1\.1 \d{3} /g)?.length, 1, out);
    assert.match(out, /^HTTP\/1\.1 415 /);
    assert.equal((await fetch(`${gw.url}/health`)).status, 200);
  });
});

describe('routes and aliases', () => {
  test('the legacy prefix serves the same routes', async () => {
    const r = await post('/api/openai/v1/chat/completions', chat({}));
    assert.equal(r.status, 200);
    assert.equal(r.json.object, 'chat.completion');
  });
  test('a request target in absolute form (POST http://host/v1/messages) routes by its path', async () => {
    const { request } = await import('node:http');
    const u = new URL(gw.url);
    const send = (target: string, body: unknown): Promise<{ status: number; json: Record<string, any> }> => new Promise((ok, fail) => {
      const text = JSON.stringify(body);
      const r = request({ host: u.hostname, port: u.port, method: 'POST', path: target, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
        let b = ''; res.setEncoding('utf8'); res.on('data', (d: string) => { b += d; }); res.on('end', () => ok({ status: res.statusCode!, json: JSON.parse(b) }));
      });
      r.on('error', fail); r.end(text);
    });
    const m = await send(`http://${u.host}/v1/messages`, msgs({}));
    assert.equal(m.status, 200, JSON.stringify(m.json)); assert.equal(m.json.type, 'message');
    const c = await send(`HTTPS://elsewhere.example:8443/api/openai/v1/chat/completions?x=1`, chat({}));
    assert.equal(c.status, 200, JSON.stringify(c.json)); assert.equal(c.json.object, 'chat.completion');
    const none = await send(`http://${u.host}/nothing/here`, {});
    assert.equal(none.status, 404); assert.match(none.json.error.message, /no route for POST \/nothing\/here/);
  });
  test('HEAD is served on every GET route, without a body', async () => {
    for (const path of ['/health', '/health/ready', '/v1/models', '/v1/models/mockai/test-model', '/metrics']) {
      const get = await fetch(gw.url + path);
      const head = await fetch(gw.url + path, { method: 'HEAD' });
      assert.equal(head.status, get.status, path); assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), path);
      assert.equal(await head.text(), '', path);
      await get.arrayBuffer();
    }
    const post = await fetch(`${gw.url}/v1/chat/completions`, { method: 'HEAD' });
    assert.equal(post.status, 405); assert.equal(post.headers.get('allow'), 'POST');
  });
  test('/v1/v1/messages (Anthropic SDK with base {base_url}/v1) is an alias', async () => {
    const r = await post('/v1/v1/messages', msgs({}));
    assert.equal(r.status, 200);
    assert.equal(r.json.type, 'message');
  });
  test('response ids are UUIDv7 and echoed in x-inference-id', async () => {
    const r = await post('/v1/chat/completions', chat({}));
    assert.match(r.json.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(r.headers.get('x-inference-id'), r.json.id);
  });
  test('GET /health reports the config version and no reload error', async () => {
    const r = await fetch(`${gw.url}/health`);
    const j = await r.json() as any;
    assert.equal(r.status, 200);
    assert.equal(j.config.version, gw.services.holder.current.version);
    assert.equal(j.last_reload_error, null);
  });
  test('the gateway Authorization header never reaches the upstream; the provider key does', async () => {
    oa.reset();
    await post('/v1/chat/completions', chat({}), { authorization: 'Bearer sk-gw-client-secret' });
    assert.equal(oa.requests.length, 1);
    assert.equal(oa.requests[0]!.headers.authorization, 'Bearer sk-upstream-test');
    assert.equal((oa.requests[0]!.body as any).model, 'test-model');
  });
  test('extra and router fields are recorded, never forwarded', async () => {
    oa.reset();
    const r = await post('/v1/chat/completions', chat({ extra: { team: 'a' }, metadata: { k: 'v' } }));
    assert.equal(r.status, 200);
    const sent = oa.requests[0]!.body as Record<string, unknown>;
    assert.equal(sent.extra, undefined);
    await new Promise((res) => setTimeout(res, 80));
    const rec = (await gw.services.store!.listInferences({ limit: 5 })).find((x) => x.id === r.json.id)!;
    assert.deepEqual(rec.extra, { team: 'a' });
    assert.deepEqual(rec.metadata, { k: 'v' });
  });
});

describe('malformed paths', () => {
  test('bad percent-encoding is a 400, not a crash', async () => {
    const a = await fetch(`${gw.url}/v1/models/%E0%A4%A`);
    assert.equal(a.status, 400);
    assert.equal(((await a.json()) as any).error.code, 'invalid_parameter');
    const b = await fetch(`${gw.url}/admin/keys/%E0%A4%A`, { method: 'DELETE' });
    assert.equal(b.status, 400);
    const ok = await post('/v1/chat/completions', chat({}));
    assert.equal(ok.status, 200);
  });
});
