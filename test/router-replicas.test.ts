// Router state and health across replicas: two gateways on one store route with the same learned
// state (trained on one, loaded by the other), and with Redis an ejection decided by one replica
// applies on the other at once, and so does the conversation affinity one remembers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway, type TestProvider } from './helpers/gateway.ts';

type Rec = Record<string, unknown>;
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
let up1: MockUpstream; let up2: MockUpstream; let gwA: TestGateway; let gwB: TestGateway;
let redisDown: string | false = false;
let prefix = '';

const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const model = (name: string, prompt: string) => ({ name, pricing: { prompt, completion: prompt }, capabilities: caps, context_window: 16000, max_completion_tokens: 2000 });

before(async () => {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  probe.on('error', () => {});
  try { await probe.connect(); await probe.ping(); } catch (e) {
    if (process.env.CI === 'true') throw new Error(`redis at ${REDIS_URL} unreachable (CI=true: failing, not skipping): ${(e as Error).message}`);
    redisDown = `redis at ${REDIS_URL} unreachable`;
  } finally { probe.disconnect(); }
  up1 = await startMockOpenAI();
  up2 = await startMockOpenAI();
  const providers: TestProvider[] = [
    { id: 'one', format: 'openai-chat', base_url: up1.url, models: [model('m-a', '0.000001'), { ...model('m-c', '0.000001'), capabilities: { ...caps, prompt_caching: true }, cache_min_tokens: 16 }] },
    { id: 'two', format: 'openai-chat', base_url: up2.url, models: [model('m-b', '0.000002')] },
  ];
  prefix = `test:${randomUUID()}:`;
  const gateway = (db?: string): Rec => ({
    reload: { watch: false },
    workers: { threads: 1 }, // training runs in the piscina worker, as in production
    upstream: { max_attempts: 2, retry_budget_floor: 1000, ejection: { consecutive_failures: 1, base_ms: 5000, max_ms: 5000 } },
    ...(redisDown ? {} : { storage: { redis_url: REDIS_URL, ...(db ? { sqlite_path: db } : {}) } }),
    ...(redisDown && db ? { storage: { sqlite_path: db } } : {}),
    router: { exploration: { share: 0 }, quality_signals: [{ metric: 'ok', optimize: 'max' }], learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000, feedback_settle_ms: 0 } },
  });
  gwA = await startTestGateway({ providers, gateway: gateway(), env: { GATEWAY_REDIS_PREFIX: prefix } });
  gwB = await startTestGateway({ providers, gateway: gateway(join(gwA.dir, 'gateway.db')), env: { GATEWAY_REDIS_PREFIX: prefix } });
});
after(async () => { await gwB?.stop(); await gwA?.stop(); await up1?.close(); await up2?.close(); });

const post = (gw: TestGateway, path: string, body: unknown) => fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const rank = async (gw: TestGateway, body: Rec = {}) => await (await post(gw, '/v1/router/rank', { messages: [{ role: 'user', content: 'Which is right, A or B?' }], ...body })).json() as Rec;

test('a state trained on one replica is the state the other routes with after its poll', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await post(gwA, '/v1/chat/completions', { model: 'router', models: ['m-a'], messages: [{ role: 'user', content: 'Which is right, A or B?' }] });
    assert.equal(r.status, 200);
    ids.push(r.headers.get('x-inference-id')!);
    await r.text();
  }
  await gwA.services.router!.flush();
  await new Promise((r) => setTimeout(r, 200));
  const fb = await post(gwA, '/v1/feedback', ids.map((id) => ({ id, feedback: { ok: false } })));
  assert.equal(fb.status, 200);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await gwA.services.router!.learning.trainOnce(), true);
  const vA = gwA.services.router!.learning.state.version;
  assert.ok(vA >= 1);
  assert.equal(await gwB.services.router!.learning.refresh(), true);
  assert.equal(gwB.services.router!.learning.state.version, vA);
  const qa = (await rank(gwA)).candidates as Rec[];
  const qb = (await rank(gwB)).candidates as Rec[];
  assert.deepEqual(qb.map((c) => [c.id, c.quality]), qa.map((c) => [c.id, c.quality]), 'same state, same predictions');
  // Two replicas training at once: one version wins, the other reloads it.
  const [x, y] = await Promise.all([gwA.services.router!.learning.trainOnce(), gwB.services.router!.learning.trainOnce()]);
  assert.ok(!(x && y) || gwA.services.router!.learning.state.version !== gwB.services.router!.learning.state.version);
});

