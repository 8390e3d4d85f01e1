// Runs the data-plane bundle contract on the linux bundle (wireguard-go, iptables + ipset, tc) inside a namespace.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createDataplane } from '../../panel/dataplane/create-dataplane.ts';
import type { Dataplane } from '../../panel/dataplane/dataplane.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { runDataplaneContract } from '../contract/dataplane.contract.ts';
import { createNamespace, destroyAll, destroyNamespace, vethPair } from '../helpers/netns.ts';
import { requireTools } from '../helpers/require-tools.ts';

const TOOLS = ['wg', 'wireguard-go', 'ip', 'iptables', 'iptables-save', 'iptables-restore', 'ip6tables', 'ipset', 'tc', 'sysctl'];
after(() => destroyAll());

/** tc prints live counters and HTB token state; neither is state the panel owns. */
const stripCounters = (text: string) => text.replace(/Sent \d+ bytes \d+ pkt \(dropped \d+, overlimits \d+\)/g, 'Sent …');

runDataplaneContract(
  'linux',
  async () => {
    const ns = await createNamespace('vhdp');
    const peerNs = await createNamespace('vhdq');
    await vethPair(ns, peerNs, '10.195.0.1/30', '10.195.0.2/30');
    const dataDir = mkdtempSync(join(tmpdir(), 'vpnhost-dp-linux-'));
    const make = () =>
      createDataplane({ kind: 'linux', dataDir, wireguard: 'userspace', runner: new ExecaRunner({ netns: ns }), apiPort: null });
    let current: Dataplane = await make();
    return {
      get dataplane() {
        return current;
      },
      restart: async () => (current = await make()),
      externalIp: '10.195.0.1',
      snapshot: async (iface) => {
        const peers = (await current.wireguard.inspect(iface))?.peers.map((p) => `${p.publicKey} ${p.allowedIps.join(',')}`).sort() ?? [];
        return [await current.firewall.dump(), stripCounters(await current.shaper.show(iface)), ...peers].join('\n');
      },
      cleanup: async () => {
        await current.close();
        await destroyNamespace(peerNs);
        await destroyNamespace(ns);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
  { gate: (t) => requireTools(t, TOOLS, { root: true }) },
);
