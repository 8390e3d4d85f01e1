// The platform's web host: cookies, form bodies, handlebars views (views/platform), local assets, CSRF on every
// unsafe request of a browser session, security headers, the favicon, the admin pages under /admin and the client area
// under /client. Registered by buildPlatformApp.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_VIEWS_DIR } from '../../contract/view.ts';
import { CSRF_REFUSED, errorHandler, HttpError, UNAUTHORIZED } from '../errors.ts';
import { authorizationHeaderCount, refuseAccess, REPEATED_AUTHORIZATION } from '../routes/auth.ts';
import type { PlatformRegistry } from '../features/registry.ts';
import { AdminUsers } from '../services/admin-users.ts';
import { RoleRepository } from '../services/roles.ts';
import { adminAuthRoutes } from './admin/auth-routes.ts';
import { adminPages } from './admin/pages.ts';
import { requireAdmin } from './admin/admin-session.ts';
import { moduleAdminRoutes } from './admin/module-routes.ts';
import { uplotDir } from './admin/revenue-page.ts';
import { clientRoutes } from './client/client-routes.ts';
import { CustomerAccounts } from './client/customer-accounts.ts';
import { PageViews } from './page-views.ts';
import { addSecurityHeaders } from './security-headers.ts';
import { DEFAULT_SESSION_POLICY, SessionStore, type SessionPolicy } from '../services/sessions.ts';
import { ClientPageQueries } from '../store/query/repositories/client-page.ts';
import { TokenSigner } from './signed-tokens.ts';
import { DEFAULT_LOGIN_THROTTLE, LoginThrottle, type LoginThrottlePolicy } from './login-throttle.ts';
import { CSRF_COOKIE, sendPage, wantsHtml, type ViewDeps } from './render.ts';
import { webSecret } from './web-secrets.ts';
import { WEB_SERVICE_KEYS, type WebDeps, type WebServices } from './web-deps.ts';

const ASSETS_DIR = fileURLToPath(new URL('./assets', import.meta.url));

export interface WebHostOptions {
  /** Session idle / absolute limits and how often last use is written (defaults: 30 min, 12 h, 1 min). */
  sessionPolicy?: Partial<SessionPolicy>;
  /** Cookies with the Secure flag and HSTS (set when served over TLS). */
  secureCookies?: boolean;
  /** The `views/` root (default: the repository's). */
  viewsDir?: string;
  /** Failed-login throttle (default: 5 failures per address or IP in 15 min lock it for 15 min). */
  loginThrottle?: Partial<LoginThrottlePolicy>;
}

/** What the web host is built from: the services its pages call, the store and the box (its secrets, its records). */
export type WebSources = WebServices & Pick<PlatformRegistry, 'store' | 'box'>;

/**
 * Builds the web host's services over the platform's query layer (admin users, roles, customers, sessions, the login
 * throttle, the token signer under the shared `session` key): nothing of it is held per process.
 */
export async function createWebDeps(platform: WebSources, opts: WebHostOptions = {}): Promise<WebDeps> {
  const { store, clock } = platform;
  const signer = new TokenSigner(await webSecret(store, platform.box, clock, 'session'));
  const services = Object.fromEntries(WEB_SERVICE_KEYS.map((key) => [key, platform[key]])) as WebServices;
  const sessions = new SessionStore(store, clock, { ...DEFAULT_SESSION_POLICY, ...opts.sessionPolicy });
  const roles = new RoleRepository(store, clock);
  return {
    ...services, signer, sessions, roles,
    admins: new AdminUsers(store, roles, sessions, clock),
    customers: new CustomerAccounts(store, signer, sessions, clock),
    clientReads: new ClientPageQueries(store, platform.box),
    secureCookies: opts.secureCookies ?? false,
    views: new PageViews(join(opts.viewsDir ?? DEFAULT_VIEWS_DIR, 'platform')),
    loginThrottle: new LoginThrottle(store, clock, { ...DEFAULT_LOGIN_THROTTLE, ...opts.loginThrottle }),
  };
}

