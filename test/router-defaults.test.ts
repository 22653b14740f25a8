// Router defaults in gateway.yaml (`router.defaults`, `router.key_defaults`): the router fields a routed
// request gets when it does not set them, for clients that cannot add body fields (a coding agent sends
// model "router" and nothing else). The request's own fields win, field by field; a key's defaults win
// over the global ones; a bad default is a config error at load, a default model the catalog lost a 400
// that says where the list came from.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { spawnSync } from 'node:child_process';
import { loadConfig } from '../src/config/load.ts';
import { unroutableDefaults } from '../src/router/defaults-check.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
let up: MockUpstream; let gw: TestGateway; let agentKey = ''; let otherKey = '';

before(async () => {
  up = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [
      { id: 'cheap', format: 'openai-chat', base_url: up.url, models: [{ name: 'small-1', pricing: { prompt: '0.0000001', completion: '0.0000002' }, capabilities: caps, context_window: 32000, max_completion_tokens: 4000 }] },
      { id: 'pricey', format: 'openai-chat', base_url: up.url, models: [{ name: 'big-1', pricing: { prompt: '0.00001', completion: '0.00005' }, capabilities: caps, context_window: 32000, max_completion_tokens: 8000 }] },
    ],
    gateway: {
      auth: { enabled: true },
      router: {
        exploration: { share: 0 },
        // Everyone: cost matters a little. Agent keys: only the big model, under a hard bound.
        defaults: { willingness_to_pay: 1e-9 },
        key_defaults: { 'agent-*': { models: ['big-1'], max_cost: 0.05 }, 'gone-*': { models: ['retired-9'] } },
      },
    },
  });
  agentKey = (await gw.services.admin!.createKey({ name: 'agent-claude-code' })).key;
  otherKey = (await gw.services.admin!.createKey({ name: 'batch-jobs' })).key;
});
after(async () => { await gw?.stop(); await up?.close(); });

const routed = (key: string, body: Record<string, unknown> = {}) => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
  body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'Explain TCP slow start.' }], ...body }),
});

test('the global default W applies to a request that sets none; a request that sets W keeps its own', async () => {
  const d = await routed(otherKey);
  assert.equal(d.status, 200, await d.clone().text());
  assert.equal(d.headers.get('x-router-model'), 'cheap/small-1', 'W ~ 0: the cheaper model');
  assert.equal(d.headers.get('x-router-defaults'), 'willingness_to_pay=defaults');
  const own = await routed(otherKey, { willingness_to_pay: 1000 });
  assert.equal(own.headers.get('x-router-model'), 'pricey/big-1', 'W large: the better prior');
  assert.equal(own.headers.get('x-router-defaults'), null, 'nothing taken from the defaults');
});

