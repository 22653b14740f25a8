// GET /v1/models on the repository's real config: 400+ models from 15+ providers, both record shapes,
// filters (provider, capability, deprecated), aliases and retirements, bytes cached per config version and query.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../src/serve.ts';

let gw: RunningGateway; let dir: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-cat-'));
  gw = await startGateway(new URL('../gateway.yaml', import.meta.url).pathname, { PORT: '0', GATEWAY_DB: join(dir, 'g.db') });
});
after(async () => { await gw.stop(); rmSync(dir, { recursive: true, force: true }); });

type Rec = Record<string, any>;
const list = async (q = ''): Promise<{ status: number; body: { object: string; data: Rec[] } }> => {
  const r = await fetch(`${gw.url}/v1/models${q}`);
  return { status: r.status, body: await r.json() as { object: string; data: Rec[] } };
};

test('the listing holds 200+ models of 15+ providers in both shapes', async () => {
  const { status, body } = await list();
  assert.equal(status, 200);
  assert.equal(body.object, 'list');
  assert.ok(body.data.length >= 200, `${body.data.length} models`);
  assert.ok(new Set(body.data.map((m) => m.owned_by)).size >= 15);
  const DEC = /^(0|[1-9]\d*)(\.\d+)?$/;
  const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
  for (const m of body.data) {
    assert.match(m.id, /^[a-z0-9-]+\/.+$/);
    assert.equal(m.object, 'model');
    assert.ok(Number.isInteger(m.created));
    assert.equal(m.id.split('/')[0], m.owned_by);
    for (const k of ['prompt', 'completion', 'image', 'request', 'web_search', 'internal_reasoning']) assert.match(m.pricing[k], DEC, `${m.id} ${k}`);
    assert.match(m.added_at, TS); assert.match(m.updated_at, TS);
    assert.ok(m.reliability_tier === 1 || m.reliability_tier === 2);
    assert.ok(Number.isInteger(m.max_completion_tokens) && m.max_completion_tokens > 0);
  }
});

test('?owned_by= filters by provider; an unknown provider gives an empty list', async () => {
  const { body } = await list('?owned_by=anthropic');
  assert.ok(body.data.length > 0);
  assert.ok(body.data.every((m) => m.owned_by === 'anthropic'));
  assert.deepEqual((await list('?owned_by=nobody')).body.data, []);
});

test('one model by id, and a 404 in the OpenAI envelope for an unknown one', async () => {
  const first = (await list('?owned_by=openai')).body.data[0]!;
  const r = await fetch(`${gw.url}/v1/models/${first.id}`);
  assert.equal(r.status, 200);
  assert.equal((await r.json() as Rec).id, first.id);
  const miss = await fetch(`${gw.url}/v1/models/openai/not-a-model`);
  assert.equal(miss.status, 404);
  assert.equal((await miss.json() as Rec).error.code, 'model_not_found');
});

test('the listing is serialised once per config version', async () => {
  const cfg = gw.services.holder.current;
  await list();
  const cached = cfg.listingCache.get('||');
  assert.ok(cached);
  await list();
  assert.equal(cfg.listingCache.get('||'), cached);
});

test('?provider= is ?owned_by=; ?capability= keeps models with every named capability', async () => {
  const a = (await list('?provider=anthropic')).body.data;
  assert.deepEqual(a.map((m) => m.id), (await list('?owned_by=anthropic')).body.data.map((m) => m.id));
  const tools = (await list('?capability=tools')).body.data;
  assert.ok(tools.length > 100 && tools.every((m) => m.capabilities.tools === true));
  const both = (await list('?capability=vision,json_schema&capability=reasoning')).body.data;
  assert.ok(both.length > 10);
  assert.ok(both.every((m) => m.capabilities.vision && m.capabilities.structured_output && m.capabilities.reasoning));
  assert.ok(both.length < tools.length);
});

test('deprecated models are listed only with ?include=deprecated, with their status; retired ones never', async () => {
  const plain = (await list()).body.data;
  const withDep = (await list('?include=deprecated')).body.data;
  assert.ok(plain.every((m) => m.status === undefined));
  const dep = withDep.filter((m) => m.status === 'deprecated');
  assert.ok(dep.length > 0);
  assert.equal(withDep.length, plain.length + dep.length);
  assert.ok(!withDep.some((m) => m.id === 'anthropic/claude-3-opus-20240229'));
});

