// Tool names a client's API allows and the target's refuses: Anthropic's Messages takes names up to 128
// characters (Claude Code's MCP tools, `mcp__plugin_<plugin>_<server>__<tool>`, often pass 64), while
// OpenAI's Chat Completions, Bedrock's Converse and Gemini take 64 (Gemini also wants a letter or '_'
// first) and refuse the whole request. The gateway replaces such names on the way up (the tool list,
// a forced tool choice, the earlier calls), says so in x-gateway-adjustments, and gives the target's
// calls back under the client's own names, streamed and not, inline and through the conversion pool,
// and when the router falls back from Anthropic to OpenAI.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { FORMAT_TOOL_NAMES, fitCanonicalToolNames, fitsName, restoreEventNames, restoreResponseNames, upstreamName } from '../src/formats/tool-names.ts';
import type { CanonicalRequest, CanonicalResponse, StreamEvent } from '../src/formats/canonical.ts';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway, type TestProvider } from './helpers/gateway.ts';
import { upstreamToolNames as toolNamesOf, type Wire } from './helpers/wires.ts';

type Rec = Record<string, any>;
/** 65 characters: one of the names Claude Code users met ("string too long ... maximum length 64"). */
const MCP = 'mcp__plugin_atlassian_atlassian__getJiraProjectIssueTypesMetadata';
/** 101 characters: within Anthropic's 128. */
const LONGER = `mcp__plugin_${'x'.repeat(60)}_server__list_pull_request_review_comments`;
const DIGIT = '2fa_verify_code';
const OPENAI = FORMAT_TOOL_NAMES['openai-chat'];
const GEMINI = FORMAT_TOOL_NAMES.gemini;

test('names: what fits stays; the rest gets a stable replacement that fits, keeps both ends, never shared', () => {
  assert.equal(MCP.length, 65);
  assert.ok(LONGER.length > 64 && LONGER.length <= 128);
  assert.equal(fitsName('get_weather', OPENAI), true);
  assert.equal(fitsName(MCP, OPENAI), false);
  assert.equal(fitsName(MCP, FORMAT_TOOL_NAMES['anthropic-messages']), true);
  assert.equal(fitsName('x'.repeat(64), OPENAI), true);
  assert.equal(fitsName('ns.tool:v1', OPENAI), false, "OpenAI refuses '.' and ':'");
  assert.equal(fitsName('ns.tool:v1', GEMINI), true, 'Gemini takes them');
  assert.equal(fitsName(DIGIT, OPENAI), true);
  assert.equal(fitsName(DIGIT, GEMINI), false, 'Gemini wants a letter or _ first');
  for (const [name, rule] of [[MCP, OPENAI], [LONGER, OPENAI], [LONGER, GEMINI], [DIGIT, GEMINI], ['ns.tool:v1', OPENAI]] as const) {
    const up = upstreamName(name, rule);
    assert.equal(fitsName(up, rule), true, `${name} -> ${up}`);
    assert.equal(upstreamName(name, rule), up, 'the same name, the same replacement');
  }
  const up = upstreamName(MCP, OPENAI);
  assert.ok(up.startsWith('mcp__plugin_atla'), up);
  assert.ok(up.endsWith('getJiraProjectIssueTypesMetadata'), "the tool's own name, at the end, is kept");
  // Two names that differ only in the middle, or only in a character the target replaces, stay apart.
  const a = `mcp__plugin_${'a'.repeat(40)}__list_items`; const b = `mcp__plugin_${'a'.repeat(39)}b__list_items`;
  assert.notEqual(upstreamName(a, OPENAI), upstreamName(b, OPENAI));
  assert.notEqual(upstreamName('ns.tool', OPENAI), upstreamName('ns_tool.', OPENAI));
  assert.match(upstreamName(DIGIT, GEMINI), /^_2fa_verify_code_[A-Za-z0-9]{8}$/);
});

