// Admin roles: named sets of permission keys (`<Type>-<ModuleName>-<action>`, `*` = every key) and the catalogue of
// keys an admin can grant: the platform's own plus every loaded module's adminPermissions().
import { systemClock, type Clock } from '../../../shared/clock.ts';
import { permissionEntrySchema, type PermissionEntry } from '../../contract/plugin.ts';
import type { Module } from '../../contract/module.ts';
import { HttpError } from '../errors.ts';
import type { QueryStore } from '../store/query/query-store.ts';

/** Every key at once (the Administrator role). */
export const ALL_PERMISSIONS = '*';

/** The platform's own permission keys, in the spec's `<Type>-<ModuleName>-<action>` form under `Platform-Core`. */
export const PLATFORM_PERMISSIONS: readonly PermissionEntry[] = [
  { name: 'Dashboard', key: 'Platform-Core-dashboard', description: 'See the dashboard: services by status, failed tasks, panel health' },
  { name: 'Products', key: 'Platform-Core-products', description: 'List, create and edit products' },
  { name: 'Services', key: 'Platform-Core-services', description: 'List services and read their details, task history and module log' },
  { name: 'Service actions', key: 'Platform-Core-service_actions', description: 'Create services and run create, suspend, unsuspend, termination and change_package' },
  { name: 'Panels', key: 'Platform-Core-panels', description: 'Add panels and see their health' },
  { name: 'Modules', key: 'Platform-Core-modules', description: 'Activate, deactivate and update modules' },
  { name: 'Tasks', key: 'Platform-Core-tasks', description: 'See failed and stuck tasks and retry them' },
  { name: 'Customers', key: 'Platform-Core-customers', description: 'Create customers and assign services to them' },
  { name: 'Admins and roles', key: 'Platform-Core-admins', description: 'Manage admin users and edit roles' },
  { name: 'Billing', key: 'Platform-Core-billing', description: 'See invoices with their transactions, orders, customers\' billing and billing runs' },
  { name: 'Billing actions', key: 'Platform-Core-billing_actions', description: 'Record manual payments, refund payments, place orders, run billing and edit billing settings' },
  { name: 'Revenue', key: 'Platform-Core-revenue', description: 'See revenue per month, MRR, new and cancelled services and the overdue amount' },
];

export const PERMISSION = Object.fromEntries(PLATFORM_PERMISSIONS.map((p) => [p.key.slice('Platform-Core-'.length), p.key])) as Record<
  'dashboard' | 'products' | 'services' | 'service_actions' | 'panels' | 'modules' | 'tasks' | 'customers' | 'admins' | 'billing' | 'billing_actions' | 'revenue',
  string
>;

export interface Role {
  id: number;
  name: string;
  permissions: string[];
  created_at: string;
  updated_at: string;
}

/** The permission entries a module declares (any module with an `adminPermissions()` method; Plugins always). */
export function modulePermissions(module: Module): PermissionEntry[] {
  const fn = (module as unknown as { adminPermissions?: () => unknown }).adminPermissions;
  if (typeof fn !== 'function') return [];
  const list = fn.call(module);
  return Array.isArray(list) ? list.flatMap((entry) => (permissionEntrySchema.safeParse(entry).success ? [entry as PermissionEntry] : [])) : [];
}

/** True when a role holding `permissions` has `key`. */
export function grants(permissions: readonly string[], key: string): boolean {
  return permissions.includes(ALL_PERMISSIONS) || permissions.includes(key);
}

/** True when a holder of `held` holds every key of `wanted` (`*` is held only by `*`): what an admin may grant. */
export function holdsAll(held: readonly string[], wanted: readonly string[]): boolean {
  return held.includes(ALL_PERMISSIONS) || wanted.every((key) => key !== ALL_PERMISSIONS && held.includes(key));
}

/** Repository of `admin_roles` (asynchronous, over the query layer; `within(tx)` joins a transaction). */
export class RoleRepository {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /** The same roles on `tx`. */
  within(tx: QueryStore): RoleRepository {
    return new RoleRepository(tx, this.clock);
  }

  async list(): Promise<Role[]> {
    return (await this.store.db.selectFrom('admin_roles').selectAll().orderBy('id').execute()).map(toRole);
  }

  async get(id: number): Promise<Role | null> {
    const row = await this.store.db.selectFrom('admin_roles').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRole(row) : null;
  }

  /** The role named `name` (case-insensitively). */
  async findByName(name: string): Promise<Role | null> {
    const row = await this.store.db.selectFrom('admin_roles').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toRole(row) : null;
  }

  /** Creates a role; 422 when the name is taken or empty. */
  async create(name: string, permissions: readonly string[]): Promise<Role> {
    const clean = name.trim();
    if (!clean || clean.length > 64) throw new HttpError(422, 'role name must be 1-64 characters');
    const now = this.clock.now().toISOString();
    // The unique name decides between two creators: the loser answers as if it had looked first.
    const row = await this.store.db.insertInto('admin_roles')
      .values({ name: clean, permissions: JSON.stringify(unique(permissions)), created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .returning('id').executeTakeFirst();
    if (!row) throw new HttpError(422, `a role named ${clean} exists`);
    return (await this.get(Number(row.id)))!;
  }

  /** Replaces a role's keys; 404 when it does not exist. */
  async setPermissions(id: number, permissions: readonly string[]): Promise<Role> {
    const result = await this.store.db.updateTable('admin_roles')
      .set({ permissions: JSON.stringify(unique(permissions)), updated_at: this.clock.now().toISOString() })
      .where('id', '=', id).executeTakeFirst();
    if (!Number(result.numUpdatedRows)) throw new HttpError(404, `role not found: ${id}`);
    return (await this.get(id))!;
  }
}

function unique(keys: readonly string[]): string[] {
  return [...new Set(keys.filter((k) => typeof k === 'string' && k.length > 0 && k.length <= 200))].sort();
}

function toRole(row: { id: number; name: string; permissions: string; created_at: string; updated_at: string }): Role {
  return { ...row, id: Number(row.id), permissions: JSON.parse(row.permissions) as string[] };
}
