// Upstream failures before any answer, told apart by what reached the provider, from a raw TCP mock on
// 127.0.0.1 that counts the requests it read whole (a request it read is one the provider may have
// processed and will bill). Before, every failure before the status line was "upstream unreachable
// (connect)" and sent again to the same provider up to max_attempts times: a request the upstream read
// and then reset, answered with bytes that are no HTTP, or never answered (headers timeout) was
// processed 3 times. Now only a failure where nothing can have been processed is sent again: the
// connect failed (nothing written), or a kept-alive connection the upstream had closed while idle
// failed as the request was written (no byte of an answer; HTTP clients resend those). A request
// written and then left unanswered is recorded "sent, no answer" and moves to the next target (a
// fallback), never to the same one again. Chat (undici) and pass-through (node:http) alike.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';

/**
 * What the upstream does with the next request it reads: answer 200, reset the connection, send bytes
 * that are no HTTP, say nothing, or (`stale`) reset it as a server closing an idle kept-alive
 * connection does, the request not read (not counted), or (`partial`) read it, send the first bytes of a
 * status line and reset.
 */
type Act = 'ok' | 'reset' | 'garbage' | 'silent' | 'stale' | 'partial';
let queue: Act[] = [];
let requests = 0;
let connections = 0;
let server: net.Server; let backup: net.Server; let gw: TestGateway;
let backupRequests = 0;
let closedPort = 0;
/** A plain TCP server that answers a TLS handshake with HTTP and closes: the TLS connect fails, nothing sent. */
let notTls: net.Server;
let notTlsConnections = 0;

const chatBody = JSON.stringify({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
});
const embBody = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'emb', usage: { prompt_tokens: 9, total_tokens: 9 } });
const ok = (path: string): string => {
  const body = path.includes('embeddings') ? embBody : chatBody;
  return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`;
};

/** A raw HTTP/1.1 server acting per request by `next()`; `count` is told of each request read whole. */
function rawServer(next: () => Act, count: () => void): net.Server {
  return net.createServer((sock) => {
    connections++;
    let buf = '';
    let served = 0;
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      // A stale connection: the server closed it while idle, so the request's first bytes meet a reset.
      if (served > 0 && queue[0] === 'stale') { queue.shift(); sock.resetAndDestroy(); return; }
      for (;;) {
        const h = buf.indexOf('\r\n\r\n');
        if (h < 0) return;
        const head = buf.slice(0, h);
        const len = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < h + 4 + len) return;
        buf = buf.slice(h + 4 + len);
        count();
        served++;
        const act = next();
        if (act === 'ok') sock.write(ok(head.split(' ')[1] ?? ''));
        else if (act === 'reset') { sock.resetAndDestroy(); return; }
        else if (act === 'garbage') { sock.write('SSH-2.0-OpenSSH_9.6\r\n\r\n'); return; }
        else if (act === 'partial') { sock.write('HTTP/1.1 2', () => setTimeout(() => sock.resetAndDestroy(), 20)); return; }
        else return; // silent
      }
    });
    sock.on('error', () => {});
  });
}

before(async () => {
  server = rawServer(() => queue.shift() ?? 'ok', () => { requests++; });
  backup = rawServer(() => 'ok', () => { backupRequests++; });
  const probe = net.createServer();
  notTls = net.createServer((sock) => { notTlsConnections++; sock.on('error', () => {}); sock.end('HTTP/1.1 400 Bad Request\r\n\r\n'); });
  for (const s of [server, backup, probe, notTls]) { s.listen(0, '127.0.0.1'); await once(s, 'listening'); }
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const url = (s: net.Server): string => `http://127.0.0.1:${(s.address() as net.AddressInfo).port}/v1`;
  const models = [{ name: 'm' }, { name: 'emb', pricing: { prompt: '0.000001', completion: '0' } }];
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: url(server), models },
      { id: 'bk', format: 'openai-chat', base_url: url(backup), models },
      { id: 'gone', format: 'openai-chat', base_url: `http://127.0.0.1:${closedPort}/v1`, models },
      { id: 'tls', format: 'openai-chat', base_url: `https://127.0.0.1:${(notTls.address() as net.AddressInfo).port}/v1`, models },
      // The same upstream as `oa`, with a fallback.
      { id: 'fb', format: 'openai-chat', base_url: url(server), models },
    ],
    gateway: {
      upstream: { first_byte_timeout_ms: 400, idle_timeout_ms: 3000, max_attempts: 3, retry_budget_ratio: 1, retry_budget_floor: 1000, ejection: { consecutive_failures: 1000 } },
      fallbacks: { 'fb/m': ['bk/m'], 'fb/emb': ['bk/emb'] },
    },
  });
});
after(async () => { await gw.stop(); server.close(); backup.close(); notTls.close(); });
beforeEach(() => { queue = []; requests = 0; backupRequests = 0; });

