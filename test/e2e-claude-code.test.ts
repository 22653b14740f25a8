// Claude Code (the real CLI, `@anthropic-ai/claude-code`) against the gateway: `claude -p ...
// --output-format json` with ANTHROPIC_BASE_URL at a test gateway whose upstreams are the mocks,
// for an OpenAI, a Gemini and an Anthropic model and for model "router", a plain turn and a tool loop. No network: a
// temporary HOME and config dir, telemetry and non-essential traffic off, and every proxy variable
// pointed at a local trap that fails the test if the CLI tries to reach anything but the gateway.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockAnthropic, startMockGemini, startMockOpenAI, type MockUpstream, type RecordedRequest } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING } from './helpers/gateway.ts';

const CLAUDE = join(import.meta.dirname, '..', 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
/** A run that has not finished by then hangs (on a DNS lookup, say): a failure, not a wait. */
const RUN_TIMEOUT_MS = 90_000;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});

const caps = { tools: true, vision: true, reasoning: true, structured_output: true, prompt_caching: true };
const model = (name: string, max: number, ctx: number) => ({ name, pricing: TEST_PRICING, capabilities: caps, max_completion_tokens: max, context_window: ctx });

const openai = await startMockOpenAI();
const anthropic = await startMockAnthropic();
const gemini = await startMockGemini();
const gw = await startTestGateway({
  providers: [
    { id: 'openai', format: 'openai-chat', base_url: openai.url, models: [model('gpt-5.1', 128000, 400000)] },
    { id: 'google', format: 'gemini', base_url: gemini.url, models: [model('gemini-2.5-pro', 65536, 1048576)] },
    { id: 'anthropic', format: 'anthropic-messages', base_url: anthropic.url, forward_headers: ['anthropic-beta'], models: [model('claude-opus-4-8', 128000, 1000000)] },
  ],
  // A quality signal: exploration happens only where feedback can teach (src/router/settings.ts learnsFrom).
  gateway: { router: { exploration: { share: 0.5 }, quality_signals: [{ metric: 'thumbs_up' }] } },
});