test('canonical request: tools, forced choice and earlier calls renamed on a copy; answers and events renamed back', () => {
  const req = {
    model: 'm',
    tools: [{ name: MCP, input_schema: { type: 'object' } }, { name: 'get_weather', input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: MCP },
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: MCP, input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [] }] },
    ],
  } as unknown as CanonicalRequest;
  const { req: out, names, adjustment } = fitCanonicalToolNames(req, OPENAI);
  const up = upstreamName(MCP, OPENAI);
  assert.deepEqual(names, { [up]: MCP });
  assert.equal(adjustment, 'tool_names=shortened(1)');
  assert.equal(out.tools![0]!.name, up);
  assert.equal(out.tools![1], req.tools![1], 'a name that fits: the same object');
  assert.deepEqual(out.tool_choice, { type: 'tool', name: up });
  assert.equal((out.messages[1]!.content[0] as Rec).name, up);
  assert.equal(out.messages[0], req.messages[0]);
  assert.equal(req.tools![0]!.name, MCP, 'the decoded request (shared by attempts) is untouched');
  assert.equal((req.messages[1]!.content[0] as Rec).name, MCP);
  const fits = fitCanonicalToolNames(req, FORMAT_TOOL_NAMES['anthropic-messages']);
  assert.equal(fits.req, req);
  assert.equal(fits.names, null);

  const res = { content: [{ type: 'text', text: 'x' }, { type: 'tool_use', id: 'c', name: up, input: {} }, { type: 'tool_use', id: 'd', name: 'other', input: {} }] } as CanonicalResponse;
  restoreResponseNames(res, names);
  assert.deepEqual(res.content.map((b) => (b as Rec).name), [undefined, MCP, 'other']);
  const ev: StreamEvent = { type: 'block_start', index: 0, block: { type: 'tool_use', id: 'c', name: up, input: {} } };
  restoreEventNames(ev, names);
  assert.equal((ev as Rec).block.name, MCP);
  // A name the client sent as it is and a call the model made up: both untouched.
  const made: StreamEvent = { type: 'block_start', index: 0, block: { type: 'tool_use', id: 'c', name: 'toString', input: {} } };
  restoreEventNames(made, names);
  assert.equal((made as Rec).block.name, 'toString', 'no prototype lookups');
});

let openai: MockUpstream; let anthropic: MockUpstream; let bedrock: MockUpstream; let gemini: MockUpstream; let gw: TestGateway;
const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const model = (name: string, pricing: Rec = TEST_PRICING) => ({ name, pricing, capabilities: caps, context_window: 200000, max_completion_tokens: 4000 });
const providers = (): TestProvider[] => [
  { id: 'openai', format: 'openai-chat', base_url: openai.url, models: [model('gpt-4o-mini'), model('gpt-test')] },
  { id: 'anthropic', format: 'anthropic-messages', base_url: anthropic.url, models: [model('claude-test', { prompt: '0.000003', completion: '0.000015' })] },
  { id: 'bedrock', format: 'bedrock-converse', base_url: bedrock.url, models: [model('anthropic.claude-test-v1:0')] },
  { id: 'gemini', format: 'gemini', base_url: gemini.url, models: [model('gemini-2.5-flash')] },
];

before(async () => {
  [openai, anthropic, bedrock, gemini] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockBedrock(), startMockGemini()]);
  gw = await startTestGateway({ providers: providers(), gateway: { router: { exploration: { share: 0 } } } });
});
after(async () => { await gw?.stop(); await Promise.all([openai, anthropic, bedrock, gemini].map((m) => m?.close())); });

const schema = { type: 'object' as const, properties: { key: { type: 'string' } } };
const TOOLS: Anthropic.Tool[] = [
  { name: MCP, description: 'Issue type metadata of a Jira project', input_schema: schema },
  { name: LONGER, description: 'Review comments of a pull request', input_schema: schema },
  { name: DIGIT, description: 'Checks a one-time code', input_schema: schema },
  { name: 'get_weather', description: 'Weather for a city', input_schema: schema },
];

/** The wire of a mock (its format), for helpers/wires.ts. */
const wireOf = (up: MockUpstream): Wire => ({ id: '', mock: up, format: up === openai ? 'openai-chat' : up === bedrock ? 'bedrock-converse' : up === gemini ? 'gemini' : 'anthropic-messages' });
const upstreamToolNames = (up: MockUpstream): string[] => toolNamesOf(wireOf(up)).declared;
const upstreamCallNames = (up: MockUpstream): string[] => toolNamesOf(wireOf(up)).called;

const TARGETS = [
  ['openai/gpt-4o-mini', () => openai, 2],
  ['bedrock/anthropic.claude-test-v1:0', () => bedrock, 2],
  ['gemini/gemini-2.5-flash', () => gemini, 3],
] as const;

