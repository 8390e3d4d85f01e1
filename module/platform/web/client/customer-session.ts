// Customer authentication of the client area: the signed session cookie (path /client) sets `request.customer`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, SESSION_REQUIRED } from '../../errors.ts';
import { wantsHtml } from '../render.ts';
import { CUSTOMER_COOKIE, type WebDeps } from '../web-deps.ts';

export function setCustomerCookie(deps: WebDeps, reply: FastifyReply, value: string): void {
  void reply.setCookie(CUSTOMER_COOKIE, value, { path: '/client', httpOnly: true, sameSite: 'strict', secure: deps.secureCookies });
}

/** Resolves the request's customer from a valid, current session cookie (rotated when due). */
export function identifyCustomer(deps: WebDeps, request: FastifyRequest, reply: FastifyReply): void {
  const session = deps.codec.read(request.cookies[CUSTOMER_COOKIE], 'customer');
  if (!session) return;
  const customer = deps.customers.session(session.claims.s, session.claims.v);
  if (!customer) return;
  request.customer = customer;
  if (session.renewed) setCustomerCookie(deps, reply, session.renewed);
}

/** onRequest hook of the client-area pages: no customer → the login page (pages) or 401 JSON. */
export function requireCustomer(deps: WebDeps, app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    identifyCustomer(deps, request, reply);
    if (request.customer) return;
    if (request.method === 'GET' && wantsHtml(request)) return reply.redirect(`/client/login?next=${encodeURIComponent(request.url.slice(0, 500))}`, 303);
    throw new HttpError(401, SESSION_REQUIRED);
  });
}
