// Plugin modules: route/sidebar/permission entries, sidebar link resolution, permission keys, hook registration.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Hooks } from '../../../hooks.ts';
import {
  isSidebarActive, Plugin, permissionEntrySchema, resolveSidebarLink, routeEntrySchema, sidebarEntrySchema, type RouteEntry,
} from '../../../module/contract/plugin.ts';
import { runLifecycle } from '../../../module/contract/module.ts';
import { makePlatform } from './helpers/context.ts';

class Fleet extends Plugin {
  activations = 0;
  terminated: string[] = [];
  override async activate() {
    return this.guard('activate', () => {
      this.activations += 1;
    });
  }
  override adminWebRoutes(): RouteEntry[] {
    return [
      { method: 'get', uri: 'servers', permission: this.permissionKey('servers'), name: 'fleet.servers', controller: 'FleetController@index' },
      { method: 'post', uri: 'servers/sync', permission: this.permissionKey('servers'), name: 'fleet.sync', controller: 'FleetController@sync' },
    ];
  }
  override adminSidebar() {
    return [{ title: 'Servers', link: 'fleet.servers', active_links: ['fleet.servers', 'fleet.sync'], permission: this.permissionKey('servers') }];
  }
  override adminPermissions() {
    return [{ name: 'Servers', key: this.permissionKey('servers'), description: 'Manage VPN servers' }];
  }
  override registerHooks(hooks: Hooks): void {
    hooks.on('service.terminated', (e) => void this.terminated.push(e.service_uuid));
  }
}

test('entries validate against the spec shapes and use <Type>-<ModuleName>-<action> keys', () => {
  const p = makePlatform();
  try {
    const fleet = new Fleet(p.ctx);
    assert.equal(fleet.module_type, 'Plugin');
    assert.equal(fleet.module_name, 'Fleet');
    for (const route of fleet.adminWebRoutes()) routeEntrySchema.parse(route);
    for (const entry of fleet.adminSidebar()) sidebarEntrySchema.parse(entry);
    for (const entry of fleet.adminPermissions()) permissionEntrySchema.parse(entry);
    assert.equal(fleet.adminPermissions()[0].key, 'Plugin-Fleet-servers');
    assert.deepEqual(fleet.adminApiRoutes(), []);
    assert.equal(routeEntrySchema.safeParse({ method: 'patch', uri: 'x', permission: 'p', name: 'n', controller: 'C@m' }).success, false);
    assert.equal(routeEntrySchema.safeParse({ method: 'get', uri: 'x', permission: 'p', name: 'n', controller: 'Cm' }).success, false);
  } finally {
    p.cleanup();
  }
});

test('sidebar link: route name first, then route uri, else the raw relative link (no route)', () => {
  const p = makePlatform();
  try {
    const routes = new Fleet(p.ctx).adminWebRoutes();
    assert.deepEqual(resolveSidebarLink({ link: 'fleet.sync' }, routes, 'Plugin', 'Fleet'), { route: routes[1], href: '/admin/modules/Plugin/Fleet/servers/sync' });
    assert.deepEqual(resolveSidebarLink({ link: 'servers' }, routes, 'Plugin', 'Fleet'), { route: routes[0], href: '/admin/modules/Plugin/Fleet/servers' });
    assert.deepEqual(resolveSidebarLink({ link: 'nowhere' }, routes, 'Plugin', 'Fleet'), { route: null, href: '/admin/modules/Plugin/Fleet/nowhere' });
    const entry = { active_links: ['fleet.servers', 'servers/sync'] };
    assert.equal(isSidebarActive(entry, { name: 'fleet.servers' }), true);
    assert.equal(isSidebarActive(entry, { name: 'other', uri: 'servers/sync' }), true);
    assert.equal(isSidebarActive(entry, { name: 'other', uri: 'servers' }), false);
  } finally {
    p.cleanup();
  }
});

test('activate is idempotent and hook listeners registered by the plugin receive events', async () => {
  const p = makePlatform();
  try {
    const fleet = new Fleet(p.ctx);
    assert.equal(await runLifecycle(fleet, 'activate'), 'success');
    assert.equal(await runLifecycle(fleet, 'activate'), 'success');
    fleet.registerHooks(p.hooks);
    await p.hooks.emit('service.terminated', { service_uuid: 's9', module: 'VpnProduct', at: p.clock.now().toISOString() });
    assert.deepEqual(fleet.terminated, ['s9']);
  } finally {
    p.cleanup();
  }
});
