// Runs the IPsec contract against the simulated IKEv2 responder.
import { SimulatedIpsec } from '../../panel/dataplane/ipsec/simulated/simulated-ipsec.ts';
import { runIpsecContract } from './ipsec.contract.ts';

runIpsecContract('simulated', async () => {
  const ipsec = new SimulatedIpsec();
  return { ipsec, kill: async () => ipsec.crash(), restart: () => ipsec, cleanup: async () => undefined };
});
