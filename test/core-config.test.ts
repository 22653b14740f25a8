// Config: the check command's error messages (file and path), env substitution and overrides,
// hot reload of a good change (a new model becomes routable) and of a bad one (old config serves on).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadConfig, ConfigError } from '../src/config/load.ts';
import { compileConfig } from '../src/config/compile.ts';
import { substitute } from '../src/config/env.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { providerDoc, startTestGateway, type TestGateway } from './helpers/gateway.ts';

const run = promisify(execFile);
const NODE = process.execPath;

function tempConfig(gateway: Record<string, unknown>, providers: Record<string, unknown>[], raw: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-cfg-'));
  mkdirSync(join(dir, 'providers'));
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', ...gateway }));
  for (const p of providers) writeFileSync(join(dir, 'providers', `${p.id as string}.yaml`), stringify(p));
  for (const [name, text] of Object.entries(raw)) writeFileSync(join(dir, name), text);
  return join(dir, 'gateway.yaml');
}

const problemsOf = (file: string, env: Record<string, string> = {}): string[] => {
  try { loadConfig(file, env); return []; } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.problems.map((p) => `${p.file.split('/').slice(-2).join('/')} at ${p.path}: ${p.message}`);
  }
};

const ok = providerDoc({ id: 'acme', format: 'openai-chat', base_url: 'http://127.0.0.1:1/v1' });

test('the repository config passes check', async () => {
  const r = await run(NODE, ['src/main.ts', 'check'], { cwd: new URL('..', import.meta.url).pathname });
  assert.match(r.stdout, /config OK: .* \d+ providers, \d+ models/);
});

test('check exits non-zero and names the file and path of each problem', async () => {
  const file = tempConfig({ server: { port: 'eighty' }, surprise: 1 }, [{ ...ok, auth: { type: 'bearer' }, mappings: [{ param: 'temperature', max: 1 }] }]);
  const r = await run(NODE, ['src/main.ts', 'check', '--config', file], { cwd: new URL('..', import.meta.url).pathname }).catch((e: { code: number; stderr: string }) => e);
  assert.equal((r as { code: number }).code, 1);
  const err = (r as { stderr: string }).stderr;
  assert.match(err, /gateway\.yaml at \/server\/port: must be integer/);
  assert.match(err, /gateway\.yaml at \/: must NOT have additional properties "surprise"/);
  assert.match(err, /acme\.yaml at \/mappings\/0: min\/max need out_of_range: clamp or reject/);
});

test('semantic checks: json-logic operations and variables, ids, fallbacks, transforms', () => {
  const file = tempConfig({ fallbacks: { 'acme/test-model': ['acme/ghost'] } }, [
    { ...ok, mappings: [{ param: 'temperature', drop: true, when: { regex: [{ var: 'model' }, 'x'] } }, { param: 'top_p', drop: true, when: { '==': [{ var: 'user.name' }, 'x'] } }, { param: 'seed' }] },
  ], {
    'providers/other.yaml': stringify({ ...providerDoc({ id: 'other', format: 'bedrock-converse', base_url: 'https://x' }), id: 'different', auth: { type: 'transform', transform: 'nope' } }),
    'providers/router.yaml': stringify(providerDoc({ id: 'router', format: 'openai-chat', base_url: 'https://x' })),
  });
  const p = problemsOf(file);
  assert.ok(p.some((m) => /acme\.yaml at \/mappings\/0\/when: .*unknown json-logic operation "regex"/.test(m)), p.join('\n'));
  assert.ok(p.some((m) => /acme\.yaml at \/mappings\/1\/when: .*unknown variable "user.name"/.test(m)), p.join('\n'));
  assert.ok(p.some((m) => /acme\.yaml at \/mappings\/2: a mapping row needs an action/.test(m)), p.join('\n'));
  assert.ok(p.some((m) => /other\.yaml at \/id: provider id "different" must match the file name/.test(m)), p.join('\n'));
  assert.ok(p.some((m) => /other\.yaml at \/auth\/transform: unknown transform "nope"/.test(m)), p.join('\n'));
  assert.ok(p.some((m) => /router\.yaml at \/id: provider id "router" is reserved for router mode/.test(m)), p.join('\n'));
  assert.ok(p.some((m) => /gateway\.yaml at \/fallbacks\/acme\/test-model: unknown model "acme\/ghost"/.test(m)), p.join('\n'));
});

