// Router mode against upstreams that leave things out: an answer whose usage is missing (or garbage)
// is billed what it consumed on every path, translated ones and JSON replayed as a stream included,
// not $0; a same-format stream that closes after content without its end ([DONE] after a finish
// reason, message_stop, response.completed) ends the client's stream with an error event, as a
// translated one does, instead of one that looks finished. Each answer is routed (the router's only
// candidate is the misbehaving offer) and its record checked.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, sse, chatChunk, chatFinish, messageStart, textBlock, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import { parseSse } from './helpers/answer-shape.ts';
import { foldOutputs, MAX_OBSERVED_OUTPUT } from '../src/router/output-stats.ts';
import { retryAfterMs } from '../src/engine/upstream-error.ts';

let up: RawUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  const models = [{ name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 4096 }];
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1`, models: [...models, { ...models[0]!, name: 'other-model' }] },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1`, models },
      // The Responses API relayed natively (the provider serves it).
      { id: 'or', format: 'openai-chat', base_url: `${up.url}/v1`, models, paths: { responses: '/responses' } },
    ],
    gateway: {
      upstream: { first_byte_timeout_ms: 1500, idle_timeout_ms: 1500, max_attempts: 2, retry_budget_floor: 1000, ejection: { consecutive_failures: 100000 } },
      router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
    },
  });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

type Client = 'chat' | 'messages' | 'responses';
const PATH: Record<Client, string> = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };

/** A routed request whose only candidate is `model`. */
async function routed(client: Client, model: string, stream: boolean): Promise<{ status: number; text: string; id: string }> {
  const base = client === 'responses' ? { max_output_tokens: 100, store: false, input: 'probe me please' } : { max_tokens: 100, messages: [{ role: 'user', content: 'probe me please' }] };
  const r = await fetch(gw.url + PATH[client], {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(8000),
    body: JSON.stringify({ model: 'router', models: [model], stream, ...base }),
  });
  const text = await r.text();
  assert.equal(r.headers.get('x-router-model'), model, 'routed to the only candidate');
  return { status: r.status, text, id: r.headers.get('x-inference-id')! };
}

const ANSWER = 'The answer is forty two, as always it has been and ever shall be.';
const JSON_CT = { 'content-type': 'application/json' };
const chatJson = (usage?: unknown) => JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }], ...(usage ? { usage } : {}) });
const messageJson = () => JSON.stringify({ id: 'msg', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: ANSWER }], stop_reason: 'end_turn', stop_sequence: null });
const messageStop = sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop') + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }, 'message_delta') + sse({ type: 'message_stop' }, 'message_stop');

/** The record bills the prompt and the answer's characters / 4, not nothing. */
async function billedWithoutUsage(id: string): Promise<void> {
  assert.equal(await settled(gw), 0);
  const rec = await recordOf(gw, id);
  assert.equal(rec.status, 200);
  assert.ok(rec.inputTokens > 0, `input billed: ${rec.inputTokens}`);
  assert.equal(rec.outputTokens, Math.ceil(ANSWER.length / 4), 'output counted from the answer');
  assert.notEqual(rec.costUsd, '0');
  assert.equal(rec.partial ?? false, false, 'a complete answer');
}

const NO_USAGE: Array<{ name: string; client: Client; model: string; stream: boolean; script: () => Parameters<RawUpstream['push']>[0] }> = [
  { name: 'Anthropic JSON to a chat client (translated)', client: 'chat', model: 'an/test-model', stream: false, script: () => ({ headers: JSON_CT, chunks: [messageJson()] }) },
  { name: 'OpenAI JSON to a messages client (translated)', client: 'messages', model: 'oa/test-model', stream: false, script: () => ({ headers: JSON_CT, chunks: [chatJson()] }) },
  { name: 'OpenAI JSON to a Responses client (translated)', client: 'responses', model: 'oa/test-model', stream: false, script: () => ({ headers: JSON_CT, chunks: [chatJson()] }) },
  { name: 'OpenAI JSON to a chat client that asked to stream (replayed as a stream)', client: 'chat', model: 'oa/test-model', stream: true, script: () => ({ headers: JSON_CT, chunks: [chatJson()] }) },
  { name: 'Anthropic stream to a chat client (translated)', client: 'chat', model: 'an/test-model', stream: true, script: () => ({ chunks: [messageStart({}), textBlock(ANSWER), messageStop] }) },
  { name: 'OpenAI stream to a messages client (translated)', client: 'messages', model: 'oa/test-model', stream: true, script: () => ({ chunks: [chatChunk(null), chatChunk(ANSWER), chatFinish(), 'data: [DONE]\n\n'] }) },
  { name: 'Responses JSON relayed natively to a Responses client', client: 'responses', model: 'or/test-model', stream: false, script: () => ({ headers: JSON_CT, chunks: [JSON.stringify({ id: 'resp_up', object: 'response', status: 'completed', model: 'm', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: ANSWER }] }] })] }) },
  { name: 'OpenAI stream whose usage is garbage (negative, a string) to a chat client', client: 'chat', model: 'oa/test-model', stream: true, script: () => ({ chunks: [chatChunk(null), chatChunk(ANSWER), chatFinish({ prompt_tokens: -5, completion_tokens: 'NaN' }), 'data: [DONE]\n\n'] }) },
];

