// change_package through the admin operations: the service moves to the new product only when its job is queued.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { Platform } from '../../../module/platform/platform.ts';
import { JOB_ERRORS } from '../../../module/contract/result.ts';
import { Task } from '../../../module/task/index.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

let dir: string;
let platform: Platform;

before(async () => {
  dir = tempDir('change-package');
  platform = await Platform.open({ dataDir: dir, logger: pino({ level: 'silent' }) });
});

after(async () => {
  await platform?.close();
  if (dir) removeDir(dir);
});

test('when the change_package job cannot be queued the service stays on its product', async () => {
  const basic = (await platform.products.create('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 10, wg_server: null }));
  const premium = (await platform.products.create('VpnProduct', { server_location: 'ams', plan_type: 'premium', bandwidth: 100, wg_server: null }));
  const { uuid } = (await platform.services.create({ product_uuid: basic.uuid, module_name: 'VpnProduct', service_data: { username: 'ann' } }));
  await platform.lifecycle.set(uuid, 'completed');

  Task.use(null);
  try {
    const refused = await platform.ops.runAction(uuid, 'change_package', { product_uuid: premium.uuid });
    assert.deepEqual(refused, { status: 'error', message: JOB_ERRORS.unavailable });
    assert.equal((await platform.services.get(uuid))!.product_uuid, basic.uuid);
  } finally {
    Task.use(platform.queue);
  }

  assert.deepEqual(await platform.ops.runAction(uuid, 'change_package', { product_uuid: premium.uuid }), { status: 'success' });
  assert.equal((await platform.services.get(uuid))!.product_uuid, premium.uuid);
  assert.equal((await platform.services.get(uuid))!.provision_status, 'completed');
});
