// The Keys page stays current in chromium while it is open: another admin's revoke, rotation and new key
// show at the next poll (30 s while the tab is visible), when the tab becomes visible again and when the
// window regains focus, never while hidden nor after the page is left; the reader keeps their place (the
// keys paged in, the open edit form and what is typed in it, the row on screen, the focused button) and
// the table is not rebuilt when nothing changed. An action on a row another admin changed first shows
// its refusal and the row as the server has it. Time is Playwright's clock; headless chromium never hides
// a page, so the test reports the tab hidden and visible the way the browser does (visibilityState and
// its event).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { adminKeyCall } from './helpers/admin-api.ts';
import { chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';

const ADMIN_KEY = 'admin-key-for-the-live-keys-test-0123456789';
const PW = 'correct horse battery staple';
const KEYS_CALL = /\/admin\/api\/v1\/keys(\?.*)?$/;
const BULK = 130;
const skip = !chromiumPresent && 'no /usr/bin/chromium';

let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
/** GET /keys calls the page made. */
let listCalls = 0;

const adminApi = (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => adminKeyCall(gw.url, ADMIN_KEY, method, path, body);
const bulkId = (i: number): string => `bulk${String(i).padStart(5, '0')}`;
/** The table row of the key named `name`. */
const row = (name: string) => page.locator('main table tbody tr').filter({ has: page.getByText(name, { exact: true }) });
const rowText = async (name: string): Promise<string> => (await row(name).textContent()) ?? '';
/** Waits (10 s at most) for the row of key `name` to read `re`. */
async function waitRow(name: string, re: RegExp): Promise<void> {
  const end = Date.now() + 10_000;
  while (!re.test(await rowText(name))) {
    if (Date.now() > end) assert.fail(`the row of ${name} never read ${re}: ${await rowText(name)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
/** Reports the tab hidden or visible as the browser does when the user switches tabs. */
const setVisible = (visible: boolean): Promise<void> => page.evaluate((v) => {
  const g = globalThis as unknown as { __visibility: string; document: { dispatchEvent(e: unknown): void }; Event: new (t: string) => unknown };
  g.__visibility = v ? 'visible' : 'hidden';
  g.document.dispatchEvent(new g.Event('visibilitychange'));
}, visible);
/** Gives a poll that may have been due the time to reach the network: a page that polls wrongly is caught, one that does not waits no longer. */
const settle = (): Promise<void> => page.waitForTimeout(500);

before(async () => {
  if (!chromiumPresent) return;
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: 'http://127.0.0.1:9' }], gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } } });
  await gw.services.dashboard!.users.create({ email: 'admin@example.com', name: 'Ada', role: 'admin', password: PW });
  const now = Date.now();
  for (let i = 0; i < BULK; i++) {
    await gw.services.store!.insertKey({ id: bulkId(i), name: `bulk key ${i}`, hash: `bulk-hash-${i}`, createdAt: new Date(now - 86_400_000 - i * 1000).toISOString(),
      lastUsedAt: null, expiresAt: null, revokedAt: null, allowedModels: [], budgetUsd: null, budgetPeriod: null, rpmLimit: null, tpmLimit: null });
  }
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('dialog', (d) => void d.accept());
  page.on('request', (r) => { if (r.method() === 'GET' && KEYS_CALL.test(r.url())) listCalls++; });
  // Before the page's scripts: document.visibilityState answers what the test reports (see setVisible).
  await page.addInitScript(() => {
    const g = globalThis as unknown as { __visibility: string; Document: { prototype: object } };
    g.__visibility = 'visible';
    Object.defineProperty(g.Document.prototype, 'visibilityState', { configurable: true, get: () => g.__visibility });
    Object.defineProperty(g.Document.prototype, 'hidden', { configurable: true, get: () => g.__visibility !== 'visible' });
  });
  await page.clock.install();
  await signInAs(page, gw.url, 'admin@example.com', PW);
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

test('another admin\'s revoke, rotation and new key show at the next poll, with the reader\'s paging, edit form, row on screen and focus kept', { skip }, async () => {
  const a = String(((await adminApi('POST', '/keys', { name: 'alpha' })).record as { id: string }).id);
  const b = String(((await adminApi('POST', '/keys', { name: 'beta' })).record as { id: string }).id);
  await adminApi('POST', '/keys', { name: 'gamma' });
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('main[data-ready="true"] table tbody tr');
  await page.click('button:has-text("More keys")');
  await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('main table tbody tr').length === 133);
  // The reader's place: an edit form open with a change typed, a row far down on screen, a button in focus.
  await page.click('button[aria-label="Edit gamma"]');
  await page.fill('form[aria-label="Edit key gamma"] input[name=name]', 'gamma draft');
  // The row at the top of the window is where the reader is (a few pixels of it scrolled past).
  await row('bulk key 110').evaluate((tr) => { tr.scrollIntoView({ block: 'start' }); (globalThis as unknown as { scrollBy(x: number, y: number): void }).scrollBy(0, 10); });
  await page.focus('button[aria-label="Rotate bulk key 112"]');
  const y = async (): Promise<number> => row('bulk key 110').evaluate((tr) => tr.getBoundingClientRect().top);
  const yBefore = await y();
  // Watches for a flash: the list emptied, a loading line or an error while it loads again.
  await page.evaluate(() => {
    const g = globalThis as unknown as { __flashes: string[]; document: { querySelector(s: string): unknown }; MutationObserver: new (f: () => void) => { observe(n: unknown, o: unknown): void } };
    g.__flashes = [];
    const main = g.document.querySelector('main') as { querySelector(s: string): unknown; querySelectorAll(s: string): { length: number } };
    new g.MutationObserver(() => {
      if (main.querySelector('.loading') || main.querySelector('.notice.error')) g.__flashes.push('loading or error');
      if (main.querySelectorAll('table tbody tr').length < 133) g.__flashes.push('rows missing');
    }).observe(main, { childList: true, subtree: true });
  });

  await adminApi('DELETE', `/keys/${a}`);
  await adminApi('POST', `/keys/${b}/rotate`, { grace_hours: 1 });
  await adminApi('POST', '/keys', { name: 'delta' });
  await settle();
  assert.match(await rowText('alpha'), /active/, 'nothing changes before the poll is due');

  await page.clock.fastForward(30_000);
  await waitRow('alpha', /revoked/);
  assert.match(await rowText('beta'), /previous secret valid until/);
  assert.match(await page.textContent('main table tbody tr:first-child') ?? '', /delta/, 'the new key is listed first');
  assert.equal(await page.$$eval('main table tbody tr', (r) => r.length), 133, 'as many keys as were paged in');
  assert.equal(await page.inputValue('form[aria-label="Edit key gamma"] input[name=name]'), 'gamma draft', 'the edit form stays open with what was typed');
  assert.ok(Math.abs(await y() - yBefore) <= 2, `the row on screen stays in place (${yBefore} -> ${await y()}) though a key was added above it`);
  assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string } } }).document.activeElement.getAttribute('aria-label')), 'Rotate bulk key 112');
  assert.deepEqual(await page.evaluate(() => (globalThis as unknown as { __flashes: string[] }).__flashes), [], 'the list never flashed empty, loading or in error');
  await page.screenshot({ path: process.env.KEYS_LIVE_SHOT ?? `${gw.dir}/keys-live.png`, fullPage: false });

  // A poll that finds nothing changed leaves the table as it is (the same elements: selection and hover kept).
  await page.evaluate(() => { ((globalThis as unknown as { document: { querySelector(s: string): Record<string, unknown> } }).document.querySelector('main table'))!.__mark = 1; });
  const answered = page.waitForResponse(KEYS_CALL);
  await page.clock.fastForward(30_000);
  await answered;
  await settle();
  assert.equal(await page.evaluate(() => ((globalThis as unknown as { document: { querySelector(s: string): Record<string, unknown> } }).document.querySelector('main table'))!.__mark), 1);
});

test('hidden, the page asks for nothing; visible again or focused, it loads the list at once; left, it polls no more', { skip }, async () => {
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('main[data-ready="true"] table tbody tr');
  await setVisible(false);
  const calls = listCalls;
  await adminApi('DELETE', `/keys/${bulkId(5)}`);
  await page.clock.fastForward(95_000);
  await settle();
  assert.equal(listCalls, calls, 'no poll while the tab is hidden');
  assert.match(await rowText('bulk key 5'), /active/);

  await setVisible(true);
  await waitRow('bulk key 5', /revoked/);
  assert.equal(listCalls, calls + 1, 'one load when the tab is visible again');

  await adminApi('DELETE', `/keys/${bulkId(6)}`);
  await page.clock.fastForward(5_000);
  await page.evaluate(() => { const g = globalThis as unknown as { dispatchEvent(e: unknown): void; FocusEvent: new (t: string) => unknown }; g.dispatchEvent(new g.FocusEvent('focus')); });
  await waitRow('bulk key 6', /revoked/);
  assert.equal(listCalls, calls + 2, 'one load when the window regains focus');

  await page.click('nav a[href="/dashboard/usage"]');
  await page.waitForSelector('main[data-ready="true"]');
  const left = listCalls;
  await page.clock.fastForward(95_000);
  await page.evaluate(() => { const g = globalThis as unknown as { dispatchEvent(e: unknown): void; FocusEvent: new (t: string) => unknown }; g.dispatchEvent(new g.FocusEvent('focus')); });
  await settle();
  assert.equal(listCalls, left, 'the Keys page, left, polls no more');
});

test('the reader\'s own action on a row another admin changed first: the refusal is shown and the row as the server has it', { skip }, async () => {
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('main[data-ready="true"] table tbody tr');
  await adminApi('DELETE', `/keys/${bulkId(7)}`);
  await page.click('button[aria-label="Revoke bulk key 7"]');
  await page.waitForSelector('main .notice.error');
  assert.match(await page.textContent('main .notice.error') ?? '', /the key is revoked already \(conflict\)/);
  await waitRow('bulk key 7', /revoked/);

  // An edit of a key revoked meanwhile: the form says why, the list shows it revoked.
  await page.click('button[aria-label="Edit bulk key 8"]');
  await adminApi('DELETE', `/keys/${bulkId(8)}`);
  await page.fill('form[aria-label="Edit key bulk key 8"] input[name=name]', 'too late');
  await page.click('form[aria-label="Edit key bulk key 8"] button[type=submit]');
  await page.waitForSelector('form[aria-label="Edit key bulk key 8"] .notice.error');
  assert.match(await page.textContent('form[aria-label="Edit key bulk key 8"] .notice.error') ?? '', /a revoked key cannot be edited \(conflict\)/);
  await waitRow('bulk key 8', /revoked/);
  await page.screenshot({ path: process.env.KEYS_STALE_SHOT ?? `${gw.dir}/keys-stale.png` });
});
