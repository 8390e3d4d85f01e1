// Client-area login, logout and password reset (a signed, single-use, one-hour token; the request always answers the
// same, whether the address is known or not, and the link goes out through the `customer.password_reset` hook).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { LOGIN_FAILED, LOGIN_THROTTLED } from '../../errors.ts';
import { safeNext } from '../admin/auth-routes.ts';
import { flash, sendPage, type ViewDeps, type FlashDeps } from '../render.ts';
import { CUSTOMER_COOKIE, type WebDeps } from '../web-deps.ts';
import { identifyCustomer, setCustomerCookie, type CustomerIdentityDeps } from './customer-session.ts';

const LoginForm = z.object({ email: z.string().max(200).default(''), password: z.string().max(1000).default(''), next: z.string().max(600).optional() });
const RESET_REQUESTED = 'If the address belongs to an account, a link to set a new password is on its way.';
const RESET_INVALID = 'This link is invalid, expired or already used. Ask for a new one.';

function plain(deps: ClientAuthRoutesDeps, reply: import('fastify').FastifyReply, page: string, data: Record<string, unknown>, status = 200) {
  return sendPage(deps, reply.code(status), `client/${page}`, 'plain', { ...data, csrf: reply.generateCsrf() });
}

/** What the client login, sign-up and password reset reach: customer accounts, sessions, the login throttle and hooks. */
export type ClientAuthRoutesDeps = ViewDeps & FlashDeps & CustomerIdentityDeps & Pick<WebDeps, 'hooks' | 'loginThrottle'>;

export function clientAuthRoutes(deps: ClientAuthRoutesDeps, app: FastifyInstance): void {
  app.get<{ Querystring: { next?: string } }>('/login', async (request, reply) => {
    await identifyCustomer(deps, request);
    if (request.customer) return reply.redirect(safeNext(request.query.next, '/client'), 303);
    return plain(deps, reply, 'login', { title: 'Log in', next: request.query.next ?? '' });
  });

  app.post('/login', async (request, reply) => {
    const form = LoginForm.parse(request.body ?? {});
    if (await deps.loginThrottle.isLocked('customer', form.email, request.ip)) {
      request.log.warn({ security: true, event: 'customer_login_throttled' }, 'customer login throttled');
      return plain(deps, reply, 'login', { title: 'Log in', next: form.next ?? '', email: form.email, error: LOGIN_THROTTLED }, 429);
    }
    const found = await deps.customers.authenticate(form.email, form.password);
    if (!found) {
      await deps.loginThrottle.failed('customer', form.email, request.ip);
      request.log.warn({ security: true, event: 'customer_login_failed' }, 'customer login refused');
      return plain(deps, reply, 'login', { title: 'Log in', next: form.next ?? '', email: form.email, error: LOGIN_FAILED }, 401);
    }
    await deps.loginThrottle.succeeded('customer', form.email);
    await deps.sessions.end(request.cookies[CUSTOMER_COOKIE]);
    setCustomerCookie(deps, reply, await deps.sessions.start('customer', found.uuid));
    return reply.redirect(safeNext(form.next, '/client'), 303);
  });

  app.post('/logout', async (request, reply) => {
    await deps.sessions.end(request.cookies[CUSTOMER_COOKIE]);
    void reply.clearCookie(CUSTOMER_COOKIE, { path: '/client' });
    return reply.redirect('/client/login', 303);
  });

  app.get('/password/forgot', async (_request, reply) => plain(deps, reply, 'forgot', { title: 'Forgot password' }));

  app.post('/password/forgot', async (request, reply) => {
    const email = String((request.body as Record<string, unknown> | undefined)?.email ?? '').slice(0, 200);
    const made = await deps.customers.resetToken(email);
    if (made) {
      await deps.hooks.emit('customer.password_reset', {
        customer_uuid: made.customer.uuid, service_uuid: null, product_uuid: null, module: null, email: made.customer.email, reset_path: `/client/password/reset?token=${encodeURIComponent(made.token)}`,
        expires_at: made.expires_at, at: deps.clock.now().toISOString(),
      });
    }
    return plain(deps, reply, 'forgot', { title: 'Forgot password', done: RESET_REQUESTED });
  });

  app.get<{ Querystring: { token?: string } }>('/password/reset', async (request, reply) => {
    const token = request.query.token ?? '';
    if (!(await deps.customers.checkResetToken(token))) return plain(deps, reply, 'reset', { title: 'Set a new password', invalid: RESET_INVALID }, 400);
    return plain(deps, reply, 'reset', { title: 'Set a new password', token });
  });

  app.post('/password/reset', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const token = String(body.token ?? '');
    const password = String(body.password ?? '');
    if (!(await deps.customers.checkResetToken(token))) return plain(deps, reply, 'reset', { title: 'Set a new password', invalid: RESET_INVALID }, 400);
    if (password.length < 8) return plain(deps, reply, 'reset', { title: 'Set a new password', token, error: 'The password needs at least 8 characters.' }, 422);
    await deps.customers.resetPassword(token, password);
    flash(deps, reply, 'Your password is set. Log in with it.');
    return reply.redirect('/client/login', 303);
  });
}