function isCsrfError(error: unknown): boolean {
  return typeof (error as FastifyError).code === 'string' && (error as FastifyError).code.startsWith('FST_CSRF_');
}

/** The web scopes' error answers: an error page for browsers, `{error}` JSON otherwise; CSRF refusals get their text. */
function webErrorHandler(deps: ViewDeps, error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const mapped = isCsrfError(error) ? new HttpError(403, CSRF_REFUSED) : error;
  if (!wantsHtml(request)) return errorHandler(mapped, request, reply);
  const status = mapped instanceof HttpError ? mapped.statusCode : ((mapped as FastifyError).statusCode ?? 500);
  if (status >= 500) request.log.error({ err: error }, 'unexpected error');
  const message = status >= 500 ? 'Something went wrong; the error was logged.' : mapped.message;
  void sendPage(deps, reply.code(status), 'error', 'plain', { status, message, title: `Error ${status}` });
}

/** Registers the web host on `app`; resolves to its services (tests and the demo create users through them). */
export async function registerWebHost(app: FastifyInstance, platform: WebSources, opts: WebHostOptions = {}): Promise<WebDeps> {
  const deps = await createWebDeps(platform, opts);
  const cookieKey = await webSecret(platform.store, platform.box, platform.clock, 'cookie');
  await app.register(async (web) => {
    web.decorateRequest('admin', null);
    web.decorateRequest('viaToken', false);
    web.decorateRequest('customer', null);
    await web.register(fastifyCookie, { secret: cookieKey });
    await web.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
    await web.register(fastifyCsrf, {
      sessionPlugin: '@fastify/cookie',
      cookieKey: CSRF_COOKIE,
      cookieOpts: { path: '/', signed: true, httpOnly: true, sameSite: 'strict', secure: deps.secureCookies },
      getToken: (request) => ((request.body as Record<string, unknown> | undefined)?._csrf as string | undefined) ?? (request.headers['x-csrf-token'] as string | undefined),
    });
    await web.register(fastifyStatic, { root: ASSETS_DIR, prefix: '/assets/', decorateReply: false, maxAge: 3_600_000 });
    // uPlot for the revenue charts, from the installed package (the charts are left out when it is missing).
    const uplot = uplotDir();
    if (uplot) await web.register(fastifyStatic, { root: uplot, prefix: '/assets/vendor/uplot/', decorateReply: false, maxAge: 86_400_000, allowedPath: (path) => /^\/?uPlot\.(iife\.min\.js|min\.css)$/.test(path) });
    // Pages link /assets/favicon.svg; what a browser asks for on its own (a JSON answer, a download) gets it too.
    const favicon = readFileSync(join(ASSETS_DIR, 'favicon.svg'));
    web.get('/favicon.ico', async (_request, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(favicon));
    addSecurityHeaders(web, deps.secureCookies);
    web.setErrorHandler((error: FastifyError | Error, request, reply) => webErrorHandler(deps, error, request, reply));
    // Node keeps the first of repeated Authorization headers: such a request is refused everywhere, as the APIs do.
    // A callback hook: no promise per request.
    web.addHook('onRequest', (request, _reply, done) => {
      if (authorizationHeaderCount(request) <= 1) return done();
      try {
        refuseAccess(request, REPEATED_AUTHORIZATION, UNAUTHORIZED);
      } catch (error) {
        done(error as Error);
      }
    });
    // CSRF: every unsafe request of a browser (cookie) session; bearer-token API clients carry no cookies to forge.
    web.addHook('preHandler', (request, reply, done) => {
      if (request.method === 'GET' || request.method === 'HEAD' || request.viaToken) return done();
      web.csrfProtection(request, reply, done);
    });
    await web.register(async (open) => {
      adminAuthRoutes(deps, open);
    }, { prefix: '/admin' });
    await web.register(async (admin) => {
      requireAdmin(deps, admin);
      adminPages(deps, admin);
      moduleAdminRoutes(deps, admin);
    }, { prefix: '/admin' });
    await web.register(async (client) => clientRoutes(deps, client), { prefix: '/client' });
    web.get('/', async (_request, reply) => reply.redirect('/client', 302));
  });
  return deps;
}
