// The record the traffic-logging pipeline ships for a logged packet (account attached); the packet itself is the data plane's FlowEvent.
import type { FlowEvent } from '../../dataplane/traffic-log/flow-event.ts';

export type { FlowEvent, FlowState } from '../../dataplane/traffic-log/flow-event.ts';

/** A flow attributed to an account: what goes to syslog and the TSDB. */
export interface FlowRecord {
  event: FlowEvent;
  /** Account (peer) name and its tunnel address. */
  account: string;
  address: string;
  /** Whether the peer opened the connection (false: opened towards the peer, e.g. a port forward). */
  outgoing: boolean;
}
