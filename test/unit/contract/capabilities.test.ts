// Capabilities between modules: the host resolves what a module requires against what loaded modules provide, fails at
// start naming a missing one, refuses to switch off a provider still required, and resolves each use at call time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModulesConfig } from '../../../config.ts';
import { MISSING_CAPABILITY, type PanelDirectoryCapability } from '../../../module/contract/capabilities.ts';
import type { ModuleClass } from '../../../module/contract/module.ts';
import { Plugin } from '../../../module/contract/plugin.ts';
import { defineManifest, type ExtensionEnv } from '../../../module/platform/extension.ts';
import { ModuleLoader, PROVIDER_IN_USE } from '../../../module/platform/loader.ts';
import { makePlatform } from './helpers/context.ts';

const directory: PanelDirectoryCapability = {
  panels: async () => [{ name: 'p1', location: 'ams', api_url: 'http://p1' }],
  reader: async () => { throw new Error('not used'); },
  oneTimeLink: async (panel, account) => ({ url: `http://${panel}/otl/${account}` }),
};

class Directory extends Plugin {
  static override version = '1.0.0';
  static manifest = defineManifest<{ directory: PanelDirectoryCapability }>({
    services: () => ({ directory }),
    provides: { 'panel-directory': (ext) => ext.directory },
  });
}

class User extends Plugin {
  static override version = '1.0.0';
  static manifest = defineManifest<{ env: ExtensionEnv }>({ services: (env) => ({ env }), requires: ['panel-directory'] });
}

function loaderWith(enabled: { Directory: boolean; User: boolean }) {
  const p = makePlatform();
  const { config: _config, ...shared } = p.ctx;
  const modulesConfig: ModulesConfig = {
    modules: {
      Product: {}, Payment: {}, Notification: {},
      Plugin: { Directory: { enabled: enabled.Directory, version: '1.0.0' }, User: { enabled: enabled.User, version: '1.0.0' } },
    },
  };
  const classes: Record<string, unknown> = { Directory, User };
  return { p, loader: new ModuleLoader({ shared, modulesConfig, importer: async (_type, name) => classes[name] as ModuleClass }) };
}

test('a required capability is handed over by the host, resolved at call time', async () => {
  const { p, loader } = loaderWith({ Directory: true, User: true });
  try {
    await loader.load();
    const { env } = loader.extension<{ env: ExtensionEnv }>('Plugin', 'User');
    assert.deepEqual((await env.capabilities.get('panel-directory').panels()).map((panel) => panel.name), ['p1']);
    assert.deepEqual(await env.capabilities.get('panel-directory').oneTimeLink('p1', 'alice'), { url: 'http://p1/otl/alice' });
  } finally {
    await loader.close();
    p.db.close();
  }
});

test('loading fails at start naming the missing capability and the module requiring it', async () => {
  const { p, loader } = loaderWith({ Directory: false, User: true });
  try {
    await assert.rejects(loader.load(), { message: MISSING_CAPABILITY('Plugin/User', 'panel-directory') });
  } finally {
    await loader.close();
    p.db.close();
  }
});

test('a provider still required cannot be switched off; without it the user cannot be switched on', async () => {
  const { p, loader } = loaderWith({ Directory: true, User: true });
  try {
    await loader.load();
    assert.equal(await loader.deactivate('Plugin', 'Directory'), `Error: ${PROVIDER_IN_USE('Plugin/Directory', 'panel-directory', 'Plugin/User')}`);
    assert.ok(loader.has('Plugin', 'Directory'));
    assert.equal(await loader.deactivate('Plugin', 'User'), 'success');
    assert.equal(await loader.deactivate('Plugin', 'Directory'), 'success');
    assert.equal(await loader.activate('Plugin', 'User'), `Error: ${MISSING_CAPABILITY('Plugin/User', 'panel-directory')}`);
    assert.equal(loader.has('Plugin', 'User'), false, 'not left mounted');
    assert.equal(await loader.activate('Plugin', 'Directory'), 'success');
    assert.equal(await loader.activate('Plugin', 'User'), 'success');
  } finally {
    await loader.close();
    p.db.close();
  }
});
