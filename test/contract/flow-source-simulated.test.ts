// Runs the FlowSource contract against the in-memory twin.
import { SimulatedFlowSource } from '../../panel/dataplane/traffic-log/simulated/simulated-flow-source.ts';
import { runFlowSourceContract } from './flow-source.contract.ts';

runFlowSourceContract('simulated', async () => {
  const source = new SimulatedFlowSource();
  const expected = { src: '10.8.0.2', dst: '192.0.2.10', protocol: 'icmp', family: 4 as const };
  return {
    source,
    expected,
    produce: async () =>
      source.emit({
        time: new Date(), state: 'new', family: 4, protocol: 'icmp', src: expected.src, dst: expected.dst, sport: null, dport: null,
        interface_in: 'wg0', interface_out: 'eth0', length: 84, tos: 0, mark: 7,
      }),
    cleanup: async () => undefined,
  };
});
