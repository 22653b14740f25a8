// POST /v1/responses/compact with the official client's responses.compact: relayed to a provider that
// serves the Responses API natively (its strict mock refuses what the API refuses and issues its own
// compaction tokens), produced through the engine for every other model (the model summarises a
// transcript; the gateway's compaction token is read back on every target, including a native one),
// the native provider without /compact falling back to the summary, stored conversations through
// previous_response_id, records and cost, and the failure paths in OpenAI's envelope naming the field.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;
let oai: MockUpstream; let ant: MockUpstream; let chat: MockUpstream; let gw: TestGateway; let client: OpenAI;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Models asked for a summary answer with the transcript they were given, so the test can read it. */
const reply = (t: string): string => {
  const m = /<conversation>\n([\s\S]*)\n<\/conversation>/.exec(t);
  if (m) return m[1]!.includes('EMPTY SUMMARY') ? '' : `SUMMARY<${m[1]!.replaceAll('\n', ' / ')}>`;
  return `Echo: ${t.slice(0, 60)}`;
};

before(async () => {
  [oai, ant, chat] = await Promise.all([startMockOpenAI({ reply }), startMockAnthropic({ reply }), startMockOpenAI({ reply })]);
  gw = await startTestGateway({
    providers: [
      { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models: [{ name: 'gpt-5', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true } }] },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url },
      { id: 'chat', format: 'openai-chat', base_url: chat.url },
    ],
    gateway: { upstream: { max_attempts: 2 } },
  });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => { await gw?.stop(); await oai?.close(); await ant?.close(); await chat?.close(); });

const conversation: OpenAI.Responses.ResponseInputItem[] = [
  { role: 'user', content: 'my name is Ada and I need the weather in Oslo' },
  { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
  { type: 'function_call_output', call_id: 'call_1', output: '4 degrees, rain' },
  { role: 'assistant', content: 'It is 4 degrees and raining in Oslo.' },
  { role: 'user', content: [{ type: 'input_text', text: 'thanks, and tomorrow?' }] },
];

async function recorded(id: string): Promise<Rec> {
  for (let i = 0; i < 50; i++) {
    const rows = await gw.services.store!.sql.all('SELECT route, status, cost_usd, input_tokens, output_tokens, served_model FROM inferences WHERE id = ?', [id]);
    if (rows.length === 1) return rows[0]!;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no record for ${id}`);
}

const userTexts = (out: Rec[]): string[] => out.filter((o) => o.type === 'message').map((o) => (o.content as Rec[]).map((c) => c.text).join(''));

test('native provider: relayed to its /responses/compact, the gateway id, its compaction usable on the next turn', async () => {
  oai.reset();
  const c = await client.responses.compact({ model: 'oai/gpt-5', input: conversation, instructions: 'Be brief.', prompt_cache_key: 'k1' });
  assert.equal(c.object, 'response.compaction');
  assert.match(c.id, UUID);
  const up = oai.requests.at(-1)!;
  assert.equal(up.path, '/v1/responses/compact');
  assert.deepEqual(Object.keys(up.body as Rec).sort(), ['input', 'instructions', 'model', 'prompt_cache_key']);
  assert.equal((up.body as Rec).model, 'gpt-5');
  assert.deepEqual(userTexts(c.output as Rec[]), ['my name is Ada and I need the weather in Oslo', 'thanks, and tomorrow?']);
  const cmp = c.output.at(-1)!;
  assert.ok(cmp.type === 'compaction' && cmp.encrypted_content.startsWith('gAAAA'), 'the provider\'s own token, relayed');
  assert.ok(c.usage.input_tokens > 0 && c.usage.output_tokens > 0);
  const rec = await recorded(c.id);
  assert.equal(rec.route, '/v1/responses/compact');
  assert.equal(rec.status, 200);
  assert.equal(Number(rec.input_tokens), c.usage.input_tokens);
  assert.ok(Number(rec.cost_usd) > 0);
  // The compacted list goes back as input: the provider reads its own compaction item.
  const next = await client.responses.create({ model: 'oai/gpt-5', input: [...c.output as OpenAI.Responses.ResponseInputItem[], { role: 'user', content: 'go on' }] });
  assert.equal(next.output_text, 'Echo: go on');
  assert.equal(((oai.requests.at(-1)!.body as Rec).input as Rec[]).filter((i) => i.type === 'compaction').length, 1);
});

test('native provider with previous_response_id: the stored turns go up as input, never the id', async () => {
  oai.reset();
  const first = await client.responses.create({ model: 'oai/gpt-5', input: 'remember the number 42' });
  const c = await client.responses.compact({ model: 'oai/gpt-5', previous_response_id: first.id, input: 'and 43' });
  const up = oai.requests.at(-1)!.body as Rec;
  assert.equal(up.previous_response_id, undefined);
  assert.deepEqual((up.input as Rec[]).map((i) => (typeof i.content === 'string' ? i.content : (i.content as Rec[]).map((p) => p.text).join(''))),
    ['remember the number 42', 'Echo: remember the number 42', 'and 43']);
  assert.deepEqual(userTexts(c.output as Rec[]), ['remember the number 42', 'and 43']);
});

for (const model of ['ant/test-model', 'chat/test-model']) {
  test(`translated (${model}): the model summarises a transcript; the gateway's compaction is read back on every target`, async () => {
    const mock = model.startsWith('ant') ? ant : chat;
    mock.reset(); oai.reset();
    const c = await client.responses.compact({ model, input: conversation, instructions: 'You are a weather bot.' });
    assert.match(c.id, UUID);
    assert.equal(c.object, 'response.compaction');
    assert.deepEqual(userTexts(c.output as Rec[]), ['my name is Ada and I need the weather in Oslo', 'thanks, and tomorrow?']);
    const cmp = c.output.at(-1)!;
    assert.ok(cmp.type === 'compaction' && cmp.encrypted_content.startsWith('gwc1.'));
    // One plain request upstream: no tool definitions needed, the client's instructions kept as context.
    const up = mock.requests.at(-1)!.body as Rec;
    assert.equal(up.tools, undefined);
    const sent = JSON.stringify(up);
    for (const s of ['get_weather', '{\\"city\\":\\"Oslo\\"}', '4 degrees, rain', 'It is 4 degrees and raining', 'You are a weather bot.']) assert.ok(sent.includes(s), s);
    assert.ok(c.usage.input_tokens > 0 && c.usage.output_tokens > 0);
    const rec = await recorded(c.id);
    assert.equal(rec.route, '/v1/responses/compact');
    assert.equal(rec.served_model, model);
    assert.equal(Number(rec.output_tokens), c.usage.output_tokens);
    const next: OpenAI.Responses.ResponseInputItem[] = [...c.output as OpenAI.Responses.ResponseInputItem[], { role: 'user', content: 'what was my name?' }];
    // Back on the same model: the summary is context in the conversation.
    mock.reset();
    await client.responses.create({ model, input: next });
    const again = JSON.stringify(mock.requests.at(-1)!.body);
    assert.ok(again.includes('Summary of the earlier conversation (compacted)') && again.includes('my name is Ada'), again.slice(0, 400));
    // On a native Responses provider: the token becomes the message it stands for (the provider could not read it).
    const r = await client.responses.create({ model: 'oai/gpt-5', input: next });
    assert.equal(r.output_text, 'Echo: what was my name?');
    const items = (oai.requests.at(-1)!.body as Rec).input as Rec[];
    assert.equal(items.filter((i) => i.type === 'compaction').length, 0);
    assert.ok(JSON.stringify(items).includes('Summary of the earlier conversation (compacted)'));
    // Compacting again folds the earlier summary in.
    mock.reset();
    await client.responses.compact({ model, input: next });
    assert.ok(JSON.stringify(mock.requests.at(-1)!.body).includes('[earlier summary]'));
  });
}

