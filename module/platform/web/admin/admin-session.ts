// Admin authentication of the web host: the cookie of a live session (or an admin bearer token for API clients) sets
// `request.admin`; pages without a session redirect to the login page, JSON clients get 401.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, INSUFFICIENT_PERMISSIONS, SESSION_REQUIRED, UNAUTHORIZED } from '../../errors.ts';
import type { AdminPrincipal } from '../../services/admin-users.ts';
import { ALL_PERMISSIONS } from '../../services/roles.ts';
import { wantsHtml } from '../render.ts';
import { ADMIN_COOKIE, type WebDeps } from '../web-deps.ts';

/** What resolving the request's admin needs: bearer tokens, sessions and the admin users. */
export type AdminIdentityDeps = Pick<WebDeps, 'tokens' | 'sessions' | 'admins'>;

/** The principal of an admin bearer token: API tokens carry every permission. */
function tokenPrincipal(id: number): AdminPrincipal {
  const now = new Date(0).toISOString();
  return {
    id: -id, email: `token #${id}`, name: 'API token', role_id: 0, created_at: now, updated_at: now, last_login_at: null,
    role: { id: 0, name: 'API token', permissions: [ALL_PERMISSIONS], created_at: now, updated_at: now },
    hasPermission: () => true,
  };
}

/** Sets the admin session cookie (path /admin, HttpOnly, SameSite=Strict). */
export function setAdminCookie(deps: Pick<WebDeps, 'secureCookies'>, reply: FastifyReply, value: string): void {
  void reply.setCookie(ADMIN_COOKIE, value, { path: '/admin', httpOnly: true, sameSite: 'strict', secure: deps.secureCookies });
}

/** Resolves the request's admin (session cookie, or bearer token), without refusing anything. */
export async function identifyAdmin(deps: AdminIdentityDeps, request: FastifyRequest): Promise<void> {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const id = match ? await deps.tokens.verify(match[1]) : null;
    if (id !== null) {
      request.admin = tokenPrincipal(id);
      request.viaToken = true;
    }
    return;
  }
  const subject = await deps.sessions.read(request.cookies[ADMIN_COOKIE], 'admin');
  if (subject) request.admin = await deps.admins.principal(Number(subject));
}

/** onRequest hook of the admin pages: no admin → redirect to the login page (pages) or 401 (JSON clients). */
export function requireAdmin(deps: AdminIdentityDeps, app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    await identifyAdmin(deps, request);
    if (request.admin) return;
    if (request.headers.authorization) throw new HttpError(401, UNAUTHORIZED);
    if (request.method === 'GET' && wantsHtml(request)) {
      const next = encodeURIComponent(request.url.slice(0, 500));
      return reply.redirect(`/admin/login?next=${next}`, 303);
    }
    throw new HttpError(401, request.cookies[ADMIN_COOKIE] ? SESSION_REQUIRED : UNAUTHORIZED);
  });
}

/** The spec's `hasPermission(key)`: throws 403 `Insufficient permissions` when the request's admin lacks `key`. */
export function hasPermission(request: FastifyRequest, key: string): void {
  if (!request.admin?.hasPermission(key)) throw new HttpError(403, INSUFFICIENT_PERMISSIONS);
}
