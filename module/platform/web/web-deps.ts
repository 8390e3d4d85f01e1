// What the web host's routes share: the platform services the pages use (never the whole platform), admin users and
// roles, customer accounts, sessions, the token signer.
import type { PlatformRegistry } from '../features/registry.ts';
import type { AdminPrincipal, AdminUsers } from '../services/admin-users.ts';
import type { RoleRepository } from '../services/roles.ts';
import type { CustomerAccounts, CustomerSession } from './client/customer-accounts.ts';
import type { ClientPageQueries } from '../store/query/repositories/client-page.ts';
import type { SessionStore } from '../services/sessions.ts';
import type { LoginThrottle } from './login-throttle.ts';
import type { PageViews } from './page-views.ts';
import type { TokenSigner } from './signed-tokens.ts';

/** The platform services the pages and the client area call, by name. */
export const WEB_SERVICE_KEYS = [
  'modules', 'moduleAdmin', 'moduleInstances', 'moduleLogs', 'versions', 'catalogue', 'products', 'services', 'serviceAdmin', 'ops', 'queue',
  'billing', 'recurring', 'revenue', 'tokens', 'hooks', 'logger', 'clock',
] as const satisfies readonly (keyof PlatformRegistry)[];

export type WebServices = Pick<PlatformRegistry, (typeof WEB_SERVICE_KEYS)[number]>;

export interface WebDeps extends WebServices {
  admins: AdminUsers;
  roles: RoleRepository;
  customers: CustomerAccounts;
  /** The client area's joined reads (session with customer, the service page), compiled once. */
  clientReads: ClientPageQueries;
  /** Admin and customer sessions (server-side records). */
  sessions: SessionStore;
  /** Signs the notice cookie and password reset links. */
  signer: TokenSigner;
  /** Failed-login counts of the admin and customer logins (in the store: shared by every platform process). */
  loginThrottle: LoginThrottle;
  /** Cookies get the Secure flag (behind TLS). */
  secureCookies: boolean;
  /** The page templates (views/platform), compiled once with their layouts. */
  views: PageViews;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin of the request's session (or the full-access principal of an admin bearer token); null when none. */
    admin: AdminPrincipal | null;
    /** True when an admin bearer token (not a browser session) authenticated the request: no CSRF check applies. */
    viaToken: boolean;
    /** The customer of the request's client-area session; null when none. */
    customer: CustomerSession | null;
  }
}

/** Cookie names: admin and customer sessions are separate and scoped to their paths. */
export const ADMIN_COOKIE = 'vh_admin';
export const CUSTOMER_COOKIE = 'vh_client';
