// The dashboard in chromium when something changes behind the page: another admin edits the key this
// page is editing, the session is signed out in another tab while the live tail runs, an answer that is
// no JSON (a proxy's error page) or none at all.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { adminKeyCall } from './helpers/admin-api.ts';
import { chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';

const ADMIN_KEY = 'admin-key-for-the-sessions-test-0123456789';
const PW = 'correct horse battery staple';
/** The Keys page's list call, whatever its query. */
const KEYS_CALL = /\/admin\/api\/v1\/keys(\?.*)?$/;

let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;

const adminApi = (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => adminKeyCall(gw.url, ADMIN_KEY, method, path, body);

before(async () => {
  if (!chromiumPresent) return;
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: 'http://127.0.0.1:9' }], gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } } });
  await gw.services.dashboard!.users.create({ email: 'admin@example.com', name: 'Ada', role: 'admin', password: PW });
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('dialog', (d) => void d.accept());
  await signInAs(page, gw.url, 'admin@example.com', PW);
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

test('two admins edit one key: saving this form changes what it changed, not the fields the other admin set meanwhile', { skip: !chromiumPresent && 'no /usr/bin/chromium' }, async () => {
  const created = await adminApi('POST', '/keys', { name: 'shared-key', budget_usd: '10', budget_period: 'month', rpm_limit: 60, allowed_models: ['mockai/*'] });
  const id = String((created.record as { id: string }).id);
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('main[data-ready="true"]');
  await page.click('button[aria-label="Edit shared-key"]');
  await page.waitForSelector('form[aria-label="Edit key shared-key"]');
  // The other admin raises the budget and lifts the rate limit while this form is open.
  await adminApi('PATCH', `/keys/${id}`, { budget_usd: '500', rpm_limit: null });
  await page.fill('form[aria-label="Edit key shared-key"] input[name=name]', 'shared-key renamed');
  await page.click('form[aria-label="Edit key shared-key"] button[type=submit]');
  await page.waitForFunction(() => !(globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector('form[aria-label="Edit key shared-key"]'));
  const k = await adminApi('GET', `/keys/${id}`);
  assert.equal(k.name, 'shared-key renamed');
  assert.equal(k.budget_usd, '500', 'the other admin\'s budget stands');
  assert.equal(k.rpm_limit, null, 'the other admin\'s lifted limit stands');
  assert.deepEqual(k.allowed_models, ['mockai/*']);
  // The list after the save shows the key as stored (it loads again after the form closes: wait for it).
  await page.waitForFunction(() => ((globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector('main')?.textContent ?? '').includes('of $500.00'), undefined, { timeout: 10_000 });
  assert.match(await page.textContent('main') ?? '', /of \$500\.00/);
});

test('signed out in another tab while the live tail runs: the page goes to sign-in, saying the session ended', { skip: !chromiumPresent && 'no /usr/bin/chromium' }, async () => {
  await page.goto(`${gw.url}/dashboard/requests`);
  await page.waitForSelector('main[data-ready="true"]');
  await page.check('#live-tail');
  await page.waitForFunction(() => (globalThis as unknown as { document: { body: { textContent: string } } }).document.body.textContent.includes('Live: new requests'));
  const other = await browser.context.newPage();
  await other.goto(`${gw.url}/dashboard/account`);
  await other.waitForSelector('main[data-ready="true"]');
  await other.click('button:has-text("Sign out")');
  await other.waitForSelector('form.login-form');
  await other.close();
  // The tail's heartbeat (15 s) finds the session gone and ends the stream; the browser's reconnect gets a
  // 401 and gives up: the page goes to sign-in and says why, and signing in comes back to the page.
  await page.waitForSelector('form.login-form', { timeout: 40_000 });
  assert.match(await page.textContent('main.login [role=alert]') ?? '', /Your session ended \(signed out in another tab, or expired\)/);
  await page.fill('input[name=email]', 'admin@example.com');
  await page.fill('input[name=password]', PW);
  await page.click('button[type=submit]');
  await page.waitForSelector('main[data-ready="true"] table.requests');
  assert.equal(new URL(page.url()).pathname, '/dashboard/requests');
});

test('the session ends while a page is open: its next call leads to sign-in, saying why', { skip: !chromiumPresent && 'no /usr/bin/chromium' }, async () => {
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('main[data-ready="true"]');
  await page.context().clearCookies();
  await page.fill('form.key-form input[name=name]', 'made after the session ended');
  await page.click('form.key-form button[type=submit]');
  await page.waitForSelector('form.login-form');
  assert.match(await page.textContent('main.login [role=alert]') ?? '', /Your session ended/);
  // A first visit says nothing of the kind.
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('form.login-form');
  assert.equal(await page.$('main.login [role=alert]'), null);
  await signInAs(page, gw.url, 'admin@example.com', PW);
});

test('an answer that is no JSON (a proxy\'s 502 page) or no answer at all: the page says what came back', { skip: !chromiumPresent && 'no /usr/bin/chromium' }, async () => {
  await page.route(KEYS_CALL, (r) => r.fulfill({ status: 502, contentType: 'text/html', body: '<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>' }));
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('main[data-ready="true"] .notice.error');
  assert.equal(await page.textContent('main .notice.error'), 'the gateway\'s answer was not JSON (HTTP 502 Bad Gateway): try again (http_error)');
  await page.unroute(KEYS_CALL);
  await page.route(KEYS_CALL, (r) => r.abort('connectionrefused'));
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('main[data-ready="true"] .notice.error');
  assert.match(await page.textContent('main .notice.error') ?? '', /^the gateway did not answer \(network error or the gateway is down\)/);
  await page.unroute(KEYS_CALL);
});

test('10,000 keys: the Keys page lists the newest 100 at once and more on demand, the router\'s key picker the newest 1000', { skip: !chromiumPresent && 'no /usr/bin/chromium' }, async () => {
  const store = gw.services.store!;
  const now = Date.now();
  for (let i = 0; i < 10_000; i++) {
    await store.insertKey({ id: `bulk${String(i).padStart(5, '0')}`, name: `bulk key ${i}`, hash: `bulk-hash-${i}`, createdAt: new Date(now - 86_400_000 - i * 1000).toISOString(),
      lastUsedAt: null, expiresAt: null, revokedAt: null, allowedModels: [], budgetUsd: i % 2 ? '10' : null, budgetPeriod: i % 2 ? 'month' : null, rpmLimit: null, tpmLimit: null });
  }
  const t0 = Date.now();
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('main[data-ready="true"] table tbody tr');
  const took = Date.now() - t0;
  const rows = () => page.$$eval('main table tbody tr', (trs) => trs.length);
  assert.equal(await rows(), 100);
  assert.ok(took < 10_000, `the Keys page took ${took} ms`);
  await page.click('button:has-text("More keys")');
  await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('main table tbody tr').length === 200);
  assert.match(await page.textContent('main table tbody tr:nth-child(200)') ?? '', /bulk key \d+/);
  // The Router page's "Try the router" lists the newest 1000 keys to rank as, and says so.
  const asked: string[] = [];
  page.on('request', (r) => { if (/\/admin\/api\/v1\/keys/.test(r.url())) asked.push(new URL(r.url()).search); });
  await page.goto(`${gw.url}/dashboard/router`);
  await page.waitForSelector('main[data-ready="true"]');
  await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('select[name=key_id] option').length > 1);
  assert.equal(await page.$$eval('select[name=key_id] option', (o) => o.length), 1001);
  assert.equal(await page.textContent('select[name=key_id] + small'), 'the newest 1000 keys');
  assert.deepEqual(asked, ['?limit=1000']);
});
