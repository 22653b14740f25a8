// Mid-conversation tool changes (Anthropic's `mid-conversation-tool-changes-2026-07-01` beta, which
// Claude Code 2.1.332 sends): a `role: "system"` message holding `tool_addition` / `tool_removal`
// blocks offers a tool from that point on or withdraws one, `tools` left as it is. Anthropic reads them
// itself and gets them as they are; every other target (OpenAI, Bedrock, Gemini) gets the tools offered
// at the end declared and the blocks left out. Before, the validator took text only in a system message
// and answered 400, so such a Claude Code session broke through the gateway, even to Anthropic.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { lowerToolChanges, offeredTools } from '../src/formats/tool-changes.ts';
import { toolsInContext } from '../src/formats/tool-search.ts';
import { viewRequest } from '../src/router/request-view.ts';
import { parseRouterParams } from '../src/router/params.ts';
import { promptParts } from '../src/tokens/prompt.ts';
import { upstreamName, FORMAT_TOOL_NAMES } from '../src/formats/tool-names.ts';
import { GatewayError } from '../src/gateway-error.ts';
import { decodeMessagesRequest } from '../src/formats/anthropic-messages/decode-request.ts';
import { encodeMessagesRequest } from '../src/formats/anthropic-messages/encode-request.ts';
import type { CanonicalRequest } from '../src/formats/canonical.ts';
import type { MockUpstream } from './mocks/index.ts';
import type { TestGateway } from './helpers/gateway.ts';
import { startFourFormats, type FourFormats } from './helpers/four-formats.ts';
import { upstreamToolNames as toolNamesOf } from './helpers/wires.ts';

type Rec = Record<string, any>;
const BETA = 'mid-conversation-tool-changes-2026-07-01';
const INLINE = 'inline-tools-2026-09-15';
const schema = { type: 'object' as const, properties: { key: { type: 'string' } } };
const LONG = 'mcp__plugin_atlassian_atlassian__getJiraProjectIssueTypesMetadata';
const LATE = { name: 'mcp__jira__get_issue', description: 'One Jira issue', input_schema: schema };

test('lowering: the tools offered at the end declared, the blocks left out, a turn left without text dropped; Anthropic untouched', () => {
  const req = {
    model: 'm', system: [], stream: false,
    tools: [
      { name: 'Read', input_schema: schema },
      { name: 'Bash', input_schema: schema },
      { name: 'mcp__x__deferred', input_schema: schema, defer_loading: true },
    ],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'list the files' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't0', name: 'Bash', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't0', content: [{ type: 'text', text: 'a.txt' }] }] },
      { role: 'system', content: [
        { type: 'text', text: 'Jira is connected.' },
        { type: 'tool_addition', tool: { type: 'tool_definition', definition: { name: 'mcp__late__search', input_schema: schema } } },
        { type: 'tool_removal', tool: { type: 'tool_reference', name: 'Bash' } },
      ] },
      { role: 'system', content: [{ type: 'tool_addition', tool: { type: 'tool_reference', name: 'mcp__x__deferred' } }] },
    ],
  } as unknown as CanonicalRequest;
  const { req: out, adjustments } = lowerToolChanges(req, 'openai-chat');
  assert.deepEqual(out.tools!.map((t) => t.name), ['Read', 'mcp__x__deferred', 'mcp__late__search']);
  assert.equal(out.tools![1]!.defer_loading, undefined, 'a deferred tool an addition references is loaded');
  assert.deepEqual(adjustments, ['tool_changes=applied(added 1, removed 1)']);
  assert.equal(out.messages.length, 4, 'the system turn holding only changes is gone');
  assert.deepEqual(out.messages[3], { role: 'system', content: [{ type: 'text', text: 'Jira is connected.' }] });
  assert.equal(out.messages[1], req.messages[1], 'the call of the tool since removed stays in the history');
  assert.equal(req.messages[3]!.content.length, 3, 'the decoded request (shared by attempts) is untouched');
  assert.equal(lowerToolChanges(req, 'anthropic-messages').req, req, 'Anthropic reads tool changes itself');
  // Token counts and cost estimates read the tools offered at the end, on any target.
  assert.deepEqual(toolsInContext(req).map((t) => t.name), ['Read', 'mcp__x__deferred', 'mcp__late__search']);
  assert.equal(promptParts(req).tools.length, 3);
  const plain = { ...req, messages: req.messages.slice(0, 3) } as CanonicalRequest;
  assert.equal(offeredTools(plain), plain.tools, 'no changes: the same array');
  assert.equal(lowerToolChanges(plain, 'gemini').req, plain, 'no changes: the same object');
  // An MCP reference names Anthropic's MCP connector: refused on other targets, naming the field.
  const mcp = { ...req, mcp_tool_change: 'messages[4].content[0].tool' } as CanonicalRequest;
  assert.throws(() => lowerToolChanges(mcp, 'bedrock-converse'), (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === 'messages[4].content[0].tool.type');
});

