// `vpnhost platform module list|activate|deactivate|update`: the module's answer printed (`success` / `Error: ...`,
// exit 1) and recorded in the platform database, the switch kept across starts. Each command runs the dispatcher in
// this process (every call opens the platform anew, as a separate start would); the binary's own start is covered by
// test/integration/panel-core/cli.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { runCli } from '../../helpers/cli-in-process.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';
import { readStore } from '../../fixtures/platform/read-store.ts';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const res = await runCli(['platform', 'module', ...args], { VPNHOST_LOG_LEVEL: 'silent' });
  return { code: res.code, out: res.stdout.trim(), err: res.stderr.trim() };
}

async function state(dataDir: string): Promise<{ active: number; last_action: string; last_result: string } | undefined> {
  return readStore(dataDir, async (store) => (await sql<{ active: number; last_action: string; last_result: string }>`SELECT active, last_action, last_result FROM module_states WHERE module_type = 'Product' AND module_name = 'VpnProduct'`.execute(store.db)).rows[0]);
}

async function logged(dataDir: string, action: string): Promise<Array<{ level: string; response: string }>> {
  return readStore(dataDir, (store) => store.db.selectFrom('module_logs').select(['level', 'response'])
    .where('module_name', '=', 'VpnProduct').where('action', '=', action).orderBy('id').execute());
}

test('module deactivate / activate / update print and record the answer; the switch holds at the next start', async () => {
  const dataDir = tempDir('module-cli');
  try {
    const fresh = await cli(['list', '--data', dataDir]);
    assert.equal(fresh.code, 0, fresh.err);
    assert.match(fresh.out, /^Product\/VpnProduct\t1\.0\.0\tactive\t\(config\.ts\)$/m);

    const needed = await cli(['deactivate', 'Product/VpnProduct', '--data', dataDir]);
    assert.deepEqual([needed.code, needed.out], [1, "Error: module Product/VpnProduct provides capability 'panel-directory' required by Plugin/VpnFleet: switch Plugin/VpnFleet off first"]);
    assert.deepEqual(await state(dataDir), { active: 1, last_action: 'deactivate', last_result: "Error: module Product/VpnProduct provides capability 'panel-directory' required by Plugin/VpnFleet: switch Plugin/VpnFleet off first" });
    const fleetOff = await cli(['deactivate', 'Plugin/VpnFleet', '--data', dataDir]);
    assert.deepEqual([fleetOff.code, fleetOff.out], [0, 'success']);

    const off = await cli(['deactivate', 'Product/VpnProduct', '--data', dataDir]);
    assert.deepEqual([off.code, off.out], [0, 'success']);
    assert.deepEqual(await state(dataDir), { active: 0, last_action: 'deactivate', last_result: 'success' });
    assert.deepEqual(await logged(dataDir, 'deactivate'), [{ level: 'info', response: '"success"' }], 'deactivate() ran and its answer is in the module log');
    assert.match((await cli(['list', '--data', dataDir])).out, /^Product\/VpnProduct\t1\.0\.0\tinactive\tdeactivate: success$/m);

    const again = await cli(['deactivate', 'Product/VpnProduct', '--data', dataDir]);
    assert.deepEqual([again.code, again.out], [1, 'Error: module Product/VpnProduct is not loaded'], 'not loaded at this start: the switch held');
    assert.deepEqual(await state(dataDir), { active: 0, last_action: 'deactivate', last_result: 'Error: module Product/VpnProduct is not loaded' });

    const fleetAlone = await cli(['activate', 'Plugin/VpnFleet', '--data', dataDir]);
    assert.deepEqual([fleetAlone.code, fleetAlone.out], [1, "Error: module Plugin/VpnFleet requires capability 'panel-directory', which no loaded module provides"]);

    const on = await cli(['activate', 'Product/VpnProduct', '--data', dataDir]);
    assert.deepEqual([on.code, on.out], [0, 'success']);
    const fleetOn = await cli(['activate', 'Plugin/VpnFleet', '--data', dataDir]);
    assert.deepEqual([fleetOn.code, fleetOn.out], [0, 'success'], 'the capability is provided again');
    assert.deepEqual(await state(dataDir), { active: 1, last_action: 'activate', last_result: 'success' });
    const update = await cli(['update', 'Product/VpnProduct', '--data', dataDir]);
    assert.deepEqual([update.code, update.out], [0, 'success']);
    assert.deepEqual(await state(dataDir), { active: 1, last_action: 'update', last_result: 'success' });

    const unknown = await cli(['activate', 'Payment/Nope', '--data', dataDir]);
    assert.deepEqual([unknown.code, unknown.out], [1, 'Error: unknown module: Payment/Nope (it needs a section in config.ts)']);
    const usage = await cli(['activate', '--data', dataDir]);
    assert.equal(usage.code, 2);
    assert.match(usage.err, /expected list, or activate\|deactivate\|update TYPE\/NAME/);
  } finally {
    removeDir(dataDir);
  }
});
