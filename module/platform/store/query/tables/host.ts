// Row types of the tables of the web and module host (sessions, admin users, roles, web secrets, login throttle, module
// logs), as both engines store them.
import type { Generated } from 'kysely';

/** One web session (scope `sessions`): the SHA-256 digest of the cookie value, never the value; times in epoch ms. */
export interface WebSessionsTable {
  digest: string;
  kind: 'admin' | 'customer';
  /** The admin's id (as text) or the customer's uuid. */
  subject: string;
  created_at: number;
  seen_at: number;
  expires_at: number;
}

/** Named sets of permission keys; `permissions` is a JSON array of keys (`*` = every key). */
export interface AdminRolesTable {
  id: Generated<number>;
  /** Case-insensitive on both engines. */
  name: string;
  permissions: Generated<string>;
  created_at: string;
  updated_at: string;
}

export interface AdminUsersTable {
  id: Generated<number>;
  /** Case-insensitive on both engines. */
  email: string;
  name: Generated<string>;
  password_hash: string;
  role_id: number;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
}

/** Keys of the web host (cookie and session signing), sealed with the platform's SecretBox. */
export interface WebSecretsTable {
  name: string;
  value_sealed: string;
  created_at: string;
}

/** One failed login of a throttle key (`<scope>|email|<address>` or `<scope>|ip|<address>`), epoch ms. */
export interface LoginFailuresTable {
  id: Generated<number>;
  key: string;
  at: number;
}

/** A locked throttle key and until when (epoch ms). */
export interface LoginLocksTable {
  key: string;
  locked_until: number;
}

/** One module log entry; request, response and context are JSON text, scrubbed before storage. */
export interface ModuleLogsTable {
  id: Generated<number>;
  module_type: string;
  module_name: string;
  action: string;
  level: 'info' | 'error' | 'debug';
  request: string;
  response: string;
  context: string;
  created_at: string;
}

/** The tables of the web and module host by name (added as their repositories move to the query layer). */
export interface HostTables {
  web_sessions: WebSessionsTable;
  admin_roles: AdminRolesTable;
  admin_users: AdminUsersTable;
  web_secrets: WebSecretsTable;
  login_failures: LoginFailuresTable;
  login_locks: LoginLocksTable;
  module_logs: ModuleLogsTable;
}