test('aliases are listed with alias_for, resolve by GET /v1/models/{id}, and the dated record names them', async () => {
  // Haiku 4.5 has no retirement date (Sonnet 4.5, the example until its end of life on 2026-11-30, failed here that day).
  const data = (await list('?provider=anthropic')).body.data;
  const alias = data.find((m) => m.id === 'anthropic/claude-haiku-4-5')!;
  assert.equal(alias.alias_for, 'anthropic/claude-haiku-4-5-20251001');
  const dated = data.find((m) => m.id === 'anthropic/claude-haiku-4-5-20251001')!;
  assert.deepEqual(dated.aliases, ['anthropic/claude-haiku-4-5']);
  assert.equal(dated.canonical_model, 'claude-haiku-4-5-20251001');
  const one = await fetch(`${gw.url}/v1/models/anthropic/claude-haiku-4-5`);
  assert.equal(one.status, 200);
  const rec = await one.json() as Rec;
  assert.deepEqual([rec.id, rec.alias_for, rec.pricing.prompt], ['anthropic/claude-haiku-4-5', 'anthropic/claude-haiku-4-5-20251001', dated.pricing.prompt]);
  // A deprecated model's alias is listed with ?include=deprecated only, and never past its retirement.
  const all = (await list('?include=deprecated')).body.data;
  const deprecatedIds = new Set(all.filter((m) => m.status === 'deprecated').map((m) => m.id));
  for (const m of all) if (m.alias_for && deprecatedIds.has(m.alias_for)) assert.ok(!data.some((x) => x.id === m.id), m.id);
  for (const m of all) if (m.retires_at) assert.ok(Date.parse(m.retires_at) > Date.now(), `${m.id} listed after its retirement ${m.retires_at}`);
});

test('a retired model is a 404 naming its successor; bad filters are 400s naming the parameter', async () => {
  const r = await fetch(`${gw.url}/v1/models/anthropic/claude-3-opus-20240229`);
  assert.equal(r.status, 404);
  const err = (await r.json() as Rec).error;
  assert.equal(err.code, 'model_retired');
  assert.match(err.message, /retired on 2026-01-05; use "anthropic\/claude-opus-4-8"/);
  for (const [q, param] of [['?capability=telepathy', 'capability'], ['?include=retired', 'include']]) {
    const bad = await fetch(`${gw.url}/v1/models${q}`);
    assert.equal(bad.status, 400, q);
    assert.equal((await bad.json() as Rec).error.param, param);
  }
});

test('each query is serialised once per config version; the whole listing stays fast', async () => {
  const cfg = gw.services.holder.current;
  await list('?capability=tools');
  const key = [...cfg.listingCache.keys()].find((k) => k.includes('tools'))!;
  const cached = cfg.listingCache.get(key);
  await list('?capability=tools');
  assert.equal(cfg.listingCache.get(key), cached);
  // Unknown providers are answered but not cached (the key space stays bounded).
  await list('?provider=nobody-at-all');
  assert.ok(![...cfg.listingCache.keys()].some((k) => k.startsWith('nobody')));
  const { body } = await list();
  assert.ok(body.data.length >= 300, `${body.data.length}`);
  assert.ok((await list('?include=deprecated')).body.data.length >= 450);
});

test('clients that accept gzip get the cached listing compressed; the body is the same listing', async () => {
  const { request } = await import('undici');
  const gz = await request(`${gw.url}/v1/models`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gz.headers.vary, 'accept-encoding');
  const { gunzipSync } = await import('node:zlib');
  const body = JSON.parse(gunzipSync(Buffer.from(await gz.body.arrayBuffer())).toString('utf8')) as { data: Rec[] };
  const plain = await request(`${gw.url}/v1/models`);
  assert.equal(plain.headers['content-encoding'], undefined);
  const raw = Buffer.from(await plain.body.arrayBuffer());
  assert.deepEqual(body, JSON.parse(raw.toString('utf8')));
  assert.ok(Number(gz.headers['content-length']) * 5 < raw.length);
});
