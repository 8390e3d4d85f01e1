// Admin users: e-mail + scrypt password hash, one role each; login checks; a password change, a role change and the
// deletion of an admin end their sessions (./sessions.ts).
import { systemClock, type Clock } from '../../../panel/shared/clock.ts';
import { HttpError } from '../errors.ts';
import type { Db } from '../store/db.ts';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';
import { grants, type Role, type RoleRepository } from './roles.ts';
import type { SessionStore } from './sessions.ts';
import { statement } from '../store/statement-cache.ts';

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
const COLUMNS = 'id, email, name, role_id, created_at, updated_at, last_login_at';

export class AdminUsers {
  constructor(private readonly db: Db, private readonly roles: RoleRepository, private readonly sessions: SessionStore, private readonly clock: Clock = systemClock) {}

  /** Creates an admin; 422 for a bad address, a short password, an unknown role or a taken address. */
  async create(input: { email: string; name?: string; password: string; role: string | number }): Promise<AdminUser> {
    const email = input.email.trim();
    if (!EMAIL.test(email) || email.length > 200) throw new HttpError(422, 'a valid e-mail address is required');
    if (input.password.length < MIN_PASSWORD_LENGTH) throw new HttpError(422, `the password needs at least ${MIN_PASSWORD_LENGTH} characters`);
    const role = typeof input.role === 'number' ? this.roles.get(input.role) : this.roles.findByName(input.role);
    if (!role) throw new HttpError(422, `unknown role: ${input.role}`);
    if (this.findByEmail(email)) throw new HttpError(422, `an admin with the address ${email} exists`);
    const now = this.clock.now().toISOString();
    const hash = await hashPassword(input.password);
    const id = statement(this.db, 'INSERT INTO admin_users (email, name, password_hash, role_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(email, input.name?.trim() ?? '', hash, role.id, now, now).lastInsertRowid;
    return this.get(Number(id))!;
  }

  get(id: number): AdminUser | null {
    return (statement(this.db, `SELECT ${COLUMNS} FROM admin_users WHERE id = ?`).get(id) as AdminUser | undefined) ?? null;
  }

  findByEmail(email: string): AdminUser | null {
    return (statement(this.db, `SELECT ${COLUMNS} FROM admin_users WHERE email = ?`).get(email.trim()) as AdminUser | undefined) ?? null;
  }

  list(): AdminUser[] {
    return statement(this.db, `SELECT ${COLUMNS} FROM admin_users ORDER BY id`).all() as AdminUser[];
  }

  /** The admin when `email` and `password` match (time of a failed check does not tell whether the address exists). */
  async authenticate(email: string, password: string): Promise<AdminUser | null> {
    const row = statement(this.db, 'SELECT id, password_hash FROM admin_users WHERE email = ?').get(email.trim()) as { id: number; password_hash: string } | undefined;
    const ok = await verifyPassword(password, row?.password_hash);
    if (!ok || !row) return null;
    statement(this.db, 'UPDATE admin_users SET last_login_at = ? WHERE id = ?').run(this.clock.now().toISOString(), row.id);
    return this.get(row.id);
  }

  /** Moves an admin to another role and ends their sessions (they log in again under the new role). */
  setRole(id: number, roleId: number): AdminUser {
    if (!this.roles.get(roleId)) throw new HttpError(422, `unknown role: ${roleId}`);
    this.db.transaction(() => {
      if (!statement(this.db, 'UPDATE admin_users SET role_id = ?, updated_at = ? WHERE id = ?').run(roleId, this.clock.now().toISOString(), id).changes) {
        throw new HttpError(404, `admin not found: ${id}`);
      }
      this.sessions.endAll('admin', String(id));
    })();
    return this.get(id)!;
  }

  /** Sets a new password and ends every session of the admin. */
  async setPassword(id: number, password: string): Promise<void> {
    if (password.length < MIN_PASSWORD_LENGTH) throw new HttpError(422, `the password needs at least ${MIN_PASSWORD_LENGTH} characters`);
    const hash = await hashPassword(password);
    this.db.transaction(() => {
      if (!statement(this.db, 'UPDATE admin_users SET password_hash = ?, updated_at = ? WHERE id = ?').run(hash, this.clock.now().toISOString(), id).changes) {
        throw new HttpError(404, `admin not found: ${id}`);
      }
      this.sessions.endAll('admin', String(id));
    })();
  }

  /** Deletes an admin and ends their sessions; 404 when there is none. */
  delete(id: number): AdminUser {
    const admin = this.get(id);
    if (!admin) throw new HttpError(404, `admin not found: ${id}`);
    this.db.transaction(() => {
      statement(this.db, 'DELETE FROM admin_users WHERE id = ?').run(id);
      this.sessions.endAll('admin', String(id));
    })();
    return admin;
  }

  /** The admin with the keys of their role, for permission checks; null when the admin is gone. */
  principal(id: number): AdminPrincipal | null {
    const user = this.get(id);
    const role = user ? this.roles.get(user.role_id) : null;
    if (!user || !role) return null;
    return { ...user, role, hasPermission: (key: string) => grants(role.permissions, key) };
  }
}
