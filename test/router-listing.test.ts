// GET /v1/models lists the router beside the models, so a client that picks its model from the listing
// (a chat UI, an agent's model list) can pick router mode: one record summarising the router-eligible
// models (largest context and output, capabilities at least one has, how many), prices "0" (the
// spec's "not available": a routed answer is billed at the chosen model's), filtered like the rest,
// following reloads, absent when nothing can be routed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway, type TestProvider } from './helpers/gateway.ts';

type Rec = Record<string, any>;
const caps = (over: Rec = {}) => ({ tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false, ...over });
let up: MockUpstream; let gw: TestGateway; let main: TestProvider;

before(async () => {
  up = await startMockOpenAI();
  main = {
    id: 'op', format: 'openai-chat', base_url: up.url,
    models: [
      { name: 'gpt-4o-mini', pricing: TEST_PRICING, capabilities: caps(), context_window: 100_000, max_completion_tokens: 8_000 },
      { name: 'gpt-4o', pricing: TEST_PRICING, capabilities: caps({ vision: true }), context_window: 200_000, max_completion_tokens: 16_000, modalities: { input: ['text', 'image'], output: ['text'] } },
    ],
  };
  // `local` is a server nobody said runs (its variable unset): no candidate, so its larger limits and JSON schema must not show.
  gw = await startTestGateway({
    providers: [main, { id: 'local', format: 'openai-chat', base_url: up.url, router_requires_env: ['LISTING_TEST_UNSET'], models: [{ name: 'big', pricing: TEST_PRICING, capabilities: caps({ structured_output: true }), context_window: 2_000_000, max_completion_tokens: 64_000 }] }],
    gateway: { reload: { watch: false }, router: { exploration: { share: 0 } } },
  });
});
after(async () => { await gw?.stop(); await up?.close(); });

const list = async (q = ''): Promise<Rec[]> => {
  const r = await fetch(`${gw.url}/v1/models${q}`);
  assert.equal(r.status, 200);
  return ((await r.json()) as { data: Rec[] }).data;
};

test('the listing holds one router record in id order, summarising the router-eligible models in the spec shape', async () => {
  const data = await list();
  const ids = data.map((m) => m.id);
  assert.deepEqual(ids, [...ids].sort(), 'still sorted by id');
  const router = data.filter((m) => m.id === 'router');
  assert.equal(router.length, 1);
  const r = router[0]!;
  assert.equal(r.object, 'model');
  assert.equal(r.owned_by, 'router');
  assert.equal(r.candidates, 2, 'the two op models; the local server is no candidate');
  assert.equal(r.context_length, 200_000);
  assert.equal(r.max_completion_tokens, 16_000);
  assert.deepEqual(r.architecture.input_modalities, ['image', 'text']);
  assert.equal(r.capabilities.vision, true);
  assert.equal(r.capabilities.tools, true);
  assert.equal(r.capabilities.structured_output, undefined, 'only the models that cannot be routed have it');
  for (const k of ['prompt', 'completion', 'image', 'request', 'web_search', 'internal_reasoning']) assert.equal(r.pricing[k], '0');
  assert.equal(r.created, Math.max(...data.filter((m) => m.owned_by === 'op').map((m) => m.created)), 'the newest candidate\'s');
  assert.match(r.added_at, /^\d{4}-\d{2}-\d{2}T/);
  assert.ok(r.reliability_tier === 1 || r.reliability_tier === 2);
  assert.match(r.description, /2 models/);
  const one = await fetch(`${gw.url}/v1/models/router`);
  assert.equal(one.status, 200);
  assert.deepEqual(await one.json(), r);
});

test('filters: ?provider=router gives it alone, another provider leaves it out, capabilities need a candidate that has them', async () => {
  assert.deepEqual((await list('?provider=router')).map((m) => m.id), ['router']);
  assert.deepEqual((await list('?owned_by=router')).map((m) => m.id), ['router']);
  assert.ok(!(await list('?provider=op')).some((m) => m.id === 'router'));
  assert.ok((await list('?capability=vision')).some((m) => m.id === 'router'));
  assert.ok(!(await list('?capability=json_schema')).some((m) => m.id === 'router'), 'no candidate writes to a JSON schema');
  const gz = await fetch(`${gw.url}/v1/models?provider=router`, { headers: { 'accept-encoding': 'gzip' } });
  assert.deepEqual(((await gz.json()) as { data: Rec[] }).data.map((m) => m.id), ['router']);
});

test('the official openai SDK lists the router, retrieves it, and a request for the model it listed is routed', async () => {
  const client = new OpenAI({ apiKey: 'unused', baseURL: `${gw.url}/v1` });
  const ids: string[] = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.ok(ids.includes('router'));
  const r = await client.models.retrieve('router');
  assert.equal(r.owned_by, 'router');
  const answer = await client.chat.completions.create({ model: r.id, messages: [{ role: 'user', content: 'Hello' }] });
  assert.match(answer.model, /^op\/gpt-4o(-mini)?$/, 'the answer names the model chosen');
});

test('a reload that changes the eligible models changes the record; with none eligible it is gone', async () => {
  gw.writeProvider({ ...main, models: [...main.models!, { name: 'gpt-5', pricing: TEST_PRICING, capabilities: caps({ structured_output: true }), context_window: 400_000, max_completion_tokens: 128_000 }] });
  assert.deepEqual(await gw.services.holder.reload().then((r) => r.ok && r.changed), true);
  const r = (await list()).find((m) => m.id === 'router')!;
  assert.equal(r.candidates, 3);
  assert.equal(r.context_length, 400_000);
  assert.equal(r.capabilities.structured_output, true);
  gw.writeProvider({ ...main, api_key: '' });
  assert.deepEqual(await gw.services.holder.reload().then((r) => r.ok && r.changed), true);
  assert.ok(!(await list()).some((m) => m.id === 'router'), 'no provider can authenticate: nothing to route to');
  const one = await fetch(`${gw.url}/v1/models/router`);
  assert.equal(one.status, 404);
  assert.equal(((await one.json()) as Rec).error.code, 'model_not_found');
});
