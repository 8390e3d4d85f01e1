// Admin login and logout pages: a correct e-mail and password start a session (its cookie); logout ends it.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { LOGIN_FAILED, LOGIN_THROTTLED } from '../../errors.ts';
import { flash, sendPage, type ViewDeps, type FlashDeps } from '../render.ts';
import { ADMIN_COOKIE, type WebDeps } from '../web-deps.ts';
import { identifyAdmin, setAdminCookie, type AdminIdentityDeps } from './admin-session.ts';

const LoginSchema = z.object({ email: z.string().max(200).default(''), password: z.string().max(1000).default(''), next: z.string().max(600).optional() });

/** Only a local admin path is followed after login (never another origin). */
export function safeNext(next: string | undefined, fallback: string): string {
  return next && /^\/(admin|client)(\/|$|\?)/.test(next) && !next.startsWith('//') ? next : fallback;
}

/** `GET/POST /admin/login`, `POST /admin/logout` (registered outside the admin guard). */
/** What the admin login, logout and password reset reach: admin users, sessions, the login throttle, cookies and the plain pages. */
export type AdminAuthRoutesDeps = ViewDeps & FlashDeps & AdminIdentityDeps & Pick<WebDeps, 'loginThrottle'>;

export function adminAuthRoutes(deps: AdminAuthRoutesDeps, app: FastifyInstance): void {
  app.get<{ Querystring: { next?: string } }>('/login', async (request, reply) => {
    await identifyAdmin(deps, request);
    if (request.admin && !request.viaToken) return reply.redirect(safeNext(request.query.next, '/admin'), 303);
    return sendPage(deps, reply, 'admin/login', 'plain', { title: 'Admin login', csrf: reply.generateCsrf(), next: request.query.next ?? '' });
  });

  app.post('/login', async (request, reply) => {
    const form = LoginSchema.parse(request.body ?? {});
    const refuse = (status: number, error: string) => sendPage(deps, reply.code(status), 'admin/login', 'plain', {
      title: 'Admin login', csrf: reply.generateCsrf(), next: form.next ?? '', email: form.email, error,
    });
    if (await deps.loginThrottle.isLocked('admin', form.email, request.ip)) {
      request.log.warn({ security: true, event: 'admin_login_throttled' }, 'admin login throttled');
      return refuse(429, LOGIN_THROTTLED);
    }
    const admin = await deps.admins.authenticate(form.email, form.password);
    if (!admin) {
      await deps.loginThrottle.failed('admin', form.email, request.ip);
      request.log.warn({ security: true, event: 'admin_login_failed' }, 'admin login refused');
      return refuse(401, LOGIN_FAILED);
    }
    await deps.loginThrottle.succeeded('admin', form.email);
    await deps.sessions.end(request.cookies[ADMIN_COOKIE]);
    setAdminCookie(deps, reply, await deps.sessions.start('admin', String(admin.id)));
    return reply.redirect(safeNext(form.next, '/admin'), 303);
  });

  app.post('/logout', async (request, reply) => {
    await deps.sessions.end(request.cookies[ADMIN_COOKIE]);
    void reply.clearCookie(ADMIN_COOKIE, { path: '/admin' });
    flash(deps, reply, 'You are logged out.');
    return reply.redirect('/admin/login', 303);
  });
}
