// Customer authentication of the client area: the session cookie (path /client) of a live session sets `request.customer`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, SESSION_REQUIRED } from '../../errors.ts';
import { digestOf, MAX_ID_LENGTH } from '../../services/sessions.ts';
import { wantsHtml } from '../render.ts';
import { CUSTOMER_COOKIE, type WebDeps } from '../web-deps.ts';

/** What resolving the request's customer needs: the joined session read, the clock, sessions and the accounts. */
export type CustomerIdentityDeps = Pick<WebDeps, 'clientReads' | 'clock' | 'sessions' | 'customers'>;

/** Sets the customer session cookie (path /client, HttpOnly, SameSite=Strict). */
export function setCustomerCookie(deps: Pick<WebDeps, 'secureCookies'>, reply: FastifyReply, value: string): void {
  void reply.setCookie(CUSTOMER_COOKIE, value, { path: '/client', httpOnly: true, sameSite: 'strict', secure: deps.secureCookies });
}

/** The store's change mark taken when each request's customer was identified (before any read of the request). */
const marks = new WeakMap<FastifyRequest, string | undefined>();

/**
 * The store's change mark taken before `request`'s first read (`QueryStore.changeMark`), or a new one when its customer
 * was not identified through `identifyCustomer`: a mark taken earlier than a read is as good as one taken right
 * before it (a write in between moves the current mark past both), and taking it once saves a statement.
 */
export function requestMark(deps: Pick<WebDeps, 'clientReads'>, request: FastifyRequest): string | undefined {
  return marks.has(request) ? marks.get(request) : deps.clientReads.changeMark();
}

/**
 * Resolves the request's customer from the cookie of a live session. The session and its customer are one read; a
 * session that is live and was used within the touch interval needs nothing more. Any other (ended by age or idleness,
 * or due its last-use write) goes through the session store's own read, which deletes or touches it.
 */
export async function identifyCustomer(deps: CustomerIdentityDeps, request: FastifyRequest): Promise<void> {
  const id = request.cookies[CUSTOMER_COOKIE];
  if (!id || id.length > MAX_ID_LENGTH) return;
  const mark = deps.clientReads.changeMark();
  marks.set(request, mark);
  const row = await deps.clientReads.sessionWithCustomer(digestOf(id), mark);
  if (!row || row.kind !== 'customer') return;
  const now = deps.clock.now().getTime();
  const { idleMs, touchMs } = deps.sessions.policy;
  if (now < row.expires_at && now - row.seen_at < Math.min(idleMs, touchMs)) {
    request.customer = row.customer;
    return;
  }
  const subject = await deps.sessions.read(id, 'customer');
  if (subject) request.customer = await deps.customers.session(subject);
}

/** onRequest hook of the client-area pages: no customer → the login page (pages) or 401 JSON. */
export function requireCustomer(deps: CustomerIdentityDeps, app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    await identifyCustomer(deps, request);
    if (request.customer) return;
    if (request.method === 'GET' && wantsHtml(request)) return reply.redirect(`/client/login?next=${encodeURIComponent(request.url.slice(0, 500))}`, 303);
    throw new HttpError(401, SESSION_REQUIRED);
  });
}
