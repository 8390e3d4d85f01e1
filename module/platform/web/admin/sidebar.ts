// The admin sidebar: the platform's pages and each active module's adminSidebar() entries, resolved with the spec's
// link resolution (route name, then uri, then the raw fallback), highlighted by active_links, hidden without permission.
import type { Module } from '../../../contract/module.ts';
import { isSidebarActive, resolveSidebarLink, routeEntrySchema, sidebarEntrySchema, type RouteEntry, type SidebarEntry } from '../../../contract/plugin.ts';
import { PERMISSION } from '../../services/roles.ts';

/** One rendered link. */
export interface SidebarItem {
  title: string;
  href: string;
  active: boolean;
  /** The route the link resolved to; null when it fell back to the raw relative link. */
  route: string | null;
}

export interface SidebarGroup {
  title: string;
  items: SidebarItem[];
  /** A group with an active item stays expanded. */
  expanded: boolean;
}

/** Where the request is: a platform page key, or a module route (its module, name and uri). */
export type CurrentPage = { platform: string } | { type: string; name: string; route: { name?: string; uri?: string } };

/** The platform's own pages (link = absolute path; key = the page the layout marks active). */
const PLATFORM_PAGES: ReadonlyArray<{ key: string; title: string; href: string; permission: string }> = [
  { key: 'dashboard', title: 'Dashboard', href: '/admin', permission: PERMISSION.dashboard },
  { key: 'products', title: 'Products', href: '/admin/products', permission: PERMISSION.products },
  { key: 'services', title: 'Services', href: '/admin/services', permission: PERMISSION.services },
  { key: 'customers', title: 'Customers', href: '/admin/customers', permission: PERMISSION.customers },
  { key: 'invoices', title: 'Invoices', href: '/admin/invoices', permission: PERMISSION.billing },
  { key: 'orders', title: 'Orders', href: '/admin/orders', permission: PERMISSION.billing },
  { key: 'billing', title: 'Billing runs', href: '/admin/billing', permission: PERMISSION.billing },
  { key: 'revenue', title: 'Revenue', href: '/admin/revenue', permission: PERMISSION.revenue },
  { key: 'panels', title: 'Panels', href: '/admin/panels', permission: PERMISSION.panels },
  { key: 'modules', title: 'Modules', href: '/admin/modules', permission: PERMISSION.modules },
  { key: 'tasks', title: 'Tasks', href: '/admin/tasks', permission: PERMISSION.tasks },
  { key: 'roles', title: 'Admins and roles', href: '/admin/roles', permission: PERMISSION.admins },
];

/** The module's admin surface (any module type may declare it; Plugins always can). */
function adminSurface(module: Module): { web: RouteEntry[]; api: RouteEntry[]; sidebar: SidebarEntry[] } {
  const call = (name: string): unknown[] => {
    const fn = (module as unknown as Record<string, unknown>)[name];
    const out = typeof fn === 'function' ? (fn as () => unknown).call(module) : [];
    return Array.isArray(out) ? out : [];
  };
  return {
    web: call('adminWebRoutes').filter((r) => routeEntrySchema.safeParse(r).success) as RouteEntry[],
    api: call('adminApiRoutes').filter((r) => routeEntrySchema.safeParse(r).success) as RouteEntry[],
    sidebar: call('adminSidebar').filter((e) => sidebarEntrySchema.safeParse(e).success) as SidebarEntry[],
  };
}

/** The sidebar of one module: entries the admin may see, resolved against its web routes. */
function moduleSidebar(
  type: string,
  name: string,
  entries: readonly SidebarEntry[],
  webRoutes: readonly RouteEntry[],
  can: (key: string) => boolean,
  current: CurrentPage,
): SidebarGroup | null {
  const here = 'type' in current && current.type === type && current.name === name ? current.route : null;
  const items = entries
    .filter((entry) => can(entry.permission))
    .map((entry) => {
      const { route, href } = resolveSidebarLink(entry, webRoutes, type, name);
      return { title: entry.title, href, route: route?.name ?? null, active: here !== null && isSidebarActive(entry, here) };
    });
  return items.length ? { title: name, items, expanded: items.some((i) => i.active) } : null;
}

/** The whole sidebar: platform pages first, then one group per module with visible entries. */
export function buildSidebar(
  modules: ReadonlyArray<{ type: string; name: string; instance: Module }>,
  can: (key: string) => boolean,
  current: CurrentPage,
): SidebarGroup[] {
  const platformItems = PLATFORM_PAGES.filter((p) => can(p.permission)).map((p) => ({
    title: p.title, href: p.href, route: p.key, active: 'platform' in current && current.platform === p.key,
  }));
  const groups: SidebarGroup[] = platformItems.length ? [{ title: 'Platform', items: platformItems, expanded: true }] : [];
  for (const { type, name, instance } of modules) {
    const surface = adminSurface(instance);
    const group = moduleSidebar(type, name, surface.sidebar, surface.web, can, current);
    if (group) groups.push(group);
  }
  return groups;
}
