// The router routes only to providers that can authenticate: a provider without a key (the catalog
// ships every provider, a deployment sets the keys of the ones it uses) is no candidate, naming its
// model is a 400 that says which key to set, and setting the key (reload) makes it one again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { canAuthenticate } from '../src/config/credentials.ts';
import { namesCredentialSource } from '../src/transforms/aws-credentials.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway, type TestProvider } from './helpers/gateway.ts';

const none = (): boolean => false;

test('canAuthenticate: no auth, a key, or a signing transform with credentials named', () => {
  assert.equal(canAuthenticate({ type: 'none' }, '', {}), true);
  assert.equal(canAuthenticate({ type: 'bearer' }, '', {}), false);
  assert.equal(canAuthenticate({ type: 'bearer' }, 'sk-1', {}), true);
  assert.equal(canAuthenticate({ type: 'header', name: 'x-api-key', prefix: '' }, '', {}), false);
  assert.equal(canAuthenticate({ type: 'query', name: 'key' }, 'k', {}), true);
  const sigv4 = (options: Record<string, string>) => ({ type: 'transform' as const, transform: 'aws-sigv4', options });
  assert.equal(canAuthenticate(sigv4({ access_key_id: 'AKID', secret_access_key: 's' }), '', {}), true);
  assert.equal(canAuthenticate(sigv4({ profile: 'prod' }), '', {}), true);
  // From the environment: keys, a profile, a container endpoint, instance metadata declared, credential files.
  const home = { HOME: '/nonexistent-home-for-test' };
  assert.equal(canAuthenticate(sigv4({ region: 'us-east-1' }), '', home), false);
  assert.equal(canAuthenticate(sigv4({}), '', { ...home, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 's' }), true);
  assert.equal(canAuthenticate(sigv4({}), '', { ...home, AWS_ACCESS_KEY_ID: 'AKID' }), false, 'a key id alone signs nothing');
  assert.equal(namesCredentialSource({ AWS_PROFILE: 'dev' }, none), true);
  assert.equal(namesCredentialSource({ AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '/v2/creds' }, none), true);
  assert.equal(namesCredentialSource({ AWS_EC2_METADATA_DISABLED: 'false' }, none), true);
  assert.equal(namesCredentialSource({ AWS_EC2_METADATA_DISABLED: 'true' }, none), false);
  assert.equal(namesCredentialSource({ HOME: '/h' }, (f) => f === '/h/.aws/credentials'), true);
  assert.equal(namesCredentialSource({ HOME: '/h', AWS_CONFIG_FILE: '/etc/aws.conf' }, (f) => f === '/etc/aws.conf'), true);
  assert.equal(namesCredentialSource({ HOME: '/h' }, none), false);
});

let up: MockUpstream; let gw: TestGateway;
const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
// The same model from two providers; the keyless one is cheaper, so it would win every tie.
const model = (prompt: string) => ({ name: 'm-1', pricing: { prompt, completion: prompt }, capabilities: caps, context_window: 32000, max_completion_tokens: 4000 });
let keyless: TestProvider;

before(async () => {
  up = await startMockOpenAI();
  keyless = { id: 'keyless-co', format: 'openai-chat', base_url: up.url, api_key: '', models: [model('0.0000001')] };
  gw = await startTestGateway({
    providers: [{ id: 'keyed', format: 'openai-chat', base_url: up.url, models: [model('0.000001')] }, keyless],
    gateway: { reload: { watch: false }, router: { exploration: { share: 0 } } },
  });
});
after(async () => { await gw?.stop(); await up?.close(); });

const post = (path: string, body: Record<string, unknown>) => fetch(gw.url + path, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'Hello' }], ...body }),
});

test('a provider without credentials is no candidate: the routed request goes to one that can authenticate', async () => {
  up.reset();
  const r = await post('/v1/chat/completions', {});
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(r.headers.get('x-router-model'), 'keyed/m-1');
  assert.equal(r.headers.get('x-router-candidates'), '1');
  assert.equal(((await r.json()) as { model: string }).model, 'keyed/m-1');
  assert.equal(up.requests.length, 1);
  assert.equal(up.requests[0]!.headers.authorization, 'Bearer sk-upstream-test', 'sent with the keyed provider\'s key');
  // A bare name is every offer that can be routed: the keyless one is not among them.
  const rank = await post('/v1/router/rank', { models: ['m-1'] });
  assert.deepEqual(((await rank.json()) as { candidates: Array<{ id: string }> }).candidates.map((c) => c.id), ['keyed/m-1']);
});

