// The AWS credential chain against local stand-ins (never real AWS): environment, shared files
// and profiles with credential_process, the container endpoint with its token, IMDSv2 with its
// session token, chain order, refresh before expiry, and Bedrock requests signed end to end; and
// that none of it holds the event loop: a cold start is awaited by the request that needs it (one
// fetch shared by all), and no credentials at all is a clean 502 that falls back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Worker } from 'node:worker_threads';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REFRESH_BEFORE_MS, parseIni, resolveLocal, resolveRemote } from '../src/transforms/aws-credentials.ts';
import { AwsCredentialChain } from '../src/transforms/aws-credential-chain.ts';
import { forgetCredentialChains } from '../src/transforms/aws-sigv4.ts';
import { startMockBedrock, startMockOpenAI } from './mocks/index.ts';
import { startTestGateway } from './helpers/gateway.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type T = { after(fn: () => unknown): void };
async function serve(t: T, handler: Handler): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const s = createServer((req, res) => { hits.push(`${req.method} ${req.url}`); handler(req, res); });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => s.close(() => r())));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, hits };
}
const json = (res: ServerResponse, body: unknown, status = 200): void => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)); };

/**
 * A container credentials endpoint on its own thread, so it answers even while this thread is busy
 * (or blocked, as the synchronous chain of the code before used to block it). Each answer, after
 * `delay` ms, is credentials `AK<n>` valid for `life` ms; `count()` is how many were handed out.
 */
async function credentialThread(t: T, life: number, delay = 0): Promise<{ url: string; count(): number; setLife(ms: number): void }> {
  const shared = new Int32Array(new SharedArrayBuffer(12));
  Atomics.store(shared, 1, life);
  Atomics.store(shared, 2, delay);
  const w = new Worker(`
    const { createServer } = require('node:http');
    const { workerData, parentPort } = require('node:worker_threads');
    const shared = workerData;
    const s = createServer((req, res) => {
      setTimeout(() => {
        const n = Atomics.add(shared, 0, 1) + 1;
        const body = { AccessKeyId: 'AK' + n, SecretAccessKey: 's' + n, Token: 'token-AK' + n, Expiration: new Date(Date.now() + Atomics.load(shared, 1)).toISOString() };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      }, Atomics.load(shared, 2));
    });
    s.listen(0, '127.0.0.1', () => parentPort.postMessage(s.address().port));
  `, { eval: true, workerData: shared });
  const port = await new Promise<number>((r) => w.once('message', r));
  t.after(() => w.terminate());
  return { url: `http://127.0.0.1:${port}`, count: () => Atomics.load(shared, 0), setLife: (ms) => Atomics.store(shared, 1, ms) };
}
const creds = (id: string, expiresInMs = 3600_000) => ({ AccessKeyId: id, SecretAccessKey: `secret-${id}`, Token: `token-${id}`, Expiration: new Date(Date.now() + expiresInMs).toISOString() });
/** No network source unless a test names one. */
const OFF = { AWS_EC2_METADATA_DISABLED: 'true' };

function home(t: T, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-aws-'));
  mkdirSync(join(dir, '.aws'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, '.aws', name), text);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The longest the event loop went without running a 5 ms timer, from now until stop(). */
function loopWatch(): { stop(): number } {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => { const now = performance.now(); worst = Math.max(worst, now - last - 5); last = now; }, 5);
  return { stop: () => { clearInterval(timer); worst = Math.max(worst, performance.now() - last - 5); return worst; } };
}

/** Sets the process environment a Bedrock provider's chain reads (keys and profile removed), restored after the test. */
function chainEnv(t: T, vars: Record<string, string>): void {
  const names = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_EC2_METADATA_DISABLED', 'AWS_EC2_METADATA_SERVICE_ENDPOINT', 'HOME'];
  const saved = Object.fromEntries(names.map((k) => [k, process.env[k]]));
  for (const k of names) delete process.env[k];
  Object.assign(process.env, vars);
  forgetCredentialChains();
  t.after(() => {
    for (const k of names) { if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k]; }
    forgetCredentialChains();
  });
}

const bedrockProvider = (url: string) => ({ id: 'bed', format: 'bedrock-converse' as const, base_url: url, auth: { type: 'transform', transform: 'aws-sigv4', options: { region: 'us-east-1', service: 'bedrock' } } });
const chat = (gw: { url: string }, model: string, content = 'hi') => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
});

