// Client-side tool search (Claude Code's ToolSearch): tools declared with `defer_loading: true`, and
// tool results carrying `tool_reference` blocks that load them. Anthropic reads these itself and gets
// them as they are; every other target (OpenAI, Bedrock, Gemini) gets what Anthropic's API would put in
// the model's context: the tools loaded so far declared, the others withheld, each reference a line of
// text. Before, such a conversation was refused ("content block type 'tool_reference' is not
// supported") as soon as it left Anthropic: by choice, by the router, or by a fallback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { lowerToolSearch, referenceText, toolsInContext } from '../src/formats/tool-search.ts';
import { promptParts } from '../src/tokens/prompt.ts';
import { upstreamName, FORMAT_TOOL_NAMES } from '../src/formats/tool-names.ts';
import type { CanonicalRequest } from '../src/formats/canonical.ts';
import type { MockUpstream } from './mocks/index.ts';
import type { TestGateway } from './helpers/gateway.ts';
import { startFourFormats, type FourFormats } from './helpers/four-formats.ts';
import { upstreamToolNames as toolNamesOf } from './helpers/wires.ts';

type Rec = Record<string, any>;
const schema = { type: 'object' as const, properties: { key: { type: 'string' } } };
const LONG = 'mcp__plugin_atlassian_atlassian__getJiraProjectIssueTypesMetadata';

test('lowering: unloaded deferred tools withheld, loaded ones declared, references made text; Anthropic untouched', () => {
  const req = {
    model: 'm', system: [], stream: false,
    tools: [
      { name: 'ToolSearch', input_schema: schema },
      { name: 'get_issue', input_schema: schema, defer_loading: true },
      { name: 'list_issues', input_schema: schema, defer_loading: true },
      { name: 'used_before', input_schema: schema, defer_loading: true },
      { name: 'forced', input_schema: schema, defer_loading: true },
    ],
    tool_choice: { type: 'tool', name: 'forced' },
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'get ABC-1' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't0', name: 'used_before', input: {} }, { type: 'tool_use', id: 't1', name: 'ToolSearch', input: { query: 'issue' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't0', content: [{ type: 'text', text: 'ok' }] },
        { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'Found:' }, { type: 'tool_reference', tool_name: 'get_issue' }] }] },
    ],
  } as unknown as CanonicalRequest;
  const { req: out, adjustment } = lowerToolSearch(req, 'openai-chat');
  assert.deepEqual(out.tools!.map((t) => t.name), ['ToolSearch', 'get_issue', 'used_before', 'forced']);
  assert.ok(out.tools!.every((t) => t.defer_loading === undefined), 'declared tools carry no defer_loading');
  assert.equal(adjustment, 'tool_search=emulated(withheld 1)');
  assert.deepEqual((out.messages[2]!.content[1] as Rec).content, [{ type: 'text', text: 'Found:' }, { type: 'text', text: referenceText('get_issue') }]);
  assert.equal(out.messages[2]!.content[0], req.messages[2]!.content[0], 'a result without references is shared');
  assert.equal(out.messages[0], req.messages[0]);
  assert.equal((req.messages[2]!.content[1] as Rec).content[1].type, 'tool_reference', 'the decoded request (shared by attempts) is untouched');
  assert.equal(req.tools!.length, 5);
  assert.equal(lowerToolSearch(req, 'anthropic-messages').req, req, 'Anthropic reads tool search itself');
  // Token counts and cost estimates read what is in the model's context, on any target.
  assert.deepEqual(toolsInContext(req).map((t) => t.name), ['ToolSearch', 'get_issue', 'used_before', 'forced']);
  assert.equal(promptParts(req).tools.length, 4);
  const plain = { ...req, tools: [{ name: 'a', input_schema: schema }], tool_choice: undefined, messages: [req.messages[0]!] } as CanonicalRequest;
  assert.equal(toolsInContext(plain), plain.tools, 'nothing deferred: the same array');
  assert.equal(lowerToolSearch(plain, 'gemini').req, plain, 'nothing deferred or referenced: the same object');
});

let openai: MockUpstream; let anthropic: MockUpstream; let bedrock: MockUpstream; let gemini: MockUpstream; let gw: TestGateway;
let fx: FourFormats | undefined;
before(async () => { fx = await startFourFormats(); ({ openai, anthropic, bedrock, gemini, gw } = fx); });
after(async () => { await fx?.close(); });

