// Upstreams over TLS, as every real provider is: the mock upstreams speak plain HTTP, so a TLS
// terminator on loopback (a certificate made for this test, trusted by the gateway through
// NODE_EXTRA_CA_CERTS) stands in front of them. The gateway runs as a child process, as `npm start`
// runs it: translated and same-format chat, streamed and not, Messages to an Anthropic upstream, and a
// pass-through route (http-proxy-3, another client stack) all reach their upstream over TLS; without
// the certificate trusted, the gateway refuses the upstream (verification is on) with a clear error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { spawnGateway, writeGatewayConfig, type GatewayProcess } from './helpers/process.ts';

type Terminator = { url(mock: MockUpstream): string; handshakes: number; close(): Promise<void> };

/** A TLS server on 127.0.0.1 that forwards each connection's plaintext to `mock`'s port. */
async function terminate(mock: MockUpstream, key: Buffer, cert: Buffer): Promise<Terminator> {
  const sockets = new Set<Socket>();
  const t: Terminator = { url: () => '', handshakes: 0, close: async () => {} };
  const server: Server = createServer({ key, cert }, (clear) => {
    t.handshakes++;
    const plain = connect(mock.port, '127.0.0.1');
    sockets.add(clear); sockets.add(plain);
    clear.pipe(plain).pipe(clear);
    const end = (): void => { clear.destroy(); plain.destroy(); sockets.delete(clear); sockets.delete(plain); };
    clear.on('error', end).on('close', end);
    plain.on('error', end).on('close', end);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  t.url = (m) => m.url.replace(/^http:\/\/127\.0\.0\.1:\d+/, `https://localhost:${port}`);
  t.close = () => new Promise<void>((ok) => { for (const s of sockets) s.destroy(); server.close(() => ok()); });
  return t;
}

let dir: string;
let certFile: string;
let key: Buffer;
let cert: Buffer;
let openai: MockUpstream;
let anthropic: MockUpstream;
let tlsOpenai: Terminator;
let tlsAnthropic: Terminator;
const cleanup: Array<() => Promise<unknown> | void> = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-tls-'));
  certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  // A self-signed certificate for localhost, valid for this run only (openssl is in Debian's base system).
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
  key = readFileSync(keyFile);
  cert = readFileSync(certFile);
  openai = await startMockOpenAI();
  anthropic = await startMockAnthropic();
  tlsOpenai = await terminate(openai, key, cert);
  tlsAnthropic = await terminate(anthropic, key, cert);
});

after(async () => {
  for (const c of cleanup.reverse()) await c();
  await tlsOpenai?.close(); await tlsAnthropic?.close();
  await openai?.close(); await anthropic?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function gatewayOverTls(env: Record<string, string>): Promise<GatewayProcess> {
  const cfg = writeGatewayConfig([
    { id: 'oa', format: 'openai-chat', base_url: tlsOpenai.url(openai), models: [{ name: 'gpt-4o-mini' }, { name: 'text-embedding-3-small' }] },
    { id: 'an', format: 'anthropic-messages', base_url: tlsAnthropic.url(anthropic), models: [{ name: 'claude-sonnet-4-5' }] },
  ]);
  const gw = await spawnGateway(cfg.configFile, env);
  cleanup.push(() => gw.stop(), () => rmSync(cfg.dir, { recursive: true, force: true }));
  return gw;
}

const post = (gw: GatewayProcess, path: string, body: unknown): Promise<Response> =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });

test('every kind of upstream call reaches its provider over TLS, the certificate verified', async () => {
  const gw = await gatewayOverTls({ NODE_EXTRA_CA_CERTS: certFile });
  const before = { oa: openai.requests.length, an: anthropic.requests.length };

  const chat = await post(gw, '/v1/chat/completions', { model: 'oa/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello over TLS' }] });
  assert.equal(chat.status, 200, await chat.clone().text());
  assert.match((await chat.json() as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, /Echo: Hello over TLS/);

  const stream = await post(gw, '/v1/chat/completions', { model: 'oa/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Stream over TLS' }] });
  assert.equal(stream.status, 200);
  const sse = await stream.text();
  assert.match(sse, /"Echo: Stream"/); // the mock streams the echo in pieces
  assert.match(sse, /" over TLS"/);
  assert.match(sse, /data: \[DONE\]/);

  // A Messages client to an OpenAI-format upstream (translated), streamed.
  const translated = await post(gw, '/v1/messages', { model: 'oa/gpt-4o-mini', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Translated over TLS' }] });
  assert.equal(translated.status, 200);
  const events = await translated.text();
  assert.match(events, /event: message_stop/);
  assert.match(events, /Translated/);
  assert.match(events, /"text_delta"/);

  const messages = await post(gw, '/v1/messages', { model: 'an/claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Anthropic over TLS' }] });
  assert.equal(messages.status, 200, await messages.clone().text());
  assert.match(JSON.stringify(await messages.json()), /Anthropic over TLS/);

  // A pass-through route (http-proxy-3 rather than the engine's undici pool).
  const emb = await post(gw, '/v1/embeddings', { model: 'oa/text-embedding-3-small', input: 'embed over TLS' });
  assert.equal(emb.status, 200, await emb.clone().text());
  assert.equal((await emb.json() as { data: unknown[] }).data.length, 1);

  assert.equal(openai.requests.length - before.oa, 4);
  assert.equal(anthropic.requests.length - before.an, 1);
  assert.ok(tlsOpenai.handshakes >= 1 && tlsAnthropic.handshakes >= 1);
});

test('an upstream certificate the gateway does not trust is refused, not used', async () => {
  const gw = await gatewayOverTls({});
  const sent = openai.requests.length;
  const chat = await post(gw, '/v1/chat/completions', { model: 'oa/gpt-4o-mini', messages: [{ role: 'user', content: 'untrusted' }] });
  assert.ok(chat.status >= 500 && chat.status < 600, `status ${chat.status}`);
  const body = await chat.json() as { error: { message: string } };
  console.log(`# untrusted certificate: ${chat.status} ${body.error.message}`);
  assert.match(body.error.message, /certificate|TLS|self.signed|verify/i);
  const emb = await post(gw, '/v1/embeddings', { model: 'oa/text-embedding-3-small', input: 'untrusted' });
  assert.ok(emb.status >= 500 && emb.status < 600, `status ${emb.status}`);
  assert.equal(openai.requests.length, sent, 'nothing reached the upstream through an unverified connection');
});
