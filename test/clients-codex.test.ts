// Codex (@openai/codex, the native binary its npm package ships per platform) in exec mode against the
// gateway's Responses API with an Anthropic model behind it: a model provider in a temporary
// CODEX_HOME/config.toml (wire_api = "responses", the key from an environment variable), a plain turn
// and a tool loop (the mock calls Codex's first tool, exec_command; Codex runs it in its read-only
// sandbox and sends the output back); and an OpenAI model, whose Responses requests are relayed
// natively to the OpenAI mock's own Responses endpoint; and model "router" (the router picks per
// request between the two, exploration at its largest share). Every proxy variable points at a local trap that must see no
// connection (update checks, plugins, apps and analytics are switched off in config.toml), and each
// run is killed after 90 s.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

const CODEX = fileURLToPath(new URL('../node_modules/.bin/codex', import.meta.url));
let ant: MockUpstream; let oai: MockUpstream; let gw: TestGateway; let key = ''; let trap: Server; let trapUrl = '';
const trapped: string[] = [];
const dirs: string[] = [];

/** Network features a default Codex reaches out with; none has a place in a test run. */
const OFFLINE = `check_for_update_on_startup = false
[analytics]
enabled = false
[features]
apps = false
plugins = false
remote_plugin = false
plugin_sharing = false
tool_suggest = false
skill_search = false
api_key_model_discovery = false
image_generation = false
in_app_updates = false
system_proxy_fallback = false
`;

