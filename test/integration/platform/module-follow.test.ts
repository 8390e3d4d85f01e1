// A module switched through the CLI (`vpnhost platform module activate|deactivate`, another process on the same data
// directory) reaches a running platform without a restart: it notices through the store's module switch version and (un)mounts.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { pino } from 'pino';
import { Platform } from '../../../module/platform/platform.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const res = await execa(process.execPath, [join(ROOT, 'bin/vpnhost.js'), 'platform', 'module', ...args], { cwd: ROOT, reject: false, timeout: 60_000, env: { VPNHOST_LOG_LEVEL: 'silent' } });
  return { code: res.exitCode ?? -1, out: String(res.stdout).trim(), err: String(res.stderr).trim() };
}

async function until(check: () => boolean, ms = 5_000): Promise<boolean> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (check()) return true;
    await sleep(20);
  }
  return check();
}

test('a running platform follows CLI switches of a module (off, then on) without calling its lifecycle again', async () => {
  const dataDir = tempDir('module-follow');
  const platform = await Platform.open({ dataDir, logger: pino({ level: 'silent' }), moduleWatchMs: 50 });
  try {
    assert.equal(platform.modules.has('Product', 'VpnProduct'), true);
    assert.deepEqual(await platform.followModuleSwitches(), [], 'nothing changed: nothing to follow');

    // VpnFleet requires VpnProduct's capability `panel-directory`: it is switched off first.
    const fleetOff = await cli(['deactivate', 'Plugin/VpnFleet', '--data', dataDir]);
    assert.deepEqual([fleetOff.code, fleetOff.out], [0, 'success'], fleetOff.err);
    assert.ok(await until(() => !platform.modules.has('Plugin', 'VpnFleet')), 'the running platform unmounted VpnFleet');
    const off = await cli(['deactivate', 'Product/VpnProduct', '--data', dataDir]);
    assert.deepEqual([off.code, off.out], [0, 'success'], off.err);
    assert.ok(await until(() => !platform.modules.has('Product', 'VpnProduct')), 'the running platform unmounted the module');
    assert.equal((await platform.moduleAdmin.list()).find((m) => m.type === 'Product' && m.name === 'VpnProduct')?.loaded, false);

    const on = await cli(['activate', 'Product/VpnProduct', '--data', dataDir]);
    assert.deepEqual([on.code, on.out], [0, 'success'], on.err);
    assert.ok(await until(() => platform.modules.has('Product', 'VpnProduct')), 'the running platform mounted the module again');

    // activate()/deactivate() ran once each, in the CLI's process: following them logged no second answer.
    const answers = await platform.store.db.selectFrom('module_logs').select('action')
      .where('module_name', '=', 'VpnProduct').where('action', 'in', ['activate', 'deactivate']).orderBy('id').execute();
    assert.deepEqual(answers.map((a) => a.action), ['deactivate', 'activate']);
    assert.deepEqual(await platform.followModuleSwitches(), [], 'in line again');
  } finally {
    await platform.close();
    removeDir(dataDir);
  }
});
