// Request fields today's SDKs type (openai 7.59, @anthropic-ai/sdk 1.14) that no decoder read, so a
// translated request lost them without a word (a 200, nothing in x-gateway-adjustments):
// - chat `prompt_cache_breakpoint` on content parts (explicit cache breakpoints, gpt-5.6 caching): now
//   Anthropic's cache_control on that block (Bedrock's cachePoint), 12h as 1h, reported;
// - chat `moderation`, `prediction`, `prompt_cache_options`, `store: true`: reported as dropped;
// - Messages `diagnostics` (prompt-cache diagnostics): reported as dropped;
// - Messages beta `thread` (server-held state), `compaction`, `mcp_servers`: a continued thread's
//   history, a compaction request's answer and MCP tools exist only on Anthropic, so translated they
//   are a 400 naming the field (they went as a plain turn missing them); `thread: create`, `fallbacks`,
//   `fallback_credit_token`, `billing_policy`: reported as dropped;
// - Responses `moderation`, `context_management`, `prompt_cache_options`: reported as dropped.
// Relayed to their own format they go as sent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { MockUpstream } from './mocks/index.ts';
import { oneModelOnEach, startFourMocks } from './helpers/four-formats.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let oai: MockUpstream; let ant: MockUpstream; let gem: MockUpstream; let bed: MockUpstream; let gw: TestGateway;

before(async () => {
  ({ oai, ant, gem, bed } = await startFourMocks());
  const model = { name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true, prompt_caching: true } };
  gw = await startTestGateway({ providers: oneModelOnEach({ oai, ant, gem, bed }, model) });
});
after(async () => { await gw.stop(); for (const m of [oai, ant, gem, bed]) await m.close(); });

const post = async (path: string, body: Rec): Promise<{ status: number; adj: string[]; text: string }> => {
  const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
  return { status: r.status, adj: (r.headers.get('x-gateway-adjustments') ?? '').split(', ').filter((a) => a !== ''), text: await r.text() };
};
const lastSent = (m: MockUpstream): Rec => m.requests.at(-1)!.body as Rec;
const LONG = 'A long and stable instruction. '.repeat(200);

describe('chat-completions fields', () => {
  test('prompt_cache_breakpoint becomes cache_control for Anthropic, 12h as 1h, reported', async () => {
    const r = await post('/v1/chat/completions', {
      model: 'ant/test-model', max_completion_tokens: 50,
      messages: [
        { role: 'system', content: [{ type: 'text', text: LONG, prompt_cache_breakpoint: { mode: 'explicit', ttl: '12h' } }] },
        { role: 'user', content: [{ type: 'text', text: 'Context.', prompt_cache_breakpoint: { mode: 'explicit' } }, { type: 'text', text: 'Question?' }] },
      ],
    });
    assert.equal(r.status, 200, r.text);
    const sent = lastSent(ant);
    assert.deepEqual(sent.system.at(-1).cache_control, { type: 'ephemeral', ttl: '1h' });
    assert.deepEqual(sent.messages[0].content[0].cache_control, { type: 'ephemeral' });
    assert.equal(sent.messages[0].content[1].cache_control, undefined);
    assert.ok(r.adj.includes('prompt_cache_breakpoint->cache_control(2)'), r.adj.join(', '));
  });

  test('Bedrock gets a cachePoint after the marked block', async () => {
    const r = await post('/v1/chat/completions', {
      model: 'bed/test-model', max_completion_tokens: 50,
      messages: [{ role: 'user', content: [{ type: 'text', text: LONG, prompt_cache_breakpoint: { mode: 'explicit' } }, { type: 'text', text: 'Question?' }] }],
    });
    assert.equal(r.status, 200, r.text);
    const content = lastSent(bed).messages[0].content as Rec[];
    assert.deepEqual(content.map((c) => Object.keys(c)[0]), ['text', 'cachePoint', 'text']);
  });

  for (const target of ['ant', 'gem', 'bed']) {
    test(`${target}: moderation, prediction, prompt_cache_options and store are reported`, async () => {
      const r = await post('/v1/chat/completions', {
        model: `${target}/test-model`, max_completion_tokens: 50, messages: [{ role: 'user', content: 'Hi' }],
        moderation: { input: { type: 'moderation_results' } }, prediction: { type: 'content', content: 'Hello' },
        prompt_cache_options: { mode: 'explicit' }, store: true,
      });
      assert.equal(r.status, 200, r.text);
      for (const a of ['moderation=dropped', 'prediction=dropped', 'prompt_cache_options=dropped', 'store=dropped']) assert.ok(r.adj.includes(a), `${a} in ${r.adj.join(', ')}`);
    });
  }

  test('relayed to OpenAI they go as sent', async () => {
    const r = await post('/v1/chat/completions', {
      model: 'oai/test-model', max_completion_tokens: 50, prompt_cache_options: { mode: 'explicit' }, store: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', prompt_cache_breakpoint: { mode: 'explicit' } }] }],
    });
    assert.equal(r.status, 200, r.text);
    const sent = lastSent(oai);
    assert.deepEqual(sent.prompt_cache_options, { mode: 'explicit' });
    assert.deepEqual(sent.messages[0].content[0].prompt_cache_breakpoint, { mode: 'explicit' });
    assert.deepEqual(r.adj, []);
  });
});

