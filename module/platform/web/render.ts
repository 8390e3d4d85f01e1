// Page rendering of the web host: a page template inside the admin or client layout, with the CSRF token, the sidebar
// and a one-shot notice; notices travel in a signed short-lived cookie across the redirect after a POST.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Module } from '../../contract/module.ts';
import { buildSidebar, type CurrentPage } from './admin/sidebar.ts';
import { requestLocale } from './locale-time.ts';
import type { PageLayout } from './page-views.ts';
import type { WebDeps } from './web-deps.ts';

/** What `sendPage` needs: the compiled page templates. */
export type ViewDeps = Pick<WebDeps, 'views'>;
/** What `flash` needs to set the signed notice cookie. */
export type FlashDeps = Pick<WebDeps, 'signer' | 'secureCookies'>;
/** What `clientPage` needs: the templates and the signer that reads the notice cookie. */
export type ClientPageDeps = Pick<WebDeps, 'views' | 'signer'>;
/** What `adminPage` needs: `ClientPageDeps` plus the loaded modules for the sidebar. */
export type AdminPageDeps = Pick<WebDeps, 'views' | 'signer' | 'modules'>;

const FLASH_COOKIE = 'vh_flash';
/** The CSRF secret's cookie (set by @fastify/csrf-protection, signed). */
export const CSRF_COOKIE = 'vh_csrf';
const tokens = new WeakMap<FastifyReply, string>();

/**
 * Tokens already made per signed CSRF cookie value, reused for the pages of the same browser: a token is valid for its
 * secret for as long as the secret lives (in the browser's cookie), so reusing it is as safe as the first page's, and
 * saves the cookie's HMAC check and a salted hash per page. Only a cookie whose signature verified gets an entry (a
 * forged cookie gets a fresh secret from the plugin, never a cached token). The salt the library adds guards against
 * compression side channels (BREACH); these pages are sent uncompressed. Bounded: cleared when full.
 */
const tokenOfCookie = new Map<string, string>();
const MAX_CACHED_TOKENS = 10_000;

/** The CSRF token of this answer: made once per request (a second call would mint a second secret on a first visit). */
export function csrfToken(reply: FastifyReply): string {
  let token = tokens.get(reply);
  if (token) return token;
  const cookie = reply.request.cookies[CSRF_COOKIE];
  token = cookie ? tokenOfCookie.get(cookie) : undefined;
  if (!token) {
    const verified = cookie !== undefined && Boolean(reply.unsignCookie(cookie).value);
    token = reply.generateCsrf();
    if (verified) {
      if (tokenOfCookie.size >= MAX_CACHED_TOKENS) tokenOfCookie.clear();
      tokenOfCookie.set(cookie, token);
    }
  }
  tokens.set(reply, token);
  return token;
}

/**
 * The CSRF token already made for the request's signed CSRF cookie (by `csrfToken` on an earlier page of the same
 * browser), or undefined: nothing is minted or verified here (a page cached with its token is only reused for it).
 */
export function knownCsrfToken(request: FastifyRequest): string | undefined {
  const cookie = request.cookies[CSRF_COOKIE];
  return cookie ? tokenOfCookie.get(cookie) : undefined;
}

/** True when the request carries a one-shot notice for its next page (that page shows and clears it). */
export function hasFlash(request: FastifyRequest): boolean {
  return request.cookies[FLASH_COOKIE] !== undefined;
}

/** The loaded modules (for the sidebar), each as a plain instance. */
export function loadedModules(deps: Pick<WebDeps, 'modules'>): Array<{ type: string; name: string; instance: Module }> {
  return deps.modules.mounted().map(({ type, name }) => ({ type, name, instance: deps.modules.instance(type, name) }));
}

/** Sets a notice (or an error notice) shown once on the next page. */
export function flash(deps: FlashDeps, reply: FastifyReply, message: string, kind: 'ok' | 'error' = 'ok'): void {
  void reply.setCookie(FLASH_COOKIE, deps.signer.sign('flash', { m: message.slice(0, 500), k: kind }), {
    path: '/', httpOnly: true, sameSite: 'strict', secure: deps.secureCookies, maxAge: 60,
  });
}

function takeFlash(deps: Pick<WebDeps, 'signer'>, request: FastifyRequest, reply: FastifyReply): { message: string; kind: string } | null {
  const raw = request.cookies[FLASH_COOKIE];
  if (!raw) return null;
  void reply.clearCookie(FLASH_COOKIE, { path: '/' });
  const data = deps.signer.verify<{ m: string; k: string }>('flash', raw);
  return data ? { message: data.m, kind: data.k } : null;
}

/** Renders `admin/<page>.hbs` inside the admin layout with the admin's sidebar; `current` marks the active entry. */
export async function adminPage(
  deps: AdminPageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  page: string,
  data: Record<string, unknown>,
  current: CurrentPage,
  status = 200,
): Promise<FastifyReply> {
  const admin = request.admin;
  const can = (key: string) => admin?.hasPermission(key) ?? false;
  const sidebar = admin ? buildSidebar(loadedModules(deps), can, current) : [];
  return sendPage(deps, reply.code(status), `admin/${page}`, 'admin', {
    ...data,
    csrf: csrfToken(reply),
    flash: takeFlash(deps, request, reply),
    me: admin ? { email: admin.email, name: admin.name, role: admin.role.name } : null,
    locale: requestLocale(request),
    sidebar,
  });
}

/** Renders `client/<page>.hbs` inside the client-area layout. */
export async function clientPage(deps: ClientPageDeps, request: FastifyRequest, reply: FastifyReply, page: string, data: Record<string, unknown>, status = 200): Promise<FastifyReply> {
  return sendHtml(reply.code(status), clientPageHtml(deps, request, reply, page, data));
}

/** The HTML of `client/<page>.hbs` inside the client-area layout (the CSRF token, the notice, the customer, the locale). */
export function clientPageHtml(deps: ClientPageDeps, request: FastifyRequest, reply: FastifyReply, page: string, data: Record<string, unknown>): string {
  return deps.views.render(`client/${page}`, 'client', {
    ...data,
    csrf: csrfToken(reply),
    flash: takeFlash(deps, request, reply),
    me: request.customer,
    locale: requestLocale(request),
  });
}

/** Sends `html` as the page's answer (the status set by the caller). */
export function sendHtml(reply: FastifyReply, html: string): FastifyReply {
  return reply.type('text/html; charset=utf-8').send(html);
}

/** Sends `page` (e.g. `client/login`) rendered inside `layout` as the HTML answer (the status set by the caller). */
export function sendPage(deps: ViewDeps, reply: FastifyReply, page: string, layout: PageLayout, data: Record<string, unknown>): FastifyReply {
  return sendHtml(reply, deps.views.render(page, layout, data));
}

/** True when the client wants a page (a browser), false for JSON clients. */
export function wantsHtml(request: FastifyRequest): boolean {
  return String(request.headers.accept ?? '').includes('text/html');
}