// Anything the CLI sends through a proxy lands here: it must stay empty.
const trapped: string[] = [];
const trap = createServer((req, res) => { trapped.push(`${req.method} ${req.url}`); res.writeHead(502).end(); });
trap.on('connect', (req, socket) => { trapped.push(`CONNECT ${req.url}`); socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'); });
await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
const trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;

const home = mkdtempSync(join(tmpdir(), 'gw-claude-code-'));
after(async () => {
  await gw.stop();
  await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
  trap.close();
  rmSync(home, { recursive: true, force: true });
});

type Result = { exit: number | null; out: Json; stderr: string; ms: number };

/** One `claude -p` run; `tool` restricts the built-in tools to that one and allows it; `extra` adds arguments and environment. */
async function claude(modelId: string, prompt: string, tool?: string, extra: { args?: string[]; env?: Record<string, string> } = {}): Promise<Result> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude'),
    ANTHROPIC_BASE_URL: gw.url, ANTHROPIC_API_KEY: 'sk-gw-claude-code-test',
    // Every model slot (main, small/fast, per family) on the gateway model under test.
    ANTHROPIC_MODEL: modelId, ANTHROPIC_SMALL_FAST_MODEL: modelId, ANTHROPIC_DEFAULT_HAIKU_MODEL: modelId,
    ANTHROPIC_DEFAULT_SONNET_MODEL: modelId, ANTHROPIC_DEFAULT_OPUS_MODEL: modelId,
    // Documented switches for telemetry, error reports, updates and other non-essential traffic.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1', DISABLE_BUG_COMMAND: '1',
    HTTPS_PROXY: trapUrl, HTTP_PROXY: trapUrl, https_proxy: trapUrl, http_proxy: trapUrl,
    NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost',
    ...extra.env,
  };
  const args = ['-p', prompt, '--output-format', 'json', '--model', modelId, ...(tool ? ['--tools', tool, '--allowedTools', tool] : []), ...(extra.args ?? [])];
  const t0 = performance.now();
  const child = spawn(CLAUDE, args, { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const exit = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  clearTimeout(timer);
  const ms = performance.now() - t0;
  assert.ok(ms < RUN_TIMEOUT_MS, `claude did not finish within ${RUN_TIMEOUT_MS} ms (a network wait?); stderr: ${stderr.slice(0, 500)}`);
  let out: Json = {};
  try { out = JSON.parse(stdout) as Json; } catch { assert.fail(`claude printed no JSON result (exit ${exit}): ${stdout.slice(0, 500)} ${stderr.slice(0, 500)}`); }
  return { exit, out, stderr, ms };
}

function assertSuccess(r: Result, turns: number, result: RegExp): void {
  assert.equal(r.exit, 0, `exit ${r.exit}: ${JSON.stringify(r.out).slice(0, 600)} ${r.stderr.slice(0, 300)}`);
  assert.equal(r.out.is_error, false, JSON.stringify(r.out).slice(0, 600));
  assert.equal(r.out.num_turns, turns);
  assert.match(String(r.out.result), result);
  assert.deepEqual(trapped, [], 'claude tried to reach the network outside the gateway');
}

const bodies = (mock: MockUpstream): Json[] => mock.requests.map((r: RecordedRequest) => obj(r.body));
const clear = (): void => { openai.reset(); anthropic.reset(); gemini.reset(); };

test('claude CLI is installed (the project postinstall puts the native binary in place)', () => {
  assert.ok(statSync(CLAUDE).size > 1_000_000, `${CLAUDE} is the install stub: run npm ci (postinstall runs @anthropic-ai/claude-code/install.cjs)`);
});

test('Claude Code, OpenAI model: plain turn; the mid-conversation system message stays a system message in place', async () => {
  clear();
  assertSuccess(await claude('openai/gpt-5.1', 'Say hello'), 1, /^Echo: /);
  const body = bodies(openai).at(-1)!;
  const roles = (body.messages as Json[]).map((m) => m.role);
  assert.equal(roles[0], 'system');
  assert.ok(roles.indexOf('system', 1) > roles.indexOf('user'), `a system message after the user turn: ${roles.join(',')}`);
  // Adaptive thinking with effort high -> reasoning_effort on a reasoning model.
  assert.equal(body.reasoning_effort, 'high');
  // Claude Code's metadata.user_id (a JSON object, over OpenAI's 128 characters) goes hashed.
  assert.match(String(body.safety_identifier), /^[0-9a-f]{64}$/);
});

test('Claude Code, OpenAI model: tool loop (a failed tool result reaches OpenAI marked as an error)', async () => {
  clear();
  assertSuccess(await claude('openai/gpt-5.1', 'Use a tool to list the files', 'Glob'), 2, /^The tool returned: Error: /);
  const [first, second] = bodies(openai);
  assert.equal((obj((first!.tools as Json[])[0]).function as Json).name, 'Glob');
  const tool = (second!.messages as Json[]).find((m) => m.role === 'tool')!;
  assert.match(String(tool.content), /^Error: /);
});

test('Claude Code with an MCP server and tool search (ENABLE_TOOL_SEARCH=true), OpenAI model: the tool its search loads is declared, under a name OpenAI takes', async () => {
  clear();
  // A stdio MCP server (test/fixtures/mcp) whose tools Claude Code names mcp__<server>__<tool>, past
  // OpenAI's 64 characters; with tool search on, they are declared deferred and loaded by ToolSearch's
  // tool_reference results. The mock model calls the first tool (ToolSearch) on every turn, so two turns.
  const config = join(home, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { 'jira-cloud-atlassian': { command: process.execPath, args: [join(import.meta.dirname, 'fixtures', 'mcp', 'jira-server.mjs')] } } }));
  const r = await claude('openai/gpt-5.1', 'Use a tool to find the issue types', 'ToolSearch', {
    args: ['--mcp-config', config, '--strict-mcp-config', '--max-turns', '2', '--allowedTools', 'mcp__jira-cloud-atlassian'],
    env: { ENABLE_TOOL_SEARCH: 'true' },
  });
  const [first, second] = bodies(openai);
  assert.ok(second, `the follow-up carrying the tool_reference reached OpenAI (exit ${r.exit}: ${JSON.stringify(r.out).slice(0, 400)})`);
  const names = (b: Json): string[] => (b.tools as Json[]).map((t) => String(obj(t.function).name));
  assert.deepEqual(names(first!), ['ToolSearch'], 'deferred MCP tools are not declared before a search loads them');
  const loaded = names(second!).filter((n) => n.startsWith('mcp__'));
  assert.equal(loaded.length, 1, names(second!).join(', '));
  assert.ok(loaded[0]!.length <= 64 && loaded[0]!.endsWith('ProjectIssueTypesWeatherImpactMetadata'), loaded[0]);
  const result = (second!.messages as Json[]).find((m) => m.role === 'tool')!;
  assert.match(String(result.content), new RegExp(`Tool ${loaded[0]} loaded`));
  assert.deepEqual(trapped, []);
});

test('Claude Code, Gemini model: plain turn; system text in systemInstruction, adaptive thinking as a budget', async () => {
  clear();
  assertSuccess(await claude('google/gemini-2.5-pro', 'Say hello'), 1, /^Echo: /);
  const body = bodies(gemini).at(-1)!;
  assert.deepEqual((body.contents as Json[]).map((c) => c.role), ['user']);
  const gc = obj(body.generationConfig);
  assert.equal(obj(gc.thinkingConfig).thinkingBudget, 24576);
  assert.ok(Number(gc.maxOutputTokens) > 24576);
});