async function callOnce(client: Anthropic, modelId: string, forced: string, stream: boolean): Promise<{ name: string; adjustments: string }> {
  const body = { model: modelId, max_tokens: 300, tools: TOOLS, tool_choice: { type: 'tool' as const, name: forced }, messages: [{ role: 'user' as const, content: 'Use the tool for project KEY.' }] };
  if (!stream) {
    const { data, response } = await client.messages.create(body).withResponse();
    const call = data.content.find((c) => c.type === 'tool_use');
    assert.ok(call, `${modelId}: a tool call`);
    return { name: call.name, adjustments: response.headers.get('x-gateway-adjustments') ?? '' };
  }
  const s = client.messages.stream(body);
  const { response } = await s.withResponse();
  const msg = await s.finalMessage();
  const call = msg.content.find((c) => c.type === 'tool_use');
  assert.ok(call, `${modelId}: a streamed tool call`);
  return { name: call.name, adjustments: response.headers.get('x-gateway-adjustments') ?? '' };
}

test('anthropic SDK with long MCP tool names -> OpenAI, Bedrock, Gemini: names fitted up, the client gets its own back', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  for (const [modelId, upOf, shortened] of TARGETS) {
    const up = upOf();
    for (const stream of [false, true]) {
      for (const forced of [MCP, LONGER]) {
        const { name, adjustments } = await callOnce(client, modelId, forced, stream);
        assert.equal(name, forced, `${modelId} stream=${stream}: the call comes back under the client's name`);
        assert.match(adjustments, new RegExp(`tool_names=shortened\\(${shortened}\\)`), modelId);
        const declared = upstreamToolNames(up);
        assert.equal(declared.length, TOOLS.length);
        for (const n of declared) assert.ok(fitsName(n, FORMAT_TOOL_NAMES[up === openai ? 'openai-chat' : up === bedrock ? 'bedrock-converse' : 'gemini']), `${modelId}: ${n}`);
        assert.ok(declared.includes('get_weather'), 'a name that fits goes up as it is');
      }
    }
  }
});

test('the next turn: the earlier call goes up under the same replacement as the tool it calls', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  for (const [modelId, upOf] of TARGETS) {
    const msg = await client.messages.create({
      model: modelId, max_tokens: 300, tools: TOOLS,
      messages: [
        { role: 'user', content: 'Issue types of project KEY?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: MCP, input: { key: 'KEY' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: 'Bug, Task, Story' }] },
      ],
    });
    assert.equal(msg.type, 'message', modelId);
    const up = upOf();
    const declared = upstreamToolNames(up);
    assert.deepEqual(upstreamCallNames(up), [declared[0]], `${modelId}: the call names the declared replacement`);
    assert.notEqual(declared[0], MCP);
  }
});

test('anthropic SDK -> Anthropic: names up to 128 are relayed as they are', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const { name, adjustments } = await callOnce(client, 'anthropic/claude-test', LONGER, false);
  assert.equal(name, LONGER);
  assert.doesNotMatch(adjustments, /tool_names/);
  assert.deepEqual(upstreamToolNames(anthropic), TOOLS.map((t) => t.name));
});

test('router mode: Anthropic down, the long-named tool loop falls back to OpenAI and keeps working', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  anthropic.fault({ status: 503 });
  const { data: msg, response } = await client.messages.create({
    model: 'router', models: ['anthropic/claude-test', 'openai/gpt-test'], willingness_to_pay: 1000, max_tokens: 300,
    tools: TOOLS, tool_choice: { type: 'tool', name: MCP }, messages: [{ role: 'user', content: 'Use the tool for project KEY.' }],
  } as Anthropic.MessageCreateParamsNonStreaming).withResponse();
  assert.equal(response.headers.get('x-router-model'), 'anthropic/claude-test', 'the router chose Anthropic first');
  assert.equal(msg.model, 'openai/gpt-test', 'served by the fallback');
  assert.equal(msg.content.find((c) => c.type === 'tool_use')?.name, MCP);
});

test('a body above the pool threshold: the conversion worker fits the names and the answer gets them back', async () => {
  const pooled = await startTestGateway({ providers: providers(), gateway: { workers: { threads: 1, convert_threshold_bytes: 1024 } } });
  try {
    const client = new Anthropic({ baseURL: pooled.url, apiKey: 'unused', maxRetries: 0 });
    for (const stream of [false, true]) {
      const body = { model: 'openai/gpt-4o-mini', max_tokens: 300, tools: TOOLS, tool_choice: { type: 'tool' as const, name: MCP },
        messages: [{ role: 'user' as const, content: `Use the tool. ${'Some context about the project. '.repeat(100)}` }] };
      const msg = stream ? await client.messages.stream(body).finalMessage() : await client.messages.create(body);
      assert.equal(msg.content.find((c) => c.type === 'tool_use')?.name, MCP, `stream=${stream}`);
      assert.equal(upstreamToolNames(openai)[0], upstreamName(MCP, OPENAI), 'the same replacement as inline');
    }
  } finally { await pooled.stop(); }
});
