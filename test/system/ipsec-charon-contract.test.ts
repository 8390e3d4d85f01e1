// Runs the IPsec contract against the linux charon seam inside a network namespace (real charon-systemd, swanctl, vici),
// in both modes: one connection and pool per account, and one shared connection with the panel's identity leases.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CharonIpsec } from '../../panel/dataplane/ipsec/linux/charon-ipsec.ts';
import { ViciSession } from '../../panel/dataplane/ipsec/linux/vici-client.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { contractDesired, runIpsecContract } from '../contract/ipsec.contract.ts';
import { createNamespace, destroyNamespace, hostLink } from '../helpers/netns.ts';
import { requireTools } from '../helpers/require-tools.ts';

for (const leases of [false, true]) {
  runIpsecContract(leases ? 'linux charon, one shared connection + identity leases' : 'linux charon, one connection per account', async () => {
    const ns = await createNamespace('vhic');
    const dir = mkdtempSync(join(tmpdir(), 'vpnhost-ipsec-contract-'));
    // with leases the responder listens in this process's namespace; charon's dhcp plugin reaches it over a veth
    let identityLeases = {};
    try {
      if (leases) identityLeases = { identityLeases: { address: (await hostLink(ns)).hostIp } };
    } catch (err) {
      await destroyNamespace(ns); // a setup that fails leaves nothing behind (the suite's teardown only sees a built fixture)
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    const made: CharonIpsec[] = [];
    const make = () => {
      const ipsec = new CharonIpsec({ runner: new ExecaRunner({ netns: ns }), dir, libipsec: true, ...identityLeases });
      made.push(ipsec);
      return ipsec;
    };
    const first = make();
    return {
      ipsec: first,
      kill: async (pid) => {
        process.kill(pid, 'SIGKILL');
        for (let i = 0; i < 100; i++) {
          try {
            process.kill(pid, 0);
          } catch {
            return;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      },
      restart: make,
      cleanup: async () => {
        for (const ipsec of made) await ipsec.close();
        await destroyNamespace(ns);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }, { gate: (t) => requireTools(t, ['swanctl', 'charon-systemd', 'ip'], { root: true }) });
}

test('switching a running charon from one connection per account to the shared connection unloads the per-account conns and pools, keeps the secrets', async (t) => {
  if (!requireTools(t, ['swanctl', 'charon-systemd', 'ip'], { root: true })) return;
  const ns = await createNamespace('vhim');
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-ipsec-switch-'));
  const runner = new ExecaRunner({ netns: ns });
  const perAccount = new CharonIpsec({ runner, dir, libipsec: true });
  let shared: CharonIpsec | null = null;
  try {
    shared = new CharonIpsec({ runner, dir, libipsec: true, identityLeases: { address: (await hostLink(ns)).hostIp } });
    const users = [
      { username: 'alice', password: 'pw-a', address: '10.9.0.2', dns: [] },
      { username: 'bob', password: 'pw-b', address: '10.9.0.3', dns: [] },
    ];
    const desired = contractDesired(users);
    const held = async () => {
      const s = await ViciSession.connect(perAccount.viciSocket);
      try {
        const conns = (await s.stream('list-conns', 'list-conn')).events.flatMap((e) => Object.keys(e)).sort();
        const pools = Object.keys(await s.request('get-pools')).sort();
        const shared = await s.request('get-shared');
        return { conns, pools, secrets: (Array.isArray(shared.keys) ? shared.keys : []).sort() };
      } finally {
        s.close();
      }
    };
    await perAccount.apply(desired);
    assert.deepEqual(await held(), { conns: ['u-alice', 'u-bob', 'vpnhost-probe'], pools: ['p-alice', 'p-bob'], secrets: ['s-alice', 's-bob'] });
    const pid = (await perAccount.status()).pid;
    await shared.apply(desired);
    assert.deepEqual(await held(), { conns: ['vpnhost-eap', 'vpnhost-probe'], pools: [], secrets: ['s-alice', 's-bob'] });
    assert.equal((await shared.status()).pid, pid, 'the same charon, not restarted');
    assert.equal(shared.leases?.leaseOf('bob'), '10.9.0.3');
    await shared.upsertUser({ username: 'carol', password: 'pw-c', address: '10.9.0.4', dns: [] });
    await shared.removeUser('alice');
    assert.deepEqual(await held(), { conns: ['vpnhost-eap', 'vpnhost-probe'], pools: [], secrets: ['s-bob', 's-carol'] });
    assert.equal(shared.leases?.leaseOf('carol'), '10.9.0.4');
    assert.equal(shared.leases?.leaseOf('alice'), null);
  } finally {
    await shared?.stop().catch(() => undefined);
    await shared?.close();
    await destroyNamespace(ns);
    rmSync(dir, { recursive: true, force: true });
  }
});