/** Claude Code's shape: its own search tool, deferred MCP tools, and a search result loading one of them. */
function conversation(modelId: string, loads: string, extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}): Anthropic.MessageCreateParamsNonStreaming {
  // With a forced choice the turn also asks for the call (the mocks call tools when the last words ask for one).
  const ask: Anthropic.ContentBlockParam[] = extra.tool_choice ? [{ type: 'text', text: 'Now use the tool for ABC-1.' }] : [];
  return {
    model: modelId, max_tokens: 300,
    tools: [
      { name: 'ToolSearch', description: 'Finds tools by keyword and loads them', input_schema: { type: 'object', properties: { query: { type: 'string' } } } },
      { name: 'mcp__jira__get_issue', description: 'One Jira issue', input_schema: schema, defer_loading: true },
      { name: 'mcp__jira__list_projects', description: 'Jira projects', input_schema: schema, defer_loading: true },
      { name: LONG, description: 'Issue type metadata', input_schema: schema, defer_loading: true },
    ] as Anthropic.Tool[],
    messages: [
      { role: 'user', content: 'What is issue ABC-1 about?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'ToolSearch', input: { query: 'jira issue' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: [{ type: 'text', text: 'Found 1 tool' }, { type: 'tool_reference', tool_name: loads }] }, ...ask] } as Anthropic.MessageParam,
    ],
    ...extra,
  };
}

/** The tools the last request to `up` declared, read in its wire format (helpers/wires.ts). */
const upstreamTools = (up: MockUpstream): string[] =>
  toolNamesOf({ id: '', mock: up, format: up === openai ? 'openai-chat' : up === bedrock ? 'bedrock-converse' : up === gemini ? 'gemini' : 'anthropic-messages' }).declared;

test('anthropic SDK, Claude Code-style tool search -> OpenAI, Bedrock, Gemini: loaded tools declared, the rest withheld, answered and called', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  for (const [modelId, up] of [['openai/gpt-4o-mini', openai], ['bedrock/anthropic.claude-test-v1:0', bedrock], ['gemini/gemini-2.5-flash', gemini]] as const) {
    const { data: msg, response } = await client.messages.create(conversation(modelId, 'mcp__jira__get_issue')).withResponse();
    assert.equal(msg.type, 'message', modelId);
    assert.deepEqual(upstreamTools(up), ['ToolSearch', 'mcp__jira__get_issue'], modelId);
    assert.match(response.headers.get('x-gateway-adjustments') ?? '', /tool_search=emulated\(withheld 2\)/, modelId);
    assert.ok(JSON.stringify(up.requests.at(-1)!.body).includes(referenceText('mcp__jira__get_issue')), `${modelId}: the reference reaches the model as text`);
    // The loaded tool is called, and the call comes back as the client named it, streamed too (the
    // OpenAI mock reads the words after the tool result; the others answer the result itself).
    if (up !== openai) continue;
    const body = conversation(modelId, 'mcp__jira__get_issue', { tool_choice: { type: 'tool', name: 'mcp__jira__get_issue' } });
    const called = await client.messages.stream(body).finalMessage();
    assert.equal(called.content.find((c) => c.type === 'tool_use')?.name, 'mcp__jira__get_issue', modelId);
  }
});

test('a long deferred MCP name loaded by a reference -> OpenAI: declared and referenced under one replacement, called back under its own', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const msg = await client.messages.create(conversation('openai/gpt-4o-mini', LONG, { tool_choice: { type: 'tool', name: LONG } }));
  const up = upstreamName(LONG, FORMAT_TOOL_NAMES['openai-chat']);
  assert.deepEqual(upstreamTools(openai), ['ToolSearch', up]);
  assert.ok(JSON.stringify(openai.requests.at(-1)!.body).includes(referenceText(up)), 'the text names the tool as it is declared');
  assert.equal(msg.content.find((c) => c.type === 'tool_use')?.name, LONG);
});

