// Debian's chromium driven by playwright-core for the browser tests: never a downloaded browser, a fresh
// profile per run. Without /usr/bin/chromium the suites skip, except under CI=true where they fail.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent && process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing and CI=true (apt-get install -y chromium)`);

/** `timezoneId` sets the browser's time zone (the pages' day boundaries); the viewport is 1360 x 900 unless given. */
export async function launchBrowser(o: { timezoneId?: string; viewport?: { width: number; height: number } } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'gw-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport: o.viewport ?? { width: 1360, height: 900 }, ...(o.timezoneId ? { timezoneId: o.timezoneId } : {}),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return { context, close: async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); } };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> };

/**
 * axe-core's serious and critical violations on the page as it is now. The source is evaluated through
 * the DevTools protocol, so the page's CSP (no inline script) stays in force for the page's own code.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)") as AxeViolation[];
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Signs in through the dashboard's login form and waits for its navigation (the signed-in shell). */
export async function signInAs(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard`);
  await page.waitForSelector('form.login-form');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', password);
  await page.click('button[type=submit]');
  await page.waitForSelector('nav');
}
