// Admins and roles page: every role with a checkbox per permission key (the platform's and every loaded module's
// adminPermissions()), new roles, admin users, their role and their deletion. An admin grants only keys they hold, never
// changes their own role or deletes themselves, and manages only admins whose role's keys they hold.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { HttpError } from '../../errors.ts';
import type { AdminUser } from '../../services/admin-users.ts';
import { holdsAll, modulePermissions, PERMISSION, PLATFORM_PERMISSIONS, ALL_PERMISSIONS, type Role } from '../../services/roles.ts';
import type { PermissionEntry } from '../../../contract/plugin.ts';
import { adminPage, flash, loadedModules, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';

/** Every grantable key: the platform's, then each loaded module's (grouped by module). */
function permissionCatalogue(deps: RolesPageDeps): Array<{ group: string; permissions: PermissionEntry[] }> {
  const groups = [{ group: 'Platform', permissions: [...PLATFORM_PERMISSIONS] }];
  for (const { type, name, instance } of loadedModules(deps)) {
    const permissions = modulePermissions(instance);
    if (permissions.length) groups.push({ group: `${type}/${name}`, permissions });
  }
  return groups;
}

export const OWN_ROLE_REFUSED = 'You cannot change your own role: another admin has to.';
export const OWN_ACCOUNT_REFUSED = 'You cannot delete your own admin account: another admin has to.';
export const GRANT_REFUSED = 'You can only grant permissions your own role holds.';
export const ADMIN_BEYOND_REFUSED = "You can only manage admins whose role's permissions your own role holds.";

/** 403 unless the request's admin holds every key of `permissions` (what they are about to grant or take away). */
function requireHolds(request: FastifyRequest, permissions: readonly string[], message = GRANT_REFUSED): void {
  if (!holdsAll(request.admin!.role.permissions, permissions)) throw new HttpError(403, message);
}

async function roleOf(deps: RolesPageDeps, id: number): Promise<Role> {
  const role = await deps.roles.get(id);
  if (!role) throw new HttpError(422, `unknown role: ${id}`);
  return role;
}

/** The admin `id` acted on by the request's admin: not themselves (`selfMessage`), and within their permissions. */
async function otherAdmin(deps: RolesPageDeps, request: FastifyRequest, id: number, selfMessage: string): Promise<AdminUser> {
  const target = await deps.admins.get(id);
  if (!target) throw new HttpError(404, `admin not found: ${id}`);
  if (target.id === request.admin!.id) throw new HttpError(403, selfMessage);
  requireHolds(request, (await deps.roles.get(target.role_id))?.permissions ?? [], ADMIN_BEYOND_REFUSED);
  return target;
}

const keysOf = (value: unknown): string[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]).map(String);
const RoleForm = z.object({ name: z.string().max(64).optional(), permissions: z.unknown().optional(), all: z.string().optional() });
const AdminForm = z.object({ email: z.string().max(200), name: z.string().max(200).default(''), password: z.string().max(1000), role_id: z.coerce.number().int() });

/** What the roles and admins pages reach: admin users, roles and the modules' permissions. */
export type RolesPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'admins' | 'roles'>;

export function rolesPage(deps: RolesPageDeps, app: FastifyInstance): void {
  app.get('/roles', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const catalogue = permissionCatalogue(deps);
    const roleList = await deps.roles.list();
    const roles = roleList.map((role) => ({
      ...role,
      all: role.permissions.includes(ALL_PERMISSIONS),
      groups: catalogue.map((g) => ({ group: g.group, permissions: g.permissions.map((p) => ({ ...p, granted: role.permissions.includes(p.key) })) })),
    }));
    const roleNames = new Map(roleList.map((r) => [r.id, r.name]));
    const admins = (await deps.admins.list()).map((a) => ({ ...a, role_name: roleNames.get(a.role_id) ?? '-', self: a.id === request.admin!.id }));
    return adminPage(deps, request, reply, 'roles', { title: 'Admins and roles', roles, admins, roleOptions: roleList }, { platform: 'roles' });
  });

  app.post('/roles', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const form = RoleForm.parse(request.body ?? {});
    const keys = form.all ? [ALL_PERMISSIONS] : keysOf(form.permissions);
    requireHolds(request, keys);
    const role = await deps.roles.create(form.name ?? '', keys);
    flash(deps, reply, `Role ${role.name} created.`);
    return reply.redirect('/admin/roles', 303);
  });

  app.post<{ Params: { id: string } }>('/roles/:id', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const form = RoleForm.parse(request.body ?? {});
    const keys = form.all ? [ALL_PERMISSIONS] : keysOf(form.permissions);
    requireHolds(request, [...(await roleOf(deps, Number(request.params.id))).permissions, ...keys]);
    const role = await deps.roles.setPermissions(Number(request.params.id), keys);
    flash(deps, reply, `Role ${role.name} saved.`);
    return reply.redirect('/admin/roles', 303);
  });

  app.post('/admins', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const form = AdminForm.parse(request.body ?? {});
    requireHolds(request, (await roleOf(deps, form.role_id)).permissions);
    const admin = await deps.admins.create({ email: form.email, name: form.name, password: form.password, role: form.role_id });
    flash(deps, reply, `Admin ${admin.email} created.`);
    return reply.redirect('/admin/roles', 303);
  });

  app.post<{ Params: { id: string } }>('/admins/:id/role', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const form = z.object({ role_id: z.coerce.number().int() }).parse(request.body ?? {});
    const target = await otherAdmin(deps, request, Number(request.params.id), OWN_ROLE_REFUSED);
    const role = await roleOf(deps, form.role_id);
    requireHolds(request, role.permissions);
    const admin = await deps.admins.setRole(target.id, form.role_id);
    flash(deps, reply, `Admin ${admin.email} now has role ${role.name}; their sessions ended.`);
    return reply.redirect('/admin/roles', 303);
  });

  app.post<{ Params: { id: string } }>('/admins/:id/delete', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const target = await otherAdmin(deps, request, Number(request.params.id), OWN_ACCOUNT_REFUSED);
    await deps.admins.delete(target.id);
    flash(deps, reply, `Admin ${target.email} deleted; their sessions ended.`);
    return reply.redirect('/admin/roles', 303);
  });
}
