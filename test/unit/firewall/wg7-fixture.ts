// The server the iptables fixtures were saved from (test/fixtures/iptables/README.md), shared by the render tests.
import type { ServerRuleInput } from '../../../panel/dataplane/render/firewall-rules.ts';

/** wg7: one IPv4 and one IPv6 subnet, an external IP, its own internal traffic off, one port forward. */
export const WG7: ServerRuleInput = {
  name: 'wg7',
  networks: { 4: ['10.7.0.0/24'], 6: ['fd00:7::/64'] },
  externalIp: '192.0.2.1',
  externalInterface: null,
  internalTraffic: false,
  globalInternalTraffic: true,
  forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.7.0.2', to_port: 80 }],
};