test('anthropic SDK -> Anthropic: deferred tools and references relayed as they are', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  const { response } = await client.messages.create(conversation('anthropic/claude-test', 'mcp__jira__get_issue')).withResponse();
  const b = anthropic.requests.at(-1)!.body as Rec;
  assert.equal(b.tools.length, 4);
  assert.equal(b.tools[1].defer_loading, true);
  assert.deepEqual(b.messages[2].content[0].content[1], { type: 'tool_reference', tool_name: 'mcp__jira__get_issue' });
  assert.doesNotMatch(response.headers.get('x-gateway-adjustments') ?? '', /tool_search/);
});

test('router mode: Anthropic down, a tool-search conversation falls back to OpenAI and is answered', async () => {
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });
  anthropic.fault({ status: 503 });
  const { data: msg, response } = await client.messages.create({
    ...conversation('router', 'mcp__jira__get_issue'), models: ['anthropic/claude-test', 'openai/gpt-test'], willingness_to_pay: 1000,
  } as Anthropic.MessageCreateParamsNonStreaming).withResponse();
  assert.equal(response.headers.get('x-router-model'), 'anthropic/claude-test', 'the router chose Anthropic first');
  assert.equal(msg.model, 'openai/gpt-test', 'served by the fallback');
  assert.deepEqual(upstreamTools(openai), ['ToolSearch', 'mcp__jira__get_issue']);
});

test('validation: a tool_reference without a name and a non-boolean defer_loading are 400s naming the field', async () => {
  const post = (body: unknown) => fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
  const bad = conversation('openai/gpt-4o-mini', 'x') as Rec;
  bad.messages[2].content[0].content[1] = { type: 'tool_reference' };
  let r = await post(bad);
  assert.equal(r.status, 400);
  assert.match((await r.json() as Rec).error.message, /messages\[2\]\.content\[0\]\.content\[1\]\.tool_name/);
  const bad2 = conversation('openai/gpt-4o-mini', 'mcp__jira__get_issue') as Rec;
  bad2.tools[1].defer_loading = 'yes';
  r = await post(bad2);
  assert.equal(r.status, 400);
  assert.match((await r.json() as Rec).error.message, /tools\[1\]\.defer_loading/);
});

test('the router counts only the tools in context: 200 deferred MCP tools cost nothing until a search loads them', async () => {
  const rank = async (body: Rec): Promise<Rec> => {
    const r = await fetch(`${gw.url}/v1/router/rank?format=messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 200);
    return await r.json() as Rec;
  };
  const tokensOf = (j: Rec): number => j.candidates.find((c: Rec) => c.id === 'openai/gpt-4o-mini').input_tokens;
  const base = conversation('router', 'mcp__jira__get_issue') as Rec;
  const many = Array.from({ length: 200 }, (_, i) => ({ name: `mcp__server__tool_${i}`, description: `Tool number ${i}: ${'does something useful with the project. '.repeat(10)}`, input_schema: schema, defer_loading: true }));
  const withDeferred = await rank({ ...base, tools: [...base.tools, ...many] });
  const without = await rank(base);
  assert.equal(tokensOf(withDeferred), tokensOf(without), 'deferred tools not loaded add no prompt tokens');
  // Loaded, the same tools count.
  const loaded = await rank({ ...base, tools: [...base.tools, ...many.map(({ defer_loading: _, ...t }) => t)] });
  assert.ok(tokensOf(loaded) > tokensOf(without) + 10_000, `${tokensOf(loaded)} against ${tokensOf(without)}`);
});

test('count_tokens takes a tool-search conversation and counts only the tools in context', async () => {
  const count = async (body: Rec): Promise<{ status: number; json: Rec }> => {
    const r = await fetch(`${gw.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
    return { status: r.status, json: await r.json() as Rec };
  };
  const base = conversation('openai/gpt-4o-mini', 'mcp__jira__get_issue') as Rec;
  delete base.max_tokens;
  const many = Array.from({ length: 50 }, (_, i) => ({ name: `mcp__server__tool_${i}`, description: `Tool ${i}: ${'reads the project. '.repeat(10)}`, input_schema: schema, defer_loading: true }));
  const plain = await count(base);
  const deferred = await count({ ...base, tools: [...base.tools, ...many] });
  assert.equal(plain.status, 200, JSON.stringify(plain.json));
  assert.equal(deferred.status, 200, JSON.stringify(deferred.json));
  assert.equal(deferred.json.input_tokens, plain.json.input_tokens);
});