for (const c of NO_USAGE) {
  test(`no usage reported: ${c.name} is billed what it consumed`, async () => {
    up.push(c.script());
    const r = await routed(c.client, c.model, c.stream);
    assert.equal(r.status, 200, r.text);
    assert.ok(r.text.includes(ANSWER), 'the answer reached the client');
    await billedWithoutUsage(r.id);
  });
}

test('usage the upstream did report is billed as reported (input only: the output is counted)', async () => {
  up.push({ chunks: [messageStart({ input_tokens: 7 }), textBlock(ANSWER), messageStop] });
  const r = await routed('chat', 'an/test-model', true);
  assert.equal(r.status, 200);
  const rec = await recordOf(gw, r.id);
  assert.equal(rec.inputTokens, 7);
  assert.equal(rec.outputTokens, Math.ceil(ANSWER.length / 4));
  up.push({ headers: JSON_CT, chunks: [chatJson({ prompt_tokens: 9, completion_tokens: 3 })] });
  const r2 = await routed('messages', 'oa/test-model', false);
  const rec2 = await recordOf(gw, r2.id);
  assert.deepEqual([rec2.inputTokens, rec2.outputTokens], [9, 3]);
});

const responsesEvent = (type: string, seq: number, extra: Record<string, unknown>) => sse({ type, sequence_number: seq, ...extra }, type);
const responseObject = { id: 'resp_up', object: 'response', created_at: 1, status: 'in_progress', model: 'm', output: [] };

