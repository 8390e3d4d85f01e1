// One writer per subsystem: writers refuse outside the lane; a failed undo is logged and marks its subsystem for reconcile.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OutsideLaneError } from '../../../panel/services/lane-writers.ts';
import { envelope, makeHarness } from '../panel-core/harness.ts';

type Writable = Record<string, (...args: unknown[]) => Promise<unknown>>;

test('the DNS, IPsec and traffic-log writers write only inside the lane', async () => {
  const h = await makeHarness();
  try {
    const { writers } = h.app.services.dataplaneSync;
    await assert.rejects(writers.dns.apply(null), OutsideLaneError);
    await assert.rejects(writers.ipsec.stop(), OutsideLaneError);
    await assert.rejects(writers.trafficLog.setTrafficLog(null), (err: unknown) => err instanceof OutsideLaneError && err.write === 'firewall.setTrafficLog');
    assert.equal(await h.app.services.dataplaneSync.serial(() => writers.dns.apply(null)), 'unchanged');
    await h.app.services.dataplaneSync.serial(() => writers.trafficLog.setTrafficLog(null));
  } finally {
    await h.close();
  }
});

test('a failed undo is logged and marks the subsystem for reconcile; the next full reconcile repairs and clears it', async () => {
  const h = await makeHarness();
  try {
    assert.equal((await h.call('POST', '/api/v1/wireguard', { form: { name: 'srv' } })).statusCode, 200);
    const [iface] = await h.dataplane.wireguard.listInterfaces();
    const wg = h.dataplane.wireguard as unknown as Writable;
    const fw = h.dataplane.firewall as unknown as Writable;
    const wgApply = wg.applyPeers;
    const fwApply = fw.applyPeers;
    let wgCalls = 0;
    // the peer goes in, the firewall refuses its mark, and the peer's removal (the undo) fails too
    wg.applyPeers = async (...args) => (++wgCalls === 1 ? wgApply.apply(wg, args) : Promise.reject(new Error('wg: undo refused')));
    fw.applyPeers = async () => Promise.reject(new Error('ipset: boom'));
    const answer = await h.call('POST', '/api/v1/account', { form: { wg_name: 'srv', name: 'alice', allowed_IPs: '10.0.1.2' } });
    wg.applyPeers = wgApply;
    fw.applyPeers = fwApply;
    assert.equal(answer.statusCode, 500, answer.body);
    assert.equal(envelope(answer).status, 'error');
    assert.equal(wgCalls, 2, 'the change and its undo');
    const line = h.logs.find((l) => l.includes('undo of a failed data-plane change failed'));
    assert.ok(line, 'the failed undo is logged');
    const logged = JSON.parse(line) as { level: number; subsystem: string; iface: string; err: string };
    assert.deepEqual([logged.level, logged.subsystem, logged.iface, logged.err], [50, 'wireguard', iface, 'wg: undo refused']);
    assert.deepEqual(h.app.services.dataplaneSync.needsReconcile(), [`wireguard:${iface}`]);
    // the store has no alice, the kernel still has her peer until the reconcile
    assert.equal((await h.call('GET', '/api/v1/account/alice')).statusCode, 404);
    assert.equal((await h.dataplane.wireguard.inspect(iface))?.peers.length, 1);
    await h.app.services.dataplaneSync.reconcileAll();
    assert.deepEqual(h.app.services.dataplaneSync.needsReconcile(), []);
    assert.equal((await h.dataplane.wireguard.inspect(iface))?.peers.length, 0);
  } finally {
    await h.close();
  }
});