test('the Messages codec carries a system turn with tool changes and an effort through the canonical model as it was sent', () => {
  const body = structuredClone(conversation('claude-test')) as Rec;
  delete body.betas;
  body.messages[5].content.unshift({ type: 'text', text: 'Jira is connected now.' });
  body.messages[5].output_config = { effort: 'high' };
  const canonical = decodeMessagesRequest(body);
  assert.deepEqual(canonical.messages[5]!.content.map((b) => b.type), ['text', 'tool_removal', 'tool_removal', 'tool_addition']);
  const out = encodeMessagesRequest(canonical, { upstreamModel: 'claude-test', provider: 'anthropic' }).body as Rec;
  assert.deepEqual(out.messages[5], body.messages[5], 'in place, not hoisted into the system prompt');
  assert.equal(out.system, undefined);
});

let openai: MockUpstream; let anthropic: MockUpstream; let bedrock: MockUpstream; let gemini: MockUpstream; let gw: TestGateway;
let fx: FourFormats | undefined;
before(async () => { fx = await startFourFormats(); ({ openai, anthropic, bedrock, gemini, gw } = fx); });
after(async () => { await fx?.close(); });

const client = (): Anthropic => new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0 });

/**
 * Claude Code's shape: a tool loop on the declared tools, then a system message (after the user's
 * next words) that withdraws them and adds an MCP tool that arrived late, `tools` left as it was.
 * The user asks for a tool, so the model calls the one offered.
 */
