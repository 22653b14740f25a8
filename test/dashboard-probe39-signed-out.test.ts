// A signed-out visitor is a normal state, not an error: the dashboard's first session check (GET
// /admin/api/v1/session) answers 200 with a signed-out view, so chromium logs nothing on a first visit or
// after signing out, while every other admin API call without a session is still 401 session_required.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';

const ADMIN_KEY = 'admin-key-for-the-signed-out-test-0123456789';
const PW = 'correct horse battery staple';
let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
const messages: string[] = [];
const skip = !chromiumPresent && 'no /usr/bin/chromium';

before(async () => {
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: 'http://127.0.0.1:9' }], gateway: { auth: { enabled: true, admin_key: ADMIN_KEY } } });
  await gw.services.dashboard!.users.create({ email: 'admin@example.com', name: 'Ada', role: 'admin', password: PW });
  if (!chromiumPresent) return;
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') messages.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => messages.push(`pageerror: ${e.message}`));
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

const get = async (path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown>; setCookie: string | null }> => {
  const res = await fetch(`${gw.url}/admin/api/v1${path}`, { headers });
  return { status: res.status, body: await res.json() as Record<string, unknown>, setCookie: res.headers.get('set-cookie') };
};

test('a signed-out visit shows the sign-in page with no console error; signing in and out again logs none either', { skip }, async () => {
  await page.goto(`${gw.url}/dashboard/keys`);
  await page.waitForSelector('form.login-form');
  // Nothing the sign-in page loads later may add a message either.
  await page.waitForLoadState('networkidle');
  assert.deepEqual(messages, [], 'no console error on a signed-out visit');
  await signInAs(page, gw.url, 'admin@example.com', PW);
  await page.waitForSelector('main[data-ready="true"]');
  await page.click('button:has-text("Sign out")');
  await page.waitForSelector('form.login-form');
  await page.waitForLoadState('networkidle');
  assert.equal(await page.$('main.login [role=alert]'), null, 'signing out is not "your session ended"');
  assert.deepEqual(messages, [], 'no console error after signing out');
});

test('GET /session without a session answers 200 signed out; a stale cookie is cleared; the other calls stay 401', async () => {
  const none = await get('/session');
  assert.equal(none.status, 200);
  assert.deepEqual(none.body, { signed_in: false, user: null });
  assert.equal(none.setCookie, null, 'no cookie sent, none cleared');
  const stale = await get('/session', { cookie: 'gw_session=not-a-session-token' });
  assert.equal(stale.status, 200);
  assert.equal(stale.body.signed_in, false);
  assert.match(stale.setCookie ?? '', /gw_session=;/, 'the dead cookie is cleared');
  const keys = await get('/keys');
  assert.equal(keys.status, 401);
  assert.equal((keys.body.error as { code: string }).code, 'session_required');
  // A wrong admin key is an error to report to the script that sent it, not a signed-out view.
  const wrong = await get('/session', { authorization: 'Bearer not-the-admin-key' });
  assert.equal(wrong.status, 401);
  assert.equal((wrong.body.error as { code: string }).code, 'invalid_api_key');
  const byKey = await get('/session', { authorization: `Bearer ${ADMIN_KEY}` });
  assert.equal(byKey.status, 200);
  assert.equal(byKey.body.signed_in, true);
  assert.equal(byKey.body.via, 'admin_key');
});
