// Hostile stored text in chromium: model, route, provider, key, user and error text carrying markup,
// a javascript: URL, an RTL override, zero-width characters, emoji, NUL and one 10,000-character word,
// as a client can make the gateway record them. No script runs, no dialog opens, axe finds nothing
// serious, and every page's tables stay within the page: the other columns are not pushed out of view.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { axeViolations, chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';
import { uuidv7 } from '../src/util/uuid.ts';

const PW = 'correct horse battery staple';
const LONG = 'x'.repeat(10_000);
const TEXTS = ['<img src=x onerror="window.__xss=1">', '</script><script>window.__xss=2</script>', 'javascript:window.__xss=3', '\u202Egnp.exe\u202C', 'zero\u200Bwidth\u200D', '😀'.repeat(30), 'nul\u0000byte', LONG];

let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
const dialogs: string[] = [];
const errors: string[] = [];

before(async () => {
  if (!chromiumPresent) return;
  gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: 'http://127.0.0.1:9' }], gateway: { storage: { log_bodies: 'full' } } });
  const store = gw.services.store!;
  await gw.services.dashboard!.users.create({ email: 'admin@example.com', name: TEXTS[0]!, role: 'admin', password: PW });
  const now = Date.now();
  for (const [i, t] of TEXTS.entries()) {
    await store.insertKey({ id: `k${i}`, name: t, hash: `h${i}`, createdAt: new Date(now - i * 1000).toISOString(), lastUsedAt: null, expiresAt: null, revokedAt: null,
      allowedModels: [t], budgetUsd: '10', budgetPeriod: 'month', rpmLimit: null, tpmLimit: null });
  }
  await store.insertInferences(TEXTS.map((t, i) => {
    const at = now - 60_000 - i * 1000;
    return {
      id: uuidv7(at), createdAt: new Date(at).toISOString(), keyId: `k${i}`, route: t, clientFormat: 'openai-chat', requestedModel: t, servedModel: t, provider: t,
      attempts: [{ provider: t, model: t, status: 502, error: t, latencyMs: 10 }], status: i % 2 ? 200 : 502, errorCode: t, latencyMs: 100 + i, ttftMs: null, stream: false,
      inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.00005', finishReason: t,
      metadata: { [t]: t }, extra: { user_agent: t }, clientIp: null, requestBody: JSON.stringify({ messages: [{ role: 'user', content: t }] }), responseBody: t,
    };
  }));
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
  page.on('pageerror', (e) => errors.push(e.message));
  await signInAs(page, gw.url, 'admin@example.com', PW);
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

/** How far the page and each table's box scroll sideways (0 when everything is in view). */
const overflow = (p: Page): Promise<number[]> => p.evaluate(`[document.documentElement.scrollWidth - innerWidth,
  ...[...document.querySelectorAll('.table-wrap')].map((w) => w.scrollWidth - w.clientWidth)]`);

test('hostile stored text: shown as text, no script, tables within the page, axe clean', { skip: !chromiumPresent && 'no /usr/bin/chromium' }, async () => {
  const ids = await gw.services.store!.listInferences({ limit: 1 });
  for (const path of ['usage', 'requests?range=24h', 'keys', 'models', 'users', `requests/${ids[0]!.id}`]) {
    await page.goto(`${gw.url}/dashboard/${path}`);
    await page.waitForSelector('main[data-ready="true"]', { timeout: 15_000 });
    assert.ok(!(await page.textContent('main'))?.includes('internal error'), path);
    assert.deepEqual(await overflow(page), (await overflow(page)).map(() => 0), `${path}: nothing wider than the page`);
    const v = await axeViolations(page);
    assert.deepEqual(v.map((x) => `${x.id}: ${x.help} (${x.nodes.map((n) => n.target.join(' ')).join('; ')})`), [], `axe on ${path}`);
    assert.equal(await page.evaluate('window.__xss'), undefined, `stored script ran on ${path}`);
  }
  // The columns after the long word are on screen: the requests table's cost cells within the viewport.
  await page.goto(`${gw.url}/dashboard/requests?range=24h`);
  await page.waitForSelector('main[data-ready="true"]');
  const right = await page.evaluate('Math.max(...[...document.querySelectorAll("table.requests td:last-child")].map((td) => td.getBoundingClientRect().right))') as number;
  assert.ok(right <= 1360, `the cost column ends at ${right}px, past the 1360px viewport`);
  assert.ok((await page.textContent('table.requests'))?.includes(LONG), 'the long word is shown whole');
  assert.deepEqual(dialogs, []);
  assert.deepEqual(errors, []);
});
