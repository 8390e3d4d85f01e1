// The write side of the subsystems driven beside WireGuard/firewall/shaping (DNS, IPsec, traffic-log chains), bound to the lane.
import type { DnsApplyOutcome, DnsConfig } from '../dataplane/dns/dns.ts';
import type { Firewall } from '../dataplane/firewall/firewall.ts';
import type { Ipsec, IpsecDesired, IpsecUser } from '../dataplane/ipsec/ipsec.ts';
import type { TrafficLogChainSpec } from '../dataplane/render/traffic-log-chain.ts';
import type { Dns } from '../dataplane/dns/dns.ts';

/** Writes of the DNS resolver (unbound): its one writer is `DnsService`. */
export interface DnsWriter {
  /** Starts, changes live, reloads or stops the resolver so it serves `config` (null: stopped). */
  apply(config: DnsConfig | null): Promise<DnsApplyOutcome>;
}

/** Writes of the IPsec responder (charon): its one writer is `Ikev2Sync` (and SA terminations of `Ikev2Sessions`). */
export interface IpsecWriter {
  apply(desired: IpsecDesired): Promise<void>;
  stop(): Promise<void>;
  upsertUser(user: IpsecUser): Promise<void>;
  removeUser(username: string): Promise<void>;
  /** Ends the SAs of `username`; answers how many ended. */
  terminate(username: string): Promise<number>;
}

/** Writes of traffic logging's NFLOG chains in the firewall: its one writer is `LogChainFollower`. */
export interface TrafficLogWriter {
  setTrafficLog(spec: TrafficLogChainSpec | null): Promise<void>;
}

/** The writers `DataplaneSync` hands out, one per subsystem; each writes only while the lane runs. */
export interface LaneWriters {
  readonly dns: DnsWriter;
  readonly ipsec: IpsecWriter;
  readonly trafficLog: TrafficLogWriter;
}

/** A subsystem write attempted while the data-plane lane was not running a task: a programming error. */
export class OutsideLaneError extends Error {
  constructor(readonly write: string) {
    super(`${write}: a data-plane write outside the lane (run it inside DataplaneSync.serial)`);
    this.name = 'OutsideLaneError';
  }
}

/**
 * The writers over the subsystems' seams, each call checked to run inside the lane (`inLane`), so every data-plane
 * write is ordered with the others and with the store writes of the same task.
 */
export function laneWriters(seams: { dns: Dns; ipsec: Ipsec; firewall: Firewall }, inLane: () => boolean): LaneWriters {
  const guard = <A extends unknown[], R>(write: string, fn: (...args: A) => Promise<R>) => (...args: A): Promise<R> =>
    inLane() ? fn(...args) : Promise.reject(new OutsideLaneError(write));
  const { dns, ipsec, firewall } = seams;
  return {
    dns: { apply: guard('dns.apply', (config: DnsConfig | null) => dns.apply(config)) },
    ipsec: {
      apply: guard('ipsec.apply', (desired: IpsecDesired) => ipsec.apply(desired)),
      stop: guard('ipsec.stop', () => ipsec.stop()),
      upsertUser: guard('ipsec.upsertUser', (user: IpsecUser) => ipsec.upsertUser(user)),
      removeUser: guard('ipsec.removeUser', (username: string) => ipsec.removeUser(username)),
      terminate: guard('ipsec.terminate', (username: string) => ipsec.terminate(username)),
    },
    trafficLog: { setTrafficLog: guard('firewall.setTrafficLog', (spec: TrafficLogChainSpec | null) => firewall.setTrafficLog(spec)) },
  };
}