function conversation(modelId: string, added: Rec = { type: 'tool_definition', definition: LATE }): Anthropic.Beta.MessageCreateParamsNonStreaming {
  return {
    model: modelId, max_tokens: 300, betas: [BETA, INLINE],
    tools: [
      { name: 'Read', description: 'Reads a file', input_schema: schema },
      { name: 'Bash', description: 'Runs a command', input_schema: schema },
    ],
    messages: [
      { role: 'user', content: 'What is in the folder?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'Bash', input: { key: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: 'a.txt' }] },
      { role: 'assistant', content: 'The folder holds a.txt.' },
      { role: 'user', content: 'Now use the tool for ABC-1.' },
      { role: 'system', content: [
        { type: 'tool_removal', tool: { type: 'tool_reference', name: 'Read' } },
        { type: 'tool_removal', tool: { type: 'tool_reference', name: 'Bash' } },
        { type: 'tool_addition', tool: added, cache_control: { type: 'ephemeral' } },
      ] },
    ],
  } as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming;
}

/** The tools the last request to `up` declared, read in its wire format (helpers/wires.ts). */
const upstreamTools = (up: MockUpstream): string[] =>
  toolNamesOf({ id: '', mock: up, format: up === openai ? 'openai-chat' : up === bedrock ? 'bedrock-converse' : up === gemini ? 'gemini' : 'anthropic-messages' }).declared;

test('anthropic SDK (beta) -> Anthropic: the tool changes relayed as sent with the beta, the added tool called, streamed and not', async () => {
  const sent = conversation('anthropic/claude-test');
  const { data: msg, response } = await client().beta.messages.create(sent).withResponse();
  const up = anthropic.requests.at(-1)!;
  assert.match(String(up.headers['anthropic-beta']), new RegExp(BETA), 'the beta reaches Anthropic');
  assert.deepEqual((up.body as Rec).messages[5], sent.messages[5], 'the system message as sent');
  assert.deepEqual((up.body as Rec).tools, sent.tools, 'tools as sent (the prompt cache holds)');
  assert.doesNotMatch(response.headers.get('x-gateway-adjustments') ?? '', /tool_changes/);
  assert.equal(msg.content.find((c) => c.type === 'tool_use')?.name, LATE.name, 'the model calls the tool offered, not a withdrawn one');
  const streamed = await client().beta.messages.stream(conversation('anthropic/claude-test')).finalMessage();
  assert.equal(streamed.content.find((c) => c.type === 'tool_use')?.name, LATE.name);
  assert.deepEqual((anthropic.requests.at(-1)!.body as Rec).messages[5], sent.messages[5]);
  // A reference to a declared tool (the shape Claude Code uses without the inline-tools beta) too.
  const byRef = await client().beta.messages.create({ ...conversation('anthropic/claude-test', { type: 'tool_reference', name: 'Read' }), betas: [BETA] });
  assert.equal(byRef.content.find((c) => c.type === 'tool_use')?.name, 'Read');
});

test('anthropic SDK -> OpenAI, Bedrock, Gemini: the added tool declared, the removed ones not, the blocks gone; called back, streamed and not', async () => {
  for (const [modelId, up] of [['openai/gpt-4o-mini', openai], ['bedrock/anthropic.claude-test-v1:0', bedrock], ['gemini/gemini-2.5-flash', gemini]] as const) {
    const { data: msg, response } = await client().beta.messages.create(conversation(modelId)).withResponse();
    assert.deepEqual(upstreamTools(up), [LATE.name], modelId);
    assert.match(response.headers.get('x-gateway-adjustments') ?? '', /tool_changes=applied\(added 1, removed 2\)/, modelId);
    const wire = JSON.stringify(up.requests.at(-1)!.body);
    assert.ok(!wire.includes('tool_addition') && !wire.includes('tool_removal'), `${modelId}: no tool change block sent`);
    assert.ok(wire.includes('"Bash"'), `${modelId}: the earlier call of a removed tool stays in the history`);
    assert.equal(msg.content.find((c) => c.type === 'tool_use')?.name, LATE.name, modelId);
    const streamed = await client().beta.messages.stream(conversation(modelId)).finalMessage();
    assert.equal(streamed.content.find((c) => c.type === 'tool_use')?.name, LATE.name, `${modelId} streamed`);
  }
});

test('a system message with text beside the changes keeps its text on OpenAI; a cleared one keeps its changes', async () => {
  const body = conversation('openai/gpt-4o-mini') as Rec;
  body.messages[5].content.unshift({ type: 'text', text: 'Jira is connected now.' });
  await client().beta.messages.create(body as Anthropic.Beta.MessageCreateParamsNonStreaming);
  const up = openai.requests.at(-1)!.body as Rec;
  assert.ok(up.messages.some((m: Rec) => m.role === 'system' && m.content === 'Jira is connected now.'), JSON.stringify(up.messages));
  // clear_at hides the message's text once a later user turn exists; the tools it added stay offered.
  body.messages[5].clear_at = 'next_user_message';
  body.messages.push({ role: 'user', content: 'And use the tool again.' });
  await client().beta.messages.create(body as Anthropic.Beta.MessageCreateParamsNonStreaming);
  const cleared = openai.requests.at(-1)!.body as Rec;
  assert.ok(!JSON.stringify(cleared).includes('Jira is connected now.'), 'the cleared text is gone');
  assert.deepEqual(upstreamTools(openai), [LATE.name], 'the changes of a cleared message still hold');
});

test('a tool added with a name past 64 characters -> OpenAI: declared under one replacement, called back under its own', async () => {
  const msg = await client().beta.messages.create(conversation('openai/gpt-4o-mini', { type: 'tool_definition', definition: { ...LATE, name: LONG } }));
  assert.deepEqual(upstreamTools(openai), [upstreamName(LONG, FORMAT_TOOL_NAMES['openai-chat'])]);
  assert.equal(msg.content.find((c) => c.type === 'tool_use')?.name, LONG);
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) => fetch(`${gw.url}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers }, body: JSON.stringify(body),
});

test('validation: malformed tool changes and system-message output_config are 400s naming the field, in the Anthropic envelope', async () => {
  const cases: Array<[(b: Rec) => void, string]> = [
    [(b) => { delete b.messages[5].content[2].tool; }, 'messages[5].content[2].tool'],
    [(b) => { b.messages[5].content[2].tool = { type: 'bogus' }; }, 'messages[5].content[2].tool.type'],
    [(b) => { b.messages[5].content[0].tool = { type: 'tool_definition', definition: LATE }; }, 'messages[5].content[0].tool.type'],
    [(b) => { b.messages[5].content[0].tool.name = 'Write'; }, 'messages[5].content[0].tool.name'],
    [(b) => { delete b.messages[5].content[2].tool.definition.input_schema; }, 'messages[5].content[2].tool.definition.input_schema'],
    [(b) => { b.messages[5].content[2].tool.definition.name = 'has space'; }, 'messages[5].content[2].tool.definition.name'],
    [(b) => { b.messages[5].content[2].tool = { type: 'mcp_tool_reference', name: 'x' }; }, 'messages[5].content[2].tool.server_name'],
    [(b) => { b.messages[5].content[1].cache_control = { type: 'forever' }; }, 'messages[5].content[1].cache_control.type'],
    [(b) => { b.messages[5].content[1] = { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }; }, 'messages[5].content[1].type'],
    [(b) => { b.messages[5].output_config = { effort: 'extreme' }; }, 'messages[5].output_config.effort'],
    [(b) => { b.messages[5].output_config = { format: { type: 'json_schema', schema } }; }, 'messages[5].output_config.format'],
  ];
  for (const [spoil, field] of cases) {
    const body = structuredClone(conversation('anthropic/claude-test')) as Rec;
    delete body.betas;
    spoil(body);
    const r = await post('/v1/messages', body, { 'anthropic-beta': BETA });
    const j = await r.json() as Rec;
    assert.equal(r.status, 400, field);
    assert.equal(j.type, 'error', field);
    assert.equal(j.error.type, 'invalid_request_error', field);
    assert.ok(j.error.message.includes(`'${field}'`), `${field}: ${j.error.message}`);
  }
  // A reference to a tool an earlier addition defined is valid, and so is a system message setting an effort only.
  const body = structuredClone(conversation('anthropic/claude-test')) as Rec;
  delete body.betas;
  body.messages.push({ role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: LATE.name } }] }, { role: 'system', output_config: { effort: 'high' } });
  const r = await post('/v1/messages', body, { 'anthropic-beta': `${BETA},${INLINE}` });
  assert.equal(r.status, 200, await r.clone().text());
  assert.deepEqual((anthropic.requests.at(-1)!.body as Rec).messages.at(-1), { role: 'system', output_config: { effort: 'high' } });
});

test('an MCP tool change: relayed to Anthropic, a 400 naming the field on OpenAI (Anthropic MCP connector only)', async () => {
  const mcp = { type: 'mcp_toolset_reference', server_name: 'jira' };
  const body = { ...conversation('openai/gpt-4o-mini', mcp), mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'jira' }] } as Rec;
  delete body.betas;
  const r = await post('/v1/messages', body, { 'anthropic-beta': `${BETA},mcp-client-2025-11-20` });
  const j = await r.json() as Rec;
  assert.equal(r.status, 400, JSON.stringify(j));
  assert.equal(j.error.type, 'invalid_request_error');
  assert.match(j.error.message, /MCP/);
  assert.match(j.error.message, /messages\[5\]\.content\[2\]\.tool\.type/);
  const ok = await post('/v1/messages', { ...body, model: 'anthropic/claude-test' }, { 'anthropic-beta': `${BETA},mcp-client-2025-11-20` });
  assert.equal(ok.status, 200, await ok.clone().text());
  assert.deepEqual((anthropic.requests.at(-1)!.body as Rec).messages[5].content[2].tool, mcp);
});

test('a tool choice forcing a tool the changes withdrew: a 400 naming tool_choice off Anthropic; forcing one added is kept', async () => {
  const headers = { 'anthropic-beta': `${BETA},${INLINE}` };
  const body = (model: string, tool_choice: Rec): Rec => { const b = { ...conversation(model), tool_choice } as Rec; delete b.betas; return b; };
  for (const model of ['openai/gpt-4o-mini', 'gemini/gemini-2.5-flash', 'bedrock/anthropic.claude-test-v1:0']) {
    const r = await post('/v1/messages', body(model, { type: 'tool', name: 'Bash' }), headers);
    const j = await r.json() as Rec;
    assert.equal(r.status, 400, `${model}: ${JSON.stringify(j)}`);
    assert.equal(j.error.type, 'invalid_request_error');
    assert.match(j.error.message, /'tool_choice\.name': "Bash" is not offered/);
  }
  const none = { ...body('openai/gpt-4o-mini', { type: 'any' }) };
  none.messages = none.messages.map((m: Rec, i: number) => (i === 5 ? { role: 'system', content: m.content.slice(0, 2) } : m));
  const r = await post('/v1/messages', none, headers);
  assert.equal(r.status, 400, await r.clone().text());
  assert.match(((await r.json()) as Rec).error.message, /'tool_choice': a tool must be called/);
  // The tool added mid-conversation may be forced: it is declared to OpenAI and chosen there.
  const added = await post('/v1/messages', body('openai/gpt-4o-mini', { type: 'tool', name: LATE.name }), headers);
  assert.equal(added.status, 200, await added.clone().text());
  assert.deepEqual((openai.requests.at(-1)!.body as Rec).tool_choice, { type: 'function', function: { name: LATE.name } });
});

test('count_tokens and the router count the tools offered at the end', async () => {
  const big = { ...LATE, description: `Reads one Jira issue. ${'Lists its fields, comments and links. '.repeat(60)}` };
  const count = async (b: Rec): Promise<number> => {
    const body = { ...b };
    delete body.max_tokens; delete body.betas;
    const r = await post('/v1/messages/count_tokens', body);
    const j = await r.json() as Rec;
    assert.equal(r.status, 200, JSON.stringify(j));
    return j.input_tokens;
  };
  const withAdded = conversation('openai/gpt-4o-mini', { type: 'tool_definition', definition: big }) as Rec;
  const withoutChanges: Rec = { ...withAdded, messages: withAdded.messages.slice(0, 5) };
  assert.ok(await count(withAdded) > await count(withoutChanges) + 300, 'a tool defined mid-conversation counts');
  const rank = async (b: Rec): Promise<number> => {
    const r = await fetch(`${gw.url}/v1/router/rank?format=messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...b, model: 'router', betas: undefined }) });
    const j = await r.json() as Rec;
    assert.equal(r.status, 200, JSON.stringify(j));
    return j.candidates.find((c: Rec) => c.id === 'openai/gpt-4o-mini').input_tokens;
  };
  assert.ok(await rank(withAdded) > await rank(withoutChanges) + 300, 'the router estimates the added tool');
  // A big declared tool removed mid-conversation is not offered any more: it counts no longer.
  const declaredBig: Rec = { ...withoutChanges, tools: [...withoutChanges.tools, { ...big, name: 'Huge' }] };
  const removed = { ...declaredBig, messages: [...declaredBig.messages, { role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'Huge' } }] }] };
  assert.ok(await count(removed) < await count(declaredBig) - 300);
});

