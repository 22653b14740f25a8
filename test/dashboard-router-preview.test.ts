// POST /admin/api/v1/router/preview (the Router page's "Try the router") against a real gateway: the
// same decision POST /v1/router/rank gives the same body and key (chosen model, plan, every candidate
// and exclusion), a key's policy applied, nothing called or recorded; a member ranks as their own keys
// only; bad fields are 400s naming them, in the admin API's error shape; a prompt nothing qualifies
// for chooses nothing and lists each exclusion.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { lowHighProviders } from './helpers/low-high.ts';
import { createApiKey } from './helpers/admin-api.ts';

type Rec = Record<string, any>;
const ADMIN_KEY = 'admin-key-for-the-router-preview-test-0123';
const PW = 'a long enough password';
const admin = { authorization: `Bearer ${ADMIN_KEY}` };
let up: MockUpstream; let gw: TestGateway;
let member: Record<string, string>;
let batch: { key: string; record: { id: string } }; let other: { key: string; record: { id: string } };

before(async () => {
  up = await startMockOpenAI();
  gw = await startTestGateway({
    providers: lowHighProviders(up.url),
    gateway: {
      auth: { enabled: true, admin_key: ADMIN_KEY },
      router: { exploration: { share: 0 }, key_policies: { 'batch-*': 'cheap' }, policies: { cheap: [{ name: 'no-high', exclude: { '==': [{ var: 'candidate.provider' }, 'high'] } }] } },
    },
  });
  const mo = await gw.services.dashboard!.users.create({ email: 'mo@example.com', role: 'member', password: PW });
  const res = await fetch(`${gw.url}/admin/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'mo@example.com', password: PW }) });
  member = { cookie: res.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': ((await res.json()) as { csrf_token: string }).csrf_token };
  batch = await createApiKey(gw.url, admin, { name: 'batch-nightly', owner_id: mo.id });
  other = await createApiKey(gw.url, admin, { name: 'app' });
});
after(async () => { await gw?.stop(); await up?.close(); });

const body = (over: Rec = {}): Rec => ({ model: 'router', messages: [{ role: 'user', content: 'Summarise the plot of Hamlet in two sentences.' }], ...over });

async function preview(headers: Record<string, string>, b: Rec, keyId?: string): Promise<{ status: number; body: Rec }> {
  const r = await fetch(`${gw.url}/admin/api/v1/router/preview${keyId ? `?key_id=${encodeURIComponent(keyId)}` : ''}`, {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(b),
  });
  return { status: r.status, body: (await r.json()) as Rec };
}

async function rank(key: string, b: Rec): Promise<Rec> {
  const r = await fetch(`${gw.url}/v1/router/rank`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(b) });
  assert.equal(r.status, 200, await r.clone().text());
  return (await r.json()) as Rec;
}

async function decisions(): Promise<number> {
  await gw.services.router!.flush();
  return Number((await gw.services.store!.sql.all('SELECT count(*) AS n FROM router_decisions'))[0]!.n);
}

test('the preview is the dry run\'s decision, as a key would get it (its policy applied), and nothing is called or recorded', async () => {
  const before = { upstream: up.requests.length, decisions: await decisions() };
  for (const [key, id] of [[other.key, other.record.id], [batch.key, batch.record.id]] as const) {
    for (const over of [{}, { willingness_to_pay: 0.0001 }, { max_cost: 0.01 }, { models: ['low/small', 'high/large'] }]) {
      const p = await preview(admin, body(over), id);
      assert.equal(p.status, 200, JSON.stringify(p.body));
      const r = await rank(key, body(over));
      const d = p.body.decision;
      assert.equal(d.chosen, r.model);
      assert.deepEqual(d.plan.map((t: Rec) => t.model), r.plan.map((t: Rec) => t.id));
      assert.equal(d.candidates, r.candidates.length);
      assert.deepEqual(d.excluded_by, r.excluded_by);
      const included = r.candidates.filter((c: Rec) => !c.excluded).map((c: Rec) => c.id);
      assert.deepEqual(d.included.map((c: Rec) => c.model), included, 'every included candidate, in the ranking\'s order');
      assert.deepEqual(d.excluded.map((c: Rec) => `${c.model}:${c.constraint}`).sort(), r.candidates.filter((c: Rec) => c.excluded).map((c: Rec) => `${c.id}:${c.excluded.constraint}`).sort());
    }
  }
  const cheap = await preview(admin, body(), batch.record.id);
  assert.equal(cheap.body.decision.policy, 'cheap');
  assert.equal(cheap.body.decision.chosen, 'low/small');
  assert.deepEqual(cheap.body.decision.excluded.map((c: Rec) => [c.model, c.constraint]), [['high/large', 'policy:no-high']]);
  assert.equal(cheap.body.key_id, batch.record.id);
  const none = await preview(admin, body());
  assert.equal(none.status, 200);
  assert.equal(none.body.key_id, null);
  assert.equal(none.body.decision.policy, null, 'no key: no key policy');
  assert.equal(up.requests.length, before.upstream, 'no model called');
  assert.equal(await decisions(), before.decisions, 'nothing recorded');
});

test('a member ranks as their own keys only; bad fields and unknown or revoked keys are 400/404 naming them; nothing qualifying is shown, not refused', async () => {
  const own = await preview(member, body(), batch.record.id);
  assert.equal(own.status, 200);
  assert.equal(own.body.decision.policy, 'cheap');
  const theirs = await preview(member, body(), other.record.id);
  assert.equal(theirs.status, 404);
  assert.equal(theirs.body.error.param, 'key_id');
  const noCsrf = await preview({ cookie: member.cookie! }, body(), batch.record.id);
  assert.equal(noCsrf.status, 403);
  const anonymous = await preview({}, body());
  assert.equal(anonymous.status, 401);
  for (const [over, param] of [
    [{ willingness_to_pay: 'lots' }, 'willingness_to_pay'], [{ max_cost: -1 }, 'max_cost'], [{ models: ['nope/none'] }, 'models[0]'],
    [{ messages: [] }, 'messages'],
  ] as const) {
    const p = await preview(admin, body(over));
    assert.equal(p.status, 400, JSON.stringify(p.body));
    assert.equal(p.body.error.param, param, JSON.stringify(p.body));
  }
  const missing = await preview(admin, body(), 'no-such-key');
  assert.equal(missing.status, 404);
  const revoked = await createApiKey(gw.url, admin, { name: 'gone' });
  assert.equal((await fetch(`${gw.url}/admin/api/v1/keys/${revoked.record.id}`, { method: 'DELETE', headers: admin })).status, 200);
  const r = await preview(admin, body(), revoked.record.id);
  assert.equal(r.status, 400);
  assert.equal(r.body.error.param, 'key_id');
  assert.match(r.body.error.message, /revoked/);
  // Nothing qualifies: as the dry run, a 200 that chooses nothing and says what excluded each candidate.
  const tight = await preview(admin, body({ max_cost: 1e-12 }));
  assert.equal(tight.status, 200, JSON.stringify(tight.body));
  assert.equal(tight.body.decision.chosen, null);
  assert.deepEqual(tight.body.decision.excluded_by, { max_cost: 2 });
  assert.deepEqual(tight.body.decision.excluded.map((c: Rec) => c.model).sort(), ['high/large', 'low/small']);
});
