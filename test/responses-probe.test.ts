// Found by probing the Responses API: bodies the official types allow in shape but not in content are
// a 400 in OpenAI's envelope naming the field, never a 500 from the decoder that trusted them; a
// conversation longer than the chain limit is refused as too long, not as one with a deleted turn; a
// translated model's reasoning (the gateway's token) is left out of what a native Responses server gets,
// and so are the ids the gateway gave stored items, which carry no prefix the API accepts; a relayed
// stream's error event before any content is answered with the status its code stands for; an empty
// conversation is not sent to a model to be compacted; an id with a NUL (which PostgreSQL refuses as a
// parameter) is not found, not the database down.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { insertStoredResponse } from '../src/responses/rows.ts';
import { MAX_CHAIN } from '../src/responses/store.ts';
import { randomUUID } from 'node:crypto';
import { startRawUpstream, sse, type RawUpstream } from './helpers/raw-upstream.ts';
import { PG_URL, pgTestDb } from './helpers/pg.ts';

type Rec = Record<string, any>;

const pgDb = await pgTestDb('resp_probe');

let ant: MockUpstream; let oai: MockUpstream; let raw: RawUpstream; let gw: TestGateway;

before(async () => {
  [ant, oai, raw] = await Promise.all([startMockAnthropic(), startMockOpenAI(), startRawUpstream()]);
  const models = [{ name: 'gpt-5', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true } }];
  gw = await startTestGateway({ providers: [
    { id: 'ant', format: 'anthropic-messages', base_url: ant.url },
    { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models },
    { id: 'raw', format: 'openai-chat', base_url: raw.url, paths: { responses: '/responses' }, models },
  ] });
});
after(async () => { await gw.stop(); await ant.close(); await oai.close(); await raw.close(); });

async function post(body: Rec, path = '/v1/responses'): Promise<{ status: number; error: Rec; json: Rec }> {
  const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await r.json()) as Rec;
  return { status: r.status, error: json.error, json };
}

test('tool lists with non-object entries: a 400 naming the entry, nothing sent upstream', async () => {
  ant.reset();
  const fn = { type: 'function', name: 'f', parameters: { type: 'object', properties: {} } };
  const cases: Array<[Rec, string]> = [
    [{ tools: [{ type: 'namespace', name: 'ns', tools: [null] }] }, 'tools[0].tools[0]'],
    [{ tools: [{ type: 'namespace', name: 'ns', tools: ['f'] }] }, 'tools[0].tools[0]'],
    [{ tools: [fn], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [null] } }, 'tool_choice.tools[0]'],
    [{ tools: [fn], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: 'f' } }, 'tool_choice.tools'],
    [{ tools: [fn], tool_choice: { type: 'allowed_tools', mode: 'sometimes', tools: [] } }, 'tool_choice.mode'],
  ];
  for (const [extra, param] of cases) {
    const r = await post({ model: 'ant/test-model', input: 'hi', ...extra });
    assert.equal(r.status, 400, JSON.stringify(extra));
    assert.equal(r.error.type, 'invalid_request_error');
    assert.equal(r.error.param, param);
  }
  assert.equal(ant.requests.length, 0);
  // The well-formed allowed_tools still works.
  const ok = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({
    model: 'ant/test-model', input: 'hi', tools: [fn], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'f' }] },
  }) });
  assert.equal(ok.status, 200);
});

test('a chain longer than the limit is refused as too long, whatever its length, never as expired or deleted', async () => {
  const sql = gw.services.store!.sql;
  const now = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < MAX_CHAIN + 3; i++) {
    const id = randomUUID();
    await insertStoredResponse(sql, {
      id, keyId: '', createdAt: now, expiresAt: now + 3_600_000, previousId: ids.at(-1) ?? null,
      inputJson: JSON.stringify([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `q${i}` }] }]),
      responseJson: JSON.stringify({ id, object: 'response', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `a${i}` }] }] }),
    });
    ids.push(id);
  }
  ant.reset();
  const ok = await post({ model: 'ant/test-model', input: 'next', previous_response_id: ids[MAX_CHAIN - 1] });
  assert.equal(ok.status, 200, 'exactly the limit is served');
  assert.equal((ant.requests.at(-1)!.body as Rec).messages.length, 2 * MAX_CHAIN + 1);
  for (const n of [MAX_CHAIN + 1, MAX_CHAIN + 2, MAX_CHAIN + 3]) {
    const r = await post({ model: 'ant/test-model', input: 'next', previous_response_id: ids[n - 1] });
    assert.equal(r.status, 400, `${n} links`);
    assert.equal(r.error.code, 'invalid_parameter', `${n} links: ${r.error.message}`);
    assert.equal(r.error.param, 'previous_response_id');
    assert.match(r.error.message, /limited to 1000 chained responses/);
  }
  assert.equal(ant.requests.length, 1);
});

