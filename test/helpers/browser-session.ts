// Browser-tier stack of the web host: a panel process, the platform listening (workers, panel registered at `ams`),
// an Administrator and a role without keys, and page helpers (log in, wait for a service status).
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { createWebDeps } from '../../module/platform/web/web-host.ts';
import type { WebDeps } from '../../module/platform/web/web-deps.ts';
import { registerPanel, startStack, type Stack } from '../fixtures/platform/setup.ts';

export const ADMIN = { email: 'admin@browser.test', password: 'Admin-Pass-1' };
export const LIMITED = { email: 'limited@browser.test', password: 'Limited-Pass-1' };

export interface WebBrowserStack {
  stack: Stack;
  web: WebDeps;
  url: string;
  close(): Promise<void>;
}

export async function startWebBrowserStack(): Promise<WebBrowserStack> {
  const stack = await startStack({ workers: 2 });
  try {
    await registerPanel(stack, 'ams');
    const web = await createWebDeps(stack.platform.platform);
    await web.admins.create({ ...ADMIN, role: 'Administrator' });
    const none = await web.roles.create('Read nothing', ['Platform-Core-dashboard']);
    await web.admins.create({ ...LIMITED, role: none.id });
    return { stack, web, url: stack.platform.url, close: () => stack.close() };
  } catch (error) {
    await stack.close();
    throw error;
  }
}

/** Logs in through a login form (`/admin/login` or `/client/login`) and waits for the page after it. */
export async function logIn(page: Page, url: string, who: { email: string; password: string }): Promise<void> {
  await page.goto(url);
  await page.fill('input[name=email]', who.email);
  await page.fill('input[name=password]', who.password);
  await Promise.all([page.waitForURL((u) => !u.pathname.endsWith('/login')), page.click('button[type=submit]')]);
}

/** Reloads the service page until its status reads `status` (bounded). */
export async function waitForStatus(page: Page, status: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text = (await page.locator('#provision-status').textContent())?.trim();
    if (text === status) return;
    assert.ok(Date.now() < until, `service stayed ${text}, wanted ${status}`);
    await page.waitForTimeout(250);
    await page.reload();
  }
}

/** No horizontal scrolling at the page's viewport width. */
export async function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);
}