const CUT: Array<{ name: string; client: Client; model: string; chunks: () => string[]; ends: (events: Array<{ event?: string; data: string }>) => void }> = [
  {
    name: 'OpenAI chat (no finish reason, no [DONE])', client: 'chat', model: 'oa/test-model', chunks: () => [chatChunk(null), chatChunk('partial text here')],
    ends: (ev) => { assert.match(ev.at(-2)!.data, /"error":\{"message":"upstream stream ended before completion"/); assert.equal(ev.at(-1)!.data, '[DONE]'); },
  },
  {
    name: 'Anthropic messages (no message_stop)', client: 'messages', model: 'an/test-model', chunks: () => [messageStart(), textBlock('partial text here')],
    ends: (ev) => { assert.equal(ev.at(-1)!.event, 'error'); assert.match(ev.at(-1)!.data, /upstream stream ended before completion/); },
  },
  {
    name: 'Responses, relayed natively (no response.completed)', client: 'responses', model: 'or/test-model',
    chunks: () => [responsesEvent('response.created', 0, { response: responseObject }), responsesEvent('response.output_text.delta', 1, { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'partial text here' })],
    ends: (ev) => { assert.equal(ev.at(-2)!.event, 'error'); assert.equal(ev.at(-1)!.event, 'response.failed'); assert.match(ev.at(-1)!.data, /upstream stream ended before completion/); },
  },
];

for (const c of CUT) {
  test(`same format, cut after content: ${c.name} ends the client's stream with an error event, billed as partial`, async () => {
    up.push({ chunks: c.chunks() });
    const r = await routed(c.client, c.model, true);
    assert.equal(r.status, 200);
    assert.ok(r.text.includes('partial text here'));
    c.ends(parseSse(r.text));
    assert.equal(await settled(gw), 0);
    const rec = await recordOf(gw, r.id);
    assert.equal(rec.partial, true);
    assert.ok(rec.outputTokens > 0);
  });
}

test('control: a chat stream with its finish reason and usage but no [DONE] is complete (no error event)', async () => {
  up.push({ chunks: [chatChunk(null), chatChunk('whole text'), chatFinish({ prompt_tokens: 5, completion_tokens: 3 })] });
  const r = await routed('chat', 'oa/test-model', true);
  assert.doesNotMatch(r.text, /"error"/);
  assert.equal(parseSse(r.text).at(-1)!.data, '[DONE]');
  const rec = await recordOf(gw, r.id);
  assert.equal(rec.partial ?? false, false);
  assert.deepEqual([rec.inputTokens, rec.outputTokens], [5, 3]);
});

const NOT_ANSWERS: Array<{ name: string; client: Client; first: string; body: string; stream?: boolean }> = [
  { name: '`{}` from an OpenAI upstream to a chat client (relayed as it is)', client: 'chat', first: 'oa/test-model', body: '{}' },
  { name: '`choices: []` from an OpenAI upstream to a chat client', client: 'chat', first: 'oa/test-model', body: '{"id":"x","object":"chat.completion","choices":[]}' },
  { name: '`{}` from an Anthropic upstream to a messages client (relayed as it is)', client: 'messages', first: 'an/test-model', body: '{}' },
  { name: '`{}` from an OpenAI upstream to a messages client (translated)', client: 'messages', first: 'oa/test-model', body: '{}' },
  { name: '`{}` from an OpenAI upstream to a chat client that asked to stream', client: 'chat', first: 'oa/test-model', body: '{}', stream: true },
];

for (const c of NOT_ANSWERS) {
  test(`no answer with status 200: ${c.name} is fallen back from`, async () => {
    const next = c.first.startsWith('oa/') ? 'an/test-model' : 'oa/test-model';
    up.push({ headers: JSON_CT, chunks: [c.body] }, next.startsWith('an/') ? { headers: JSON_CT, chunks: [messageJson()] } : { headers: JSON_CT, chunks: [chatJson({ prompt_tokens: 5, completion_tokens: 17 })] });
    const base = { max_tokens: 100, messages: [{ role: 'user', content: 'probe me please' }] };
    const r = await fetch(gw.url + PATH[c.client], {
      method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(8000),
      body: JSON.stringify({ model: 'router', models: [c.first, next], stream: c.stream ?? false, ...base }),
    });
    const text = await r.text();
    assert.equal(r.status, 200, text);
    assert.equal(r.headers.get('x-router-model'), c.first);
    assert.equal(r.headers.get('x-gateway-provider'), next.split('/')[0], 'served by the next target');
    assert.ok(text.includes(ANSWER));
    const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
    assert.deepEqual(rec.attempts.map((a) => [a.model, a.status, a.error]), [[c.first, 200, `${c.first.split('/')[0].toUpperCase()} sent a response without an answer`], [next, 200, null]]);
  });
}

test('no answer with status 200 counts against the provider like a 5xx: its other targets are skipped, the next provider serves', async () => {
  up.push({ headers: JSON_CT, chunks: ['{}'] }, { headers: JSON_CT, chunks: [messageJson()] });
  const plan = ['oa/test-model', 'oa/other-model', 'an/test-model'];
  const r = await fetch(gw.url + PATH.chat, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(8000),
    body: JSON.stringify({ model: 'router', models: plan, max_tokens: 100, messages: [{ role: 'user', content: 'probe me please' }] }),
  });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  assert.equal(r.headers.get('x-router-model'), 'oa/test-model', 'the plan starts where the test means it to');
  assert.equal(r.headers.get('x-gateway-provider'), 'an', 'served by the next provider');
  assert.deepEqual(up.requests.map((q) => q.path), ['/v1/chat/completions', '/v1/messages'], 'oa/other-model was not tried');
  const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
  assert.deepEqual(rec.attempts.map((a) => [a.model, a.status]), [['oa/test-model', 200], ['an/test-model', 200]]);
});

test('no answer with nowhere to fall back is a 502 in the envelope; an empty answer with a stop reason is still an answer', async () => {
  up.push({ headers: JSON_CT, chunks: ['{}'] });
  const r = await routed('messages', 'an/test-model', false);
  assert.equal(r.status, 502);
  assert.equal(JSON.parse(r.text).type, 'error');
  up.push({ headers: JSON_CT, chunks: [JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'length' }], usage: { prompt_tokens: 5, completion_tokens: 0 } })] });
  const r2 = await routed('chat', 'oa/test-model', false);
  assert.equal(r2.status, 200);
  assert.equal(JSON.parse(r2.text).choices[0].finish_reason, 'length');
});

