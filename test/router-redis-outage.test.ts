// Router mode with its Redis gone and back: two replicas share ejections and conversation affinity
// through Redis. Killed, each routes on its own state (served at once, the local affinity still
// used, no request waits on Redis); restarted empty, the sharing resumes without a restart of either.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway, type TestProvider } from './helpers/gateway.ts';
import { startOwnRedis, type OwnRedis } from './helpers/redis-server.ts';
type Rec = Record<string, unknown>;
let up1: MockUpstream; let up2: MockUpstream; let gwA: TestGateway; let gwB: TestGateway; let redis: OwnRedis;
const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const model = (name: string, prompt: string) => ({ name, pricing: { prompt, completion: prompt }, capabilities: caps, context_window: 16000, max_completion_tokens: 2000 });
before(async () => {
  redis = await startOwnRedis();
  up1 = await startMockOpenAI(); up2 = await startMockOpenAI();
  const providers: TestProvider[] = [
    { id: 'one', format: 'openai-chat', base_url: up1.url, models: [model('m-a', '0.000001'), { ...model('m-c', '0.000001'), capabilities: { ...caps, prompt_caching: true }, cache_min_tokens: 16 }] },
    { id: 'two', format: 'openai-chat', base_url: up2.url, models: [model('m-b', '0.000002')] },
  ];
  const gateway = (db?: string): Rec => ({
    reload: { watch: false }, workers: { threads: 1 },
    upstream: { max_attempts: 2, retry_budget_floor: 1000, ejection: { consecutive_failures: 1, base_ms: 5000, max_ms: 5000 } },
    storage: { redis_url: redis.url, ...(db ? { sqlite_path: db } : {}) },
    router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
  });
  gwA = await startTestGateway({ providers, gateway: gateway() });
  gwB = await startTestGateway({ providers, gateway: gateway(join(gwA.dir, 'gateway.db')) });
});
after(async () => { await gwB?.stop(); await gwA?.stop(); await up1?.close(); await up2?.close(); await redis?.stop(); });
const post = (gw: TestGateway, path: string, body: unknown) => fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(10000) });
const rank = async (gw: TestGateway, body: Rec = {}) => await (await post(gw, '/v1/router/rank', { messages: [{ role: 'user', content: 'Which is right?' }], ...body })).json() as Rec;

async function affinityCase(tag: string) {
  const first = `${tag}: ${'the shared prefix of a long conversation '.repeat(8)}`;
  const t0 = Date.now();
  const r = await post(gwA, '/v1/chat/completions', { model: 'router', models: ['m-c', 'm-a'], messages: [{ role: 'user', content: first }] });
  const served = await r.json() as any;
  const ms = Date.now() - t0;
  const follow = { models: ['m-c', 'm-a'], messages: [{ role: 'user', content: first }, { role: 'assistant', content: served.choices?.[0]?.message?.content ?? 'x' }, { role: 'user', content: 'and then?' }] };
  let affinity: unknown = null;
  for (let i = 0; i < 50 && affinity === null; i++) { affinity = (await rank(gwB, follow)).affinity; if (affinity === null) await new Promise((res) => setTimeout(res, 20)); }
  const local = (await rank(gwA, follow)).affinity;
  return { status: r.status, ms, model: served.model, remoteAffinity: affinity, localAffinity: local };
}

test('Redis killed under router traffic: each replica routes on its own state; restarted, sharing resumes', async () => {
  const up = await affinityCase('before');
  assert.deepEqual([up.status, up.model, up.remoteAffinity, up.localAffinity], [200, 'one/m-c', 'one/m-c', 'one/m-c']);
  // Every connection the two gateways hold (limiter, ejection and affinity channels), to know when all are back.
  const admin = redis.client();
  const connections = async (): Promise<number> => ((await admin.client('LIST')) as string).trim().split('\n').length;
  const before = await connections();
  await redis.kill();
  for (let i = 0; i < 3; i++) {
    const c = await affinityCase(`down ${i}`);
    assert.deepEqual([c.status, c.model, c.localAffinity], [200, 'one/m-c', 'one/m-c'], `down ${i}: ${JSON.stringify(c)}`);
    assert.equal(c.remoteAffinity, null, 'nothing reaches the other replica while Redis is down');
    assert.ok(c.ms < 1000, `served without waiting on Redis: ${c.ms} ms`);
  }
  // A provider failing while Redis is down: the attempt moves on, locally.
  up2.fault({ status: 503 });
  const e = await post(gwA, '/v1/chat/completions', { model: 'router', models: ['m-b', 'm-a'], messages: [{ role: 'user', content: 'first try fails' }] });
  assert.deepEqual([e.status, ((await e.json()) as Rec).model], [200, 'one/m-a']);
  for (const gw of [gwA, gwB]) assert.equal((await fetch(`${gw.url}/health`)).status, 200);

  await redis.restart();
  let now = 0;
  for (let i = 0; i < 100 && now < before; i++) { await new Promise((r) => setTimeout(r, 100)); now = await connections().catch(() => 0); }
  assert.equal(now, before, 'every connection came back by itself');
  let back: Awaited<ReturnType<typeof affinityCase>> | null = null;
  for (let i = 0; i < 50 && back?.remoteAffinity !== 'one/m-c'; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100));
    back = await affinityCase(`back ${i}`);
    assert.equal(back.status, 200);
  }
  assert.equal(back!.remoteAffinity, 'one/m-c', 'affinity reaches the other replica again');
  // An ejection decided on A after the restart applies on B.
  up1.fault({ status: 503 });
  const e2 = await post(gwA, '/v1/chat/completions', { model: 'router', models: ['m-a', 'm-b'], messages: [{ role: 'user', content: 'after the restart' }] });
  assert.deepEqual([e2.status, ((await e2.json()) as Rec).model], [200, 'two/m-b']);
  let ejected = false;
  for (let i = 0; i < 150 && !ejected; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 20));
    const rb = await rank(gwB, { models: ['m-a', 'm-b'] });
    ejected = (rb.candidates as Array<{ id: string; provider_ejected?: boolean }>).some((c) => c.id === 'one/m-a' && c.provider_ejected === true);
  }
  assert.ok(ejected, 'replica B sees provider one ejected');
  // Subscribers cut off (the channel's messages in between are lost): an ejection published meanwhile
  // still reaches B, from the key it is stored under, read again once B's subscription is back.
  await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
  up2.fault({ status: 503 });
  const e3 = await post(gwA, '/v1/chat/completions', { model: 'router', models: ['m-b'], messages: [{ role: 'user', content: 'while B is not listening' }] });
  await e3.text(); // its first attempt failed, so A ejected provider two (a retry may still answer)
  let seenB = false;
  for (let i = 0; i < 150 && !seenB; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 20));
    const rb = await rank(gwB, { models: ['m-b'] });
    seenB = (rb.candidates as Array<{ id: string; provider_ejected?: boolean }>).some((c) => c.id === 'two/m-b' && c.provider_ejected === true);
  }
  assert.ok(seenB, 'replica B applies the ejection it missed on the channel');
});