test("a policy's request.tools and the router's needs read the tools offered at the end", () => {
  const body = {
    model: 'router', max_tokens: 100, tools: [{ name: 'Read', input_schema: schema }, { name: 'Bash', input_schema: schema }],
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'Bash' } }, { type: 'tool_removal', tool: { type: 'tool_reference', name: 'Read' } }, { type: 'tool_addition', tool: { type: 'tool_definition', definition: LATE } }] },
      { role: 'user', content: 'go on' },
    ],
  };
  const view = viewRequest(decodeMessagesRequest(body), parseRouterParams(body), null, '/v1/messages', null);
  assert.equal((view.policyData.request as Rec).tools, 1, 'two declared, both removed, one added');
  assert.equal(view.needs.tools, true);
  const none = { ...body, messages: [body.messages[0]!, { role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'Bash' } }, { type: 'tool_removal', tool: { type: 'tool_reference', name: 'Read' } }] }, body.messages[2]!] };
  const bare = viewRequest(decodeMessagesRequest(none), parseRouterParams(none), null, '/v1/messages', null);
  assert.equal((bare.policyData.request as Rec).tools, 0);
  assert.equal(bare.needs.tools, false, 'no tools offered and no tool turns: any model will do');
});

test('the Anthropic mock refuses tool changes without the beta, and tool_definition without inline-tools, as the API does', async () => {
  const direct = (body: Rec, beta?: string) => fetch(`${anthropic.url}/messages`, {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'k', ...(beta ? { 'anthropic-beta': beta } : {}) },
  });
  const body = { ...conversation('claude-test') } as Rec;
  delete body.betas;
  let r = await direct(body);
  assert.equal(r.status, 400);
  assert.match((await r.json() as Rec).error.message, /^messages\.5\.content\.0: Input tag 'tool_removal' found using 'type' does not match any of the expected tags: 'text'$/);
  r = await direct(body, BETA);
  assert.equal(r.status, 400);
  assert.match((await r.json() as Rec).error.message, /messages\.5\.content\.2\.tool_addition\.tool: Input tag 'tool_definition'/);
  r = await direct(body, `${BETA},${INLINE}`);
  assert.equal(r.status, 200, await r.clone().text());
  const unknown = structuredClone(body);
  unknown.messages[5].content[0].tool.name = 'Write';
  r = await direct(unknown, `${BETA},${INLINE}`);
  assert.equal(r.status, 400);
  assert.match((await r.json() as Rec).error.message, /messages\.5\.content\.0\.tool_removal\.tool\.name: no tool named 'Write'/);
});

