// The VPN product's panel client against a real panel process: typed answers, verbatim panel errors, unreachable
// panels, aborts, and idempotent account creation (adoption, address races).
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { after, before, test } from 'node:test';
import { AddressPool } from '../../../module/modules/Product/VpnProduct/address-pool.ts';
import { ACCOUNT_OWNED_BY_OTHER, createAccountIdempotent } from '../../../module/modules/Product/VpnProduct/create-account.ts';
import { PanelClient, PanelError, PanelUnreachableError } from '../../../module/modules/Product/VpnProduct/panel-client.ts';
import { accountNameFor } from '../../../module/modules/Product/VpnProduct/schemas.ts';
import { panel } from '../../fixtures/platform/http.ts';
import { freePort, removeDir, startPanel, type PanelProcess } from '../../fixtures/platform/processes.ts';
import { createServer } from '../../fixtures/platform/setup.ts';

let p: PanelProcess;
let client: PanelClient;

before(async () => {
  p = await startPanel();
  await createServer(p, 'edge', '10.79.0.1/28');
  client = new PanelClient({ apiUrl: `${p.url}/api/v1/`, accessHash: p.accessHash });
});

after(async () => {
  await client?.close();
  await p?.stop();
  if (p) removeDir(p.dataDir);
});

test('answers are parsed with the panel schemas', async () => {
  const status = await client.systemStatus();
  assert.equal(typeof status.version, 'string');
  assert.equal(status.count_wireguard, 1);
  const servers = await client.listServers();
  assert.deepEqual(Object.keys(servers), ['edge']);
  assert.equal(servers.edge.address, '10.79.0.1/28');
  const free = await client.availableIps('edge');
  assert.equal(free.length, 13);
  assert.equal(await client.findAccount('nobody'), null);
});

test('panel errors surface verbatim; the wrong hash is `Not authorized`', async () => {
  await assert.rejects(client.getAccount('nobody'), (err: unknown) => err instanceof PanelError && err.message === 'Account not found');
  await assert.rejects(
    client.createAccount({ wg_name: 'nosuch', allowed_IPs: '10.79.0.2/32' }),
    (err: unknown) => err instanceof PanelError && err.message === 'Wireguard server not valid',
  );
  const stranger = new PanelClient({ apiUrl: p.url, accessHash: '0'.repeat(80) });
  try {
    await assert.rejects(stranger.systemStatus(), (err: unknown) => err instanceof PanelError && err.message === 'Not authorized');
  } finally {
    await stranger.close();
  }
});

test('an unreachable panel, a foreign answer and an abort are told apart', async () => {
  const port = await freePort();
  const down = new PanelClient({ apiUrl: `http://127.0.0.1:${port}`, accessHash: 'x' });
  try {
    await assert.rejects(down.systemStatus(), (err: unknown) => err instanceof PanelUnreachableError && /^cannot reach panel: .*ECONNREFUSED/.test(err.message));
  } finally {
    await down.close();
  }
  const foreign = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>'));
  await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', r));
  const other = new PanelClient({ apiUrl: `http://127.0.0.1:${(foreign.address() as { port: number }).port}`, accessHash: 'x' });
  try {
    await assert.rejects(other.systemStatus(), /unexpected answer from panel: HTTP 200, not JSON/);
  } finally {
    await other.close();
    foreign.close();
  }
  const controller = new AbortController();
  controller.abort(new Error('job timed out'));
  await assert.rejects(client.systemStatus(controller.signal), /job timed out/);
});

test('createAccountIdempotent adopts its own account and refuses one owned by another username', async () => {
  const addresses = new AddressPool();
  const params = { wg_name: 'edge', name: accountNameFor('0123456789ab-cdef'), username: 'idem_user', password: 'Passw0rdXYZ', b_download: 7, b_upload: 7 };
  const first = await createAccountIdempotent({ client, addresses, poolKey: 'lab/edge', params });
  const again = await createAccountIdempotent({ client, addresses, poolKey: 'lab/edge', params });
  assert.deepEqual(again, first);
  const all = await client.listAccounts();
  assert.equal(all.filter((a) => a.username === 'idem_user').length, 1);
  await assert.rejects(
    createAccountIdempotent({ client, addresses, poolKey: 'lab/edge', params: { ...params, username: 'someone_else' } }),
    (err: unknown) => err instanceof PanelError && err.message === ACCOUNT_OWNED_BY_OTHER(params.name),
  );
  await client.deleteAccount(first.name);
});

test('an address taken by another writer is retried with the next free one', async () => {
  const addresses = new AddressPool();
  const key = 'lab/edge';
  const fetch = () => client.availableIps('edge');
  const next = await addresses.take(key, fetch, 'edge');
  addresses.release(key, next);
  const foreign = await panel(p.url, p.accessHash, 'POST', '/account', { wg_name: 'edge', allowed_IPs: `${next}/32`, name: 'foreign', username: 'foreign' });
  assert.equal(foreign.error, '');
  const account = await createAccountIdempotent({ client, addresses, poolKey: key, params: { wg_name: 'edge', name: 'race_winner', username: 'race_winner' } });
  assert.notEqual(account.allowed_IPs.replace(/\/32$/, ''), next);
  assert.equal(account.wg_name, 'edge');
  await client.deleteAccount('foreign');
  await client.deleteAccount('race_winner');
});

test('creation fails with `no free address` once the server has no free address left', async () => {
  const addresses = new AddressPool();
  const made: string[] = [];
  try {
    for (;;) {
      const free = await client.availableIps('edge');
      if (free.length === 0) break;
      const name = `fill_${made.length}`;
      await client.createAccount({ wg_name: 'edge', allowed_IPs: `${free[0]}/32`, name, username: name });
      made.push(name);
    }
    await assert.rejects(
      createAccountIdempotent({ client, addresses, poolKey: 'lab/edge', params: { wg_name: 'edge', name: 'one_too_many', username: 'one_too_many' } }),
      /no free address on edge/,
    );
  } finally {
    for (const name of made) await client.deleteAccount(name);
  }
});