test('ini files parse sections, comments and spaced keys', () => {
  const ini = parseIni('# c\n[default]\naws_access_key_id = AK\n; c\n[profile dev]\n Credential_Process=echo x \n');
  assert.equal(ini.get('default')!.get('aws_access_key_id'), 'AK');
  assert.equal(ini.get('profile dev')!.get('credential_process'), 'echo x');
});

test('environment keys, then the profile in the shared files; a named profile skips the environment', async (t) => {
  const dir = home(t, {
    credentials: '[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = s1\n[other]\naws_access_key_id = AKOTHER\naws_secret_access_key = s2\naws_session_token = tok2\n',
    config: `[profile proc]\ncredential_process = printf '{"Version":1,"AccessKeyId":"AKPROC","SecretAccessKey":"s3","SessionToken":"t3","Expiration":"2099-01-01T00:00:00Z"}'\n[profile broken]\ncredential_process = echo not json\n`,
  });
  const env = { HOME: dir, AWS_ACCESS_KEY_ID: 'AKENV', AWS_SECRET_ACCESS_KEY: 'senv', ...OFF };
  assert.equal((await resolveLocal(env))!.accessKeyId, 'AKENV');
  assert.equal((await resolveLocal({ HOME: dir }))!.accessKeyId, 'AKDEFAULT');
  const other = (await resolveLocal({ ...env, AWS_PROFILE: 'other' }))!;
  assert.deepEqual([other.accessKeyId, other.sessionToken, other.source], ['AKOTHER', 'tok2', 'profile other (credentials file)']);
  const proc = (await resolveLocal({ HOME: dir }, 'proc'))!;
  assert.deepEqual([proc.accessKeyId, proc.sessionToken, proc.expiresAt], ['AKPROC', 't3', Date.parse('2099-01-01T00:00:00Z')]);
  assert.equal(await resolveLocal({ HOME: dir }, 'missing'), null);
  await assert.rejects(resolveLocal({ HOME: dir }, 'broken'), /credential_process printed no JSON/);
});

test('container endpoint: full URI with its authorization token file; plain http only to loopback', async (t) => {
  const ep = await serve(t, (req, res) => (req.headers.authorization === 'Bearer pod-token' ? json(res, creds('AKCONTAINER')) : json(res, { message: 'denied' }, 403)));
  const dir = home(t, {});
  writeFileSync(join(dir, 'token'), 'Bearer pod-token\n');
  const c = (await resolveRemote({ AWS_CONTAINER_CREDENTIALS_FULL_URI: `${ep.url}/creds`, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: join(dir, 'token'), ...OFF }))!;
  assert.deepEqual([c.accessKeyId, c.sessionToken, c.source], ['AKCONTAINER', 'token-AKCONTAINER', 'container credentials endpoint']);
  await assert.rejects(resolveRemote({ AWS_CONTAINER_CREDENTIALS_FULL_URI: `${ep.url}/creds`, ...OFF }), /403/);
  await assert.rejects(resolveRemote({ AWS_CONTAINER_CREDENTIALS_FULL_URI: 'http://192.0.2.1/creds', ...OFF }), /plain http/);
});

test('instance metadata IMDSv2: a session token first, then the role and its credentials', async (t) => {
  const imds = await serve(t, (req, res) => {
    if (req.method === 'PUT' && req.url === '/latest/api/token' && req.headers['x-aws-ec2-metadata-token-ttl-seconds']) return void res.end('imds-session');
    if (req.headers['x-aws-ec2-metadata-token'] !== 'imds-session') return void res.writeHead(401).end();
    if (req.url === '/latest/meta-data/iam/security-credentials/') return void res.end('gateway-role');
    if (req.url === '/latest/meta-data/iam/security-credentials/gateway-role') return json(res, { Code: 'Success', ...creds('AKIMDS') });
    res.writeHead(404).end();
  });
  const c = (await resolveRemote({ AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.url }))!;
  assert.deepEqual([c.accessKeyId, c.source], ['AKIMDS', 'instance role gateway-role']);
  assert.deepEqual(imds.hits, ['PUT /latest/api/token', 'GET /latest/meta-data/iam/security-credentials/', 'GET /latest/meta-data/iam/security-credentials/gateway-role']);
  assert.equal(await resolveRemote({ AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.url, AWS_EC2_METADATA_DISABLED: 'true' }), null);
});

