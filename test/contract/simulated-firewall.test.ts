// Runs the firewall contract against the simulated twin (the shared engine over the in-memory kernel).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SimulatedFirewall } from '../../panel/dataplane/firewall/simulated/simulated-firewall.ts';
import { API_PORT, runFirewallContract, server } from './firewall.contract.ts';

runFirewallContract('simulated', async () => {
  const firewall = new SimulatedFirewall({ apiPort: API_PORT });
  return { firewall, raw: firewall.kernel, cleanup: async () => undefined };
});

describe('SimulatedFirewall kernel', () => {
  it('refuses what the kernel refuses: unknown jump target or set, deleting a missing rule, destroying a set in use', async () => {
    const fw = new SimulatedFirewall({ apiPort: API_PORT });
    await assert.rejects(fw.kernel.restore(4, '*filter\n-A INPUT -j NOPE\nCOMMIT\n'), /Chain 'NOPE' does not exist/);
    await assert.rejects(fw.kernel.restore(4, '*mangle\n:X - [0:0]\n-A X -j SET --map-set nope src --map-mark\nCOMMIT\n'), /Set nope doesn't exist/);
    await assert.rejects(fw.kernel.restore(4, '*filter\n-D INPUT -j ACCEPT\nCOMMIT\n'), /Bad rule/);
    assert.ok(!(await fw.kernel.save(4)).includes(':X '), 'a failed table is not committed');
    await fw.ensureServer(server('wg61'));
    await assert.rejects(fw.kernel.ipsetRestore(['destroy vpnhost-wg61-4']), /in use/);
    await assert.rejects(fw.kernel.restore(4, '*filter\n-X VPNHOST-FWD-wg61\nCOMMIT\n'), /busy/);
  });

  it('counters bumped in the kernel show in the views', async () => {
    const fw = new SimulatedFirewall({ apiPort: API_PORT });
    await fw.ensureServer(server('wg61'));
    fw.kernel.count(4, 'nat', 'VPNHOST-POST-wg61', 'SNAT', 1500);
    assert.ok(fw.kernel.countSetEntry('vpnhost-wg61-4', '10.61.0.2', 60));
    assert.match(await fw.natRules('wg61'), /\[1:1500\] -A VPNHOST-POST-wg61 /);
    assert.match(await fw.mangleRules('wg61', 11), /add vpnhost-wg61-4 10\.61\.0\.2 packets 1 bytes 60 skbmark 0xb\/0xffffff/);
  });
});
