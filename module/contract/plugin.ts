// Plugin modules: admin routes, sidebar entries, permissions and hook listeners; sidebar link resolution.
import { z } from 'zod';
import type { Hooks } from '../../hooks.ts';
import { Module } from './module.ts';
import type { PlatformContext } from './platform-context.ts';

/** Admin route entry (adminWebRoutes / adminApiRoutes). */
export const routeEntrySchema = z.object({
  method: z.enum(['get', 'post', 'put', 'delete']),
  uri: z.string().min(1),
  permission: z.string().min(1),
  name: z.string().min(1),
  /** `ControllerName@methodName`. */
  controller: z.string().regex(/^[A-Za-z_]\w*@[A-Za-z_]\w*$/),
});
export type RouteEntry = z.infer<typeof routeEntrySchema>;

/** Sidebar entry (adminSidebar). */
export const sidebarEntrySchema = z.object({
  title: z.string().min(1),
  /** Route name or uri. */
  link: z.string().min(1),
  active_links: z.array(z.string()).default([]),
  permission: z.string().min(1),
});
export type SidebarEntry = z.input<typeof sidebarEntrySchema>;

/** Permission entry (adminPermissions). */
export const permissionEntrySchema = z.object({ name: z.string().min(1), key: z.string().min(1), description: z.string() });
export type PermissionEntry = z.infer<typeof permissionEntrySchema>;

/**
 * A Plugin module adds admin pages, routes, permissions and sidebar entries; `activate()` must be idempotent.
 * Background work is queued with `this.ctx.tasks.add(...)`; listeners are registered in `registerHooks(hooks)`.
 */
export abstract class Plugin extends Module {
  constructor(ctx: PlatformContext) {
    super(ctx, 'Plugin');
  }

  adminWebRoutes(): RouteEntry[] {
    return [];
  }

  adminApiRoutes(): RouteEntry[] {
    return [];
  }

  adminSidebar(): SidebarEntry[] {
    return [];
  }

  adminPermissions(): PermissionEntry[] {
    return [];
  }

  /**
   * Controllers named by route entries (`ControllerName@methodName`). A name not listed here resolves to the plugin
   * itself, so `Fleet@servers` calls `this.servers(request)`. Handlers get a ModuleRequest and answer a ModuleResponse
   * or any JSON value (answered 200).
   */
  controllers(): Record<string, object> {
    return {};
  }

  /** Called once when the platform loads the plugin (the spec's hooks.php of a Plugin). */
  registerHooks(_hooks: Hooks): void {}
}

/** Admin path of a module route uri: `/admin/modules/<Type>/<ModuleName>/<uri>`. */
function adminModulePath(type: string, name: string, uri: string): string {
  return `/admin/modules/${type}/${name}/${uri.replace(/^\/+/, '')}`;
}

/**
 * The spec's sidebar link resolution: `link` is looked up as a route name, then as a route uri of the web routes;
 * otherwise it renders as the raw relative link `/admin/modules/<Type>/<ModuleName>/<link>` (`route: null`).
 */
export function resolveSidebarLink(entry: Pick<SidebarEntry, 'link'>, routes: readonly RouteEntry[], type: string, name: string): { route: RouteEntry | null; href: string } {
  const route = routes.find((r) => r.name === entry.link) ?? routes.find((r) => r.uri === entry.link) ?? null;
  return { route, href: adminModulePath(type, name, route ? route.uri : entry.link) };
}

/** An item stays expanded and highlighted when the current route's name or uri is one of its `active_links`. */
export function isSidebarActive(entry: Pick<SidebarEntry, 'active_links'>, current: { name?: string; uri?: string }): boolean {
  const links = entry.active_links ?? [];
  return (current.name !== undefined && links.includes(current.name)) || (current.uri !== undefined && links.includes(current.uri));
}
