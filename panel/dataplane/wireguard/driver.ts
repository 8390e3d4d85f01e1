// The WireGuard seam of the data plane (links, keys, peers), implemented by `linux` (real tools) and `simulated`.
import type { PeerTransfers } from '../render/parse-wg-transfers.ts';

export type { PeerTransfers };

/** One WireGuard interface as the store wants it. */
export interface InterfaceSpec {
  /** Interface name, `wg<number>`; unique on the host (wireguard-go sockets live in a shared /var/run/wireguard). */
  name: string;
  /** Base64 private key of the interface. */
  privateKey: string;
  /** UDP listen port. */
  listenPort: number;
  /** Server address in its subnet as CIDR, e.g. `10.0.1.1/24`. */
  address: string;
  /** Optional IPv6 address as CIDR, or null. */
  addressIpv6: string | null;
  /** MTU; 0 means the tool's default (1420). */
  mtu: number;
}

/** One peer as the store wants it. */
export interface PeerSpec {
  /** Base64 public key of the peer. */
  publicKey: string;
  /** Allowed IPs as CIDRs (`10.0.1.2/32`, optionally an IPv6 /128). */
  allowedIps: string[];
  /** PersistentKeepalive seconds the server sends; 0 = off. */
  persistentKeepalive: number;
  /**
   * `ip:port` (`[v6]:port`) to send to until the peer's own packets say otherwise; absent = leave as is. Set when a
   * suspended peer comes back, with its endpoint from the dump taken before it was removed.
   */
  endpoint?: string | null;
}

/** A batch of peer changes on one interface, applied as one `wg set` (chunked only when huge). */
export interface PeerChanges {
  /** Peers to add or update (matched by public key). */
  upsert: PeerSpec[];
  /** Public keys of peers to remove. */
  remove: string[];
}

/** Live state of one peer, as `wg show <if> dump` reports it. */
export interface PeerState {
  publicKey: string;
  /** `ip:port` of the last packet, or null when none yet. */
  endpoint: string | null;
  allowedIps: string[];
  /** Unix seconds of the latest handshake; 0 when never. */
  latestHandshake: number;
  /** Bytes received from the peer. */
  transferRx: number;
  /** Bytes sent to the peer. */
  transferTx: number;
  /** Seconds; 0 = off. */
  persistentKeepalive: number;
}

/** A peer with a recent handshake, as GET /wireguard/online lists it: what the dump says, without allowed IPs. */
export type PeerSession = Pick<PeerState, 'publicKey' | 'endpoint' | 'latestHandshake' | 'transferRx' | 'transferTx'>;

/** Live state of one interface. */
export interface InterfaceState {
  name: string;
  publicKey: string;
  listenPort: number;
  /** Addresses on the link as CIDRs. */
  addresses: string[];
  mtu: number;
  /** Whether the link is administratively up. */
  up: boolean;
  peers: PeerState[];
}

/** Versions of the WireGuard pieces, as the tools print them. */
export interface WireguardVersions {
  wireguard: string;
  'wireguard-dkms': string;
  'wireguard-tools': string;
}

/** One network the host already uses: an address on a link, or a destination of the main routing table. */
export interface HostNetwork {
  /** CIDR as `ip` lists it: `10.199.0.1/30` for an address (host bits kept), `10.50.0.0/16` for a route. */
  cidr: string;
  /** `address` (on a link, any scope) or `route` (main table, IPv4 and IPv6; default routes left out). */
  source: 'address' | 'route';
  /** Link it is on or routed through; null for a route without one (blackhole, unreachable, prohibit). */
  dev: string | null;
}

/** Result of a health probe. */
export interface DriverHealth {
  ok: boolean;
  /** Why not ok, for the status text. */
  detail?: string;
}

/**
 * The WireGuard subsystem of a gateway: links, their keys and addresses, and peers. NAT, marks and filter rules
 * are the firewall subsystem's (`firewall/firewall.ts`), bandwidth the shaper's (`shaping/shaping.ts`); the three
 * travel together in the `Dataplane` bundle (`dataplane.ts`). The store is the desired state; a driver only makes
 * the host match what it is told. Every method is idempotent. Implementations: `LinuxDriver` (wg, wireguard-go,
 * ip) and `SimulatedDriver` (in memory, same invariants, same errors, same dump shapes).
 */
export interface Driver {
  /** `linux` or `simulated`. */
  readonly kind: 'linux' | 'simulated';
  /** Probes that the tools work; used by `status` and reload. */
  health(): Promise<DriverHealth>;
  /** Versions of kernel module / wireguard-go and wireguard-tools. */
  versions(): Promise<WireguardVersions>;
  /** Names of the WireGuard interfaces this driver manages that exist now. */
  listInterfaces(): Promise<string[]>;
  /**
   * Creates the interface when missing, otherwise changes in place only what differs (key, port, address, MTU).
   * Never touches peers and never restarts a link that is already right.
   */
  ensureInterface(spec: InterfaceSpec): Promise<void>;
  /** Removes the interface; no-op when absent. */
  removeInterface(name: string): Promise<void>;
  /** Applies peer additions, updates and removals with one incremental `wg set` (no syncconf, no restart). */
  applyPeers(name: string, changes: PeerChanges): Promise<void>;
  /** Live state of an interface, or null when it does not exist. */
  inspect(name: string): Promise<InterfaceState | null>;
  /**
   * The transfer counters of every peer of an interface (the traffic sampler's read: one `wg show <if> dump`, no
   * link query, no per-peer objects, dump order), or null when the interface does not exist.
   */
  transfers(name: string): Promise<PeerTransfers | null>;
  /**
   * The peers whose latest handshake is at or after `since` (Unix seconds, > 0) in `wg show`'s order (latest first,
   * ties by key), with endpoint and counters: the read behind GET /wireguard/online, which needs neither the link nor
   * every peer as an object. Null when the interface does not exist.
   */
  sessions(name: string, since: number): Promise<PeerSession[] | null>;
  /**
   * Networks the host uses now: every link's addresses (the managed WireGuard links' included, tagged by `dev`)
   * and the main table's route destinations, IPv4 and IPv6, without default routes. The services refuse server
   * and peer addresses overlapping any of them (besides the server's own interfaces).
   */
  hostNetworks(): Promise<HostNetwork[]>;
  /** Releases resources held by the driver (not the interfaces: they outlive the panel). */
  close(): Promise<void>;
}

/**
 * Raised by `ensureInterface` when the interface name is held by a live WireGuard daemon this driver cannot see as
 * a link (another namespace's wireguard-go answers on the shared /var/run/wireguard/<name>.sock). The services
 * answer it with `Interface already in use`.
 */
export class InterfaceHeldError extends Error {
  constructor(readonly iface: string, readonly detail: string) {
    super(`interface ${iface} is held by a running WireGuard daemon: ${detail}`);
    this.name = 'InterfaceHeldError';
  }
}

/** Error raised by a driver when a tool fails; `detail` holds the tool's stderr (never secrets). */
export class DataplaneError extends Error {
  constructor(message: string, readonly detail?: string) {
    super(message);
    this.name = 'DataplaneError';
  }
}
