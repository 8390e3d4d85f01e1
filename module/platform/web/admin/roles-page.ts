// Admins and roles page: every role with a checkbox per permission key (the platform's and every loaded module's
// adminPermissions()), new roles, admin users and their role.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { modulePermissions, PERMISSION, PLATFORM_PERMISSIONS, ALL_PERMISSIONS } from '../../services/roles.ts';
import type { PermissionEntry } from '../../../contract/plugin.ts';
import { adminPage, flash, loadedModules } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';

/** Every grantable key: the platform's, then each loaded module's (grouped by module). */
export function permissionCatalogue(deps: WebDeps): Array<{ group: string; permissions: PermissionEntry[] }> {
  const groups = [{ group: 'Platform', permissions: [...PLATFORM_PERMISSIONS] }];
  for (const { type, name, instance } of loadedModules(deps)) {
    const permissions = modulePermissions(instance);
    if (permissions.length) groups.push({ group: `${type}/${name}`, permissions });
  }
  return groups;
}

const keysOf = (value: unknown): string[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]).map(String);
const RoleForm = z.object({ name: z.string().max(64).optional(), permissions: z.unknown().optional(), all: z.string().optional() });
const AdminForm = z.object({ email: z.string().max(200), name: z.string().max(200).default(''), password: z.string().max(1000), role_id: z.coerce.number().int() });

export function rolesPage(deps: WebDeps, app: FastifyInstance): void {
  app.get('/roles', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const catalogue = permissionCatalogue(deps);
    const roles = deps.roles.list().map((role) => ({
      ...role,
      all: role.permissions.includes(ALL_PERMISSIONS),
      groups: catalogue.map((g) => ({ group: g.group, permissions: g.permissions.map((p) => ({ ...p, granted: role.permissions.includes(p.key) })) })),
    }));
    const roleNames = new Map(deps.roles.list().map((r) => [r.id, r.name]));
    const admins = deps.admins.list().map((a) => ({ ...a, role_name: roleNames.get(a.role_id) ?? '-' }));
    return adminPage(deps, request, reply, 'roles', { title: 'Admins and roles', roles, admins, roleOptions: deps.roles.list() }, { platform: 'roles' });
  });

  app.post('/roles', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const form = RoleForm.parse(request.body ?? {});
    const role = deps.roles.create(form.name ?? '', form.all ? [ALL_PERMISSIONS] : keysOf(form.permissions));
    flash(deps, reply, `Role ${role.name} created.`);
    return reply.redirect('/admin/roles', 303);
  });

  app.post<{ Params: { id: string } }>('/roles/:id', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const form = RoleForm.parse(request.body ?? {});
    const role = deps.roles.setPermissions(Number(request.params.id), form.all ? [ALL_PERMISSIONS] : keysOf(form.permissions));
    flash(deps, reply, `Role ${role.name} saved.`);
    return reply.redirect('/admin/roles', 303);
  });

  app.post('/admins', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const form = AdminForm.parse(request.body ?? {});
    const admin = await deps.admins.create({ email: form.email, name: form.name, password: form.password, role: form.role_id });
    flash(deps, reply, `Admin ${admin.email} created.`);
    return reply.redirect('/admin/roles', 303);
  });

  app.post<{ Params: { id: string } }>('/admins/:id/role', async (request, reply) => {
    hasPermission(request, PERMISSION.admins);
    const form = z.object({ role_id: z.coerce.number().int() }).parse(request.body ?? {});
    const admin = deps.admins.setRole(Number(request.params.id), form.role_id);
    flash(deps, reply, `Admin ${admin.email} now has role ${deps.roles.get(admin.role_id)?.name}.`);
    return reply.redirect('/admin/roles', 303);
  });
}
