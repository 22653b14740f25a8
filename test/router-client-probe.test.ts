// Router mode against misbehaving clients and config: bodies a client can send that the router's
// routes must answer in their own envelope, naming the field, the same way on the real route and the
// dry run; policies over client values; decisions of refused requests; config the load must refuse.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadConfig } from '../src/config/load.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, unknown>;
const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
let up: MockUpstream; let gw: TestGateway;

before(async () => {
  up = await startMockOpenAI({});
  gw = await startTestGateway({
    providers: [{ id: 'p', format: 'openai-chat', base_url: up.url, models: [
      { name: 'small-1', pricing: { prompt: '0.0000001', completion: '0.0000002' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
      { name: 'big-1', pricing: { prompt: '0.00001', completion: '0.00005' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
    ] }],
    gateway: { reload: { watch: false }, router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } } },
  });
});
after(async () => { await gw?.stop(); await up?.close(); });

const post = (path: string, raw: string) => fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });

test('a bound JSON reads as Infinity is refused by the dry run as by the route, with or without model in the body', async () => {
  for (const field of ['max_cost', 'max_cost_per_million_tokens', 'willingness_to_pay']) {
    const bodies: Array<[string, string]> = [
      ['/v1/chat/completions', `{"model":"router","messages":[{"role":"user","content":"hi"}],"${field}":1e400}`],
      ['/v1/router/rank', `{"model":"router","messages":[{"role":"user","content":"hi"}],"${field}":1e400}`],
      // `model` left out: the dry run adds it; the bound must reach the router as sent.
      ['/v1/router/rank', `{"messages":[{"role":"user","content":"hi"}],"${field}":1e400}`],
      ['/v1/router/rank', ` \n{"${field}":1e400,"messages":[{"role":"user","content":"hi"}]}`],
      ['/v1/router/rank?format=messages', `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}],"${field}":1e400}`],
    ];
    for (const [path, raw] of bodies) {
      const r = await post(path, raw);
      const j = await r.json() as { error?: { param?: string; message?: string } };
      assert.equal(r.status, 400, `${path} ${raw}: ${JSON.stringify(j)}`);
      assert.equal(j.error?.param, field, JSON.stringify(j));
      assert.match(String(j.error?.message), /Infinity is out of range/);
    }
  }
  assert.equal(up.requests.length, 0);
});

test('the dry run without model still ranks an ordinary body, an empty one is a 400 naming messages, and a broken one says it is not JSON', async () => {
  const ok = await post('/v1/router/rank', '{"messages":[{"role":"user","content":"hi"}],"max_cost":0.01}');
  assert.equal(ok.status, 200, await ok.clone().text());
  assert.equal((await ok.json() as Rec).object, 'router.ranking');
  const empty = await post('/v1/router/rank', '{}');
  assert.equal(empty.status, 400);
  assert.equal((await empty.json() as { error: { param: string } }).error.param, 'messages');
  const broken = await post('/v1/router/rank', '{"messages": [');
  assert.equal(broken.status, 400);
  assert.doesNotMatch((await broken.json() as { error: { message: string } }).error.message, /'messages' is required/);
});

