// The Router page's "Undo learning" section in a real browser (Debian's chromium through playwright-core):
// an admin sees the stored learned-state versions, rolls back to an earlier one with a reason (the
// confirmation accepted) and then resets to the priors; the table and the store show the new versions
// with who and why, and this replica routes with them; an overview that fails to load leaves the section
// usable. "Providers now" shows an ejected provider first, for members too; a member sees no Undo
// section. axe-core finds no serious or critical violation; a screenshot is kept in test/artifacts/dashboard.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { saveState } from '../src/router/store.ts';
import { emptyStored } from '../src/router/train-pass.ts';
import { listStates } from '../src/router/state-restore.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { axeViolations, chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';

const SHOTS = process.env.DASHBOARD_SCREENSHOTS ?? join(import.meta.dirname, 'artifacts', 'dashboard');
const PW = 'correct horse battery staple';
let oa: MockUpstream; let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
const dialogs: string[] = [];

before(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  oa = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }, { id: 'flaky', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: 'admin-key-for-the-router-states-browser-test' }, router: { quality_signals: [{ metric: 'helpful' }] } },
  });
  const users = gw.services.dashboard!.users;
  await users.create({ email: 'admin@example.com', name: 'Ada Admin', role: 'admin', password: PW });
  await users.create({ email: 'mia@example.com', name: 'Mia Member', role: 'member', password: PW });
  for (const v of [1, 2, 3]) assert.equal(await saveState(gw.services.store!.sql, { ...emptyStored(), version: v, outcomes: 40 * v, createdAt: new Date(Date.now() - (4 - v) * 3_600_000).toISOString() }), true);
  await gw.services.router!.learning.refresh();
  // An ejection as another replica relays it (src/router/health-share.ts): "Providers now" lists it first.
  gw.services.health.ejectUntil('flaky', Date.now() + 120_000);
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('dialog', (d) => { dialogs.push(d.message()); void d.accept(); });
});

after(async () => {
  await browser?.close();
  await gw?.stop();
  await oa?.close();
});

type PageGlobal = { document: { body: { textContent: string | null } } };
const bodyHas = (text: string) => page.waitForFunction((t) => (globalThis as unknown as PageGlobal).document.body.textContent?.includes(t) ?? false, text, { timeout: 15_000 });

const signIn = (email: string): Promise<void> => signInAs(page, gw.url, email, PW);

/** The tables' rows, cells joined by " | " (the versions' rows start with "v<N>"). */
const rowTexts = (): Promise<string[]> => page.$$eval('section table tbody tr', (trs) =>
  trs.map((tr) => [...tr.querySelectorAll('td, th')].map((c) => (c.textContent ?? '').replace(/\s+/g, ' ').trim()).join(' | ')));

