// Stored responses: previous_response_id rebuilds the conversation for the upstream (instructions not
// carried over), GET / DELETE /v1/responses/{id} and its input_items pages, ids scoped to the key that
// made them, store: false and responses.retention_days 0 store nothing, a resp_ prefix is accepted,
// a response is readable at once (before its row is committed), and each turn is recorded and billed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { responseStoreOf } from '../src/http/responses-route.ts';

type Rec = Record<string, any>;

let ant: MockUpstream; let gw: TestGateway; let keyA: string; let keyB: string;
const clientFor = (key: string): OpenAI => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

before(async () => {
  ant = await startMockAnthropic();
  gw = await startTestGateway({ providers: [{ id: 'ant', format: 'anthropic-messages', base_url: ant.url }], gateway: { auth: { enabled: true } } });
  keyA = (await gw.services.admin!.createKey({ name: 'a' })).key;
  keyB = (await gw.services.admin!.createKey({ name: 'b' })).key;
});
after(async () => { await gw.stop(); await ant.close(); });

const sentMessages = (): Rec[] => (ant.requests.at(-1)!.body as Rec).messages;

test('previous_response_id: the stored turns go upstream before the new input, instructions are not carried over', async () => {
  const c = clientFor(keyA);
  ant.reset();
  const first = await c.responses.create({ model: 'ant/test-model', instructions: 'Be brief.', input: 'my name is Ada' });
  assert.equal((first as Rec).store, true);
  // Read at once: the row may not be committed yet, the answer is served from memory.
  const second = await c.responses.create({ model: 'ant/test-model', input: 'what is my name', previous_response_id: first.id });
  assert.equal(second.previous_response_id, first.id);
  assert.deepEqual(sentMessages(), [
    { role: 'user', content: [{ type: 'text', text: 'my name is Ada' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Echo: my name is Ada' }] },
    { role: 'user', content: [{ type: 'text', text: 'what is my name' }] },
  ]);
  assert.equal((ant.requests.at(-1)!.body as Rec).system, undefined);
  await responseStoreOf(gw.services)!.settle();
  // Three deep, from the database this time, with a resp_ prefix on the id.
  const third = await c.responses.create({ model: 'ant/test-model', input: 'and again', previous_response_id: `resp_${second.id}`, stream: true });
  for await (const _ of third) { /* drain */ }
  assert.equal(sentMessages().length, 5);
  assert.deepEqual(sentMessages()[4], { role: 'user', content: [{ type: 'text', text: 'and again' }] });
});

test('GET returns the stored response; input_items pages; DELETE removes it; another key sees nothing', async () => {
  const a = clientFor(keyA);
  const b = clientFor(keyB);
  const r = await a.responses.create({ model: 'ant/test-model', input: [
    { role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }, { role: 'user', content: [{ type: 'input_text', text: 'three' }] },
  ] });
  const got = await a.responses.retrieve(r.id);
  assert.deepEqual({ ...got, output_text: undefined }, { ...r, output_text: undefined });
  const page = await a.responses.inputItems.list(r.id, { limit: 2 });
  assert.equal(page.data.length, 2);
  assert.equal(page.has_more, true);
  assert.deepEqual(page.data.map((i) => (i as Rec).content[0].text), ['three', 'two']);
  const asc = await a.responses.inputItems.list(r.id, { order: 'asc' });
  assert.deepEqual(asc.data.map((i) => (i as Rec).content[0].text), ['one', 'two', 'three']);
  assert.deepEqual(asc.data.map((i) => (i as Rec).content[0].type), ['input_text', 'output_text', 'input_text']);
  const all: string[] = [];
  for await (const it of a.responses.inputItems.list(r.id, { limit: 1 })) all.push((it as Rec).content[0].text);
  assert.deepEqual(all, ['three', 'two', 'one'], 'the SDK pages through with after=');

  await assert.rejects(b.responses.retrieve(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(b.responses.create({ model: 'ant/test-model', input: 'x', previous_response_id: r.id }), (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError);
    assert.equal((e.error as Rec).code, 'previous_response_not_found');
    assert.equal((e.error as Rec).param, 'previous_response_id');
    return true;
  });
  await assert.rejects(b.responses.delete(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);

  await a.responses.delete(r.id);
  await assert.rejects(a.responses.retrieve(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(a.responses.create({ model: 'ant/test-model', input: 'x', previous_response_id: r.id }), (e: unknown) => e instanceof OpenAI.BadRequestError);
});

test('store: false is not stored; every turn is recorded with usage and cost', async () => {
  const c = clientFor(keyA);
  const r = await c.responses.create({ model: 'ant/test-model', input: 'not kept', instructions: 'private instructions', store: false });
  assert.equal((r as Rec).store, false);
  await assert.rejects(c.responses.retrieve(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  await new Promise((res) => setTimeout(res, 100));
  const rec = (await gw.services.store!.listInferences({ limit: 100 })).find((x) => x.id === r.id);
  assert.ok(rec, 'recorded');
  assert.equal(rec.route, '/v1/responses');
  assert.equal(rec.clientFormat, 'openai-responses');
  assert.equal(rec.inputTokens + rec.cacheReadTokens + rec.cacheWriteTokens, r.usage!.input_tokens);
  assert.equal(rec.outputTokens, r.usage!.output_tokens);
  assert.notEqual(rec.costUsd, '0');
  // log_bodies: metadata keeps parameters, never conversation text (instructions included).
  assert.ok(rec.requestBody && !rec.requestBody.includes('private') && !rec.requestBody.includes('not kept'), rec.requestBody ?? '');
  // The response id is a valid feedback id at once.
  const fb = await fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' }, body: JSON.stringify([{ id: r.id, feedback: { good: true } }]) });
  assert.equal(fb.status, 200);
  assert.ok(((await fb.json()) as Rec[])[0].feedback_ids);
});

test('responses.retention_days 0 stores nothing and says store: false', async (t) => {
  const mock = await startMockAnthropic();
  const g = await startTestGateway({ providers: [{ id: 'ant', format: 'anthropic-messages', base_url: mock.url }], gateway: { responses: { retention_days: 0 } } });
  t.after(async () => { await g.stop(); await mock.close(); });
  const c = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const r = await c.responses.create({ model: 'ant/test-model', input: 'hello' });
  assert.equal((r as Rec).store, false);
  await assert.rejects(c.responses.retrieve(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
});

test('retention 0 with router mode and a body the worker pool prepared: the answer still says store: false', async (t) => {
  const mock = await startMockAnthropic();
  const g = await startTestGateway({
    providers: [{ id: 'ant', format: 'anthropic-messages', base_url: mock.url }],
    gateway: { responses: { retention_days: 0 }, workers: { threads: 1, convert_threshold_bytes: 1000 }, router: { exploration: { share: 0 } } },
  });
  t.after(async () => { await g.stop(); await mock.close(); });
  const c = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const input = `hello ${'padding '.repeat(400)}`; // above the pool's threshold
  const r = await c.responses.create({ model: 'router', models: ['ant/test-model'], input } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
  assert.equal(r.model, 'ant/test-model');
  assert.equal((r as Rec).store, false);
  await assert.rejects(c.responses.retrieve(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
});

test('GET and DELETE errors in OpenAI envelope', async () => {
  const h = { authorization: `Bearer ${keyA}` };
  let r = await fetch(`${gw.url}/v1/responses/01a20958-c42c-7ca1-bd54-18ce92424ad0`, { headers: h });
  assert.equal(r.status, 404);
  assert.equal(((await r.json()) as Rec).error.code, 'response_not_found');
  r = await fetch(`${gw.url}/v1/responses/x/other`, { headers: h });
  assert.equal(r.status, 404);
  r = await fetch(`${gw.url}/v1/responses/%E0%A4%A/input_items`, { headers: h });
  assert.equal(r.status, 400);
  r = await fetch(`${gw.url}/v1/responses/abc`, { method: 'DELETE', headers: h });
  assert.equal(r.status, 404);
  r = await fetch(`${gw.url}/v1/responses/abc`);
  assert.equal(r.status, 401, 'a key is required');
  const c = clientFor(keyA);
  const made = await c.responses.create({ model: 'ant/test-model', input: 'x' });
  r = await fetch(`${gw.url}/v1/responses/${made.id}/input_items?limit=0`, { headers: h });
  assert.equal(r.status, 400);
  assert.equal(((await r.json()) as Rec).error.param, 'limit');
  r = await fetch(`${gw.url}/v1/responses/${made.id}/input_items?after=nope`, { headers: h });
  assert.equal(((await r.json()) as Rec).error.param, 'after');
});

test('a failed upstream call stores nothing and answers in OpenAI envelope', async () => {
  const c = clientFor(keyA);
  ant.reset();
  ant.fault({ status: 500 });
  ant.fault({ status: 500 });
  ant.fault({ status: 500 });
  await assert.rejects(c.responses.create({ model: 'ant/test-model', input: 'boom' }), (e: unknown) => e instanceof OpenAI.APIError && e.status === 502);
  await new Promise((res) => setTimeout(res, 100));
  const recs = await gw.services.store!.listInferences({ limit: 5 });
  assert.ok(recs.some((x) => x.route === '/v1/responses' && x.status === 502));
});

test('the database down: GET, DELETE and previous_response_id answer 503 storage_unavailable with retry-after, and a new answer is still served', async () => {
  const c = clientFor(keyA);
  const made = await c.responses.create({ model: 'ant/test-model', input: 'kept before the outage' });
  await responseStoreOf(gw.services)!.settle();
  const sql = gw.services.store!.sql as { all: (...a: unknown[]) => Promise<unknown>; run: (...a: unknown[]) => Promise<unknown> };
  const { all, run } = sql;
  const down = async (): Promise<never> => { throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }); };
  sql.all = down; sql.run = down;
  try {
    const h = { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' };
    for (const r of [
      await fetch(`${gw.url}/v1/responses/${made.id}`, { headers: h }),
      await fetch(`${gw.url}/v1/responses/${made.id}`, { method: 'DELETE', headers: h }),
      await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: h, body: JSON.stringify({ model: 'ant/test-model', input: 'x', previous_response_id: made.id }) }),
    ]) {
      assert.equal(r.status, 503);
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(((await r.json()) as Rec).error.code, 'storage_unavailable');
    }
    const fresh = await c.responses.create({ model: 'ant/test-model', input: 'served while the database is down' });
    assert.equal(fresh.output_text, 'Echo: served while the database is down');
  } finally { sql.all = all; sql.run = run; }
  assert.equal((await c.responses.retrieve(made.id)).id, made.id, 'readable again once the database is back');
});

test('responses.inputTokens.count: the prompt of a create request, stored turns included', async () => {
  const c = clientFor(keyA);
  const first = await c.responses.create({ model: 'ant/test-model', input: 'remember the number forty-two' });
  const alone = await c.responses.inputTokens.count({ model: 'ant/test-model', input: 'and now?' });
  const chained = await c.responses.inputTokens.count({ model: 'ant/test-model', input: 'and now?', previous_response_id: first.id });
  assert.equal(alone.object, 'response.input_tokens');
  assert.ok(alone.input_tokens > 0);
  assert.ok(chained.input_tokens > alone.input_tokens + 5, `${chained.input_tokens} > ${alone.input_tokens}`);
  await assert.rejects(clientFor(keyB).responses.inputTokens.count({ model: 'ant/test-model', input: 'x', previous_response_id: first.id }), (e: unknown) => e instanceof OpenAI.BadRequestError);
  await assert.rejects(c.responses.inputTokens.count({ input: 'x' }), (e: unknown) => e instanceof OpenAI.BadRequestError && (e.error as Rec).param === 'model');
});
