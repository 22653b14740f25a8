// The dashboard in a real browser (Debian's chromium through playwright-core): sign in, create a key and
// use it from the openai SDK, see the request in the live tail and in history with its cost, open its
// detail, filter usage, edit and revoke the key, a member who cannot see another member's data, sign out.
// axe-core checks every page (no serious or critical violations); stored script never runs; screenshots
// of each page are kept in test/artifacts/dashboard (docs/dashboard.md shows them).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { adminKeyCall } from './helpers/admin-api.ts';
import { axeViolations, chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';
import { insertDecisions } from '../src/router/store.ts';
import { uuidv7 } from '../src/util/uuid.ts';

const SHOTS = process.env.DASHBOARD_SCREENSHOTS ?? join(import.meta.dirname, 'artifacts', 'dashboard');
const ADMIN_KEY = 'admin-key-for-the-browser-test-0123456789';
const XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
const PW = 'correct horse battery staple';

let oa: MockUpstream; let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
const cspErrors: string[] = [];
let bobRequestId = '';

const adminApi = (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => adminKeyCall(gw.url, ADMIN_KEY, method, path, body);

before(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  oa = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: ADMIN_KEY }, storage: { log_bodies: 'full' }, router: { quality_signals: [{ metric: 'helpful' }] } },
  });
  const users = gw.services.dashboard!.users;
  await users.create({ email: 'admin@example.com', name: 'Ada Admin', role: 'admin', password: PW });
  const alice = await users.create({ email: 'alice@example.com', name: `Alice ${XSS}`, role: 'member', password: PW });
  const bob = await users.create({ email: 'bob@example.com', name: 'Bob', role: 'member', password: PW });
  // Bob's key and one request of his: a member must never see either.
  const bobKey = await adminApi('POST', '/keys', { name: 'bob-secret-project', owner_id: bob.id });
  const bobClient = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: String(bobKey.key), maxRetries: 0 });
  const r = await bobClient.chat.completions.create({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'bob private question' }] });
  bobRequestId = r.id;
  await adminApi('POST', '/keys', { name: `alice ${XSS}`, owner_id: alice.id });
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('console', (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text()); });
  page.on('dialog', (d) => void d.accept());
});

after(async () => {
  await browser?.close();
  await gw?.stop();
  await oa?.close();
});

async function ready(p: Page): Promise<void> {
  await p.waitForSelector('main[data-ready="true"], main.login', { timeout: 15_000 });
}

async function check(name: string): Promise<void> {
  await ready(page);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const v = await axeViolations(page);
  assert.deepEqual(v.map((x) => `${x.id}: ${x.help} (${x.nodes.map((n) => n.target.join(' ')).join('; ')})`), [], `axe on ${name}`);
  assert.equal(await page.evaluate('window.__xss'), undefined, `stored script ran on ${name}`);
}

type PageGlobal = { document: { body: { textContent: string | null } } };
/** Waits until the page's text contains `text` (a function, not a string: the CSP forbids eval). */
const bodyHas = (text: string) => page.waitForFunction((t) => (globalThis as unknown as PageGlobal).document.body.textContent?.includes(t) ?? false, text);

