// The platform's module loader: activate + version sync of enabled modules, and Plugin listeners on the process hooks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModulesConfig } from '../../../config.ts';
import type { Hooks } from '../../../hooks.ts';
import type { ModuleClass } from '../../../module/contract/module.ts';
import { Plugin } from '../../../module/contract/plugin.ts';
import { ModuleLoader } from '../../../module/platform/loader.ts';
import { makePlatform } from './helpers/context.ts';

const seen: string[] = [];
let registrations = 0;

class Fleet extends Plugin {
  static override version = '2.0.0';
  override registerHooks(hooks: Hooks): void {
    registrations += 1;
    hooks.on('service.terminated', (e) => void seen.push(`${this.module_name}:${e.service_uuid}`));
  }
}

const modulesConfig: ModulesConfig = {
  modules: { Product: {}, Plugin: { Fleet: { enabled: true, version: '2.0.0' }, Off: { enabled: false, version: '1.0.0' } }, Payment: {}, Notification: {} },
};

for (const lifecycle of [true, false]) {
  test(`load(${lifecycle ? '' : '{lifecycle: false}'}) registers each enabled Plugin's listeners once on the process hooks`, async () => {
    const p = makePlatform();
    seen.length = 0;
    registrations = 0;
    try {
      const { config: _config, ...shared } = p.ctx;
      const imported: string[] = [];
      const loader = new ModuleLoader({ shared, modulesConfig, importer: async (type, name) => {
        imported.push(`${type}/${name}`);
        return Fleet as unknown as ModuleClass;
      } });
      const loaded = await loader.load({ lifecycle });
      assert.deepEqual(imported, ['Plugin/Fleet']);
      assert.equal(registrations, 1);
      assert.equal(await p.versionQueries.installed('Plugin', 'Fleet'), lifecycle ? '2.0.0' : null);
      assert.deepEqual(loaded.map((m) => `${m.type}/${m.name}:${m.activate}`), lifecycle ? ['Plugin/Fleet:success'] : []);
      loader.instance('Plugin', 'Fleet');
      await p.hooks.emit('service.terminated', { service_uuid: 'svc-9', module: 'VpnProduct', at: p.clock.now().toISOString() });
      assert.deepEqual(seen, ['Fleet:svc-9']);
    } finally {
      p.cleanup();
    }
  });
}
