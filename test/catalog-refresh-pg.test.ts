// Two gateway replicas sharing PostgreSQL (a fresh schema, dropped at the end): a refresh run by one
// (on its worker thread, as the periodic refresh runs) is stored once and served by both, listed in both
// record shapes and routable on the other replica without a restart; a refresh that fails on the other
// replica changes nothing for either. PostgreSQL being down fails the run when CI=true.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../src/serve.ts';
import { startMockModelLists, type MockModelLists } from './mocks/model-lists.ts';
import { startMockOpenAI } from './mocks/index.ts';
import type { MockUpstream } from './mocks/server.ts';
import { listData } from './fixtures/catalog/lists.ts';
import { writeRefreshConfig } from './helpers/catalog-refresh.ts';
import { dropSchema, freshSchema, PG_URL, pgAvailable } from './helpers/pg.ts';

const pgUp = await pgAvailable();
const schema = freshSchema('gw_catalog');
const NEW = 'openrouter/xiaomi/mimo-v2-pro';
type Rec = Record<string, any>;

let lists: MockModelLists; let chat: MockUpstream; let a: RunningGateway; let b: RunningGateway; let dir: string; let key: string;
before(async () => {
  if (!pgUp) return;
  lists = await startMockModelLists(listData());
  chat = await startMockOpenAI({ authOptional: true });
  dir = mkdtempSync(join(tmpdir(), 'gw-refresh-pg-'));
  const file = writeRefreshConfig(dir, lists, chat, { database_url: PG_URL }, { sources: ['openrouter', 'models.dev'] });
  const env = { GATEWAY_PG_SCHEMA: schema };
  a = await startGateway(file, env);
  b = await startGateway(file, env);
  key = (await a.services.admin!.createKey({ name: 'replicas' })).key;
});
after(async () => {
  if (!pgUp) return;
  await Promise.all([a?.stop(), b?.stop()]);
  await lists?.close();
  await chat?.close();
  rmSync(dir, { recursive: true, force: true });
  await dropSchema(schema);
});

const listing = async (gw: RunningGateway): Promise<Rec[]> => ((await (await fetch(`${gw.url}/v1/models?provider=openrouter`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Rec[] }).data;
const until = async (what: () => Promise<boolean>, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await what())) { if (Date.now() > end) throw new Error('timed out waiting'); await new Promise((r) => setTimeout(r, 100)); }
};

test('a refresh on one replica is served by both: listed in both shapes and routable without a restart', { skip: !pgUp && 'PostgreSQL is not reachable' }, async () => {
  assert.ok(!(await listing(a)).some((m) => m.id === NEW));
  assert.ok(!(await listing(b)).some((m) => m.id === NEW));
  const run = await a.services.catalog!.refreshNow();
  assert.equal(run?.outcome, 'ok', JSON.stringify(run));
  assert.equal(run?.overlayVersion, 1);
  for (const gw of [a, b]) {
    await until(async () => (await listing(gw)).some((m) => m.id === NEW));
    const rec = (await listing(gw)).find((m) => m.id === NEW)!;
    // Compact shape and detailed shape in one record.
    assert.deepEqual([rec.object, rec.owned_by, Number.isInteger(rec.created)], ['model', 'openrouter', true]);
    assert.deepEqual([rec.pricing.prompt, rec.pricing.completion, typeof rec.added_at, rec.reliability_tier], ['0.000001', '0.000003', 'string', 2]);
    assert.ok(rec.max_completion_tokens > 0);
    assert.match(gw.services.holder.current.version, /\.c1$/);
  }
  const r = await fetch(`${b.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: NEW, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal((await r.json() as Rec).model, NEW);
  assert.equal((b.services.catalog!.status()).overlay_version, 1);
});

test('a refresh that fails on the other replica keeps the catalog on both, and says so', { skip: !pgUp && 'PostgreSQL is not reachable' }, async () => {
  lists.faults.set('openrouter', { status: 502 });
  lists.faults.set('models.dev', { hang: true });
  try {
    const run = await b.services.catalog!.refreshNow();
    assert.ok(run && run.sources.every((s) => !s.ok && s.kept !== undefined), JSON.stringify(run));
    assert.equal(run.outcome, 'unchanged');
  } finally { lists.faults.clear(); }
  const health = await (await fetch(`${b.url}/health`)).json() as Rec;
  assert.deepEqual(health.catalog.last_run.failed_sources.map((s: Rec) => s.source).sort(), ['models.dev', 'openrouter']);
  for (const gw of [a, b]) {
    assert.ok((await listing(gw)).some((m) => m.id === NEW));
    assert.match(gw.services.holder.current.version, /\.c1$/);
  }
});