async function call(model: string, route: 'chat' | 'embeddings' = 'chat'): Promise<{ status: number; text: string; id: string }> {
  const body = route === 'chat' ? { model, messages: [{ role: 'user', content: 'hi' }] } : { model, input: 'x' };
  const r = await fetch(`${gw.url}/v1/${route === 'chat' ? 'chat/completions' : 'embeddings'}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(15_000), body: JSON.stringify(body),
  });
  return { status: r.status, text: await r.text(), id: r.headers.get('x-inference-id') ?? '' };
}

/** Opens a kept-alive connection to the upstream (one answered request) for the next request to reuse. */
async function warm(route: 'chat' | 'embeddings'): Promise<void> {
  queue.push('ok');
  const r = await call(route === 'chat' ? 'oa/m' : 'oa/emb', route);
  assert.equal(r.status, 200, r.text);
  requests = 0;
}

for (const route of ['chat', 'embeddings'] as const) {
  const model = route === 'chat' ? 'oa/m' : 'oa/emb';

  test(`${route}: a request the upstream read and then reset is sent once (before: 3 times)`, async () => {
    for (const act of ['reset', 'garbage', 'silent'] as const) {
      queue.push(act, act, act);
      requests = 0;
      const r = await call(model, route);
      assert.ok(r.status >= 500, `${act}: ${r.status} ${r.text}`);
      assert.equal(requests, 1, `${act}: the upstream read it ${requests} times`);
      assert.match(r.text, /sent, no answer|no answer after the request was sent/, act);
      const rec = await recordOf(gw, r.id);
      assert.equal(rec.attempts.length, 1, `${act}: ${JSON.stringify(rec.attempts)}`);
      assert.match(String(rec.attempts[0]!.error), /sent, no answer|no answer after the request was sent/, act);
      assert.doesNotMatch(String(rec.attempts[0]!.error), /connect/, act);
    }
    assert.equal(await settled(gw), 0);
  });

  // Pass-through routes open a connection per attempt (http-proxy-3 without an agent): none is reused.
  if (route === 'chat') test(`${route}: a kept-alive connection the upstream closed while idle is retried, and answers (nothing was processed)`, async () => {
    await warm(route);
    queue.push('stale');
    const r = await call(model, route);
    assert.equal(r.status, 200, r.text);
    assert.equal(requests, 1, 'processed once');
    const rec = await recordOf(gw, r.id);
    assert.equal(rec.attempts.length, 2, JSON.stringify(rec.attempts));
    assert.match(String(rec.attempts[0]!.error), /closed a kept-alive connection while idle/);
  });

  if (route === 'chat') test(`${route}: a stale kept-alive connection is retried on the same target at once, before its fallback`, async () => {
    queue.push('ok');
    assert.equal((await call('fb/m')).status, 200);
    requests = 0;
    queue.push('stale');
    const r = await call('fb/m');
    assert.equal(r.status, 200, r.text);
    assert.equal(requests, 1);
    assert.equal(backupRequests, 0, 'the fallback was not needed');
    const rec = await recordOf(gw, r.id);
    assert.deepEqual(rec.attempts.map((a) => a.provider), ['fb', 'fb']);
  });

  if (route === 'chat') test(`${route}: on a kept-alive connection, a reset after the first bytes of an answer is "sent, no answer": sent once`, async () => {
    await warm(route);
    queue.push('partial', 'partial', 'partial');
    const r = await call(model, route);
    assert.equal(r.status, 503, r.text);
    assert.equal(requests, 1, `read ${requests} times`);
    const rec = await recordOf(gw, r.id);
    assert.equal(rec.attempts.length, 1, JSON.stringify(rec.attempts));
    assert.match(String(rec.attempts[0]!.error), /sent, no answer/);
  });

  test(`${route}: a request sent and left unanswered moves to the fallback; the first upstream read it once`, async () => {
    for (const act of ['reset', 'silent'] as const) {
      queue.push(act, act, act);
      requests = 0; backupRequests = 0;
      const r = await call(route === 'chat' ? 'fb/m' : 'fb/emb', route);
      assert.equal(r.status, 200, `${act}: ${r.text}`);
      assert.equal(requests, 1, act);
      assert.equal(backupRequests, 1, act);
      const rec = await recordOf(gw, r.id);
      assert.deepEqual(rec.attempts.map((a) => a.provider), ['fb', 'bk'], act);
    }
  });
}

test('a TLS handshake that fails (nothing sent) is retried in place and recorded as connect (a control: so before)', async () => {
  const r = await call('tls/m');
  assert.equal(r.status, 503, r.text);
  const rec = await recordOf(gw, r.id);
  assert.equal(rec.attempts.length, 3, JSON.stringify(rec.attempts));
  for (const a of rec.attempts) assert.match(String(a.error), /unreachable \(connect\)/);
  assert.equal(notTlsConnections, 3);
});

test('a refused connect (nothing sent) is still retried in place and recorded as connect', async () => {
  const r = await call('gone/m');
  assert.equal(r.status, 503, r.text);
  const rec = await recordOf(gw, r.id);
  assert.equal(rec.attempts.length, 3, JSON.stringify(rec.attempts));
  for (const a of rec.attempts) assert.match(String(a.error), /unreachable \(connect\)/);
  const e = await call('gone/emb', 'embeddings');
  assert.equal(e.status, 503, e.text);
  const erec = await recordOf(gw, e.id);
  assert.equal(erec.attempts.length, 3, JSON.stringify(erec.attempts));
  for (const a of erec.attempts) assert.match(String(a.error), /unreachable \(connect\)/);
});
