// The dashboard from the keyboard alone, in chromium: the sign-in form takes the focus, the skip link
// moves it to the content (it rebuilt the page and the next Tab came back to the skip link), a page
// chosen in the navigation puts it on that page's content, and a key's Edit puts it in the edit form and
// its Cancel back on the Edit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { adminKeyCall } from './helpers/admin-api.ts';
import { chromiumPresent, launchBrowser } from './helpers/browser.ts';

const ADMIN_KEY = 'admin-key-for-the-keyboard-test-0123456789ab';
const PW = 'correct horse battery staple';
let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
const errors: string[] = [];
const skip = !chromiumPresent && 'no /usr/bin/chromium';

before(async () => {
  if (!chromiumPresent) return;
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: 'http://127.0.0.1:9' }], gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } } });
  await gw.services.dashboard!.users.create({ email: 'admin@example.com', name: 'Ada', role: 'admin', password: PW });
  for (let i = 0; i < 40; i++) await adminKeyCall(gw.url, ADMIN_KEY, 'POST', '/keys', { name: `service-${String(i).padStart(2, '0')}` });
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

/** The focused element: its tag, then #id and [name] where it has them. */
const focused = (): Promise<string> => page.evaluate(`(() => { const a = document.activeElement; return a ? a.tagName.toLowerCase() + (a.id ? '#' + a.id : '') + (a.getAttribute('name') ? '[' + a.getAttribute('name') + ']' : '') : ''; })()`) as Promise<string>;

test('keyboard only: sign in, skip to the content, change page, edit a key far down the list', { skip }, async () => {
  await page.goto(`${gw.url}/dashboard/usage`);
  await page.waitForSelector('form.login-form');
  // (Polled from here: the page's CSP refuses the string functions waitForFunction would run in it.)
  for (let i = 0; i < 50 && !/\[email\]$/.test(await focused()); i++) await page.waitForTimeout(50);
  assert.match(await focused(), /^input(#\w+)?\[email\]$/, 'the sign-in form has the focus');
  await page.keyboard.type('admin@example.com');
  await page.keyboard.press('Tab');
  await page.keyboard.type(PW);
  await page.keyboard.press('Enter');
  await page.waitForSelector('main[data-ready="true"]');

  // The skip link: the first Tab, then Enter, puts the focus on the content; the next Tab is the page's first control.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate('document.activeElement?.textContent'), 'Skip to content');
  // The jump to #main is a history entry: its popstate re-routed the page, which rebuilt it and put the
  // focus back on main after the next Tab (a fresh-clone run saw that Tab land on main). The page must
  // stay as it is: a mark on its range control survives the jump.
  await page.evaluate('document.querySelector("select[name=range]").dataset.mark = "kept"');
  await page.keyboard.press('Enter');
  assert.equal(await focused(), 'main#main');
  await page.waitForTimeout(400);
  assert.equal(await page.evaluate('document.querySelector("select[name=range]")?.dataset.mark ?? null'), 'kept', 'the skip link rebuilt the page');
  assert.equal(await focused(), 'main#main');
  await page.keyboard.press('Tab');
  assert.match(await focused(), /^select(#\w+)?\[range\]$/, 'the next Tab is the range, not the skip link again');

  // The navigation's Keys link from the keyboard: the focus is on the Keys page's content.
  await page.focus('nav a[href="/dashboard/keys"]');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/dashboard\/keys$/);
  await page.waitForSelector('main[data-ready="true"]');
  assert.equal(await focused(), 'main#main');

  // Edit on the 40th key: its form opens above the list, and the focus is in it.
  await page.focus('button[aria-label="Edit service-00"]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('form[aria-label="Edit key service-00"]');
  assert.equal(await page.evaluate('document.activeElement?.closest("form")?.getAttribute("aria-label")'), 'Edit key service-00');
  assert.match(await focused(), /^input(#\w+)?\[name\]$/);
  assert.equal(await page.inputValue('form[aria-label="Edit key service-00"] input[name=name]'), 'service-00');
  // Cancel from the keyboard: the form closes and the focus is back on that row's Edit.
  await page.focus('form[aria-label="Edit key service-00"] button:has-text("Cancel")');
  await page.keyboard.press('Enter');
  for (let i = 0; i < 50 && (await page.$('form[aria-label="Edit key service-00"]')); i++) await page.waitForTimeout(50);
  for (let i = 0; i < 50 && (await page.evaluate('document.activeElement?.getAttribute("aria-label")')) !== 'Edit service-00'; i++) await page.waitForTimeout(50);
  assert.equal(await page.evaluate('document.activeElement?.getAttribute("aria-label")'), 'Edit service-00');
  assert.deepEqual(errors, []);
});
