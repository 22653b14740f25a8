// The dashboard in chromium with the data an operator has after a month (test/helpers/operator-data.ts:
// 4,000 requests over 30 days, 40 models, 15 keys, costs from $0.0000004 to $1,234.56, errors of every
// status, routed requests with feedback, budgets exactly spent and overspent), the browser in Asia/Kolkata,
// at a desktop width and a phone's (390 px). What each page shows is read from the DOM and its layout boxes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { chromiumPresent, launchBrowser, signInAs } from './helpers/browser.ts';
import { MODELS, seedOperatorData } from './helpers/operator-data.ts';

const PW = 'correct horse battery staple';
let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
const errors: string[] = [];

before(async () => {
  if (!chromiumPresent) return;
  const providers = ['mockai', 'otherai', 'thirdai'].map((id) => ({
    id, format: 'openai-chat' as const, base_url: 'http://127.0.0.1:9',
    models: MODELS.filter((m) => m.startsWith(`${id}/`)).map((m) => ({ name: m.slice(id.length + 1), pricing: { prompt: '0.000001', completion: '0.000002' } })),
  }));
  gw = await startTestGateway({ providers, gateway: { router: { quality_signals: [{ metric: 'helpful' }] } } });
  await gw.services.dashboard!.users.create({ email: 'admin@example.com', name: 'Ada Admin', role: 'admin', password: PW });
  await gw.services.dashboard!.users.create({ email: `${'longname'.repeat(8)}@example.com`, name: 'Very Long Name '.repeat(6).trim(), role: 'member', password: PW });
  await seedOperatorData(gw.services.store!);
  browser = await launchBrowser({ timezoneId: 'Asia/Kolkata' });
  page = browser.context.pages()[0] ?? await browser.context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => void d.dismiss());
  await signInAs(page, gw.url, 'admin@example.com', PW);
});

after(async () => {
  await browser?.close();
  await gw?.stop();
});

const skip = !chromiumPresent && 'no /usr/bin/chromium';

async function open(path: string): Promise<void> {
  await page.goto(`${gw.url}/dashboard/${path}`);
  await page.waitForSelector('main[data-ready="true"]', { timeout: 15_000 });
}

test('a cost below a millionth of a dollar is written out in decimals, never as an exponent', { skip }, async () => {
  await open('requests?range=30d&max_cost=0.000001');
  const costs = await page.$$eval('table.requests tbody tr[data-id] td:last-child', (tds) => tds.map((td) => td.textContent ?? ''));
  assert.ok(costs.length > 0, 'the cheapest requests are listed');
  assert.deepEqual([...new Set(costs)].sort(), ['$0', '$0.0000004', '$0.000001'], 'costs of $0.0000004 and $0.000001 as written');
  for (const path of ['usage?range=30d', 'models?range=30d', 'router?range=30d', 'keys']) {
    await open(path);
    assert.doesNotMatch(await page.textContent('main') ?? '', /\de[-+]\d/, `${path}: no number as an exponent`);
  }
  assert.deepEqual(errors, []);
});

test('on a phone (390 px) the request detail fits the screen: no panel runs past its right edge', { skip }, async () => {
  const [rec] = await gw.services.store!.listInferences({ limit: 1 });
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await open(`requests/${rec!.id}`);
    const rights = await page.$$eval('main section.panel', (els) => els.map((e) => Math.round(e.getBoundingClientRect().right)));
    assert.ok(rights.length >= 4, 'the detail has its panels');
    assert.deepEqual(rights.filter((r) => r > 390), [], 'every panel ends within the 390 px screen');
    assert.equal(await page.evaluate('document.documentElement.scrollWidth - innerWidth'), 0, 'the page does not scroll sideways');
  } finally {
    await page.setViewportSize({ width: 1360, height: 900 });
  }
  assert.deepEqual(errors, []);
});

