// The dashboard in chromium while its PostgreSQL stops answering (a TCP proxy the test controls passes no
// more bytes, as in dashboard-store-stall): a page opened then says why, with a button that tries again,
// and that button brings the page once the database answers (it showed a bare error box and nothing else).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';
import { chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';

const pgUp = await pgAvailable();
const skip = !pgUp ? 'no PostgreSQL at 127.0.0.1:5432' : !chromiumPresent && 'no /usr/bin/chromium';
const schema = freshSchema('gw_dash_stall_ui');
const PW = 'a long enough password';
let proxy: TcpProxy; let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;

before(async () => {
  if (skip) return;
  proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
  gw = await startTestGateway({
    providers: [], gateway: { storage: { database_url: proxy.url() }, dashboard: { answer_timeout_ms: 1500 } }, env: { GATEWAY_PG_SCHEMA: schema },
  });
  await gw.services.dashboard!.users.create({ email: 'root@example.com', role: 'admin', password: PW });
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  await signInAs(page, gw.url, 'root@example.com', PW);
});

after(async () => {
  if (skip) return;
  await browser?.close();
  proxy.up(); await gw.stop(); await proxy.close(); await dropSchema(schema);
});

test('a page opened while the database stalls says why and offers "Try again", which shows the page once it answers', { skip }, async () => {
  proxy.stall();
  try {
    await page.goto(`${gw.url}/dashboard/keys`);
    const again = await page.waitForSelector('main button:has-text("Try again")', { timeout: 15_000 });
    assert.match(await page.textContent('main [role=alert]') ?? '', /storage_unavailable/);
    assert.equal(await page.evaluate('document.activeElement?.textContent'), 'Try again', 'the button has the focus');
    assert.ok(again);
  } finally {
    proxy.down(); proxy.up(); // the stalled connections are dropped; the pool opens fresh ones
  }
  // The pool may need a moment for fresh connections: the button is pressed until the page comes.
  for (let i = 0; i < 20 && !(await page.$('main[data-ready="true"]')); i++) {
    const again = await page.$('main button:has-text("Try again"):not([disabled])');
    if (again) await again.click();
    await page.waitForTimeout(500);
  }
  await page.waitForSelector('main[data-ready="true"]');
  assert.equal(new URL(page.url()).pathname, '/dashboard/keys');
  assert.match(await page.textContent('main h1') ?? '', /API keys/);
});