const AFTER_END: Array<{ name: string; client: Client; model: string; chunks: () => string[]; text: string }> = [
  {
    name: 'OpenAI chat: a frame that is not JSON after [DONE]', client: 'chat', model: 'oa/test-model', text: 'whole answer',
    chunks: () => [chatChunk(null), chatChunk('whole answer'), chatFinish({ prompt_tokens: 5, completion_tokens: 2 }), 'data: [DONE]\n\n', 'data: {"trailing\n\n'],
  },
  {
    name: 'OpenAI chat: a content chunk after [DONE]', client: 'chat', model: 'oa/test-model', text: 'whole answer',
    chunks: () => [chatChunk(null), chatChunk('whole answer'), chatFinish({ prompt_tokens: 5, completion_tokens: 2 }), 'data: [DONE]\n\n', chatChunk(' LATE TEXT')],
  },
  {
    name: 'Anthropic messages: a frame that is not JSON after message_stop', client: 'messages', model: 'an/test-model', text: 'whole answer',
    chunks: () => [messageStart({ input_tokens: 5, output_tokens: 1 }), textBlock('whole answer'), messageStop, 'data: {"trailing\n\n'],
  },
  {
    name: 'Responses (native): a frame that is not JSON after response.completed', client: 'responses', model: 'or/test-model', text: 'whole answer',
    chunks: () => [
      responsesEvent('response.created', 0, { response: responseObject }),
      responsesEvent('response.output_text.delta', 1, { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'whole answer' }),
      responsesEvent('response.completed', 2, { response: { ...responseObject, status: 'completed', usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } } }),
      'data: {"trailing\n\n',
    ],
  },
];

for (const c of AFTER_END) {
  test(`same format, after the stream's end: ${c.name} is not relayed, the answer stays complete`, async () => {
    up.push({ chunks: c.chunks() });
    const r = await routed(c.client, c.model, true);
    assert.equal(r.status, 200);
    assert.ok(r.text.includes(c.text));
    assert.doesNotMatch(r.text, /"error"|LATE TEXT|cannot read/);
    assert.equal(await settled(gw), 0);
    const rec = await recordOf(gw, r.id);
    assert.equal(rec.partial ?? false, false, 'a complete answer');
    assert.equal(rec.attempts[0]!.error, null);
  });
}