test('a key whose budget is exactly spent, and one overspent, say so instead of "runs out 0 s ago"', { skip }, async () => {
  await open('keys');
  const spend = (id: string) => page.$eval(`tr:has([data-key-id="${id}"]) td:nth-child(4)`, (td) => (td as unknown as { innerText: string }).innerText.replace(/\s+/g, " ").trim());
  assert.equal(await spend('keyexact'), '$10.00 of $10.00 in total budget used up');
  assert.equal(await spend('keyover'), '$7.50 of $5.00 in total budget used up$2.50 over');
  assert.match(await spend('key00'), /^\$[\d.,]+ of \$500\.00 this month (runs out in \d+ (minute|hour|day)s?|lasts this month) at the last 7 days' rate$/, 'a budget with room left keeps its forecast');
  assert.deepEqual(errors, []);
});

type Box = { x: number; y: number; width: number; height: number; cls: string; text: string };
const meets = (a: Box, b: Box): boolean => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

test('the models\' cost-against-quality chart: its text within the chart, no label over another', { skip }, async () => {
  await open('models?range=30d&metric=helpful');
  const chart = await page.waitForSelector('svg.chart.scatter');
  const [w, h] = (await chart.getAttribute('viewBox'))!.split(' ').slice(2).map(Number) as [number, number];
  const boxes = await chart.$$eval('text', (els) => els.map((e) => {
    const b = (e as unknown as { getBBox(): { x: number; y: number; width: number; height: number } }).getBBox();
    return { x: b.x, y: b.y, width: b.width, height: b.height, cls: e.getAttribute('class') ?? '', text: e.textContent ?? '' };
  }));
  const outside = boxes.filter((b) => b.x < 0 || b.y < 0 || b.x + b.width > w + 0.5 || b.y + b.height > h + 0.5).map((b) => b.text);
  assert.deepEqual(outside, [], 'no text runs past the chart\'s edges');
  const labels = boxes.filter((b) => b.cls === 'pointlabel');
  assert.ok(labels.length >= 3, `the points are labelled (${labels.length})`);
  const crossing = labels.flatMap((a, i) => labels.slice(i + 1).filter((b) => meets(a, b)).map((b) => `${a.text} × ${b.text}`));
  assert.deepEqual(crossing, [], 'no point label covers another');
  const yTitle = boxes.find((b) => b.text === 'helpful' && b.cls === 'axis-title')!;
  assert.deepEqual(boxes.filter((b) => b !== yTitle && meets(b, yTitle)).map((b) => b.text), [], 'the y axis title is clear of the tick labels');
  assert.deepEqual(errors, []);
});

/** The page's getComputedStyle, as called in the page (this file is type-checked without the DOM's types). */
type Styled = { getComputedStyle(e: unknown): { backgroundColor: string; fill: string } };

test('usage by model: the series past the top eight ("32 more") has a colour of its own, in the legend and the charts', { skip }, async () => {
  await open('usage?range=30d&group=model');
  const legend = await page.$$eval('ul.legend[aria-label=Series] li', (lis) => lis.map((li) => [li.textContent ?? '', (globalThis as unknown as Styled).getComputedStyle(li.querySelector('.swatch')).backgroundColor]));
  assert.equal(legend.length, 9, 'the top eight models and the rest');
  assert.match(legend[8]![0]!, /^\d+ more$/);
  assert.equal(new Set(legend.map(([, c]) => c)).size, 9, `nine colours: ${JSON.stringify(legend)}`);
  const areas = await page.$$eval('section[aria-label="Cost (USD)"] svg.chart polygon.area', (ps) => ps.map((p) => (globalThis as unknown as Styled).getComputedStyle(p).fill));
  assert.equal(areas.length, 9);
  assert.equal(new Set(areas).size, 9, 'nine area colours in the cost chart');
  assert.deepEqual(areas, legend.map(([, c]) => c), 'each area has its legend entry\'s colour');
  assert.deepEqual(errors, []);
});

/** How many lines each cell's text takes (its text's boxes, by their tops). */
const linesOf = (selector: string): Promise<number[]> => page.$$eval(selector, (tds) => tds.map((td) => {
  const range = (globalThis as unknown as { document: { createRange(): { selectNodeContents(n: unknown): void; getClientRects(): Array<{ top: number }> } } }).document.createRange();
  range.selectNodeContents(td);
  return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
}));

test('table cells keep ordinary words whole: a role, a route and a model id are not broken mid-word', { skip }, async () => {
  await open('users');
  const roles = await linesOf('main table tbody td:nth-child(2)');
  assert.ok(roles.length >= 2);
  assert.deepEqual(roles, roles.map(() => 1), '"member" and "admin" on one line each (it was "membe|r")');
  await open('requests?range=30d&route=/v1/chat/completions&key=key01');
  const routes = await linesOf('table.requests tbody tr[data-id] td:nth-child(4)');
  assert.ok(routes.length >= 5);
  assert.deepEqual(routes, routes.map(() => 1), '/v1/chat/completions on one line');
  // A model id may wrap where a line may break (after its '/' or '-') when the column is narrow, never inside a word.
  const modelLines = await page.$$eval('table.requests tbody tr[data-id] td:nth-child(3)', (tds) => tds.map((td) => {
    const text = td.firstChild!;
    const range = (globalThis as unknown as { document: { createRange(): { setStart(n: unknown, i: number): void; setEnd(n: unknown, i: number): void; getBoundingClientRect(): { top: number } } } }).document.createRange();
    const lines: string[] = [];
    let top = NaN;
    for (let i = 0; i < (text.textContent ?? '').length; i++) {
      range.setStart(text, i); range.setEnd(text, i + 1);
      const t = Math.round(range.getBoundingClientRect().top);
      if (t !== top) { lines.push(''); top = t; }
      lines[lines.length - 1] += text.textContent![i];
    }
    return lines;
  }));
  const inWord = modelLines.filter((lines) => /^[a-z]+\/model-\d\d$/.test(lines.join('')) && lines.slice(0, -1).some((l) => !/[-/]$/.test(l)));
  assert.ok(modelLines.length >= 5);
  assert.deepEqual(inWord, [], 'a requested model id is not broken inside a word');
  assert.deepEqual(errors, []);
});

test('on a phone (390 px) the charts\' text is readable: drawn near its size, within the chart, x labels apart', { skip }, async () => {
  const [rec] = await gw.services.store!.listInferences({ limit: 1 });
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    for (const path of ['usage?range=30d', 'router?range=30d', 'models?range=30d&metric=helpful', `requests/${rec!.id}`]) {
      await open(path);
      await page.waitForSelector('svg.chart');
      const charts = await page.$$eval('svg.chart', (svgs) => svgs.map((svg) => {
        const [, , w, h] = (svg.getAttribute('viewBox') ?? '').split(' ').map(Number) as [number, number, number, number];
        const boxes = [...svg.querySelectorAll('text')].map((t) => {
          const b = (t as unknown as { getBBox(): { x: number; y: number; width: number; height: number } }).getBBox();
          return { x: b.x, y: b.y, width: b.width, height: b.height, cls: t.getAttribute('class') ?? '', text: t.textContent ?? '' };
        });
        return { title: svg.getAttribute('aria-label') ?? '', scale: svg.getBoundingClientRect().width / w, w, h, boxes };
      }));
      assert.ok(charts.length > 0, path);
      for (const c of charts) {
        assert.ok(c.scale * 11 >= 9.5, `${path}, ${c.title}: 11-unit text drawn at ${(c.scale * 11).toFixed(1)}px`);
        const outside = c.boxes.filter((b) => b.x < -0.5 || b.x + b.width > c.w + 0.5).map((b) => b.text);
        assert.deepEqual(outside, [], `${path}, ${c.title}: text past the chart's sides`);
        const xl = c.boxes.filter((b) => b.cls === 'xlabel');
        const crossing = xl.flatMap((a, i) => xl.slice(i + 1).filter((b) => meets(a, b)).map((b) => `${a.text} × ${b.text}`));
        assert.deepEqual(crossing, [], `${path}, ${c.title}: x labels over one another`);
      }
    }
  } finally {
    await page.setViewportSize({ width: 1360, height: 900 });
  }
  assert.deepEqual(errors, []);
});