describe('Messages and Responses fields', () => {
  test('Messages diagnostics: reported off Anthropic, relayed to it', async () => {
    const body = { max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }], diagnostics: { previous_message_id: null } };
    const off = await post('/v1/messages', { ...body, model: 'gem/test-model' });
    assert.equal(off.status, 200, off.text);
    assert.ok(off.adj.includes('diagnostics=dropped'), off.adj.join(', '));
    const on = await post('/v1/messages', { ...body, model: 'ant/test-model' });
    assert.equal(on.status, 200, on.text);
    assert.deepEqual(lastSent(ant).diagnostics, { previous_message_id: null });
  });

  for (const [field, value, target] of [
    ['thread', { type: 'continue', previous_message_id: 'msg_01' }, 'gem'],
    ['compaction', { instructions: 'Summarise.' }, 'oai'],
    ['mcp_servers', [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }], 'bed'],
  ] as const) {
    test(`Messages ${field} translated (${target}): a 400 naming it, nothing sent`, async () => {
      const mock = { oai, gem, bed }[target];
      mock.reset();
      const r = await post('/v1/messages', { model: `${target}/test-model`, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }], [field]: value });
      assert.equal(r.status, 400, r.text);
      assert.match(JSON.parse(r.text).error.message, new RegExp(`'${field}'`));
      assert.equal(mock.requests.length, 0);
    });
  }

  test('Messages thread create, fallbacks, fallback_credit_token, billing_policy translated: reported', async () => {
    const r = await post('/v1/messages', {
      model: 'gem/test-model', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }],
      thread: { type: 'create' }, fallbacks: ['claude-sonnet-4-6'], fallback_credit_token: 'tok', billing_policy: { bill_to: 'self' },
    });
    assert.equal(r.status, 200, r.text);
    for (const a of ['thread=dropped(create)', 'fallbacks=dropped', 'fallback_credit_token=dropped', 'billing_policy=dropped']) assert.ok(r.adj.includes(a), `${a} in ${r.adj.join(', ')}`);
  });

  test('Responses moderation, context_management and prompt_cache_options: reported', async () => {
    const r = await post('/v1/responses', {
      model: 'ant/test-model', max_output_tokens: 50, input: 'Hi',
      moderation: { input: { type: 'moderation_results' } }, context_management: [{ type: 'compaction', compact_threshold: 200000 }], prompt_cache_options: { mode: 'implicit' },
    });
    assert.equal(r.status, 200, r.text);
    for (const a of ['moderation=dropped', 'context_management=dropped', 'prompt_cache_options=dropped']) assert.ok(r.adj.includes(a), `${a} in ${r.adj.join(', ')}`);
  });
});