// max_cost is hard on the bill whatever the upstream reports: the planner sent an output cap worked
// out with the prompt's token ceiling, and an attempt is billed at most those counts (an upstream that
// reported 1e30 tokens was billed 2^31-1 of each: $6,442 against a max_cost of $0.001). The clamp is
// noted on the attempt; a usage within the bound is billed as reported.
const HUGE = { prompt_tokens: 1e30, completion_tokens: 1e30 };
const BOUNDED: Array<{ name: string; client: Client; model: string; stream: boolean; script: () => Parameters<RawUpstream['push']>[0] }> = [
  { name: 'OpenAI JSON to a chat client (same format)', client: 'chat', model: 'oa/test-model', stream: false, script: () => ({ headers: JSON_CT, chunks: [chatJson(HUGE)] }) },
  { name: 'OpenAI stream to a messages client (translated)', client: 'messages', model: 'oa/test-model', stream: true, script: () => ({ chunks: [chatChunk(null), chatChunk(ANSWER), chatFinish(HUGE), 'data: [DONE]\n\n'] }) },
  { name: 'Anthropic stream to a chat client (translated)', client: 'chat', model: 'an/test-model', stream: true, script: () => ({ chunks: [messageStart({ input_tokens: 1e30, output_tokens: 1 }), textBlock(ANSWER), sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop') + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1e30 } }, 'message_delta') + sse({ type: 'message_stop' }, 'message_stop')] }) },
];

async function routedWithin(client: Client, model: string, stream: boolean, maxCost: number): Promise<{ status: number; text: string; id: string; cap: number }> {
  const base = client === 'responses' ? { max_output_tokens: 100, store: false, input: 'probe me please' } : { max_tokens: 100, messages: [{ role: 'user', content: 'probe me please' }] };
  const r = await fetch(gw.url + PATH[client], {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(8000),
    body: JSON.stringify({ model: 'router', models: [model], stream, max_cost: maxCost, ...base }),
  });
  return { status: r.status, text: await r.text(), id: r.headers.get('x-inference-id')!, cap: Number(r.headers.get('x-router-max-output-tokens')) };
}

for (const c of BOUNDED) {
  test(`max_cost holds against a usage of 1e30 tokens: ${c.name} is billed at most max_cost, the clamp noted on the attempt`, async () => {
    up.push(c.script());
    const r = await routedWithin(c.client, c.model, c.stream, 0.001);
    assert.equal(r.status, 200, r.text);
    assert.ok(r.cap > 0 && r.cap <= 100, `an output cap was sent: ${r.cap}`);
    const rec = await recordOf(gw, r.id);
    assert.ok(Number(rec.costUsd) <= 0.001, `billed ${rec.costUsd}, max_cost 0.001`);
    assert.ok(Number(rec.costUsd) > 0, 'billed something');
    assert.equal(rec.outputTokens, r.cap, 'output billed at the cap sent');
    assert.ok(rec.inputTokens > 0 && rec.inputTokens < 1000, `input held to the prompt's ceiling: ${rec.inputTokens}`);
    assert.match(rec.attempts[0]!.error ?? '', /usage reported past the max_cost bound \(output \d+ of at most \d+, input \d+ of at most \d+\) billed at the bound/);
  });
}

test('max_cost: a usage within the bound is billed as reported, nothing noted', async () => {
  up.push({ headers: JSON_CT, chunks: [chatJson({ prompt_tokens: 9, completion_tokens: 3 })] });
  const r = await routedWithin('chat', 'oa/test-model', false, 0.001);
  assert.equal(r.status, 200, r.text);
  const rec = await recordOf(gw, r.id);
  assert.deepEqual([rec.inputTokens, rec.outputTokens, rec.attempts[0]!.error], [9, 3, null]);
});

test('expected output learns nothing from a count no answer has (garbage usage billed as reported, up to 2^31-1): one would have moved the mean for good', () => {
  const legit = Array.from({ length: 9 }, () => ({ model: 'm', kind: 'chat', outputTokens: 400 }));
  const t = foldOutputs({}, [...legit, { model: 'm', kind: 'chat', outputTokens: 2_147_483_647 }, { model: 'm', kind: 'chat', outputTokens: MAX_OBSERVED_OUTPUT }]);
  // The 2^31-1 count is left out; the largest count an answer can have (the bound itself) is kept.
  assert.deepEqual(t.m!.chat, [10, (9 * 400 + MAX_OBSERVED_OUTPUT) / 10]);
});

test('retry-after as HTTP has it (digits, or a date) or retry-after-ms as a number is a wait; anything else is none (1e300 was relayed as "retry-after: 1e+300", "0x10" read as 16 s)', () => {
  assert.equal(retryAfterMs({ 'retry-after': '7' }), 7000);
  assert.equal(retryAfterMs({ 'retry-after': ' 0 ' }), 0);
  assert.equal(retryAfterMs({ 'retry-after-ms': '250.5' }), 250.5);
  assert.equal(retryAfterMs({ 'retry-after': '0.3' }), 300, 'a fraction of a second, as some servers send');
  const at = retryAfterMs({ 'retry-after': new Date(Date.now() + 30_000).toUTCString() })!;
  assert.ok(at > 25_000 && at <= 30_000, String(at));
  for (const v of ['1e300', '0x10', 'soon', '', 'Infinity', '-5', '99999999999999999999']) assert.equal(retryAfterMs({ 'retry-after': v }), null, v);
  for (const v of ['-5', 'NaN', '1e3']) assert.equal(retryAfterMs({ 'retry-after-ms': v }), null, v);
});

test('a 429 whose retry-after is garbage reaches the client without it, in the route\'s envelope', async () => {
  up.push({ status: 429, headers: { ...JSON_CT, 'retry-after': '1e300' }, chunks: [JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error' } })] });
  const r = await fetch(gw.url + PATH.chat, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(8000),
    body: JSON.stringify({ model: 'router', models: ['oa/test-model'], max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(r.status, 429);
  assert.equal(r.headers.get('retry-after'), null);
  assert.equal(((await r.json()) as { error: { type: string } }).error.type, 'rate_limit_error');
});

test('[DONE] after content without a finish reason is a complete answer, relayed or translated alike (the relay called it cut short, the translating decoder complete)', async () => {
  for (const client of ['chat', 'messages'] as const) {
    up.push({ chunks: [chatChunk(null), chatChunk('whole text here'), 'data: [DONE]\n\n'] });
    const r = await routed(client, 'oa/test-model', true);
    assert.equal(r.status, 200);
    const events = parseSse(r.text);
    assert.ok(!events.some((e) => e.event === 'error' || /"error":\{/.test(e.data)), `${client}: no error event`);
    assert.equal(await settled(gw), 0);
    const rec = await recordOf(gw, r.id);
    assert.equal(rec.partial ?? false, false, client);
  }
});
