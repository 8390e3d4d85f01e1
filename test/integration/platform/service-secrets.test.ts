// Service secrets at rest and in the admin view: secret-named members are sealed and hidden at any depth.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { Platform } from '../../../module/platform/platform.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

let dir: string;
let platform: Platform;
let uuid: string;

const NESTED = {
  account_name: 'svc_1',
  credentials: { username: 'ann', password: 'N3stedSecretPw', history: [{ api_key: 'ak_live_0123456789' }] },
  access_hash: 'h'.repeat(80),
  private_key: { wg: 'wgPrivKeyBase64Value=' },
};

before(async () => {
  dir = tempDir('service-secrets');
  platform = await Platform.open({ dataDir: dir, logger: pino({ level: 'silent' }) });
  const product = (await platform.products.create('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 10, wg_server: null }));
  uuid = (await platform.services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'ann', password: 'T0pLevelSecret', extra: { token: 'tok_0123456789' } } })).uuid;
  await platform.services.saveProvisionData(uuid, NESTED);
});

after(async () => {
  await platform?.close();
  if (dir) removeDir(dir);
});

test('nested secret members of service and provision data are sealed at rest and opened for modules', async () => {
  const row = JSON.stringify(await platform.store.db.selectFrom('services').select(['service_data', 'provision_data']).where('uuid', '=', uuid).executeTakeFirst());
  for (const secret of ['wgPrivKeyBase64Value=', 'N3stedSecretPw', 'ak_live_0123456789', 'h'.repeat(80), 'T0pLevelSecret', 'tok_0123456789']) {
    assert.equal(row.includes(secret), false, `${secret.slice(0, 8)}… stored in clear`);
  }
  const service = (await platform.services.get(uuid))!;
  assert.deepEqual(service.provision_data, NESTED);
  assert.deepEqual(service.service_data, { username: 'ann', password: 'T0pLevelSecret', extra: { token: 'tok_0123456789' } });
});

test('the admin view of a service leaves secret members out at any depth', async () => {
  const view = (await platform.ops.describeService(uuid));
  assert.deepEqual(view.provision_data, { account_name: 'svc_1', credentials: { username: 'ann', history: [{}] } });
  assert.deepEqual(view.service_data, { username: 'ann', extra: {} });
});
