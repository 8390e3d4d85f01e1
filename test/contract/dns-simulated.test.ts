// Runs the DNS contract against the simulated resolver twin.
import { SimulatedDns } from '../../panel/dataplane/dns/simulated/simulated-dns.ts';
import { runDnsContract } from './dns.contract.ts';

runDnsContract('simulated', async () => {
  const dns = new SimulatedDns();
  return {
    dns,
    listen: ['10.77.0.1', '10.78.0.1'],
    kill: async () => dns.crash(),
    // The twin's state lives in the instance: a "restarted" panel sees the same object.
    restart: () => dns,
    cleanup: async () => undefined,
  };
});