test('with Redis, an ejection decided by one replica applies on the other', async (t) => {
  if (redisDown) { t.skip(redisDown); return; }
  up1.fault({ status: 503 });
  const r = await post(gwA, '/v1/chat/completions', { model: 'router', models: ['m-a', 'm-b'], willingness_to_pay: 1e-9, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(r.status, 200);
  assert.equal((await r.json() as Rec).model, 'two/m-b');
  let ejected = false;
  for (let i = 0; i < 50 && !ejected; i++) {
    ejected = gwB.services.health.isEjected('one');
    if (!ejected) await new Promise((res) => setTimeout(res, 20));
  }
  assert.ok(ejected, 'replica B sees provider one ejected');
  const before = up1.requests.length;
  const rb = await post(gwB, '/v1/chat/completions', { model: 'router', models: ['m-a', 'm-b'], willingness_to_pay: 1e-9, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal((await rb.json() as Rec).model, 'two/m-b', 'B routes around it without a failed attempt of its own');
  assert.equal(up1.requests.length, before);
});

test('with Redis, the conversation affinity one replica remembers applies on the other', async (t) => {
  if (redisDown) { t.skip(redisDown); return; }
  const first = `Keep this in mind: ${'the shared prefix of a long conversation '.repeat(8)}`;
  const r = await post(gwA, '/v1/chat/completions', { model: 'router', models: ['m-c', 'm-a'], messages: [{ role: 'user', content: first }] });
  const served = await r.json() as { model: string; choices: Array<{ message: { content: string } }> };
  assert.equal(served.model, 'one/m-c');
  const follow = { models: ['m-c', 'm-a'], messages: [{ role: 'user', content: first }, { role: 'assistant', content: served.choices[0]!.message.content }, { role: 'user', content: 'and then?' }] };
  let affinity: unknown = null;
  for (let i = 0; i < 100 && affinity === null; i++) {
    affinity = (await rank(gwB, follow)).affinity;
    if (affinity === null) await new Promise((res) => setTimeout(res, 20));
  }
  assert.equal(affinity, 'one/m-c', 'replica B knows which model holds the conversation');
  assert.equal((await rank(gwA, { ...follow, messages: [{ role: 'user', content: 'another conversation' }, { role: 'assistant', content: 'x' }, { role: 'user', content: 'y' }] })).affinity, null);
});

test('with Redis, anything else published on the replicas\' channels is dropped; the replicas serve on and still apply real messages', async (t) => {
  if (redisDown) { t.skip(redisDown); return; }
  const pub = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  t.after(() => pub.disconnect());
  for (const channel of [`${prefix}eject`, `${prefix}affinity`]) {
    for (const junk of ['null', '42', '"x"', '[1,2]', 'not json', '{"provider":null}', '{"entries":null}', '{"entries":[null,5,[1]]}', '{"provider":"two","until":"soon"}']) {
      await pub.publish(channel, junk);
    }
  }
  await pub.publish(`${prefix}eject`, JSON.stringify({ provider: 'two', until: Date.now() + 400, from: 'another-replica' }));
  let ejected = false;
  for (let i = 0; i < 50 && !ejected; i++) {
    ejected = gwB.services.health.isEjected('two');
    if (!ejected) await new Promise((res) => setTimeout(res, 10));
  }
  assert.ok(ejected, 'the real message after the junk applies');
  for (const gw of [gwA, gwB]) assert.equal((await fetch(`${gw.url}/health`)).status, 200);
});
