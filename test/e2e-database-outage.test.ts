// The gateway while its PostgreSQL is unreachable (a TCP proxy the test controls in front of the shared
// server): feedback answers 200 with a per-event 503 for inferences it cannot check (never "does not
// exist"); SIGTERM that cannot write its rows says so ("stopped with data loss", exit 1) instead of
// "stopped cleanly"; after the database returns, queued rows land. A key the gateway has not loaded
// (made by another replica or the CLI) is a 503 while the store cannot be read to look for it, not a
// 401 "Invalid API key" (which clients take as final); keys it holds go on being served.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { spawnGateway, writeGatewayConfig } from './helpers/process.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';
import { openStore } from '../src/store/open.ts';
import { KeyAdmin } from '../src/auth/admin.ts';
import { PG_URL } from './helpers/pg.ts';

const pgUp = await pgAvailable();

const schemas: string[] = [];
let oa: MockUpstream;
before(async () => { oa = await startMockOpenAI(); });
after(async () => {
  await oa?.close();
  if (pgUp) for (const s of schemas) await dropSchema(s);
});

const newSchema = (tag: string): string => { const s = freshSchema(`gw_out_${tag}`); schemas.push(s); return s; };
const chat = async (url: string, headers: Record<string, string> = {}): Promise<string> => {
  const r = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(r.status, 200);
  return ((await r.json()) as { id: string }).id;
};

describe('PostgreSQL unreachable', { skip: !pgUp }, () => {
  test('feedback: 200 with a per-event 503 for flushed inferences, never "does not exist"; accepted again once it is back', async (t) => {
    const proxy: TcpProxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    const schema = newSchema('fb');
    const gw: TestGateway = await startTestGateway({
      providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
      gateway: { storage: { database_url: proxy.url(), writer: { batch_size: 1000, flush_ms: 20, max_queue: 10000 } } },
      env: { GATEWAY_PG_SCHEMA: schema },
    });
    t.after(async () => { proxy.up(); await gw.stop(); await proxy.close(); });
    const id = await chat(gw.url);
    // Flushed: no longer in the writer's memory, only in the database.
    const until = Date.now() + 5000;
    while (gw.services.store && (await gw.services.store.getInference(id)) === null && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    proxy.down();
    const send = async () => {
      const r = await fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ id, feedback: { thumbs: true } }, { id: 'x', feedback: {} }]) });
      return { status: r.status, body: (await r.json()) as Array<{ feedback_ids: Record<string, string> | null; error: { status_code: number; message: string } | null }> };
    };
    const down = await send();
    assert.equal(down.status, 200);
    assert.equal(down.body[0]?.error?.status_code, 503, JSON.stringify(down.body));
    assert.doesNotMatch(down.body[0]!.error!.message, /does not exist/);
    assert.equal(down.body[1]?.error?.status_code, 400);
    proxy.up();
    const back = await send();
    assert.equal(back.body[0]?.error, null, JSON.stringify(back.body));
    assert.ok(back.body[0]?.feedback_ids?.thumbs);
  });

  test('auth: a key made elsewhere is a 503 while the store is unreachable (never 401), a key held is served, a malformed one is 401; 200 once it is back', async (t) => {
    const proxy: TcpProxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    const schema = newSchema('auth');
    const gw: TestGateway = await startTestGateway({
      providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
      gateway: { auth: { enabled: true }, storage: { database_url: proxy.url(), writer: { flush_ms: 20 } }, reload: { watch: false } },
      env: { GATEWAY_PG_SCHEMA: schema },
    });
    const other = await openStore({ sqlitePath: '', databaseUrl: PG_URL, pgSchema: schema });
    t.after(async () => { proxy.up(); await gw.stop(); await other.close(); await proxy.close(); });
    const { key: held } = await gw.services.admin!.createKey({ name: 'held' });
    const { key: late } = await new KeyAdmin(other).createKey({ name: 'made elsewhere' });
    const call = async (key: string) => {
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      return { status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as { error?: { code: string; message: string } } };
    };
    assert.equal((await call(held)).status, 200);
    proxy.down();
    for (let i = 0; i < 2; i++) { // the reload it tries, then the same within the reload throttle
      const r = await call(late);
      assert.equal(r.status, 503, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, 'storage_unavailable');
      assert.equal(r.retryAfter, '5');
      assert.match(r.body.error!.message, /key store cannot be read/);
    }
    assert.equal((await call(held)).status, 200, 'the keys it holds are served from memory');
    assert.equal((await call('not-a-gateway-key')).status, 401);
    proxy.up();
    await new Promise((r) => setTimeout(r, 1100)); // past the reload throttle
    const back = await call(late);
    assert.equal(back.status, 200, JSON.stringify(back.body));
  });

  test('SIGTERM with the database gone: the rows it could not write are reported ("stopped with data loss", exit 1), not "stopped cleanly"', async (t) => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    const schema = newSchema('stop');
    const { dir, configFile } = writeGatewayConfig([{ id: 'mockai', format: 'openai-chat', base_url: oa.url }], {
      storage: { database_url: proxy.url(), writer: { batch_size: 1000, flush_ms: 60_000, max_queue: 10000 } },
    });
    t.after(async () => { await proxy.close(); rmSync(dir, { recursive: true, force: true }); });
    const gw = await spawnGateway(configFile, { GATEWAY_PG_SCHEMA: schema });
    t.after(() => gw.stop('SIGKILL'));
    for (let i = 0; i < 5; i++) await chat(gw.url);
    proxy.down();
    const exit = await gw.stop('SIGTERM');
    assert.equal(exit.code, 1, gw.output());
    assert.doesNotMatch(gw.output(), /stopped cleanly/);
    assert.match(gw.output(), /stopped with data loss: 5 record\/feedback rows were dropped since start \(5 still unwritten at shutdown/);
  });
});
