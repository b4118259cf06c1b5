/**
 * Debian's Chromium, headless, for what a person looks at (scripts/prepare-test-env.sh installs it):
 * one browser per test process, driven by playwright-core over the DevTools protocol. Playwright
 * gives each launch a fresh profile in the temp folder and removes it at close; the page loads
 * nothing from the network (every request is refused), only the content a test sets.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.GRACEGATE_CHROMIUM ?? '/usr/bin/chromium';

/** The flags Chromium needs on these machines (root, no GPU, no network but loopback). */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export type Chromium = { browser: Browser; page: Page; version: string; close(): Promise<void> };

/** One headless Chromium and one page in it; `close()` ends the browser (and removes its profile). */
export async function startChromium(viewport = { width: 1280, height: 800 }, deviceScaleFactor = 1): Promise<Chromium> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} missing: run bash scripts/prepare-test-env.sh (Debian's chromium package)`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  try {
    const context = await browser.newContext({ viewport, deviceScaleFactor, offline: true });
    const page = await context.newPage();
    await page.route('**/*', (route) => route.abort());
    return { browser, page, version: browser.version(), close: () => browser.close() };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
