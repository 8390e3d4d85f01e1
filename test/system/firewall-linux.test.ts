// Firewall contract on the linux implementation (iptables, ip6tables, ipset, sysctl) in a namespace, and twin equality.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { Firewall } from '../../panel/dataplane/firewall/firewall.ts';
import { SimulatedFirewall } from '../../panel/dataplane/firewall/simulated/simulated-firewall.ts';
import { IptablesFirewall, LinuxFirewallBackend } from '../../panel/dataplane/firewall/linux/iptables-firewall.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { API_PORT, CONF, rule, runFirewallContract, server } from '../contract/firewall.contract.ts';
import { createNamespace, destroyNamespace } from '../helpers/netns.ts';
import { requireTools } from '../helpers/require-tools.ts';

export const FIREWALL_TOOLS = ['ip', 'iptables', 'iptables-save', 'iptables-restore', 'ip6tables-save', 'ip6tables-restore', 'ipset', 'conntrack', 'sysctl'];
const gate = (t: TestContext) => requireTools(t, FIREWALL_TOOLS, { root: true });

runFirewallContract(
  'linux (iptables + ipset in a network namespace)',
  async () => {
    const ns = await createNamespace('vhfw');
    const runner = new ExecaRunner({ netns: ns });
    return {
      firewall: new IptablesFirewall({ runner, apiPort: API_PORT }),
      raw: new LinuxFirewallBackend(runner),
      cleanup: () => destroyNamespace(ns),
    };
  },
  { gate },
);

describe('the simulated twin equals linux', () => {
  it('same scenario, same dump and same text views (counters aside)', async (t) => {
    if (!gate(t)) return;
    const ns = await createNamespace('vhfq');
    try {
      const linux = new IptablesFirewall({ runner: new ExecaRunner({ netns: ns }), apiPort: API_PORT, families: [4, 6] });
      const twin = new SimulatedFirewall({ apiPort: API_PORT });
      const run = async (fw: Firewall): Promise<string[]> => {
        await fw.ensureGlobal({ ...CONF, policy_input: 'DROP', internal_traffic: false }, [rule('r1', { s_ip: '10.9.0.0/16' }), rule('r2', { protocol: 'ICMP', d_ip: 'fd00::/8' })]);
        await fw.ensureServer(server('wg61', {
          subnets: ['10.61.0.1/24', 'fd00:61::1/64'],
          externalInterface: 'eth0',
          peers: [{ mark: 11, address: '10.61.0.2', addressIpv6: 'fd00:61::2' }, { mark: 12, address: '10.61.0.3', addressIpv6: null }],
          forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.61.0.2', to_port: 80 }, { dst_port: 5300, protocol: 'udp', to_ip: '10.61.0.3', to_port: 53 }],
        }));
        await fw.ensureServer(server('wg62', { subnets: ['10.62.0.1/24'], externalIp: null, listenPort: 51821, internalTraffic: false, peers: [{ mark: 21, address: '10.62.0.2', addressIpv6: null }] }));
        await fw.addFilterRule(rule('top1', { protocol: 'UDP', d_port: '53' }), 'top');
        await fw.applyPeers('wg61', { upsert: [{ mark: 13, address: '10.61.0.4', addressIpv6: 'fd00:61::4' }], remove: [12] });
        const views = [await fw.dump(), await fw.natRules('wg61'), await fw.filterRules('wg61'), await fw.mangleRules('wg61', 11), await fw.natRules('wg62')];
        views.push(JSON.stringify(await fw.natList()), JSON.stringify(await fw.mangleList()), JSON.stringify(await fw.listServers()));
        return views.map((v) => v.replace(/\[\d+:\d+\]/g, '[c]').replace(/packets \d+ bytes \d+/g, 'packets p bytes b').replace(/"(packets|bytes)":\d+/g, '"$1":0'));
      };
      assert.deepEqual(await run(twin), await run(linux));
      assert.deepEqual(twin.stats(), linux.stats(), 'the same writes');
    } finally {
      await destroyNamespace(ns);
    }
  });
});
