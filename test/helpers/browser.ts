// Browser-tier helper: Debian's Chromium through playwright-core (never a downloaded browser), phone pages, screenshots.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { isRoot, requireTools } from './require-tools.ts';

/** The system Chromium the browser tier drives. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Where screenshots go (git-ignored). */
export const ARTIFACTS_DIR = join(new URL('../..', import.meta.url).pathname, 'test-artifacts');

/** A phone-sized viewport (a common Android phone in CSS pixels) with touch and a mobile user agent. */
export const PHONE = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 2,
  isMobile: true,
  hasTouch: true,
  userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36',
} as const;

/**
 * Launches headless Chromium from {@link CHROMIUM_PATH} (`--no-sandbox` when running as root), or returns null
 * after `requireTools` skipped the test (locally without Chromium; in CI a missing Chromium fails).
 */
export async function launchBrowser(t: TestContext): Promise<Browser | null> {
  if (!requireTools(t, ['chromium'])) return null;
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...(isRoot() ? ['--no-sandbox'] : []), '--disable-gpu', '--disable-dev-shm-usage'],
    timeout: 20_000,
  });
}

/**
 * Closes `browser`, bounded: when Chromium does not answer within `ms` (seen once under heavy load: the test file
 * then never exited, its Chromium holding the event loop open), every `chromium` child of this process is killed.
 */
export async function closeBrowser(browser: Browser | null | undefined, ms = 15_000): Promise<void> {
  if (!browser) return;
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    browser.close().then(() => true, () => false),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  if (closed) return;
  await new Promise<void>((resolve) => execFile('pkill', ['-KILL', '-P', String(process.pid), 'chromium'], () => resolve()));
}

/** A fresh context (own cookies and downloads) and page; `phone` gives it the {@link PHONE} viewport. */
export async function newPage(browser: Browser, opts: { phone?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ acceptDownloads: true, ...(opts.phone ? PHONE : {}) });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { context, page };
}

/** Saves a full-page screenshot as `test-artifacts/<name>.png` and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** One Chromium shared by the tests of a file: launched by the first test that asks, closed in `after`. */
export interface SharedBrowser {
  /** The file's browser, or null after `requireTools` skipped `t` (every test asking is skipped alike). */
  get(t: TestContext): Promise<Browser | null>;
  close(): Promise<void>;
}

export function sharedBrowser(): SharedBrowser {
  let launched: Promise<Browser | null> | null = null;
  return {
    async get(t) {
      if (!requireTools(t, ['chromium'])) return null;
      launched ??= launchBrowser(t);
      return launched;
    },
    async close() {
      await closeBrowser(await launched?.catch(() => null));
    },
  };
}
