// The dashboard's own text relies on no emoji or pictograph (Debian's headless chromium has no emoji font
// and draws them as empty boxes), and every other character outside ASCII that its source writes (·, –,
// …, ←, →, ×, −, ∞) is drawn with a real glyph in chromium's fonts here, not the box of a missing one.
// Names people give keys and models may hold emoji: those are data, shown as the viewer's fonts allow.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { chromiumPresent, launchBrowser } from './helpers/browser.ts';

const UI = join(import.meta.dirname, '../src/dashboard/ui');
const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|css|svg)$/.test(e.name) ? [join(dir, e.name)] : []));
const source = files(UI).concat(join(import.meta.dirname, '../src/http/dashboard-static.ts')).map((f) => [f, readFileSync(f, 'utf8')] as const);
/** Emoji and pictographs: miscellaneous technical, symbols and dingbats, arrows and shapes of the emoji sets, the emoji planes, the emoji presentation selector. */
const PICTOGRAPH = /[\u{2300}-\u{23FF}\u{2600}-\u{27BF}\u{2B00}-\u{2BFF}\u{1F000}-\u{1FAFF}\u{FE0F}]/u;

test('the dashboard\'s source writes no emoji or pictograph', () => {
  const found = source.flatMap(([f, text]) => text.split('\n').flatMap((line, i) => (PICTOGRAPH.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])));
  assert.deepEqual(found, []);
});

let gw: TestGateway; let browser: Awaited<ReturnType<typeof launchBrowser>>; let page: Page;
const skip = !chromiumPresent && 'no /usr/bin/chromium';
before(async () => {
  if (!chromiumPresent) return;
  gw = await startTestGateway({ providers: [] });
  browser = await launchBrowser();
  page = browser.context.pages()[0] ?? await browser.context.newPage();
});
after(async () => {
  await browser?.close();
  await gw?.stop();
});

test('every character outside ASCII the dashboard writes has a glyph in chromium here (not a missing glyph\'s box)', { skip }, async () => {
  const chars = [...new Set(source.flatMap(([, text]) => [...text].filter((c) => c.codePointAt(0)! > 0x7e)))];
  assert.ok(chars.length >= 5, chars.join(' '));
  await page.goto(`${gw.url}/dashboard`);
  await page.waitForSelector('form.login-form');
  // Each character drawn in the page's own font on a canvas, against what a private-use character (no
  // font has a glyph for it) draws: the same pixels mean a missing glyph.
  const boxes = await page.evaluate(`((chars) => {
    const font = getComputedStyle(document.body).font;
    const draw = (c) => { const cv = document.createElement('canvas'); cv.width = 40; cv.height = 40; const x = cv.getContext('2d'); x.font = font; x.fillText(c, 4, 28); return Array.from(x.getImageData(0, 0, 40, 40).data).join(','); };
    const missing = draw('\\u{E000}');
    if (draw('A') === missing || draw('\\u{E001}') !== missing) return ['the check itself does not tell glyphs from boxes'];
    return chars.filter((c) => draw(c) === missing).map((c) => 'U+' + c.codePointAt(0).toString(16).toUpperCase() + ' ' + c);
  })(${JSON.stringify(chars)})`) as string[];
  assert.deepEqual(boxes, [], `drawn as a missing glyph: ${boxes.join(', ')}`);
});
