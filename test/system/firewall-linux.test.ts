// Firewall contract on the linux implementation (iptables, ip6tables, ipset, sysctl) inside a test namespace.
import type { TestContext } from 'node:test';
import { IptablesFirewall, LinuxFirewallBackend } from '../../panel/dataplane/firewall/linux/iptables-firewall.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { API_PORT, runFirewallContract } from '../contract/firewall.contract.ts';
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
