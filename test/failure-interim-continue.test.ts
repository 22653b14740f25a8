// An upstream that answers `100 Continue` before its real answer, unasked (RFC 9110 lets it; some
// servers and proxies do before every answer to a POST), from a raw TCP mock on 127.0.0.1. Before,
// undici took the 100 for a bad response on the routes the gateway interprets (chat): the socket was
// destroyed, the request sent again up to max_attempts times (the upstream processed it 3 times) and
// answered 503 "upstream unreachable (connect)". Now the 100 block is dropped before undici's parser
// (src/engine/interim-continue.ts). Pass-through routes (node:http) always skipped it; 102 and 103
// passed everywhere. Also: split across writes, two in a row, before a stream, on a reused connection.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

/** What the upstream writes for one request: pieces written in order, `gapMs` apart. */
type Script = { pieces: string[]; gapMs?: number };
let queue: Script[] = [];
let requests = 0;
let connections = 0;
let server: net.Server; let gw: TestGateway;

const chatBody = (text: string): string => JSON.stringify({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
});
const embBody = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'emb', usage: { prompt_tokens: 9, total_tokens: 9 } });
const ok = (body: string): string => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';

before(async () => {
  server = net.createServer((sock) => {
    connections++;
    let buf = '';
    sock.on('data', async (d) => {
      buf += d.toString('latin1');
      for (;;) {
        const h = buf.indexOf('\r\n\r\n');
        if (h < 0) return;
        const len = Number(/content-length:\s*(\d+)/i.exec(buf.slice(0, h))?.[1] ?? 0);
        if (buf.length < h + 4 + len) return;
        buf = buf.slice(h + 4 + len);
        requests++;
        const s = queue.shift() ?? { pieces: [`HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: 28\r\n\r\n{"error":{"message":"none"}}`] };
        for (const [i, p] of s.pieces.entries()) {
          if (i > 0 && s.gapMs) await new Promise((r) => setTimeout(r, s.gapMs));
          sock.write(p);
        }
      }
    });
    sock.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  gw = await startTestGateway({
    providers: [{ id: 'oa', format: 'openai-chat', base_url: `${url}/v1`, models: [{ name: 'm', pricing: { prompt: '0.000001', completion: '0.000002' } }, { name: 'emb', pricing: { prompt: '0.000001', completion: '0' } }] }],
    gateway: { upstream: { first_byte_timeout_ms: 3000, idle_timeout_ms: 3000, ejection: { consecutive_failures: 1000 } } },
  });
});
after(async () => { await gw.stop(); server.close(); });
beforeEach(() => { queue = []; requests = 0; });

async function chat(stream = false): Promise<{ status: number; text: string }> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000),
    body: JSON.stringify({ model: 'oa/m', stream, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: r.status, text: await r.text() };
}

test('a chat answer after an unasked 100 Continue is the answer, sent once (before: a 503 after 3 sends)', async () => {
  const cases: Array<[string, Script]> = [
    ['one write', { pieces: [CONTINUE + ok(chatBody('one'))] }],
    ['separate writes', { pieces: [CONTINUE, ok(chatBody('separate'))], gapMs: 30 }],
    ['the status line split', { pieces: ['HTTP/1', '.1 100 Cont', 'inue\r\nx-note: wait\r\n', '\r\n' + ok(chatBody('split'))], gapMs: 20 }],
    ['two in a row', { pieces: [CONTINUE, CONTINUE + 'HTTP/1.1 200', ' OK' + ok(chatBody('two')).slice('HTTP/1.1 200 OK'.length)], gapMs: 20 }],
    ['a 102 and a 103 (passed before too)', { pieces: ['HTTP/1.1 102 Processing\r\n\r\n', 'HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n' + ok(chatBody('hints'))], gapMs: 20 }],
  ];
  for (const [name, script] of cases) {
    queue.push(script);
    requests = 0;
    const r = await chat();
    assert.equal(r.status, 200, `${name}: ${r.text}`);
    assert.match(r.text, /"content":"(one|separate|split|two|hints)"/, name);
    assert.equal(requests, 1, `${name}: sent once`);
  }
});

test('a chat stream after a 100 Continue, and later answers on the same connection, are read whole', async () => {
  const sse = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
  const chunk = (delta: Record<string, unknown>, finish: string | null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  queue.push({
    pieces: [CONTINUE, 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n',
      sse(chunk({ role: 'assistant', content: 'HTTP/1.1 100 Continue\r\n\r\nstreamed' }, null)), sse(chunk({}, 'stop')), sse('data: [DONE]\n\n'), '0\r\n\r\n'],
    gapMs: 20,
  });
  const before = connections;
  const s = await chat(true);
  assert.equal(s.status, 200, s.text);
  assert.ok(s.text.includes('HTTP/1.1 100 Continue\\r\\n\\r\\nstreamed'), `the text is the model's, untouched: ${s.text}`);
  // The next answers come on the same kept-alive connection: one with a 100, one without, one with again.
  for (const [i, pieces] of [[ok(chatBody('plain'))], [CONTINUE, ok(chatBody('again'))], [ok(chatBody('last'))]].entries()) {
    queue.push({ pieces, gapMs: 10 });
    const r = await chat();
    assert.equal(r.status, 200, `${i}: ${r.text}`);
  }
  assert.ok(connections - before <= 1, `connections opened: ${connections - before}`);
  assert.equal(requests, 4);
});

test('pass-through: an embeddings answer after a 100 Continue is relayed and billed', async () => {
  queue.push({ pieces: [CONTINUE, ok(embBody)], gapMs: 20 });
  const r = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/emb', input: 'x' }) });
  assert.equal(r.status, 200);
  assert.equal(((await r.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens, 9);
  assert.equal(requests, 1);
});

test('a 100 Continue after a 102 or a 103 is dropped too, sent once (before: undici destroyed the socket at the 100, a 503 "sent, no answer")', async () => {
  const cases: Array<[string, Script]> = [
    ['103 then 100', { pieces: ['HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n', CONTINUE + ok(chatBody('hints'))], gapMs: 20 }],
    ['102, 100, 103, 100 in one write', { pieces: ['HTTP/1.1 102 Processing\r\n\r\n' + CONTINUE + 'HTTP/1.1 103 Early Hints\r\nlink: </b>\r\n\r\n' + CONTINUE + ok(chatBody('mix'))] }],
    ['102 split, then 100 split', { pieces: ['HTTP/1.1 10', '2 Processing\r\n', '\r\nHTTP/1.1 1', '00 Continue\r\n\r', '\n' + ok(chatBody('split'))], gapMs: 15 }],
  ];
  for (const [name, script] of cases) {
    queue.push(script);
    requests = 0;
    const r = await chat();
    assert.equal(r.status, 200, `${name}: ${r.text}`);
    assert.match(r.text, /"content":"(hints|mix|split)"/, name);
    assert.equal(requests, 1, `${name}: sent once`);
  }
  // A stream after the mix, then a plain answer on the same connection.
  queue.push({ pieces: ['HTTP/1.1 103 Early Hints\r\n\r\n' + CONTINUE + ok(chatBody('after'))] });
  assert.equal((await chat()).status, 200);
  queue.push({ pieces: [ok(chatBody('plain'))] });
  assert.equal((await chat()).status, 200);
});