test('a conversation with a translated model\'s reasoning continues on a native Responses target: that reasoning is left out, not sent as encrypted content', async () => {
  const first = await post({ model: 'ant/test-model', input: 'think about it', reasoning: { effort: 'high' } });
  assert.equal(first.status, 200);
  assert.ok((first.json.output as Rec[]).some((o) => o.type === 'reasoning' && String(o.encrypted_content).startsWith('gwr1.')), 'the translated answer has reasoning');
  for (const [path, body] of [
    ['/v1/responses', { model: 'oai/gpt-5', input: 'next', previous_response_id: first.json.id }],
    ['/v1/responses', { model: 'oai/gpt-5', input: [...(first.json.output as Rec[]), { role: 'user', content: 'next, sent back by the client (store: false)' }], store: false }],
    ['/v1/responses/compact', { model: 'oai/gpt-5', previous_response_id: first.json.id }],
  ] as const) {
    oai.reset();
    const r = await post(body, path);
    assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.error)}`);
    const up = oai.requests.at(-1)!.body as Rec;
    assert.deepEqual((up.input as Rec[]).filter((it) => it.type === 'reasoning'), [], path);
    assert.ok((up.input as Rec[]).some((it) => JSON.stringify(it).includes('Echo: think about it')), 'the rest of the turn goes up');
  }
  // The API's own reasoning still goes back to it, encrypted.
  const native = await post({ model: 'oai/gpt-5', input: 'native think', reasoning: { effort: 'high' } });
  oai.reset();
  const again = await post({ model: 'oai/gpt-5', input: 'and again', previous_response_id: native.json.id });
  assert.equal(again.status, 200);
  assert.equal((oai.requests.at(-1)!.body as Rec).input.filter((it: Rec) => it.type === 'reasoning').length, 1);
});

test('items a client sent without ids, stored with the gateway\'s ids, go to a native Responses target without them', async () => {
  const fn = { type: 'function', name: 'f', parameters: { type: 'object', properties: {} } };
  const first = await post({ model: 'ant/test-model', tools: [fn], input: [
    { role: 'user', content: 'q' },
    { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: 'r' },
    { type: 'reasoning', summary: [{ type: 'summary_text', text: 'another server\'s thought, unsigned' }] },
  ] });
  assert.equal(first.status, 200);
  const listed = await (await fetch(`${gw.url}/v1/responses/${first.json.id}/input_items?order=asc`)).json() as Rec;
  assert.match(listed.data[1].id, /^item_/, 'the stored item has the gateway\'s id');
  for (const stream of [false, true]) {
    oai.reset();
    const r = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/gpt-5', tools: [fn], input: 'next', previous_response_id: first.json.id, stream }) });
    const text = await r.text();
    assert.equal(r.status, 200, text);
    if (stream) assert.match(text, /response\.completed/); else assert.equal(JSON.parse(text).status, 'completed');
    const up = (oai.requests.at(-1)!.body as Rec).input as Rec[];
    assert.deepEqual(up.map((it) => it.type ?? 'message'), ['message', 'function_call', 'function_call_output', 'message', 'message']);
    assert.ok(up.every((it) => it.id === undefined || !String(it.id).startsWith('item_')), JSON.stringify(up.map((it) => it.id)));
    assert.equal(up[1]!.call_id, 'c1');
  }
});

test('a native stream that opens with an error event is answered with the status its code stands for', async () => {
  for (const [code, status, type] of [['rate_limit_exceeded', 429, 'rate_limit_error'], ['invalid_prompt', 400, 'invalid_request_error'], ['server_error', 502, 'api_error']] as const) {
    raw.reset();
    raw.push({ status: 200, headers: { 'content-type': 'text/event-stream' }, chunks: [sse({ type: 'error', sequence_number: 0, code, message: `upstream says ${code}`, param: null }, 'error')] });
    const r = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'raw/gpt-5', input: 'hi', stream: true }) });
    const body = (await r.json()) as Rec;
    assert.equal(r.status, status, `${code}: ${JSON.stringify(body)}`);
    assert.equal(body.error.type, type);
    assert.match(body.error.message, new RegExp(`upstream says ${code}`));
  }
});

test('a native JSON answer of status 200 reporting status "failed" is a failed attempt answered with the status its code stands for (it was recorded and relayed as a success)', async () => {
  for (const [code, status, type] of [['rate_limit_exceeded', 429, 'rate_limit_error'], ['server_error', 502, 'api_error']] as const) {
    raw.reset();
    raw.push({ status: 200, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ id: 'resp_up', object: 'response', created_at: 1, status: 'failed', model: 'gpt-5', output: [], error: { code, message: `upstream says ${code}` }, usage: null })] });
    const r = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'raw/gpt-5', input: 'hi' }) });
    const body = (await r.json()) as Rec;
    assert.equal(r.status, status, `${code}: ${JSON.stringify(body)}`);
    assert.equal(body.error.type, type);
    assert.match(body.error.message, new RegExp(`upstream says ${code}`));
  }
});

test('a native stream whose server sends an error event after content and closes ends with response.failed, as the gateway\'s own failures end', async () => {
  raw.reset();
  const created = { id: 'resp_up', object: 'response', created_at: 1, status: 'in_progress', model: 'gpt-5', output: [] };
  raw.push({ status: 200, headers: { 'content-type': 'text/event-stream' }, chunks: [
    sse({ type: 'response.created', sequence_number: 0, response: created }, 'response.created'),
    sse({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'partial' }, 'response.output_text.delta'),
    sse({ type: 'error', sequence_number: 2, code: 'server_error', message: 'upstream broke', param: null }, 'error'),
  ] });
  const r = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'raw/gpt-5', input: 'hi', stream: true }) });
  assert.equal(r.status, 200);
  const events = (await r.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Rec);
  assert.deepEqual(events.map((e) => e.type), ['response.created', 'response.output_text.delta', 'error', 'response.failed']);
  const last = events.at(-1)!;
  assert.deepEqual([last.sequence_number, last.response.status, last.response.error.message], [3, 'failed', 'upstream broke']);
});

test('compacting an empty conversation is a 400 naming input, with no model call', async () => {
  for (const model of ['ant/test-model', 'oai/gpt-5']) {
    ant.reset(); oai.reset();
    const r = await post({ model, input: [] }, '/v1/responses/compact');
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.equal(r.error.param, 'input');
    assert.equal(ant.requests.length + oai.requests.length, 0);
  }
  const ok = await post({ model: 'ant/test-model', input: 'something to keep' }, '/v1/responses/compact');
  assert.equal(ok.status, 200);
});

test('PostgreSQL: an id with a NUL is not found (404, 400), never a 503 to retry', { skip: pgDb === null ? 'PostgreSQL unavailable' : false }, async () => {
  const pgw = await startTestGateway({ providers: [{ id: 'ant', format: 'anthropic-messages', base_url: ant.url }], gateway: { storage: { database_url: PG_URL } }, env: { GATEWAY_PG_SCHEMA: pgDb!.schema } });
  try {
    const made = await fetch(`${pgw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'ant/test-model', input: 'kept' }) });
    const id = ((await made.json()) as Rec).id as string;
    for (const bad of [`${id}\u0000`, '\u0000']) {
      for (const path of ['/v1/responses', '/v1/responses/input_tokens', '/v1/responses/compact']) {
        const r = await fetch(`${pgw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'ant/test-model', input: 'x', previous_response_id: bad }) });
        const e = ((await r.json()) as Rec).error;
        assert.equal(r.status, 400, `${path}: ${JSON.stringify(e)}`);
        assert.equal(e.code, 'previous_response_not_found');
      }
      const seg = encodeURIComponent(bad);
      for (const [method, url] of [['GET', seg], ['GET', `${seg}/input_items`], ['DELETE', seg]]) {
        const r = await fetch(`${pgw.url}/v1/responses/${url}`, { method });
        assert.equal(r.status, 404, `${method} ${url}`);
        assert.equal(((await r.json()) as Rec).error.code, 'response_not_found');
      }
    }
    assert.equal((await fetch(`${pgw.url}/v1/responses/${id}`)).status, 200, 'the real one is still there');
  } finally { await pgw.stop(); }
});

test('POST /v1/responses/{id}/cancel (the SDK\'s responses.cancel): 404 for an id not stored, 400 for a stored one (no background responses here), never the pass-through\'s "model is required"', async () => {
  const made = await post({ model: 'ant/test-model', input: 'hi', store: true });
  assert.equal(made.status, 200, JSON.stringify(made.json));
  const stored = await post({}, `/v1/responses/${made.json.id as string}/cancel`);
  assert.equal(stored.status, 400);
  assert.match(stored.error.message as string, /Only responses created with background=true can be cancelled/);
  const missing = await post({}, '/v1/responses/resp_nope/cancel');
  assert.deepEqual([missing.status, missing.error.code], [404, 'response_not_found']);
  const other = await post({}, `/v1/responses/${made.json.id as string}/frobnicate`);
  assert.equal(other.status, 404);
  // The official client reaches the same answers.
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-none' });
  await assert.rejects(client.responses.cancel(made.json.id as string), (e: unknown) => e instanceof OpenAI.APIError && e.status === 400);
});