test('a filter changed from the keyboard keeps the focus: the range picked with the arrow keys, step by step', { skip }, async () => {
  for (const [path, first, second] of [['usage?range=7d', 'range=30d', 'range=90d'], ['requests?range=7d', 'range=30d', 'range=90d'], ['router?range=7d', 'range=30d', 'range=90d']] as const) {
    await open(path);
    await page.focus('main select[name=range]');
    await page.keyboard.press('ArrowDown');
    await page.waitForURL(new RegExp(first));
    await page.waitForSelector('main[data-ready="true"]');
    assert.equal(await page.evaluate('document.activeElement?.getAttribute("name")'), 'range', `${path}: the range control keeps the focus`);
    await page.keyboard.press('ArrowDown');
    await page.waitForURL(new RegExp(second));
    await page.waitForSelector('main[data-ready="true"]');
    assert.equal(await page.inputValue('main select[name=range]'), second.split('=')[1]);
  }
  // Going to another page leaves the focus where navigation puts it.
  await page.click('nav a[href="/dashboard/keys"]');
  await page.waitForSelector('main[data-ready="true"]');
  assert.notEqual(await page.evaluate('document.activeElement?.getAttribute("name")'), 'range');
  assert.deepEqual(errors, []);
});

test('the Account page\'s password form names its account: no console message from chromium about it', { skip }, async () => {
  const messages: string[] = [];
  const onConsole = (m: { type(): string; text(): string }): void => { messages.push(`${m.type()}: ${m.text()}`); };
  page.on('console', onConsole);
  try {
    await open('account');
    await page.waitForSelector('form[aria-label="Change password"]');
    await page.waitForTimeout(300);
  } finally {
    page.off('console', onConsole);
  }
  assert.deepEqual(messages, [], 'no console message');
  assert.equal(await page.$eval('form[aria-label="Change password"] input[autocomplete=username]', (i) => (i as unknown as { value: string }).value), 'admin@example.com');
  assert.deepEqual(errors, []);
});

test('on a phone (390 px) the router\'s forms keep their fields within their panels', { skip }, async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await open('router?range=30d');
    await page.waitForSelector('section[aria-label="Try the router"] form .field');
    const past = await page.$$eval('section.panel form.grid-form .field', (fields) => fields.flatMap((f) => {
      const panel = f.closest('section.panel')!.getBoundingClientRect();
      const r = f.getBoundingClientRect();
      return r.right > panel.right || r.left < panel.left ? [`${f.querySelector('label')?.textContent}: ${Math.round(r.left)}–${Math.round(r.right)} in ${Math.round(panel.left)}–${Math.round(panel.right)}`] : [];
    }));
    assert.deepEqual(past, [], 'every field within its panel');
  } finally {
    await page.setViewportSize({ width: 1360, height: 900 });
  }
  assert.deepEqual(errors, []);
});