test("a key's defaults: its models and max_cost, over the global W; the request's own fields still win", async () => {
  up.reset();
  const r = await routed(agentKey);
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(r.headers.get('x-router-candidates'), '1');
  assert.equal(r.headers.get('x-router-model'), 'pricey/big-1');
  assert.equal(r.headers.get('x-router-defaults'), 'models=key_defaults[agent-*], max_cost=key_defaults[agent-*], willingness_to_pay=defaults');
  // The dry run shows the same, in its body too.
  const rank = await fetch(`${gw.url}/v1/router/rank`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${agentKey}` }, body: JSON.stringify({ messages: [{ role: 'user', content: 'Explain TCP slow start.' }] }) });
  const rb = (await rank.json()) as { model: string; defaults_applied: string };
  assert.equal(rb.model, 'pricey/big-1');
  assert.equal(rb.defaults_applied, r.headers.get('x-router-defaults'));
  // max_cost 0.05 caps the output: (0.05 - prompt) / $0.00005 < 1000 tokens, below the model's 8000.
  const cap = Number(r.headers.get('x-router-max-output-tokens'));
  assert.ok(cap > 0 && cap < 1000, `output cap ${cap}`);
  assert.equal((up.requests.at(-1)!.body as { max_tokens?: number; max_completion_tokens?: number }).max_tokens ?? (up.requests.at(-1)!.body as { max_completion_tokens?: number }).max_completion_tokens, cap);
  const own = await routed(agentKey, { models: ['small-1', 'big-1'], max_cost: 10 });
  assert.equal(own.headers.get('x-router-candidates'), '2');
  assert.equal(own.headers.get('x-router-model'), 'cheap/small-1', "its own models, with the global default W");
  assert.equal(own.headers.get('x-router-defaults'), 'willingness_to_pay=defaults');
});

test('a default model the catalog does not have: 400 naming models[i] and where the list came from', async () => {
  const key = (await gw.services.admin!.createKey({ name: 'gone-1' })).key;
  const r = await routed(key);
  assert.equal(r.status, 400);
  const e = (await r.json()) as { error: { param: string; message: string } };
  assert.equal(e.error.param, 'models[0]');
  assert.match(e.error.message, /retired-9/);
  assert.match(e.error.message, /gateway\.yaml's router defaults/);
});

test('bad defaults fail the config at load, naming the file and the path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-router-defaults-'));
  try {
    mkdirSync(join(dir, 'providers'));
    const write = (router: unknown) => writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', router }));
    write({ key_defaults: { 'agent-*': { models: ['router'] } } });
    assert.throws(() => loadConfig(join(dir, 'gateway.yaml'), {}), /gateway\.yaml at \/router\/key_defaults\/agent-\*\/models\/0: a default models list cannot name "router"/);
    write({ defaults: { max_cost: -1 } });
    assert.throws(() => loadConfig(join(dir, 'gateway.yaml'), {}), /max_cost/);
    write({ defaults: { temperature: 0.2 } });
    assert.throws(() => loadConfig(join(dir, 'gateway.yaml'), {}), /temperature|additional/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('a default model nothing routes is named when a config is loaded: at start, on reload and in `check`', async () => {
  // This gateway's config has one at start: key_defaults["gone-*"] names a model the catalog lacks.
  assert.deepEqual(unroutableDefaults(gw.services.holder.current).map((l) => l.replace(/:.*/, '')), ['router.key_defaults["gone-*"].models[0]']);
  // A reload that removes the provider of agent keys' default model: both lists named, with the reason.
  const logged: string[] = [];
  const original = console.error;
  console.error = (...a: unknown[]) => { logged.push(a.join(' ')); };
  try {
    rmSync(join(gw.providersDir, 'pricey.yaml'));
    const r = await gw.services.holder.reload();
    assert.equal(r.ok, true);
  } finally {
    console.error = original;
    gw.writeProvider({ id: 'pricey', format: 'openai-chat', base_url: up.url, models: [{ name: 'big-1', pricing: { prompt: '0.00001', completion: '0.00005' }, capabilities: caps, context_window: 32000, max_completion_tokens: 8000 }] });
  }
  const warning = logged.find((l) => l.includes('router default model'));
  assert.ok(warning, `no warning in ${JSON.stringify(logged)}`);
  assert.match(warning, /2 router default models cannot be routed/);
  assert.match(warning, /router\.key_defaults\["agent-\*"\]\.models\[0\]: unknown model "big-1"/);
  assert.match(warning, /router\.key_defaults\["gone-\*"\]\.models\[0\]: unknown model "retired-9"/);
  assert.equal((await gw.services.holder.reload()).ok, true);
  assert.deepEqual(unroutableDefaults(gw.services.holder.current).length, 1, 'big-1 routes again once its provider is back');
  // `gateway check` prints the same warning (and still passes: the catalog may come back).
  const check = spawnSync(process.execPath, ['src/main.ts', 'check', '--config', gw.configFile], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stderr);
  assert.match(check.stderr, /router\.key_defaults\["gone-\*"\]\.models\[0\]: unknown model "retired-9"/);
});