test('candidate.age_days is read when the request is decided: a rule on it follows the clock without a reload', async (t) => {
  // A model one day old in 1.5 s, and a vetting rule that keeps out models younger than a day.
  const addedAt = new Date(Date.now() - 86_400_000 + 1500).toISOString();
  const g = await startTestGateway({
    providers: [{ id: 'q', format: 'openai-chat', base_url: up.url, models: [
      { name: 'fresh-1', added_at: addedAt, pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
      { name: 'old-1', added_at: '2025-01-01T00:00:00Z', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
    ] }],
    gateway: {
      reload: { watch: false },
      router: {
        exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 },
        default_policy: 'vetted', policies: { vetted: [{ name: 'vetting', exclude: { '<': [{ var: 'candidate.age_days' }, 1] } }] },
      },
    },
  });
  t.after(() => g.stop());
  const fresh = async (): Promise<Rec | undefined> => {
    const r = await fetch(`${g.url}/v1/router/rank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) });
    assert.equal(r.status, 200);
    return ((await r.json() as Rec).candidates as Rec[]).find((c) => c.id === 'q/fresh-1');
  };
  assert.equal(((await fresh())?.excluded as Rec | undefined)?.constraint, 'policy:vetting', 'younger than a day: kept out');
  await new Promise((r) => setTimeout(r, 2000));
  const later = await fresh();
  assert.equal(later?.excluded, undefined, `a day old now, same config version: ${JSON.stringify(later)}`);
});

/** A gateway over two models of provider `q`, each [name, prompt price, completion price], routing by default with policy `name` of `rules`. */
async function policyGateway(models: Array<[string, string, string]>, name: string, rules: Rec[]): Promise<TestGateway> {
  return startTestGateway({
    providers: [{ id: 'q', format: 'openai-chat', base_url: up.url, models: models.map(([m, prompt, completion]) => ({ name: m, pricing: { prompt, completion }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 })) }],
    gateway: {
      reload: { watch: false },
      router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 }, default_policy: name, policies: { [name]: rules } },
    },
  });
}

test('a policy reading extra.* with a value JSON made unconvertible ({"toString": 1}): routed as a value that fails the test, never a 500', async (t) => {
  const g = await policyGateway([['m1', '0.000001', '0.000002'], ['m2', '0.000002', '0.000003']], 'teams', [
    { name: 'research-cheap', when: { '==': [{ var: 'extra.team' }, 'research'] }, exclude: { '==': [{ var: 'candidate.model' }, 'm2'] } },
    { name: 'not-blocked', exclude: { in: [{ var: 'candidate.model' }, { var: 'extra.blocked' }] } },
    { name: 'tiers', prefer: { '<': [{ var: 'extra.tier' }, 3] } },
  ]);
  t.after(() => g.stop());
  const bad = '{"toString":1}';
  const bodies: Array<[string, string]> = [];
  for (const extra of [`{"team":${bad}}`, `{"team":[${bad}]}`, `{"blocked":${bad}}`, `{"tier":${bad}}`]) {
    bodies.push(
      ['/v1/chat/completions', `{"model":"router","messages":[{"role":"user","content":"hi"}],"extra":${extra}}`],
      ['/v1/messages', `{"model":"router","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"extra":${extra}}`],
      ['/v1/responses', `{"model":"router","input":"hi","extra":${extra}}`],
      ['/v1/router/rank', `{"messages":[{"role":"user","content":"hi"}],"extra":${extra}}`],
      ['/v1/messages/count_tokens', `{"model":"router","messages":[{"role":"user","content":"hi"}],"extra":${extra}}`],
    );
  }
  for (const [path, raw] of bodies) {
    const r = await fetch(g.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
    assert.equal(r.status, 200, `${path} ${raw}: ${await r.text()}`);
    if (path !== '/v1/messages/count_tokens' && path !== '/v1/router/rank') assert.equal(r.headers.get('x-router-model'), 'q/m2', 'team is not "research": m2 stays in and wins on quality');
    await r.arrayBuffer().catch(() => {});
  }
});

test('a routed request refused before any attempt (nothing qualifies; the key\'s budget after the decision) has its decision recorded and counted', async (t) => {
  const ADMIN = 'admin-key-for-router-probe-0123456789';
  const g = await startTestGateway({
    providers: [{ id: 'q', format: 'openai-chat', base_url: up.url, models: [
      { name: 'm1', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
    ] }],
    gateway: { auth: { enabled: true, admin_key: ADMIN }, reload: { watch: false }, router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } } },
  });
  t.after(() => g.stop());
  const mk = async (body: Rec): Promise<{ key: string }> => (await (await fetch(`${g.url}/admin/keys`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  })).json()) as { key: string };
  const rich = await mk({ name: 'rich' });
  const poor = await mk({ name: 'poor', budget_usd: '0.0000001' });
  const chat = (key: string, extra: Rec) => fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });
  const noRoute = await chat(rich.key, { max_cost: 1e-12 });
  assert.equal(noRoute.status, 400);
  const broke = await chat(poor.key, {});
  assert.equal(broke.status, 402);
  const ok = await chat(rich.key, {});
  assert.equal(ok.status, 200);
  const ids = [noRoute, broke, ok].map((r) => r.headers.get('x-router-decision-id')!);
  await Promise.all([noRoute, broke, ok].map((r) => r.arrayBuffer()));
  await g.services.router!.flush();
  const rows = await g.services.store!.sql.all('SELECT inference_id, served_model, decision FROM router_decisions');
  const byId = new Map(rows.map((r) => [String(r.inference_id), r]));
  for (const id of ids) assert.ok(byId.has(id), `decision ${id} recorded`);
  const chosen = (id: string) => (JSON.parse(String(byId.get(id)!.decision)) as { chosen: string | null }).chosen;
  assert.equal(chosen(ids[0]!), null, 'nothing qualified: no model chosen');
  assert.equal(byId.get(ids[0]!)!.served_model, null);
  assert.equal(chosen(ids[1]!), 'q/m1', 'the budget refused what the router chose');
  assert.equal(byId.get(ids[1]!)!.served_model, null);
  // The router's rollups count all three, two of them errors.
  const [cells] = await g.services.store!.sql.all('SELECT SUM(n) AS n, SUM(errors) AS errors FROM router_rollup');
  assert.deepEqual([Number(cells!.n), Number(cells!.errors)], [3, 2]);
  // A dry run and count_tokens decide without recording.
  await fetch(`${g.url}/v1/router/rank`, { method: 'POST', headers: { authorization: `Bearer ${rich.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ max_cost: 1e-12, messages: [{ role: 'user', content: 'hi' }] }) });
  await g.services.router!.flush();
  assert.equal(Number((await g.services.store!.sql.all('SELECT count(*) AS n FROM router_decisions'))[0]!.n), 3);
});

test('a metric listed twice in router.quality_signals fails the config at load, naming the path (training would keep only the last)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-router-signals-'));
  try {
    mkdirSync(join(dir, 'providers'));
    const write = (router: unknown) => writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', router }));
    write({ quality_signals: [{ metric: 'good' }, { metric: 'score', min: 0, max: 10 }, { metric: 'good', optimize: 'min' }] });
    assert.throws(() => loadConfig(join(dir, 'gateway.yaml'), {}), /gateway\.yaml at \/router\/quality_signals\/2\/metric: metric "good" is already quality_signals\[0\]/);
    write({ quality_signals: [{ metric: 'good' }, { metric: 'score', min: 0, max: 10 }] });
    assert.doesNotThrow(() => loadConfig(join(dir, 'gateway.yaml'), {}));
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('a quality signal whose range is empty once the defaults fill in (min 1 alone: max defaults to 1) fails the config at load', () => {
  // Every value of such a metric scored nothing (feedbackScore needs max > min), with nothing said.
  const dir = mkdtempSync(join(tmpdir(), 'gw-router-signals-'));
  try {
    mkdirSync(join(dir, 'providers'));
    const write = (router: unknown) => writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', router }));
    write({ quality_signals: [{ metric: 'rating', min: 1 }] });
    assert.throws(() => loadConfig(join(dir, 'gateway.yaml'), {}), /\/router\/quality_signals\/0: min must be below max \(min 1, max 1; min defaults to 0 and max to 1\)/);
    write({ quality_signals: [{ metric: 'rating', max: -2 }] });
    assert.throws(() => loadConfig(join(dir, 'gateway.yaml'), {}), /min must be below max \(min 0, max -2/);
    write({ quality_signals: [{ metric: 'rating', min: 1, max: 5 }, { metric: 'cost', max: 10, optimize: 'min' }] });
    assert.doesNotThrow(() => loadConfig(join(dir, 'gateway.yaml'), {}));
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('a willingness_to_pay so large that 10 * W * q overflows ranks quality first, as W absent and W = 1e300 do, not cheapest first', async () => {
  const rank = async (extra: string): Promise<Rec> => {
    const r = await post('/v1/router/rank', `{"messages":[{"role":"user","content":"hi"}]${extra}}`);
    assert.equal(r.status, 200);
    return await r.json() as Rec;
  };
  const best = (await rank('')).model;
  assert.equal(best, 'p/big-1', 'quality first: the dearer model has the higher prior here');
  for (const w of ['1e300', '1e307', '1.7e308']) {
    const out = await rank(`,"willingness_to_pay":${w}`);
    assert.equal(out.model, best, `W=${w}`);
    assert.equal(out.willingness_to_pay, Number(w), 'the W sent is what the decision says it used');
    for (const c of out.candidates as Rec[]) assert.ok(c.excluded || Number.isFinite(c.utility), JSON.stringify(c));
  }
  assert.equal((await rank(',"willingness_to_pay":1e-9')).model, 'p/small-1', 'a tiny W still buys the cheapest');
});

test('policy and rule names and model ids in any script: shown in the decision headers with "?" for what a header cannot carry, never a 500', async (t) => {
  const g = await policyGateway([['モデル-1', '0.000001', '0.000002'], ['m2', '0.0000001', '0.0000002']], 'économe', [
    { name: 'pas de m2 ✓', exclude: { '==': [{ var: 'candidate.model' }, 'm2'] } },
    // A control character in a name is a config error since stop 39 (src/util/visible-name.ts); other scripts stay.
    { name: 'deux règles', exclude: { '==': [{ var: 'extra.x' }, 1] } },
  ]);
  t.after(() => g.stop());
  const send = (path: string, extra: Rec) => fetch(g.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'router', messages: [{ role: 'user', content: 'hi' }], ...extra }) });
  for (const path of ['/v1/chat/completions', '/v1/router/rank']) {
    const ok = await send(path, {});
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(ok.headers.get('x-router-model'), 'q/???-1');
    assert.equal(ok.headers.get('x-router-excluded'), 'policy:pas de m2 ?=1');
    if (path === '/v1/chat/completions') assert.equal((await ok.json() as Rec).model, 'q/モデル-1', 'the body keeps the name');
    const none = await send(path, { extra: { x: 1 } });
    assert.equal(none.status, path === '/v1/router/rank' ? 200 : 400);
    assert.equal(none.headers.get('x-router-excluded'), 'policy:pas de m2 ?=1, policy:deux r?gles=1');
    if (path !== '/v1/router/rank') assert.match((await none.json() as { error: { message: string } }).error.message, /pas de m2 ✓ excluded 1/);
  }
});

test('a key\'s budget dropping a target named in another script: x-gateway-budget-dropped with "?", the cheaper target answers, nothing stays reserved', async (t) => {
  const ADMIN = 'admin-key-for-router-probe-0123456789';
  const g = await startTestGateway({
    providers: [{ id: 'q', format: 'openai-chat', base_url: up.url, models: [
      { name: 'グランデ', pricing: { prompt: '0.001', completion: '0.001' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
      { name: 'small', pricing: { prompt: '0.0000001', completion: '0.0000001' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 },
    ] }],
    gateway: { auth: { enabled: true, admin_key: ADMIN }, reload: { watch: false }, router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } } },
  });
  t.after(() => g.stop());
  const key = (await (await fetch(`${g.url}/admin/keys`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'near-limit', budget_usd: '0.01' }),
  })).json()) as { key: string };
  const r = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(r.headers.get('x-router-model'), 'q/????', 'the router chose the dear one first');
  assert.equal(r.headers.get('x-gateway-budget-dropped'), 'q/????');
  assert.equal((await r.json() as Rec).model, 'q/small');
  // Settled: a second request is served the same way (the first one's reservation was not left behind).
  const again = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(again.status, 200);
  await again.arrayBuffer();
});