/** Routed requests (records, decisions and feedback written as the gateway would) for the Router page. */
async function routedTraffic(): Promise<void> {
  const store = gw.services.store!;
  const now = Date.now();
  const models = ['mockai/test-model', 'mockai/test-model', 'mockai/second', 'mockai/test-model', 'mockai/second', XSS, 'mockai/test-model', null];
  const kinds = ['code', 'code', 'math', 'chat', 'code', XSS, 'math', 'chat'];
  const ids = models.map((_, i) => uuidv7(now - (i + 2) * 60_000));
  await store.insertInferences(models.map((m, i) => ({
    id: ids[i]!, createdAt: new Date(now - (i + 2) * 60_000).toISOString(), keyId: null, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
    servedModel: m, provider: m ? 'mockai' : null, attempts: [], status: m ? (i === 4 ? 502 : 200) : 400, errorCode: null, latencyMs: 400 + i * 50, ttftMs: null, stream: false,
    inputTokens: 200, outputTokens: 80 + i * 10, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: m ? `0.0000${3 + i}` : '0', finishReason: 'stop',
    metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
  })));
  await insertDecisions(store.sql, models.map((m, i) => ({
    inferenceId: ids[i]!, createdAt: new Date(now - (i + 2) * 60_000 + 500).toISOString(), keyId: null, servedModel: m, canonical: m, kind: kinds[i]!,
    status: m ? (i === 4 ? 502 : 200) : 400, costUsd: m ? `0.0000${3 + i}` : '0',
    features: { schema: 1, kind: kinds[i]!, stats: {}, idx: [], val: [] } as never,
    decision: {
      w: 2, policy: null, state_version: i < 3 ? 7 : 6, kind: kinds[i]!, explored: i === 2, affinity: i === 3 ? m : null, chosen: m,
      chosen_quality: m ? 0.6 + i * 0.03 : null, chosen_cost_usd: m ? 0.00003 + i * 0.000004 : null, input_tokens: 200, token_method: 'exact', expected_output_tokens: 120,
      plan: m ? [[m, null]] : [], candidates: 6, excluded_by: i === 7 ? { max_cost: 6 } : i % 2 ? { max_cost: 2, 'capability:tools': 1 } : { max_cost: 1 }, included: [], excluded: {},
      attempts: Array.from({ length: i === 1 ? 2 : 1 }, () => ({ provider: 'mockai', model: 'test-model', status: 200, error: null, latencyMs: 300 })),
    },
  })));
  await store.insertFeedback([0, 1, 3].map((i) => ({
    id: uuidv7(), inferenceId: ids[i]!, keyId: null, metric: 'helpful', type: 'boolean' as const, value: i === 1 ? 'false' : 'true', reason: null, tags: {},
    optimize: 'max' as const, createdAt: new Date(now).toISOString(),
  })));
}

async function signIn(email: string): Promise<void> {
  await signInAs(page, gw.url, email, PW);
  await ready(page);
}

