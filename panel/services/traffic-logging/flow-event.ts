// One connection event as the traffic-logging pipeline carries it, and the record shipped for it (account attached).

/** Connection states the logging flags select (the spec's `new`/`established`/`related`/`invalid`/`untracked`). */
export type FlowState = 'new' | 'established' | 'related' | 'invalid' | 'untracked' | 'destroy';

/** One event of the kernel source, in the direction of the connection's first packet (the "original" tuple). */
export interface FlowEvent {
  /** When the kernel reported it. */
  time: Date;
  state: FlowState;
  family: 4 | 6;
  /** `tcp`, `udp`, `icmp`, ... as conntrack names it. */
  protocol: string;
  src: string;
  dst: string;
  sport: number | null;
  dport: number | null;
  /** The connection mark (`mark=`), null when the kernel reports none. */
  mark: number | null;
  /** Bytes of the original direction (`bytes=`, with nf_conntrack_acct), null when not reported. */
  bytes: number | null;
  /** conntrack's id of the connection, null when not reported. */
  id: number | null;
}

/** A flow attributed to an account: what goes to syslog and the TSDB. */
export interface FlowRecord {
  event: FlowEvent;
  /** Account (peer) name and its tunnel address. */
  account: string;
  address: string;
  /** Server interface the account belongs to (the connection came in through it). */
  interface_in: string;
  /** Whether the peer opened the connection (false: opened towards the peer, e.g. a port forward). */
  outgoing: boolean;
}
