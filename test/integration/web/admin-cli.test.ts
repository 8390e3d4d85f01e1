// `vpnhost platform admin create|list`: a generated password printed once that logs in; a taken address refused.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { AdminUsers } from '../../../module/platform/services/admin-users.ts';
import { RoleRepository } from '../../../module/platform/services/roles.ts';
import { SessionStore } from '../../../module/platform/services/sessions.ts';
import { openQueryStore } from '../../../module/platform/store/query/query-store.ts';
import { removeDir, tempDir, vpnhostInProcess } from '../../fixtures/platform/processes.ts';

const dataDir = tempDir('admin-cli');
after(() => removeDir(dataDir));

test('admin create prints a generated password that authenticates; list shows the role; a taken address fails', async () => {
  const out = await vpnhostInProcess(['platform', 'admin', 'create', '--email', 'ops@example.com', '--name', 'Ops', '--data', dataDir]);
  const password = /password: (\S+)/.exec(out)?.[1];
  assert.ok(password && password.length >= 20, out);
  const store = await openQueryStore({ engine: 'sqlite', dataDir });
  try {
    const admins = new AdminUsers(store, new RoleRepository(store), new SessionStore(store));
    assert.equal((await admins.authenticate('ops@example.com', password))?.email, 'ops@example.com');
    assert.equal(await admins.authenticate('ops@example.com', 'not-the-password'), null);
  } finally {
    await store.close();
  }
  assert.match(await vpnhostInProcess(['platform', 'admin', 'list', '--data', dataDir]), /ops@example\.com\tAdministrator/);
  await assert.rejects(vpnhostInProcess(['platform', 'admin', 'create', '--email', 'ops@example.com', '--data', dataDir]), /exists/);
});