test('naming only a keyless provider\'s model: 400 naming models[i] and the key to set, in each route\'s envelope', async () => {
  const r = await post('/v1/chat/completions', { models: ['keyless-co/m-1'] });
  assert.equal(r.status, 400);
  const e = ((await r.json()) as { error: { param: string; message: string } }).error;
  assert.equal(e.param, 'models[0]');
  assert.match(e.message, /no credentials are configured for keyless-co \(set KEYLESS_CO_API_KEY or its api_key\)/);
  const m = await post('/v1/messages', { max_tokens: 100, models: ['keyless-co/m-1'] });
  assert.equal(m.status, 400);
  const body = (await m.json()) as { type: string; error: { type: string; message: string } };
  assert.equal(body.type, 'error');
  assert.match(body.error.message, /KEYLESS_CO_API_KEY/);
});

test('a key set on reload makes the provider a candidate from the next request on', async () => {
  gw.writeProvider({ ...keyless, api_key: 'sk-now-set' });
  assert.ok((await gw.services.holder.reload()).ok);
  up.reset();
  const r = await post('/v1/chat/completions', {});
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-router-candidates'), '2');
  assert.equal(r.headers.get('x-router-model'), 'keyless-co/m-1', 'the same q: the cheaper offer');
  assert.equal(up.requests[0]!.headers.authorization, 'Bearer sk-now-set');
});

// A keyless local server (Ollama) says nothing about whether it runs: its provider file's
// router_requires_env keeps it out of router mode until the operator sets where it runs. Before, a
// gateway with only OPENAI_API_KEY routed low-W requests to ollama/llama3.2 ($0) on a machine without
// Ollama, each paying a refused connect before its fallback answered.
test('router_requires_env: a keyless local provider is no candidate until its variable is set; naming its model still reaches it', async (t) => {
  const local = await startMockOpenAI({ authOptional: true });
  const localCo: TestProvider = { id: 'local-co', format: 'openai-chat', base_url: local.url, auth: { type: 'none' }, api_key: '', router_requires_env: ['LOCAL_CO_BASE_URL'], models: [model('0.00000001')] };
  const keyedCo: TestProvider = { id: 'keyed', format: 'openai-chat', base_url: up.url, models: [model('0.000001')] };
  const unset = await startTestGateway({ providers: [keyedCo, localCo], gateway: { reload: { watch: false }, router: { exploration: { share: 0 } } } });
  const set = await startTestGateway({ providers: [keyedCo, localCo], env: { LOCAL_CO_BASE_URL: local.url }, gateway: { reload: { watch: false }, router: { exploration: { share: 0 } } } });
  t.after(async () => { await unset.stop(); await set.stop(); await local.close(); });
  const call = (g: TestGateway, body: Record<string, unknown>) => fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'Hello' }], ...body }),
  });
  local.reset();
  const r = await call(unset, {});
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-router-model'), 'keyed/m-1');
  assert.equal(r.headers.get('x-router-candidates'), '1');
  const named = await call(unset, { models: ['local-co/m-1'] });
  assert.equal(named.status, 400);
  const e = ((await named.json()) as { error: { param: string; message: string } }).error;
  assert.equal(e.param, 'models[0]');
  assert.match(e.message, /local-co is routed to once LOCAL_CO_BASE_URL is set/);
  assert.equal(local.requests.length, 0, 'never tried');
  const direct = await call(unset, { model: 'local-co/m-1' });
  assert.equal(direct.status, 200, `a request naming the model goes to it as configured: ${await direct.clone().text()}`);
  assert.equal(local.requests.length, 1);
  // Set: a candidate like any other, and the cheaper one wins.
  const routed = await call(set, {});
  assert.equal(routed.status, 200);
  assert.equal(routed.headers.get('x-router-candidates'), '2');
  assert.equal(routed.headers.get('x-router-model'), 'local-co/m-1');
});

test('the shipped Ollama provider is routed to only with OLLAMA_BASE_URL set', async () => {
  const { loadConfig } = await import('../src/config/load.ts');
  const { compileConfig } = await import('../src/config/compile.ts');
  const { candidateSet } = await import('../src/router/candidates.ts');
  const file = new URL('../gateway.yaml', import.meta.url).pathname;
  const providersOf = (env: Record<string, string>): Set<string> => {
    const cfg = compileConfig(loadConfig(file, env), env);
    return new Set(candidateSet(cfg).all.map((c) => c.id.split('/')[0]!));
  };
  const without = providersOf({ OPENAI_API_KEY: 'sk-x' });
  assert.ok(without.has('openai') && !without.has('ollama'), [...without].join(','));
  const withIt = providersOf({ OPENAI_API_KEY: 'sk-x', OLLAMA_BASE_URL: 'http://127.0.0.1:11434' });
  assert.ok(withIt.has('ollama'), [...withIt].join(','));
});