/** The versions' rows once the newest is `v`. */
async function versionRows(v: string): Promise<string[]> {
  const end = Date.now() + 10_000;
  for (;;) {
    const rows = (await rowTexts()).filter((t) => /^v\d/.test(t));
    if (rows[0]?.startsWith(`${v} `) || Date.now() > end) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('an admin rolls the router back and resets it from the Router page; a member does not see the section', { skip: !chromiumPresent && 'no /usr/bin/chromium' }, async () => {
  await signIn('admin@example.com');
  await page.goto(`${gw.url}/dashboard/router`);
  await bodyHas('Undo learning');
  await bodyHas('Roll back to this');
  await bodyHas('Providers now');
  await bodyHas('ejected until');
  const providers = (await rowTexts()).filter((t) => /^(flaky|mockai) \|/.test(t));
  assert.match(providers[0]!, /^flaky \| ejected until .+ \| – \| 0\.0%$/);
  assert.match(providers[1]!, /^mockai \| no attempts yet \| – \| 0\.0%$/);
  let rows = (await rowTexts()).filter((t) => /^v\d/.test(t));
  assert.deepEqual(rows.map((t) => t.split(' ')[0]), ['v3', 'v2', 'v1']);
  assert.match(rows[2]!, /^v1 \| .+ \| 40 \| 1 KB \| trained \| Roll back to this$/);
  assert.match(rows[0]!, /routing with it/);
  assert.match(rows[0]!, /newest/);

  await page.fill('input[name=reason]', 'inverted verdicts from key ci-bot');
  await page.click('tr:has-text("v1") button:has-text("Roll back to this")');
  await bodyHas('Stored v4: rollback to v1 by admin@example.com: inverted verdicts from key ci-bot. This replica routes with v4.');
  assert.match(dialogs.at(-1)!, /Roll the router back to what version 1 had learned\?/);
  rows = await versionRows('v4');
  assert.equal(rows[0]!.split(' ')[0], 'v4');
  assert.match(rows[0]!, /routing with it/);
  assert.match(rows[0]!, /rollback to v1 by admin@example\.com: inverted verdicts from key ci-bot/);
  assert.equal(await page.inputValue('input[name=reason]'), '', 'the reason is cleared once used');

  await page.click('button:has-text("Reset to priors")');
  await bodyHas('Stored v5: reset to the priors by admin@example.com.');
  assert.match(dialogs.at(-1)!, /Reset the router to its priors/);
  assert.match((await versionRows('v5'))[0]!, /^v5 routing with it \| .+ \| 0 \| 1 KB \| reset to the priors by admin@example\.com \| newest$/);
  await page.screenshot({ path: join(SHOTS, 'router-states.png'), fullPage: true });
  const v = await axeViolations(page);
  assert.deepEqual(v.map((x) => `${x.id}: ${x.help}`), [], 'axe on the Router page with its states');

  // The store holds both, with who and why; this replica routes with the newest.
  const stored = await listStates(gw.services.store!.sql);
  assert.deepEqual(stored.slice(0, 2).map((s) => [s.version, s.origin?.kind, s.origin?.from, s.origin?.by, s.origin?.reason]),
    [[5, 'reset', null, 'admin@example.com', null], [4, 'rollback', 1, 'admin@example.com', 'inverted verdicts from key ci-bot']]);
  assert.equal(stored[1]!.outcomes, 40);
  assert.equal(gw.services.router!.learning.state.version, 5);

  // An error from the API shows in the dashboard's error style and stores nothing: a version retention
  // deleted behind the page's back.
  await gw.services.store!.sql.run('DELETE FROM router_state WHERE version = 2');
  await page.click('tr:has-text("v2") button:has-text("Roll back to this")');
  await page.waitForSelector('.notice.error', { timeout: 10_000 });
  assert.match(await page.locator('.notice.error').innerText(), /router state version 2 is not stored \(kept: 5, 4, 3, 1/);
  assert.equal((await listStates(gw.services.store!.sql))[0]!.version, 5);
  assert.equal(await page.locator('tr:has-text("v2") button').isDisabled(), false, 'the button is usable again after the error');

  // An overview that fails to load (the rollups' read refused) leaves undoing learning reachable.
  await page.route(/\/admin\/api\/v1\/router(\?|$)/, (r) => r.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { type: 'storage_unavailable', message: 'the overview could not be read' } }) }));
  await page.goto(`${gw.url}/dashboard/router`);
  await page.waitForSelector('.notice.error', { timeout: 10_000 });
  assert.match(await page.locator('.notice.error').first().innerText(), /the overview could not be read/);
  await bodyHas('Roll back to this');
  assert.match((await versionRows('v5'))[0]!, /^v5 routing with it/);
  await page.unroute(/\/admin\/api\/v1\/router(\?|$)/);

  await page.click('button:has-text("Sign out")');
  await signIn('mia@example.com');
  await page.goto(`${gw.url}/dashboard/router`);
  await bodyHas('Learned state used');
  await bodyHas('ejected until');
  assert.equal(await page.locator('text=Undo learning').count(), 0, 'members see no rollback');
  assert.equal(await page.locator('button:has-text("Roll back to this")').count(), 0);
});