test("a system message's own effort: relayed to Anthropic in place, the request's reasoning effort on OpenAI", async () => {
  const body = structuredClone(conversation('anthropic/claude-test')) as Rec;
  delete body.betas;
  body.messages[5].output_config = { effort: 'low' };
  let r = await post('/v1/messages', body, { 'anthropic-beta': `${BETA},${INLINE}` });
  assert.equal(r.status, 200, await r.clone().text());
  assert.deepEqual((anthropic.requests.at(-1)!.body as Rec).messages[5], body.messages[5]);
  r = await post('/v1/messages', { ...body, model: 'openai/gpt-4o-mini' });
  assert.equal(r.status, 200, await r.clone().text());
  assert.match(r.headers.get('x-gateway-adjustments') ?? '', /reasoning_effort=low\(system turn\)/);
  assert.ok(!JSON.stringify(openai.requests.at(-1)!.body).includes('output_config'));
});

test('router mode: a conversation with an MCP tool change goes only to a target that reads it (Anthropic)', async () => {
  const body = { ...conversation('router', { type: 'mcp_toolset_reference', server_name: 'jira' }), mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'jira' }] } as Rec;
  delete body.betas;
  const r = await fetch(`${gw.url}/v1/router/rank?format=messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = await r.json() as Rec;
  assert.equal(r.status, 200, JSON.stringify(j));
  assert.deepEqual(j.plan.map((p: Rec) => p.id), ['anthropic/claude-test']);
  const openaiCandidate = j.candidates.find((c: Rec) => c.id === 'openai/gpt-4o-mini');
  assert.equal(openaiCandidate.excluded.constraint, 'capability:tools');
  assert.match(openaiCandidate.excluded.reason, /MCP/);
  // Served: Anthropic gets the change as sent, where a plan on OpenAI would have been a 400.
  const res = await post('/v1/messages', { ...body, models: ['openai/gpt-test', 'anthropic/claude-test'] }, { 'anthropic-beta': `${BETA},mcp-client-2025-11-20` });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal((await res.json() as Rec).model, 'anthropic/claude-test');
});
