// Runs the data-plane bundle contract against the simulated twins (WireGuard, firewall, shaping).
import { randomInt } from 'node:crypto';
import { createSimulatedDataplane } from '../../panel/dataplane/create-dataplane.ts';
import type { Dataplane } from '../../panel/dataplane/dataplane.ts';
import { FirewallEngine } from '../../panel/dataplane/firewall/firewall-engine.ts';
import { SimulatedFirewall } from '../../panel/dataplane/firewall/simulated/simulated-firewall.ts';
import { SimulatedShaper, SimulatedTc } from '../../panel/dataplane/shaping/simulated/simulated-shaper.ts';
import { SimulatedDriver } from '../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { runDataplaneContract } from './dataplane.contract.ts';

runDataplaneContract('simulated', async () => {
  const wireguard = new SimulatedDriver();
  const firewall = new SimulatedFirewall({ apiPort: 8080 });
  const tc = new SimulatedTc();
  const exists = async (name: string) => (await wireguard.listInterfaces()).includes(name);
  const bundle = (fw: FirewallEngine): Dataplane =>
    createSimulatedDataplane({ wireguard, firewall: fw, shaper: new SimulatedShaper({ kernel: tc, interfaceExists: exists }) });
  let current = bundle(firewall);
  return {
    get dataplane() {
      return current;
    },
    // The links, rules and tc objects outlive the panel: same kernels, fresh subsystem objects with empty memories.
    restart: async () => (current = bundle(new FirewallEngine(firewall.kernel, { apiPort: 8080 }))),
    externalIp: `192.0.2.${randomInt(1, 250)}`,
    snapshot: async (iface) => {
      const peers = (await current.wireguard.inspect(iface))?.peers.map((p) => `${p.publicKey} ${p.allowedIps.join(',')}`).sort() ?? [];
      return [await current.firewall.dump(), await current.shaper.show(iface), ...peers].join('\n');
    },
    cleanup: async () => undefined,
  };
});