test('router.record_candidates: top, all or a whole number of candidates; anything else is refused naming the path', () => {
  for (const v of ['top', 'all', 0, 25]) assert.deepEqual(problemsOf(tempConfig({ router: { record_candidates: v } }, [ok])), [], String(v));
  for (const [v, why] of [[-1, /must be >= 0/], [2.5, /must be integer/], ['some', /must be equal to one of the allowed values/]] as const) {
    const p = problemsOf(tempConfig({ router: { record_candidates: v } }, [ok]));
    assert.ok(p.some((m) => /gateway\.yaml at \/router\/record_candidates: /.test(m) && why.test(m)), `${v}: ${p.join('\n')}`);
  }
});

test('server.request_timeout_ms below headers_timeout_ms is a config problem naming it (Node refused it at start with ERR_OUT_OF_RANGE)', () => {
  assert.deepEqual(problemsOf(tempConfig({ server: { request_timeout_ms: 10_000 } }, [ok])), []);
  for (const server of [{ request_timeout_ms: 2000 }, { headers_timeout_ms: 130_000 }, { headers_timeout_ms: 5000, request_timeout_ms: 4000 }]) {
    const p = problemsOf(tempConfig({ server }, [ok]));
    assert.ok(p.some((m) => /gateway\.yaml at \/server\/request_timeout_ms: request_timeout_ms \(\d+\) must be at least headers_timeout_ms/.test(m)), `${JSON.stringify(server)}: ${p.join('\n')}`);
  }
});

test('YAML syntax errors name the line', () => {
  const file = tempConfig({}, [], { 'providers/bad.yaml': 'id: bad\nname: [unclosed\n' });
  const p = problemsOf(file);
  assert.ok(p.some((m) => /bad\.yaml at line \d+/.test(m)), p.join('\n'));
});

test('${VAR} and ${VAR:-default} (nested), and <PROVIDER>_BASE_URL / _API_KEY overrides', () => {
  assert.equal(substitute('a-${X}-b', { X: '1' }), 'a-1-b');
  assert.equal(substitute('${MISSING:-fallback}', {}), 'fallback');
  assert.equal(substitute('${A:-${B:-deep}}', { B: 'b' }), 'b');
  assert.equal(substitute('${A:-${B:-deep}}', {}), 'deep');
  assert.equal(substitute('${EMPTY:-d}', { EMPTY: '' }), 'd');
  const file = tempConfig({}, [{ ...providerDoc({ id: 'my-prov', format: 'openai-chat', base_url: '${MY_URL:-http://127.0.0.1:2/v1}' }), api_key: '${SECRET}' }]);
  const a = compileConfig(loadConfig(file, { SECRET: 's1' }), {});
  assert.equal(a.providers.get('my-prov')!.baseUrl, 'http://127.0.0.1:2/v1');
  assert.equal(a.providers.get('my-prov')!.apiKey, 's1');
  const b = compileConfig(loadConfig(file, { MY_PROV_BASE_URL: 'http://127.0.0.1:3/x', MY_PROV_API_KEY: 'k2', SECRET: 's1' }), {});
  assert.equal(b.providers.get('my-prov')!.baseUrl, 'http://127.0.0.1:3/x');
  assert.equal(b.providers.get('my-prov')!.apiKey, 'k2');
});

test('HOST and PORT override server.host and server.port', () => {
  const file = tempConfig({ server: { host: '0.0.0.0', port: 9999 } }, [ok]);
  const cfg = compileConfig(loadConfig(file, {}), { HOST: '127.0.0.2', PORT: '1234' });
  assert.equal(cfg.server.host, '127.0.0.2');
  assert.equal(cfg.server.port, 1234);
});

let oa: MockUpstream; let gw: TestGateway;
before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({ providers: [{ id: 'live', format: 'openai-chat', base_url: oa.url }] });
});
after(async () => { await gw.stop(); await oa.close(); });