test('Claude Code, Gemini model: tool loop', async () => {
  clear();
  assertSuccess(await claude('google/gemini-2.5-pro', 'Use a tool to list the files', 'Glob'), 2, /^The tool returned: /);
  const roles = (bodies(gemini)[1]!.contents as Json[]).map((c) => c.role);
  assert.deepEqual(roles, ['user', 'model', 'user']);
});

test('Claude Code, Anthropic model: plain turn relayed intact (system message, adaptive thinking, effort, context_management, metadata, betas)', async () => {
  clear();
  assertSuccess(await claude('anthropic/claude-opus-4-8', 'Say hello'), 1, /^Echo: /);
  // One request: a refused mid-conversation system message would show as a second one (Claude Code
  // retries such a turn without it).
  assert.equal(anthropic.requests.length, 1);
  const req = anthropic.requests.at(-1)!;
  const body = obj(req.body);
  assert.match(req.path, /^\/v1\/messages/);
  assert.equal(body.model, 'claude-opus-4-8');
  assert.ok((body.messages as Json[]).some((m) => m.role === 'system'));
  assert.equal(obj(body.thinking).type, 'adaptive');
  assert.ok(obj(body.output_config).effort !== undefined);
  assert.ok(Array.isArray(obj(body.context_management).edits));
  assert.equal(typeof obj(body.metadata).user_id, 'string');
  assert.match(String(req.headers['anthropic-beta']), /context-management-/);
});

test('Claude Code, Anthropic model: tool loop', async () => {
  clear();
  assertSuccess(await claude('anthropic/claude-opus-4-8', 'Use a tool to list the files', 'Glob'), 2, /^The tool returned: /);
  // Claude Code 2.1.332 follows a tool result with a system message (tokens left): relayed in place.
  const messages = bodies(anthropic)[1]!.messages as Json[];
  const last = messages.findLast((m) => m.role !== 'system')!;
  assert.ok((last.content as Json[]).some((b) => b.type === 'tool_result'));
});

// Router mode as a coding agent uses it: every model slot on "router". Exploration at its largest
// share (0.5), so a follow-up that exploration could move away from its cached model would show.
type DecisionRow = { served: string; decision: Json };
async function decisions(): Promise<DecisionRow[]> {
  await gw.services.router!.flush();
  const rows = await gw.services.store!.sql.all('SELECT served_model, decision FROM router_decisions ORDER BY created_at, inference_id');
  return rows.map((r) => ({ served: String(r.served_model), decision: JSON.parse(String(r.decision)) as Json }));
}
const mockOf = (served: string): MockUpstream => ({ openai, google: gemini, anthropic }[served.split('/')[0]!]!);

test('Claude Code, model "router": a plain turn and a tool loop; a follow-up is never explored away from its prompt cache', async () => {
  clear();
  const before = (await decisions()).length;
  assertSuccess(await claude('router', 'Say hello'), 1, /^Echo: /);
  const plain = (await decisions()).slice(before);
  assert.equal(plain.length, 1);
  assert.equal(plain[0]!.decision.chosen, plain[0]!.served);
  assert.equal(plain[0]!.decision.kind, 'tool_use', "Claude Code's built-in tools make every turn a tool_use prompt");
  assert.equal(mockOf(plain[0]!.served).requests.length, 1);

  clear();
  assertSuccess(await claude('router', 'Use a tool to list the files', 'Glob'), 2, /^The tool returned: /);
  const loop = (await decisions()).slice(before + 1);
  assert.equal(loop.length, 2);
  const [first, second] = loop as [DecisionRow, DecisionRow];
  assert.equal(second.decision.affinity, first.served, 'the follow-up matched the first turn\'s conversation');
  assert.equal(second.decision.explored, false, 'a follow-up held by a prompt cache is never explored');
  // Unless exploration picked the first turn's model, the best model answered it and the follow-up stays there.
  if (first.decision.explored === false) assert.equal(second.served, first.served);
  // The tool result reached that provider in its own wire format.
  const mock = mockOf(second.served);
  const body = bodies(mock).at(-1)!;
  const carried = mock === openai ? (body.messages as Json[]).some((m) => m.role === 'tool')
    : mock === gemini ? (body.contents as Json[]).some((c) => (c.parts as Json[]).some((p) => p.functionResponse !== undefined))
    : ((body.messages as Json[]).findLast((m) => m.role !== 'system')!.content as Json[]).some((b) => b.type === 'tool_result');
  assert.ok(carried, `no tool result in the follow-up to ${second.served}: ${JSON.stringify(body).slice(0, 400)}`);
});