test('the dashboard flow in chromium: keys, SDK traffic, live tail, history, detail, usage, edit, revoke, member isolation, sign-out', { skip: !chromiumPresent && 'no /usr/bin/chromium' }, async () => {
  await page.goto(`${gw.url}/dashboard`);
  await page.waitForSelector('form.login-form');
  await check('login');
  await page.fill('input[name=email]', 'admin@example.com');
  await page.fill('input[name=password]', 'wrong password entirely');
  await page.click('button[type=submit]');
  await page.waitForSelector('.notice.error');
  assert.match(await page.textContent('.notice.error') ?? '', /wrong email or password/);
  await signIn('admin@example.com');

  // Create a key; its secret is shown once.
  await page.click('nav a[href="/dashboard/keys"]');
  await ready(page);
  await page.fill('form.key-form input[name=name]', 'browser-test-key');
  await page.fill('form.key-form input[name=budget_usd]', '10');
  await page.click('form.key-form button[type=submit]');
  const key = await (await page.waitForSelector('[data-testid=secret]')).textContent();
  assert.match(key ?? '', /^sk-gw-[0-9A-Za-z]{12}-/);

  // Requests page with the live tail on, then traffic from the openai SDK.
  await page.click('nav a[href="/dashboard/requests"]');
  await ready(page);
  await page.check('#live-tail');
  await bodyHas('Live: new requests');
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key!, maxRetries: 0 });
  const done = await client.chat.completions.create({
    model: 'mockai/test-model', messages: [{ role: 'user', content: `hello ${XSS}` }], metadata: { note: XSS },
  });
  const row = await page.waitForSelector(`tr.fresh[data-id="${done.id}"]`, { timeout: 10_000 });
  assert.match(await row.textContent() ?? '', /\$0\.0000|\$\d/);
  await check('requests-live');

  // History (after the record is written) shows it with its cost; the detail view shows bodies as text.
  await new Promise((r) => setTimeout(r, 300)); // the test writer flushes every 20 ms
  await page.goto(`${gw.url}/dashboard/requests?range=24h`);
  await page.waitForSelector(`tr[data-id="${done.id}"]`);
  await check('requests');
  await page.click(`tr[data-id="${done.id}"] a`);
  await page.waitForSelector('h1 code');
  const detail = await page.textContent('main') ?? '';
  assert.ok(detail.includes('mockai/test-model'));
  assert.ok(detail.includes('<script>window.__xss=2</script>'), 'the request body and output are shown as text');
  assert.match(detail, /Cost/);
  await check('request-detail');

  // A routed answer that was cut short: history filters on both, the detail shows the router's decision
  // (a candidate's name carries script, shown as text) and the partial flag.
  const cutId = uuidv7();
  await gw.services.store!.insertInferences([{
    id: cutId, createdAt: new Date().toISOString(), keyId: null, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
    servedModel: 'mockai/test-model', provider: 'mockai', attempts: [{ provider: 'mockai', model: 'test-model', status: 200, error: null, latencyMs: 880 }],
    status: 200, errorCode: null, latencyMs: 900, ttftMs: 120, stream: true, inputTokens: 20, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0,
    reasoningTokens: 0, costUsd: '0.000034', finishReason: null, metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null, partial: true,
  }]);
  await insertDecisions(gw.services.store!.sql, [{
    inferenceId: cutId, createdAt: new Date().toISOString(), keyId: null, servedModel: 'mockai/test-model', canonical: 'test-model', kind: 'chat', status: 200, costUsd: '0.000034',
    features: { schema: 1, kind: 'chat', stats: {}, idx: [], val: [] } as never,
    decision: {
      w: 2, policy: null, state_version: 1, kind: 'chat', explored: false, affinity: null, chosen: 'mockai/test-model', chosen_quality: 0.74, chosen_cost_usd: 0.00004,
      input_tokens: 20, token_method: 'exact', expected_output_tokens: 300, plan: [['mockai/test-model', null]], candidates: 3, excluded_by: { max_cost: 1 },
      included: [['mockai/test-model', 0.74, 0.00004, 14.79996], ['mockai/second', 0.6, 0.00001, 11.99999]], excluded: { max_cost: [[XSS, 0.5, 0.4]] }, attempts: [],
    },
  }]);
  await page.goto(`${gw.url}/dashboard/requests?range=24h&partial=true&routed=true`);
  const cutRow = await page.waitForSelector(`tr[data-id="${cutId}"]`);
  assert.match(await cutRow.textContent() ?? '', /partial.*routed/);
  assert.equal(await page.$(`tr[data-id="${done.id}"]`), null, 'the filters leave the complete, unrouted request out');
  await page.click(`tr[data-id="${cutId}"] a`);
  const why = await (await page.waitForSelector('[data-testid=router-why]')).textContent();
  assert.match(why ?? '', /mockai\/test-model had the highest utility 10 × W × quality − expected cost = 10 × 2 × 0\.74/);
  assert.ok(await page.$('[data-testid=partial-note]'), 'the partial flag is explained');
  assert.ok((await page.textContent('main'))?.includes(XSS), 'a candidate name is shown as text');
  await check('request-detail-routed');

  // The Router page: a few more routed requests (models, a fallback, exploration, feedback), then the overview.
  await routedTraffic();
  await page.click('nav a[href="/dashboard/router"]');
  await ready(page);
  await page.selectOption('select[name=range]', '24h');
  await page.waitForURL(/range=24h/);
  await ready(page);
  const overview = await page.textContent('main') ?? '';
  for (const text of ['Routed requests', 'mockai/test-model', 'mockai/second', 'max_cost', 'capability:tools', 'helpful: 66.7% (n=3)', '3 state versions used']) {
    assert.ok(overview.includes(text), `the router page shows ${text}`);
  }
  assert.ok(overview.includes(XSS), 'a model name is shown as text');
  // Routed traffic over time: the chart of the range's hours with a point per hour.
  const series = await page.$$eval('section[aria-label="Routed traffic over time"] svg.chart', (els) => els.map((e) => e.getAttribute('aria-label')));
  assert.deepEqual(series, ['Routed requests and errors per hour', 'Cost of routed requests per hour (USD)']);
  assert.ok(await page.$('section[aria-label="Routed traffic over time"] svg.chart circle.dot'), 'the series has points');
  // By prompt kind: one row per kind, most requests first; a kind (and a model) with markup is text.
  const kindRows = await page.$$eval('section[aria-label="By prompt kind"] tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
  // (chat: two of these and the routed request cut short above; ties go by name.)
  assert.deepEqual(kindRows.map((r) => r[0]), ['chat', 'code', 'math', XSS]);
  assert.deepEqual(kindRows.map((r) => r[6]), ['mockai/test-model 66.7%', 'mockai/test-model 66.7% · mockai/second 33.3%', 'mockai/second 50.0% · mockai/test-model 50.0%', `${XSS} 100.0%`]);
  assert.deepEqual(kindRows.map((r) => r[5]), ['1', '0', '0', '0'], 'the no-route request counts in its kind');
  // Every bar label fits inside its chart (a 30-character label ran past the left edge).
  const labelLeft = await page.$$eval('svg.chart.bars text.barlabel', (els) => els.map((e) => (e as unknown as { getBBox(): { x: number } }).getBBox().x));
  assert.ok(labelLeft.length >= 3 && labelLeft.every((x) => x >= 0), `bar labels start inside the chart: ${labelLeft.map((x) => x.toFixed(1)).join(', ')}`);
  // Try the router: a bad field is the gateway's 400 naming it; then a prompt ranked with every candidate listed.
  const tryIt = 'section[aria-label="Try the router"]';
  await page.fill(`${tryIt} textarea[name=prompt]`, 'Write a Python function that reverses a linked list');
  await page.fill(`${tryIt} input[name=willingness_to_pay]`, 'lots');
  await page.click(`${tryIt} button[type=submit]`);
  assert.match(await (await page.waitForSelector(`${tryIt} .notice.error`)).textContent() ?? '', /'willingness_to_pay' must be a number/);
  await page.fill(`${tryIt} input[name=willingness_to_pay]`, '0.001');
  await page.click(`${tryIt} button[type=submit]`);
  const verdict = await (await page.waitForSelector(`${tryIt} section[aria-label="What the router would do"] [data-testid=router-why]`)).textContent() ?? '';
  assert.match(verdict, /^mockai\/\S+ had the highest utility 10 × W × quality − expected cost = 10 × 0\.001 × /, verdict);
  const candidates = await page.$$eval(`${tryIt} section[aria-label="What the router would do"] tbody tr`, (trs) => trs.length);
  assert.ok(candidates >= 2, `the candidates are listed (${candidates} rows)`);
  await check('router');
  // A chosen model links to its routed requests on the Requests page.
  await page.click('main a[href*="served=mockai%2Fsecond"]');
  await page.waitForURL(/\/dashboard\/requests\?.*routed=true/);
  await ready(page);
  assert.equal((await page.$$('tr[data-id]')).length, 2, 'the two routed requests served by mockai/second');
  // A decision stored with router.record_candidates: 0 lists no candidate: the detail says why and where to see them.
  const bareId = uuidv7();
  await gw.services.store!.insertInferences([{
    id: bareId, createdAt: new Date().toISOString(), keyId: null, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'router',
    servedModel: 'mockai/second', provider: 'mockai', attempts: [{ provider: 'mockai', model: 'second', status: 200, error: null, latencyMs: 80 }],
    status: 200, errorCode: null, latencyMs: 90, ttftMs: 20, stream: false, inputTokens: 20, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0,
    reasoningTokens: 0, costUsd: '0.000034', finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null, partial: false,
  }]);
  await insertDecisions(gw.services.store!.sql, [{
    inferenceId: bareId, createdAt: new Date().toISOString(), keyId: null, servedModel: 'mockai/second', canonical: 'second', kind: 'chat', status: 200, costUsd: '0.000034',
    features: { schema: 1, kind: 'chat', stats: {}, idx: [], val: [] } as never,
    decision: {
      w: null, policy: null, state_version: 1, kind: 'chat', explored: false, affinity: null, chosen: 'mockai/second', chosen_quality: 0.74, chosen_cost_usd: 0.00004,
      input_tokens: 20, token_method: 'exact', expected_output_tokens: 300, plan: [['mockai/second', null]], candidates: 294, excluded_by: { max_cost: 250 },
      included: [], excluded: {}, attempts: [],
    },
  }]);
  await page.goto(`${gw.url}/dashboard/requests/${bareId}`);
  await page.waitForSelector('[data-testid=router-why]');
  const bare = await page.textContent('main') ?? '';
  assert.match(bare, /294 considered, 0 listed/);
  assert.match(bare, /stores no candidate list with a decision \(router\.record_candidates: 0\)/);
  await check('request-detail-unlisted');

  // Usage, filtered (the filters are in the URL) and grouped by key.
  await page.goto(`${gw.url}/dashboard/usage?group=key&model=mockai/test-model&range=24h`);
  await ready(page);
  const usage = await page.textContent('main') ?? '';
  assert.ok(usage.includes('browser-test-key'), 'the key appears in the top keys');
  assert.equal(await page.inputValue('input[name=model]'), 'mockai/test-model');
  await check('usage');

  // Edit the key (rpm), then revoke it: the SDK call fails.
  await page.goto(`${gw.url}/dashboard/keys`);
  await ready(page);
  await page.click('button[aria-label="Edit browser-test-key"]');
  await page.fill('form[aria-label="Edit key browser-test-key"] input[name=rpm_limit]', '100');
  await page.click('form[aria-label="Edit key browser-test-key"] button[type=submit]');
  await bodyHas('rpm 100');
  await check('keys');
  await page.click('button[aria-label="Revoke browser-test-key"]');
  await bodyHas('revoked.');
  await assert.rejects(client.chat.completions.create({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'after revoke' }] }), (e: unknown) => (e as { status?: number }).status === 401);

  await page.goto(`${gw.url}/dashboard/models?range=24h`);
  await ready(page);
  assert.ok((await page.textContent('main'))?.includes('mockai/test-model'));
  await check('models');
  await page.goto(`${gw.url}/dashboard/users`);
  await ready(page);
  assert.ok((await page.textContent('main'))?.includes(`Alice ${XSS}`), 'user names are shown as text');
  await check('users');

  // Sign out; the cookie is dead (the API refuses it) and the login page is back.
  const cookies = await browser.context.cookies();
  await page.click('button:has-text("Sign out")');
  await page.waitForSelector('form.login-form');
  const stale = await fetch(`${gw.url}/admin/api/v1/keys`, { headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') } });
  assert.equal(stale.status, 401);

  // A member sees their own key and nothing of Bob's.
  await signIn('alice@example.com');
  await page.goto(`${gw.url}/dashboard/keys`);
  await ready(page);
  const keysText = await page.textContent('main') ?? '';
  assert.ok(keysText.includes(`alice ${XSS}`));
  assert.ok(!keysText.includes('bob-secret-project'));
  assert.equal(await page.$('input[name=budget_usd]'), null, 'members cannot set budgets');
  await check('member-keys');
  await page.goto(`${gw.url}/dashboard/requests?range=24h`);
  await ready(page);
  assert.equal(await page.$(`tr[data-id="${bobRequestId}"]`), null);
  await page.goto(`${gw.url}/dashboard/requests/${bobRequestId}`);
  await page.waitForSelector('.notice.error');
  assert.match(await page.textContent('.notice.error') ?? '', /no request/);
  await page.goto(`${gw.url}/dashboard/router?range=24h`);
  await ready(page);
  const memberRouter = await page.textContent('main') ?? '';
  assert.ok(memberRouter.includes('No routed requests in this range'), 'the routed requests were made without a key of hers');
  assert.ok(!memberRouter.includes('mockai/second'));
  await check('member-router');
  await page.goto(`${gw.url}/dashboard/users`);
  await ready(page);
  assert.match(await page.textContent('main') ?? '', /Not found/);
  await page.click('button:has-text("Sign out")');
  await page.waitForSelector('form.login-form');
  assert.deepEqual(cspErrors, [], 'no CSP violations');
});