const waitFor = async (cond: () => Promise<boolean>, ms = 3000): Promise<void> => {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) { if (await cond()) return; await new Promise((r) => setTimeout(r, 25)); }
  throw new Error('condition not met in time');
};
const listIds = async (): Promise<string[]> => ((await (await fetch(`${gw.url}/v1/models`)).json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);

test('hot reload: a model added to a provider file appears and is routable; removed, it disappears', async () => {
  const v0 = gw.services.holder.current.version;
  gw.writeProvider({ id: 'live', format: 'openai-chat', base_url: oa.url, models: [{ name: 'test-model' }, { name: 'brand-new' }] });
  await waitFor(async () => (await listIds()).includes('live/brand-new'));
  assert.notEqual(gw.services.holder.current.version, v0);
  const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'live/brand-new', messages: [{ role: 'user', content: 'new' }] }) });
  assert.equal(r.status, 200);
  assert.equal((oa.requests.at(-1)!.body as { model: string }).model, 'brand-new');
  gw.writeProvider({ id: 'live', format: 'openai-chat', base_url: oa.url, models: [{ name: 'test-model' }] });
  await waitFor(async () => !(await listIds()).includes('live/brand-new'));
});

test('hot reload: an invalid change keeps the old config serving and is reported in /health', async () => {
  const v0 = gw.services.holder.current.version;
  writeFileSync(join(gw.providersDir, 'live.yaml'), stringify({ ...providerDoc({ id: 'live', format: 'openai-chat', base_url: oa.url }), format: 'telepathy' }));
  await waitFor(async () => ((await (await fetch(`${gw.url}/health`)).json()) as { last_reload_error: unknown }).last_reload_error !== null);
  const h = (await (await fetch(`${gw.url}/health`)).json()) as { config: { version: string }; last_reload_error: { message: string } };
  assert.equal(h.config.version, v0);
  assert.match(h.last_reload_error.message, /live\.yaml at \/format/);
  const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'live/test-model', messages: [{ role: 'user', content: 'still here' }] }) });
  assert.equal(r.status, 200);
  gw.writeProvider({ id: 'live', format: 'openai-chat', base_url: oa.url });
  await waitFor(async () => ((await (await fetch(`${gw.url}/health`)).json()) as { last_reload_error: unknown }).last_reload_error === null);
});

test('in-flight requests finish on the snapshot they started with', async () => {
  const slow = await startMockOpenAI({ chunkDelayMs: 60 });
  try {
    gw.writeProvider({ id: 'slowp', format: 'openai-chat', base_url: slow.url });
    await waitFor(async () => (await listIds()).includes('slowp/test-model'));
    const pending = fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'slowp/test-model', stream: true, messages: [{ role: 'user', content: 'one two three four five six' }] }) });
    const res = await pending;
    rmSync(join(gw.providersDir, 'slowp.yaml'));
    const text = await res.text();
    assert.match(text, /\[DONE\]/);
    await waitFor(async () => !(await listIds()).includes('slowp/test-model'));
  } finally { await slow.close(); }
});

test('SIGHUP reloads the config of a running gateway process', async () => {
  const { spawnGateway } = await import('./helpers/process.ts');
  const mock = await startMockOpenAI();
  const dir = mkdtempSync(join(tmpdir(), 'gw-hup-'));
  mkdirSync(join(dir, 'providers'));
  const prov = (models: string[]) => stringify(providerDoc({ id: 'hup', format: 'openai-chat', base_url: mock.url, models: models.map((name) => ({ name })) }));
  writeFileSync(join(dir, 'providers', 'hup.yaml'), prov(['a']));
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', server: { port: 0 }, auth: { enabled: false }, reload: { watch: false }, storage: { sqlite_path: join(dir, 'g.db') }, workers: { threads: 0 } }));
  const gp = await spawnGateway(join(dir, 'gateway.yaml'));
  try {
    const ids = async () => ((await (await fetch(`${gp.url}/v1/models`)).json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);
    writeFileSync(join(dir, 'providers', 'hup.yaml'), prov(['a', 'b']));
    await new Promise((r) => setTimeout(r, 400));
    assert.deepEqual(await ids(), ['hup/a', 'router'], 'with watch off, a change waits for SIGHUP');
    gp.child.kill('SIGHUP');
    const t0 = Date.now();
    while (!(await ids()).includes('hup/b') && Date.now() - t0 < 3000) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual((await ids()).sort(), ['hup/a', 'hup/b', 'router']);
    assert.match(gp.output(), /config reloaded: version/);
  } finally {
    const e = await gp.stop();
    assert.equal(e.code, 0);
    await mock.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