test('chain: nothing cached means ready() to await (one fetch for all callers), then refresh in the background before expiry', async (t) => {
  const ep = await credentialThread(t, REFRESH_BEFORE_MS + 60_000);
  const dir = home(t, {});
  let now = Date.now();
  const chain = new AwsCredentialChain({ HOME: dir, AWS_CONTAINER_CREDENTIALS_FULL_URI: `${ep.url}/c`, ...OFF }, undefined, () => now);
  assert.equal(chain.current(), null);
  const waits = [chain.ready(), chain.ready(), chain.ready()];
  assert.ok(waits.every((w) => w !== null));
  const got = await Promise.all(waits);
  assert.deepEqual(got.map((c) => c.accessKeyId), ['AK1', 'AK1', 'AK1']);
  assert.equal(ep.count(), 1, 'concurrent callers share one fetch');
  assert.equal(chain.ready(), null, 'cached: nothing to await');
  assert.equal(chain.current()!.accessKeyId, 'AK1');
  now += 90_000; // inside the refresh window: the current value is served while a refresh runs
  assert.equal(chain.current()!.accessKeyId, 'AK1');
  for (let i = 0; i < 100 && chain.current()!.accessKeyId === 'AK1'; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(chain.current()!.accessKeyId, 'AK2');
  ep.setLife(-1000); // credentials handed out now are already expired, and the clock passes AK2's
  now += 2 * 3600_000;
  assert.equal(chain.current(), null, 'expired: not served');
  await assert.rejects(chain.ready()!, /already expired/);
  assert.equal(ep.count(), 3);
  // The failure is held briefly: the next caller fails at once instead of asking the endpoint again.
  await assert.rejects(chain.ready()!, /already expired/);
  assert.equal(ep.count(), 3);
});

test('a Bedrock provider without keys signs with the chain: loaded at start, cached, fetched again on reload', async (t) => {
  const ep = await credentialThread(t, 3600_000);
  chainEnv(t, { AWS_CONTAINER_CREDENTIALS_FULL_URI: `${ep.url}/v2/credentials`, AWS_EC2_METADATA_DISABLED: 'true', HOME: home(t, {}) });
  const bedrock = await startMockBedrock();
  const gw = await startTestGateway({ providers: [bedrockProvider(bedrock.url)] });
  t.after(async () => { await gw.stop(); await bedrock.close(); });
  for (let i = 0; i < 100 && ep.count() === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(ep.count(), 1, 'fetched at start, before any request');
  const r = await chat(gw, 'bed/test-model');
  assert.equal(r.status, 200, await r.clone().text());
  const h = bedrock.requests.at(-1)!.headers;
  assert.match(String(h.authorization), /^AWS4-HMAC-SHA256 Credential=AK1\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
  assert.equal(h['x-amz-security-token'], 'token-AK1');
  assert.equal((await chat(gw, 'bed/test-model', 'again')).status, 200);
  assert.equal(ep.count(), 1, 'the next request signs with the cached credentials');
  // A reload fetches again in the background (rotated keys are picked up); requests keep signing meanwhile.
  gw.writeProvider({ ...bedrockProvider(bedrock.url), headers: { 'x-reloaded': '1' } });
  await gw.services.holder.reload();
  for (let i = 0; i < 100 && ep.count() < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(ep.count(), 2);
  assert.equal((await chat(gw, 'bed/test-model')).status, 200);
  assert.match(String(bedrock.requests.at(-1)!.headers.authorization), /Credential=AK2\//);
});

test('a cold start never blocks the event loop: requests await one shared fetch from a slow endpoint', async (t) => {
  const DELAY = 700; // well under the 1 s the SDKs (and this chain) give one endpoint call, even on a busy machine
  const ep = await credentialThread(t, 3600_000, DELAY);
  chainEnv(t, { AWS_CONTAINER_CREDENTIALS_FULL_URI: `${ep.url}/v2/credentials`, AWS_EC2_METADATA_DISABLED: 'true', HOME: home(t, {}) });
  const bedrock = await startMockBedrock();
  const gw = await startTestGateway({ providers: [bedrockProvider(bedrock.url)] });
  t.after(async () => { await gw.stop(); await bedrock.close(); });
  const watch = loopWatch();
  const t0 = performance.now();
  const rs = await Promise.all(Array.from({ length: 5 }, (_, i) => chat(gw, 'bed/test-model', `cold ${i}`)));
  const waited = performance.now() - t0;
  const worst = watch.stop();
  for (const r of rs) assert.equal(r.status, 200, await r.text());
  assert.equal(ep.count(), 1, 'five cold requests, one fetch');
  // Before: the first request held the event loop (a synchronous wait on a worker) until the endpoint answered.
  assert.ok(worst < DELAY / 2, `the event loop stalled ${worst.toFixed(0)} ms while the endpoint took ${DELAY} ms`);
  assert.ok(waited < DELAY + 3000, `answered after ${waited.toFixed(0)} ms`);
  console.log(`cold start: requests waited ${waited.toFixed(0)} ms for a ${DELAY} ms endpoint; longest event-loop stall ${worst.toFixed(1)} ms`);
});

test('a slow credential_process does not block the event loop either', async (t) => {
  const dir = home(t, {
    config: `[default]\ncredential_process = sleep 1; printf '{"Version":1,"AccessKeyId":"AKPROC","SecretAccessKey":"s","SessionToken":"t","Expiration":"2099-01-01T00:00:00Z"}'\n`,
  });
  chainEnv(t, { AWS_EC2_METADATA_DISABLED: 'true', HOME: dir });
  const bedrock = await startMockBedrock();
  const gw = await startTestGateway({ providers: [bedrockProvider(bedrock.url)] });
  t.after(async () => { await gw.stop(); await bedrock.close(); });
  const watch = loopWatch();
  const r = await chat(gw, 'bed/test-model');
  const worst = watch.stop();
  assert.equal(r.status, 200, await r.clone().text());
  assert.match(String(bedrock.requests.at(-1)!.headers.authorization), /Credential=AKPROC\//);
  assert.ok(worst < 400, `the event loop stalled ${worst.toFixed(0)} ms while credential_process slept 1 s`);
});

test('no credentials anywhere: a 502 upstream error in the route\'s envelope, and the fallback serves', async (t) => {
  const ep = await serve(t, (_req, res) => json(res, { message: 'no role' }, 500));
  chainEnv(t, { AWS_CONTAINER_CREDENTIALS_FULL_URI: `${ep.url}/v2/credentials`, AWS_EC2_METADATA_DISABLED: 'true', HOME: home(t, {}) });
  const bedrock = await startMockBedrock();
  const openai = await startMockOpenAI();
  const gw = await startTestGateway({
    providers: [bedrockProvider(bedrock.url), { id: 'oai', format: 'openai-chat', base_url: openai.url }],
    gateway: { fallbacks: { 'bed/test-model': ['oai/test-model'] } },
  });
  t.after(async () => { await gw.stop(); await bedrock.close(); await openai.close(); });
  const viaFallback = await chat(gw, 'bed/test-model');
  assert.equal(viaFallback.status, 200, await viaFallback.clone().text());
  assert.equal(viaFallback.headers.get('x-gateway-provider'), 'oai');
  assert.equal(bedrock.requests.length, 0, 'nothing unsigned went to Bedrock');
  // Without a fallback: the OpenAI envelope for a chat client, the Anthropic one for a messages client.
  gw.writeProvider({ id: 'bed2', format: 'bedrock-converse', base_url: bedrock.url, auth: { type: 'transform', transform: 'aws-sigv4', options: { region: 'us-east-1', service: 'bedrock', profile: 'none' } } });
  await gw.services.holder.reload();
  const r = await chat(gw, 'bed2/test-model');
  assert.equal(r.status, 502);
  const body = await r.json() as { error: { type: string; message: string } };
  assert.equal(body.error.type, 'api_error');
  assert.match(body.error.message, /AWS credentials could not be loaded/);
  const m = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'bed2/test-model', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(m.status, 502);
  const mb = await m.json() as { type: string; error: { type: string } };
  assert.deepEqual([mb.type, mb.error.type], ['error', 'api_error']);
  assert.equal(gw.services.inFlight, 0);
});