test('a native provider that does not serve /compact (404): the summary is made through its /responses', async () => {
  oai.reset();
  oai.fault({ status: 404 });
  const c = await client.responses.compact({ model: 'oai/gpt-5', input: 'a short chat' });
  assert.deepEqual(oai.requests.map((r) => r.path), ['/v1/responses/compact', '/v1/responses']);
  const cmp = c.output.at(-1)!;
  assert.ok(cmp.type === 'compaction' && cmp.encrypted_content.startsWith('gwc1.'));
});

test('bad input: 400 in the envelope naming the field, nothing sent upstream', async () => {
  oai.reset(); ant.reset();
  const cases: Array<[Rec, string]> = [
    [{ input: 'x' }, 'model'], [{ model: 5, input: 'x' }, 'model'], [{ model: 'router', input: 'x' }, 'model'],
    [{ model: 'ant/test-model' }, 'input'], [{ model: 'ant/test-model', input: 5 }, 'input'],
    [{ model: 'ant/test-model', input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [{ model: 'ant/test-model', input: [{ type: 'compaction' }] }, 'input[0].encrypted_content'],
    [{ model: 'ant/test-model', input: 'x', instructions: 5 }, 'instructions'],
    [{ model: 'ant/test-model', input: 'x', prompt_cache_retention: 'forever' }, 'prompt_cache_retention'],
    [{ model: 'ant/test-model', input: 'x', image: { context_compression: 'maybe' } }, 'image.context_compression'],
    [{ model: 'ant/test-model', input: 'x', previous_response_id: '0190f0f0-0000-7000-8000-000000000000' }, 'previous_response_id'],
    // A cost bound cannot be enforced here: refused, not dropped (the call would spend past it).
    [{ model: 'oai/gpt-5', input: 'x', max_cost: 0.01 }, 'max_cost'], [{ model: 'ant/test-model', input: 'x', max_cost_per_million_tokens: 3 }, 'max_cost_per_million_tokens'],
    // An OpenAI compaction token cannot be read by a translated model.
    [{ model: 'ant/test-model', input: [{ type: 'compaction', encrypted_content: 'gAAAAopaque' }] }, 'input[0].encrypted_content'],
  ];
  for (const [body, param] of cases) {
    const res = await fetch(`${gw.url}/v1/responses/compact`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const j = await res.json() as Rec;
    assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${JSON.stringify(j)}`);
    assert.equal(j.error.param, param, JSON.stringify(body));
    assert.equal(typeof j.error.message, 'string');
    assert.ok(res.headers.get('x-inference-id'));
  }
  assert.equal(oai.requests.length + ant.requests.length, 0);
  // The SDK surfaces it as BadRequestError with the field.
  await assert.rejects(client.responses.compact({ model: 'ant/test-model', input: [{ role: 'robot' as 'user', content: 'x' }] }),
    (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'input[0].role');
  const unknown = await fetch(`${gw.url}/v1/responses/compact`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'nope/nothing', input: 'x' }) });
  assert.equal(unknown.status >= 400 && unknown.status < 500, true);
  assert.equal(((await unknown.json()) as Rec).error.param, 'model');
  const notJson = await fetch(`${gw.url}/v1/responses/compact`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":' });
  assert.equal(notJson.status, 400);
});

test('upstream failures: a refusal relayed, a retryable failure rescued through the engine, errors in the envelope and recorded; an empty summary is a 502', async () => {
  oai.reset();
  oai.fault({ status: 400, body: { error: { message: 'Invalid input: too short', type: 'invalid_request_error', param: 'input', code: null } } });
  await assert.rejects(client.responses.compact({ model: 'oai/gpt-5', input: 'x' }), (e: unknown) => e instanceof OpenAI.BadRequestError && /too short/.test(e.message));
  // A retryable failure of the native /compact: the compaction is made through the engine instead.
  oai.reset();
  oai.fault({ status: 500 });
  const rescued = await client.responses.compact({ model: 'oai/gpt-5', input: 'rescue me' });
  assert.deepEqual(oai.requests.map((r) => r.path), ['/v1/responses/compact', '/v1/responses']);
  assert.ok(rescued.output.at(-1)!.type === 'compaction' && (rescued.output.at(-1) as Rec).encrypted_content.startsWith('gwc1.'));
  // Everything failing: the engine's error, recorded with every attempt.
  oai.reset();
  oai.fault([{ status: 500 }, { status: 500 }, { status: 500 }]);
  const res = await fetch(`${gw.url}/v1/responses/compact`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/gpt-5', input: 'x' }) });
  assert.equal(res.status, 502);
  assert.deepEqual(oai.requests.map((r) => r.path), ['/v1/responses/compact', '/v1/responses', '/v1/responses']);
  const failedId = res.headers.get('x-inference-id')!;
  await recorded(failedId);
  const attempts = JSON.parse(String((await gw.services.store!.sql.all('SELECT attempts FROM inferences WHERE id = ?', [failedId]))[0]!.attempts)) as Rec[];
  assert.deepEqual(attempts.map((a) => a.status), [500, 500, 500], 'the native /compact attempt, then the engine\'s two');
  const id = res.headers.get('x-inference-id')!;
  assert.equal(((await res.json()) as Rec).error.type, 'api_error');
  const rec = await recorded(id);
  assert.equal(rec.route, '/v1/responses/compact');
  assert.equal(rec.status, 502);
  // Translated: every attempt fails -> the engine's error; a model returning nothing -> 502.
  ant.reset();
  ant.fault([{ status: 529 }, { status: 529 }]);
  await assert.rejects(client.responses.compact({ model: 'ant/test-model', input: 'x' }), (e: unknown) => e instanceof OpenAI.APIError && (e.status ?? 0) >= 500);
  ant.reset();
  await assert.rejects(client.responses.compact({ model: 'ant/test-model', input: 'EMPTY SUMMARY please' }),
    (e: unknown) => e instanceof OpenAI.APIError && e.status === 502 && /no summary/.test(e.message));
  // The client hanging up cancels the upstream call without crashing anything.
  chat.reset();
  chat.fault({ delayFirstByteMs: 2000 });
  const ac = new AbortController();
  const p = fetch(`${gw.url}/v1/responses/compact`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'chat/test-model', input: 'slow' }), signal: ac.signal });
  setTimeout(() => ac.abort(), 100);
  await assert.rejects(p);
  const ok = await client.responses.compact({ model: 'chat/test-model', input: 'after the hang-up' });
  assert.ok(ok.output.at(-1)!.type === 'compaction');
});
