// One logged packet as the kernel source hands it over (NFLOG, decoded by ulogd or pushed by the twin).
import type { LogState } from '../render/traffic-log-chain.ts';

/** Connection states the logging flags select (the spec's `new`/`established`/`related`/`invalid`/`untracked`). */
export type FlowState = LogState;

/**
 * One packet the kernel logged through NFLOG (the state rule's prefix names its connection state), as ulogd
 * decoded it. Addresses and ports are the packet's own, so for `established` they are the opener's direction.
 */
export interface FlowEvent {
  /** When the kernel logged it. */
  time: Date;
  state: FlowState;
  family: 4 | 6;
  /** `tcp`, `udp`, `icmp`, `ipv6-icmp`, ... (IANA keyword; the number for others). */
  protocol: string;
  src: string;
  dst: string;
  sport: number | null;
  dport: number | null;
  /** Interface the packet came in through (`wg0`, `ipsec0`, `eth0`). */
  interface_in: string;
  /** Interface it leaves through (`eth0`, `wg0`); null when addressed to the gateway itself (INPUT). */
  interface_out: string | null;
  /** The packet's length in bytes (IPv4 total length; IPv6 payload length + 40). */
  length: number;
  /** IPv4 TOS byte / IPv6 traffic class. */
  tos: number;
  /** The packet's firewall mark (the peer mark: low 24 bits; the tunnel bit 0x1000000). */
  mark: number;
}
