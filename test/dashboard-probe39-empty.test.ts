// The dashboard in chromium on a gateway with no records yet (a new install): every page loads with no
// error, and the charts' axes read right with nothing to show (the Requests axis read 0, 0.3, 0.5, 0.8, 1).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';

const PW = 'correct horse battery staple';
let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
const messages: string[] = [];
const skip = !chromiumPresent && 'no /usr/bin/chromium';

before(async () => {
  if (!chromiumPresent) return;
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: 'http://127.0.0.1:9' }] });
  await gw.services.dashboard!.users.create({ email: 'admin@example.com', name: 'Ada', role: 'admin', password: PW });
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') messages.push(m.text()); });
  page.on('pageerror', (e) => messages.push(e.message));
  await signInAs(page, gw.url, 'admin@example.com', PW);
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

/** The y axis labels of the chart titled `title`. */
const yLabels = (title: string): Promise<string[]> => page.$$eval(`svg.chart[aria-label="${title}"] g.tick text`, (ts) => ts.map((t) => t.textContent ?? ''));

test('no records: every page loads without an error; count axes tick at whole numbers, cost and rate axes as written', { skip }, async () => {
  for (const path of ['usage?range=30d', 'requests?range=30d', 'keys', 'models?range=30d', 'router?range=30d', 'users', 'account']) {
    await page.goto(`${gw.url}/dashboard/${path}`);
    await page.waitForSelector('main[data-ready="true"]', { timeout: 15_000 });
    assert.equal(await page.$('main .notice.error'), null, `${path}: no error shown`);
  }
  await page.goto(`${gw.url}/dashboard/usage?range=30d&bucket=day`);
  await page.waitForSelector('main[data-ready="true"]');
  assert.deepEqual(await yLabels('Requests per day'), ['0', '1']);
  assert.deepEqual(await yLabels('Tokens per day'), ['0', '1']);
  assert.deepEqual(await yLabels('Cost (USD) per day'), ['$0', '$0.25', '$0.5', '$0.75', '$1']);
  await page.goto(`${gw.url}/dashboard/router?range=30d`);
  await page.waitForSelector('main[data-ready="true"]');
  const routed = (await page.$$eval('svg.chart g.tick text', (ts) => ts.map((t) => t.textContent ?? ''))).filter((l) => !l.startsWith('$'));
  assert.ok(routed.length >= 2);
  assert.deepEqual(routed.filter((l) => !/^\d+$/.test(l)), [], 'routed requests tick at whole numbers');
  assert.deepEqual(messages, []);
});
