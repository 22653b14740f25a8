// Router policies selected per API key (key_policies globs over key names) and a key's
// allowed_models excluding candidates; a "when" condition reading request fields.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { lowHighProviders } from './helpers/low-high.ts';

type Rec = Record<string, unknown>;
const ADMIN = 'router-keys-test-admin-key-0123456789';
let up: MockUpstream; let gw: TestGateway;

before(async () => {
  up = await startMockOpenAI();
  gw = await startTestGateway({
    providers: lowHighProviders(up.url),
    gateway: {
      auth: { enabled: true, admin_key: ADMIN },
      router: {
        exploration: { share: 0 },
        key_policies: { 'batch-*': 'cheap' },
        policies: {
          cheap: [{ name: 'no-high', exclude: { '==': [{ var: 'candidate.provider' }, 'high'] } }],
          default: [{ name: 'team-low-only', when: { '==': [{ var: 'extra.team' }, 'frugal'] }, require: { '==': [{ var: 'candidate.provider' }, 'low'] } }],
        },
        default_policy: 'default',
      },
    },
  });
});
after(async () => { await gw?.stop(); await up?.close(); });

async function key(name: string, models?: string[]): Promise<string> {
  const r = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name, ...(models ? { allowed_models: models } : {}) }) });
  assert.equal(r.status, 201, await r.clone().text());
  return (await r.json() as { key: string }).key;
}
const rank = async (k: string, body: Rec = {}) => {
  const r = await fetch(`${gw.url}/v1/router/rank`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }) });
  assert.equal(r.status, 200, await r.clone().text());
  return await r.json() as { model: string; policy: string; candidates: Array<{ id: string; excluded?: { constraint: string } }> };
};

test('key_policies pick the policy by key name; other keys get default_policy', async () => {
  const batch = await rank(await key('batch-nightly'));
  assert.equal(batch.policy, 'cheap');
  assert.equal(batch.candidates.find((c) => c.id === 'high/large')!.excluded!.constraint, 'policy:no-high');
  const app = await rank(await key('app'));
  assert.equal(app.policy, 'default');
  assert.ok(!app.candidates.find((c) => c.id === 'high/large')!.excluded, 'the default policy\'s rule applies only when its "when" holds');
  const frugal = await rank(await key('app-2'), { extra: { team: 'frugal' } });
  assert.equal(frugal.candidates.find((c) => c.id === 'high/large')!.excluded!.constraint, 'policy:team-low-only');
});

test("a key's allowed_models exclude the other candidates, and a routed call never reaches them", async () => {
  const k = await key('restricted', ['high/*']);
  const r = await rank(k);
  assert.equal(r.candidates.find((c) => c.id === 'low/small')!.excluded!.constraint, 'key:allowed_models');
  assert.equal(r.model, 'high/large');
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', willingness_to_pay: 0, messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(res.status, 200);
  assert.equal((await res.json() as Rec).model, 'high/large');
  const none = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', models: ['small'], messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(none.status, 400);
  assert.match((await none.json() as { error: { message: string } }).error.message, /key:allowed_models excluded 1: low\/small/);
});
