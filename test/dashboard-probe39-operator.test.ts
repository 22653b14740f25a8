// The dashboard in chromium with a month of an operator's data (test/helpers/operator-data.ts): the
// Models chart's cost axis read on a log scale, budget forecasts in months and years, at a desktop width.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { adminKeyCall } from './helpers/admin-api.ts';
import { chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';
import { MODELS, seedOperatorData } from './helpers/operator-data.ts';

const ADMIN_KEY = 'admin-key-for-the-probe39-operator-test-0123';
const PW = 'correct horse battery staple';
let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
const errors: string[] = [];
const skip = !chromiumPresent && 'no /usr/bin/chromium';

before(async () => {
  if (!chromiumPresent) return;
  const providers = ['mockai', 'otherai', 'thirdai'].map((id) => ({
    id, format: 'openai-chat' as const, base_url: 'http://127.0.0.1:9',
    models: MODELS.filter((m) => m.startsWith(`${id}/`)).map((m) => ({ name: m.slice(id.length + 1), pricing: { prompt: '0.000001', completion: '0.000002' } })),
  }));
  gw = await startTestGateway({ providers, gateway: { auth: { enabled: true, admin_key: ADMIN_KEY }, router: { quality_signals: [{ metric: 'helpful' }] } } });
  await gw.services.dashboard!.users.create({ email: 'admin@example.com', name: 'Ada Admin', role: 'admin', password: PW });
  await seedOperatorData(gw.services.store!);
  browser = await launchBrowser({ viewport: { width: 1440, height: 900 } });
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  await signInAs(page, gw.url, 'admin@example.com', PW);
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

async function open(path: string): Promise<void> {
  await page.goto(`${gw.url}/dashboard/${path}`);
  await page.waitForSelector('main[data-ready="true"]', { timeout: 15_000 });
}

type Box = { x: number; y: number; width: number; height: number; cls: string; text: string };

test('Models: the cost axis is logarithmic with round labels, so the cheap models spread out instead of sitting on $0', { skip }, async () => {
  await open('models?range=30d&metric=helpful');
  const chart = await page.waitForSelector('svg.chart.scatter');
  const w = Number((await chart.getAttribute('viewBox'))!.split(' ')[2]);
  const xs = await chart.$$eval('circle.dot', (cs) => cs.map((c) => Number(c.getAttribute('cx'))));
  assert.ok(xs.length >= 20, `models plotted: ${xs.length}`);
  const sorted = [...xs].sort((a, b) => a - b);
  const plotLeft = 84, plotWidth = w - 84 - 16;
  const median = (sorted[sorted.length >> 1]! - plotLeft) / plotWidth;
  // On the linear axis ($0 to $60, one model at $41) the median model sat at 0.3% of the width.
  assert.ok(median > 0.25, `the median model at ${(median * 100).toFixed(1)}% of the axis`);
  const ticks = await chart.$$eval('text.xtick', (els) => els.map((e) => {
    const b = (e as unknown as { getBBox(): { x: number; y: number; width: number; height: number } }).getBBox();
    return { x: b.x, y: b.y, width: b.width, height: b.height, cls: '', text: e.textContent ?? '' };
  })) as Box[];
  assert.ok(ticks.length >= 3, ticks.map((t) => t.text).join(' '));
  for (const t of ticks) assert.match(t.text, /^\$(0|0\.0*1|1(0|,000)*)$/, 'a power of ten, written out');
  for (let i = 1; i < ticks.length; i++) assert.ok(ticks[i - 1]!.x + ticks[i - 1]!.width < ticks[i]!.x, `${ticks[i - 1]!.text} clear of ${ticks[i]!.text}`);
  assert.ok(ticks.every((t) => t.x >= 0 && t.x + t.width <= w + 0.5), 'the labels within the chart');
  assert.equal(await chart.$eval('text.axis-title', (e) => e.textContent), 'cost per request (USD, log scale)');
  await chart.screenshot({ path: 'test/artifacts/dashboard/probe39-models-log-axis.png' });
  assert.deepEqual(errors, []);
});

const MONTH = 365.25 / 12;

test('Keys: a budget that lasts years reads "in about 10.0 years", months "in about 4 months", days "in 12 days"', { skip }, async () => {
  type Listed = { id: string; name: string; budget_usd: string | null; stats: { spend_7d_usd: string } };
  const listed = (await adminKeyCall(gw.url, ADMIN_KEY, 'GET', '/keys')).data as Listed[];
  // Three keys without a budget that spent in the last 7 days get a total budget that lasts 10 years, 4 months and 12 days at that rate.
  const spenders = listed.filter((k) => k.budget_usd === null && Number(k.stats.spend_7d_usd) > 0).slice(0, 3);
  assert.equal(spenders.length, 3);
  const days = [3652.5, 4 * MONTH, 12];
  for (const [i, k] of spenders.entries()) {
    const total = (await adminKeyCall(gw.url, ADMIN_KEY, 'PATCH', `/keys/${k.id}`, { budget_period: 'total', budget_usd: '1000000000' })) as { stats: { period_spend_usd: string } };
    const budget = Number(total.stats.period_spend_usd) + (Number(k.stats.spend_7d_usd) / 7) * days[i]!;
    await adminKeyCall(gw.url, ADMIN_KEY, 'PATCH', `/keys/${k.id}`, { budget_usd: budget.toFixed(2) });
  }
  await open('keys');
  const forecast = (id: string) => page.$eval(`tr:has([data-key-id="${id}"]) td:nth-child(4) .muted`, (e) => e.textContent);
  assert.equal(await forecast(spenders[0]!.id), 'runs out in about 10.0 years at the last 7 days\' rate');
  assert.equal(await forecast(spenders[1]!.id), 'runs out in about 4 months at the last 7 days\' rate');
  assert.equal(await forecast(spenders[2]!.id), 'runs out in 12 days at the last 7 days\' rate');
  assert.deepEqual(errors, []);
});

test('Keys: a monthly budget whose forecast passes the month\'s end lasts the month (it read "runs out in about 3.6 years")', { skip }, async () => {
  type Listed = { id: string; budget_usd: string | null; stats: { spend_7d_usd: string } };
  const listed = (await adminKeyCall(gw.url, ADMIN_KEY, 'GET', '/keys')).data as Listed[];
  // The two dearest (a budget is a decimal with cents: a key spending fractions of a cent a day cannot run out in half a month).
  const [lasting, short] = listed.filter((k) => k.budget_usd === null).sort((a, b) => Number(b.stats.spend_7d_usd) - Number(a.stats.spend_7d_usd));
  assert.ok(lasting && short);
  const perDay = (k: Listed): number => Number(k.stats.spend_7d_usd) / 7;
  const month = async (k: Listed, days: (toEnd: number) => number): Promise<void> => {
    const set = (await adminKeyCall(gw.url, ADMIN_KEY, 'PATCH', `/keys/${k.id}`, { budget_period: 'month', budget_usd: '1000000000' })) as { stats: { period_spend_usd: string; period_end: string } };
    const toEnd = (Date.parse(set.stats.period_end) - Date.now()) / 86_400_000;
    assert.ok(toEnd > 0 && toEnd <= 31, `the month ends in ${toEnd} days`);
    await adminKeyCall(gw.url, ADMIN_KEY, 'PATCH', `/keys/${k.id}`, { budget_usd: (Number(set.stats.period_spend_usd) + perDay(k) * days(toEnd)).toFixed(2) });
  };
  // Enough for three years at the rate, but a month's budget: it starts again at the month's end.
  await month(lasting, () => 3 * 365);
  // Half of what the rest of the month would spend: it runs out before the month ends.
  await month(short, (toEnd) => toEnd / 2);
  await open('keys');
  const forecast = (id: string) => page.$eval(`tr:has([data-key-id="${id}"]) td:nth-child(4) .muted`, (e) => e.textContent);
  assert.equal(await forecast(lasting.id), 'lasts this month at the last 7 days\' rate');
  assert.match(await forecast(short.id) ?? '', /^runs out in \d+ (minute|hour|day)s? at the last 7 days' rate$/);
  assert.deepEqual(errors, []);
});
