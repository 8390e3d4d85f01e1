// Admin users: e-mail + scrypt password hash, one role each; login checks; a password change, a role change and the
// deletion of an admin end their sessions (./sessions.ts) in the same transaction.
import { systemClock, type Clock } from '../../../shared/clock.ts';
import { HttpError } from '../errors.ts';
import type { QueryStore } from '../store/query/query-store.ts';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';
import { grants, type Role, type RoleRepository } from './roles.ts';
import type { SessionStore } from './sessions.ts';

export interface AdminUser {
  id: number;
  email: string;
  name: string;
  role_id: number;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
}

/** An admin user with the keys of their role: what a request's permission checks read. */
export interface AdminPrincipal extends AdminUser {
  role: Role;
  hasPermission(key: string): boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const COLUMNS = ['id', 'email', 'name', 'role_id', 'created_at', 'updated_at', 'last_login_at'] as const;

function toAdmin(row: AdminUser): AdminUser {
  return { ...row, id: Number(row.id), role_id: Number(row.role_id) };
}

/** The `admin_users` table over the query layer (asynchronous; any platform process sees every change at once). */
export class AdminUsers {
  constructor(private readonly store: QueryStore, private readonly roles: RoleRepository, private readonly sessions: SessionStore, private readonly clock: Clock = systemClock) {}

  /** Creates an admin; 422 for a bad address, a short password, an unknown role or a taken address. */
  async create(input: { email: string; name?: string; password: string; role: string | number }): Promise<AdminUser> {
    const email = input.email.trim();
    if (!EMAIL.test(email) || email.length > 200) throw new HttpError(422, 'a valid e-mail address is required');
    if (input.password.length < MIN_PASSWORD_LENGTH) throw new HttpError(422, `the password needs at least ${MIN_PASSWORD_LENGTH} characters`);
    const role = typeof input.role === 'number' ? await this.roles.get(input.role) : await this.roles.findByName(input.role);
    if (!role) throw new HttpError(422, `unknown role: ${input.role}`);
    const taken = new HttpError(422, `an admin with the address ${email} exists`);
    if (await this.findByEmail(email)) throw taken;
    const now = this.clock.now().toISOString();
    const hash = await hashPassword(input.password);
    // The unique address decides between two creators (the look above only spares the hashing).
    const row = await this.store.db.insertInto('admin_users')
      .values({ email, name: input.name?.trim() ?? '', password_hash: hash, role_id: role.id, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('email').doNothing())
      .returning('id').executeTakeFirst();
    if (!row) throw taken;
    return (await this.get(Number(row.id)))!;
  }

  async get(id: number): Promise<AdminUser | null> {
    const row = await this.store.db.selectFrom('admin_users').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return row ? toAdmin(row) : null;
  }

  /** The admin of `email` (case-insensitively). */
  async findByEmail(email: string): Promise<AdminUser | null> {
    const row = await this.store.db.selectFrom('admin_users').select(COLUMNS).where('email', '=', email.trim()).executeTakeFirst();
    return row ? toAdmin(row) : null;
  }

  async list(): Promise<AdminUser[]> {
    return (await this.store.db.selectFrom('admin_users').select(COLUMNS).orderBy('id').execute()).map(toAdmin);
  }

  /** The admin when `email` and `password` match (time of a failed check does not tell whether the address exists). */
  async authenticate(email: string, password: string): Promise<AdminUser | null> {
    const row = await this.store.db.selectFrom('admin_users').select(['id', 'password_hash']).where('email', '=', email.trim()).executeTakeFirst();
    const ok = await verifyPassword(password, row?.password_hash);
    if (!ok || !row) return null;
    await this.store.db.updateTable('admin_users').set({ last_login_at: this.clock.now().toISOString() }).where('id', '=', row.id).execute();
    return this.get(Number(row.id));
  }

  /** Moves an admin to another role and ends their sessions (they log in again under the new role). */
  async setRole(id: number, roleId: number): Promise<AdminUser> {
    if (!(await this.roles.get(roleId))) throw new HttpError(422, `unknown role: ${roleId}`);
    await this.store.transaction(async (tx) => {
      const result = await tx.db.updateTable('admin_users').set({ role_id: roleId, updated_at: this.clock.now().toISOString() }).where('id', '=', id).executeTakeFirst();
      if (!Number(result.numUpdatedRows)) throw new HttpError(404, `admin not found: ${id}`);
      await this.sessions.within(tx).endAll('admin', String(id));
    });
    return (await this.get(id))!;
  }

  /** Sets a new password and ends every session of the admin. */
  async setPassword(id: number, password: string): Promise<void> {
    if (password.length < MIN_PASSWORD_LENGTH) throw new HttpError(422, `the password needs at least ${MIN_PASSWORD_LENGTH} characters`);
    const hash = await hashPassword(password);
    await this.store.transaction(async (tx) => {
      const result = await tx.db.updateTable('admin_users').set({ password_hash: hash, updated_at: this.clock.now().toISOString() }).where('id', '=', id).executeTakeFirst();
      if (!Number(result.numUpdatedRows)) throw new HttpError(404, `admin not found: ${id}`);
      await this.sessions.within(tx).endAll('admin', String(id));
    });
  }

  /** Deletes an admin and ends their sessions; 404 when there is none. */
  async delete(id: number): Promise<AdminUser> {
    return this.store.transaction(async (tx) => {
      const admin = await new AdminUsers(tx, this.roles, this.sessions, this.clock).get(id);
      if (!admin) throw new HttpError(404, `admin not found: ${id}`);
      await tx.db.deleteFrom('admin_users').where('id', '=', id).execute();
      await this.sessions.within(tx).endAll('admin', String(id));
      return admin;
    });
  }

  /** The admin with the keys of their role, for permission checks (one query per request); null when the admin is gone. */
  async principal(id: number): Promise<AdminPrincipal | null> {
    const row = await this.store.db.selectFrom('admin_users as u').innerJoin('admin_roles as r', 'r.id', 'u.role_id')
      .select(['u.id', 'u.email', 'u.name', 'u.role_id', 'u.created_at', 'u.updated_at', 'u.last_login_at',
        'r.name as role_name', 'r.permissions as role_permissions', 'r.created_at as role_created_at', 'r.updated_at as role_updated_at'])
      .where('u.id', '=', id).executeTakeFirst();
    if (!row) return null;
    const { role_name, role_permissions, role_created_at, role_updated_at, ...user } = row;
    const role: Role = { id: Number(user.role_id), name: role_name, permissions: JSON.parse(role_permissions) as string[], created_at: role_created_at, updated_at: role_updated_at };
    return { ...toAdmin(user), role, hasPermission: (key: string) => grants(role.permissions, key) };
  }
}