before(async () => {
  [ant, oai] = await Promise.all([startMockAnthropic(), startMockOpenAI()]);
  gw = await startTestGateway({ providers: [
    // Context windows as large as the real models' (the router refuses a model Codex's prompt would not fit).
    { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [{ name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true, prompt_caching: true }, context_window: 200000 }] },
    // OpenAI serves the Responses API itself: relayed natively (providers/openai.yaml declares the same path).
    { id: 'oai', format: 'openai-chat', base_url: oai.url, paths: { responses: '/responses' }, models: [{ name: 'gpt-5', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true, prompt_caching: true }, context_window: 400000 }] },
  ], gateway: { auth: { enabled: true }, router: { exploration: { share: 0.5 }, quality_signals: [{ metric: 'thumbs_up' }] } } });
  key = (await gw.services.admin!.createKey({ name: 'codex' })).key;
  trap = createServer((s) => { s.on('data', (d) => trapped.push(d.toString().split('\r\n')[0]!)); s.on('error', () => {}); s.end(); });
  await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
  trapUrl = `http://127.0.0.1:${(trap.address() as { port: number }).port}`;
});
after(async () => {
  await gw.stop(); await ant.close(); await oai.close(); trap.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Run = { code: number | null; events: Rec[]; stderr: string };

/**
 * One `codex exec --json` run. CODEX_HOME lives under /var/tmp: Codex refuses to put its sandbox
 * helper aliases under /tmp, and without them it cannot run a command.
 */
async function codexExec(prompt: string, model = 'ant/test-model'): Promise<Run> {
  const home = mkdtempSync('/var/tmp/gw-codex-home-');
  const work = mkdtempSync('/var/tmp/gw-codex-work-');
  dirs.push(home, work);
  writeFileSync(join(home, 'config.toml'), `model = "${model}"
model_provider = "gateway"
approval_policy = "never"
sandbox_mode = "read-only"
${OFFLINE.split('[analytics]')[0]}
[model_providers.gateway]
name = "Model gateway"
base_url = "${gw.url}/v1"
env_key = "GATEWAY_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]${OFFLINE.split('[analytics]')[1]}`);
  const proxy = { HTTPS_PROXY: trapUrl, HTTP_PROXY: trapUrl, ALL_PROXY: trapUrl, https_proxy: trapUrl, http_proxy: trapUrl, all_proxy: trapUrl, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' };
  const child = spawn(CODEX, ['exec', '--skip-git-repo-check', '--json', '-C', work, prompt], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CODEX_HOME: home, GATEWAY_API_KEY: key, ...proxy },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = ''; let err = '';
  child.stdout.on('data', (d: Buffer) => { out += d; });
  child.stderr.on('data', (d: Buffer) => { err += d; });
  const kill = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const code = await new Promise<number | null>((r) => child.on('close', r));
  clearTimeout(kill);
  const events = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Rec);
  return { code, events, stderr: err };
}

const completed = (r: Run, type: string): Rec[] => r.events.filter((e) => e.type === 'item.completed' && e.item.type === type).map((e) => e.item);

test('codex exec: a plain turn against an Anthropic model', async () => {
  ant.reset();
  const r = await codexExec('say hello');
  assert.equal(r.code, 0, r.stderr);
  const messages = completed(r, 'agent_message');
  assert.equal(messages.length, 1);
  assert.match(messages[0]!.text, /^Echo: /);
  const turn = r.events.find((e) => e.type === 'turn.completed')!;
  assert.ok(turn.usage.input_tokens > 0 && turn.usage.output_tokens > 0);
  assert.equal(ant.requests.length, 1);
  const sent = ant.requests[0]!.body as Rec;
  assert.equal(sent.model, 'test-model');
  assert.equal(sent.stream, true, 'Codex streams');
  assert.ok((sent.system as Rec[]).some((b) => /Codex/.test(b.text)), 'its developer instructions became the system prompt');
  assert.ok((sent.tools as Rec[]).some((t) => t.name === 'exec_command'));
  assert.deepEqual(trapped, [], 'no connection left this machine');
});

test('codex exec: a tool loop (exec_command run in its sandbox, output back to the model)', async () => {
  ant.reset();
  const r = await codexExec('use a tool to look at the weather');
  assert.equal(r.code, 0, r.stderr);
  const commands = completed(r, 'command_execution');
  assert.equal(commands.length, 1);
  assert.match(commands[0]!.command, /example cmd/);
  assert.match(commands[0]!.aggregated_output, /not found/);
  const answer = completed(r, 'agent_message').at(-1)!;
  assert.match(answer.text, /^The tool returned: /);
  assert.equal(ant.requests.length, 2);
  const second = ant.requests[1]!.body as Rec;
  const blocks = (second.messages as Rec[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  const use = blocks.find((b) => b.type === 'tool_use')!;
  const result = blocks.find((b) => b.type === 'tool_result')!;
  assert.equal(use.name, 'exec_command');
  assert.equal(result.tool_use_id, use.id, 'the call id survived the round trip through Codex');
  // Codex sends the command's exit status (its output is truncated to max_output_tokens, 1 here).
  assert.match(JSON.stringify(result.content), /exited with code 127/);
  await new Promise((res) => setTimeout(res, 100));
  const recs = (await gw.services.store!.listInferences({ limit: 10 })).filter((x) => x.route === '/v1/responses');
  assert.ok(recs.length >= 2 && recs.every((x) => x.status === 200 && x.clientFormat === 'openai-responses'));
  assert.deepEqual(trapped, []);
});

test('codex exec against an OpenAI model: the Responses API relayed natively, tool loop included', async () => {
  oai.reset();
  const r = await codexExec('use a tool to look at the weather', 'oai/gpt-5');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(completed(r, 'command_execution').length, 1);
  assert.match(completed(r, 'agent_message').at(-1)!.text, /^The tool returned: /);
  const calls = oai.requests.filter((q) => q.path === '/v1/responses');
  assert.equal(calls.length, 2);
  const second = calls[1]!.body as Rec;
  assert.equal(second.model, 'gpt-5');
  assert.equal(second.store, false);
  assert.ok((second.tools as Rec[]).some((t) => t.type === 'namespace'), 'Codex tools reach OpenAI as sent');
  const items = second.input as Rec[];
  const call = items.find((i) => i.type === 'function_call')!;
  const output = items.find((i) => i.type === 'function_call_output')!;
  assert.equal(output.call_id, call.call_id);
  assert.deepEqual(trapped, []);
});

test('codex exec with model "router": a tool loop routed per request, the follow-up never explored away from its cache', async () => {
  oai.reset(); ant.reset();
  await gw.services.router!.flush();
  const before = (await gw.services.store!.sql.all('SELECT COUNT(*) AS n FROM router_decisions'))[0]!.n as number;
  const r = await codexExec('use a tool to look at the weather', 'router');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(completed(r, 'command_execution').length, 1);
  assert.match(completed(r, 'agent_message').at(-1)!.text, /^The tool returned: /);
  await gw.services.router!.flush();
  const rows = (await gw.services.store!.sql.all('SELECT served_model, decision FROM router_decisions ORDER BY created_at, inference_id')).slice(Number(before));
  assert.equal(rows.length, 2);
  const [first, second] = rows.map((x) => ({ served: String(x.served_model), d: JSON.parse(String(x.decision)) as Rec }));
  assert.equal(second!.d.affinity, first!.served, "the follow-up matched the first turn's conversation");
  assert.equal(second!.d.explored, false);
  if (first!.d.explored === false) assert.equal(second!.served, first!.served);
  // The command's output reached the model that answered the follow-up, in that provider's wire format.
  if (second!.served === 'oai/gpt-5') {
    const items = (oai.requests.filter((q) => q.path === '/v1/responses').at(-1)!.body as Rec).input as Rec[];
    assert.equal(items.find((i) => i.type === 'function_call_output')!.call_id, items.find((i) => i.type === 'function_call')!.call_id);
  } else {
    const blocks = ((ant.requests.at(-1)!.body as Rec).messages as Rec[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    assert.equal(blocks.find((b) => b.type === 'tool_result')!.tool_use_id, blocks.find((b) => b.type === 'tool_use')!.id);
  }
  assert.deepEqual(trapped, []);
});
