// GET /v1/models on the repository's real config: 200+ models from 15+ providers, both record shapes,
// ?owned_by= filtering, a single model by id, served from bytes cached per config version.
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
  const cached = cfg.listingCache.get('');
  assert.ok(cached);
  await list();
  assert.equal(cfg.listingCache.get(''), cached);
});
