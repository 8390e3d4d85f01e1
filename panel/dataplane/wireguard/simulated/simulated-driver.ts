// In-memory twin of the linux data plane: same invariants, same errors, same inspect shapes; for tests and demo.
import { setTimeout as sleep } from 'node:timers/promises';
import { normalizeAddress, normalizeAllowedIp } from '../../cidr.ts';
import {
  DataplaneError,
  InterfaceHeldError,
  type Driver,
  type DriverHealth,
  type HostNetwork,
  type InterfaceSpec,
  type InterfaceState,
  type PeerChanges,
  type PeerSession,
  type PeerState,
  type PeerTransfers,
  type WireguardVersions,
} from '../driver.ts';
import { isValidKey, publicKeyFrom } from '../../keys.ts';
import { sortPeers } from '../../render/peer-order.ts';
import type { ParkedPeer } from '../../render/parse-wg-transfers.ts';
import { checkInterfaceSpec } from '../../spec-check.ts';
import * as msg from '../../tool-messages.ts';

/** Options of the simulated driver. */
export interface SimulatedDriverOptions {
  /** Delay added to every call, to mimic tool latency (default 0). */
  latencyMs?: number;
  /** Clock for handshake defaults (unix seconds); defaults to the wall clock. */
  now?: () => number;
  /**
   * The host's own networks (besides the simulated WireGuard links, which are added as `ip` would list them);
   * default {@link SIMULATED_HOST_NETWORKS}.
   */
  hostNetworks?: HostNetwork[];
  /**
   * Interface names held by a live WireGuard daemon elsewhere (another namespace's wireguard-go socket):
   * creating one of them fails like the linux driver does, with {@link InterfaceHeldError}.
   */
  heldInterfaces?: string[];
}

/**
 * The simulated host: loopback (`127.0.0.1/8`, `::1/128` on `lo`) and a documentation uplink `eth0` with
 * `203.0.113.1/24` (TEST-NET-3, the address the fixed default-route probe reports) and its subnet route.
 */
export const SIMULATED_HOST_NETWORKS: readonly HostNetwork[] = [
  { cidr: '127.0.0.1/8', source: 'address', dev: 'lo' },
  { cidr: '::1/128', source: 'address', dev: 'lo' },
  { cidr: '203.0.113.1/24', source: 'address', dev: 'eth0' },
  { cidr: '203.0.113.0/24', source: 'route', dev: 'eth0' },
];

/** Operation counters, so tests can prove "one call per change" and "no restart". */
export interface SimulatedStats {
  /** ensureInterface calls. */
  ensureCalls: number;
  /** applyPeers calls (one `wg set` each on the real driver). */
  applyPeersCalls: number;
  /** Links created under a name this driver had removed before (a down/up cycle of an interface). */
  restarts: number;
  /** Links created, first time or not. */
  creates: number;
}

/** Live-traffic facts a test injects with {@link SimulatedDriver.simulateHandshake}. */
export interface SimulatedHandshake {
  /** `ip:port` the peer's packets came from. */
  endpoint: string;
  /** Unix seconds of the handshake (default: now). */
  at?: number;
  /** Bytes received from the peer (default: unchanged). */
  rx?: number;
  /** Bytes sent to the peer (default: unchanged). */
  tx?: number;
}

interface SimLink {
  spec: InterfaceSpec;
  publicKey: string;
  /** Simulated ifindex; changes only when the link is re-created. */
  index: number;
  peers: Map<string, PeerState>;
  /** Allowed IP → public key of the peer holding it, so an upsert moves addresses in O(its own IPs). */
  owners: Map<string, string>;
}

const fail = (tool: string, line: string): never => {
  throw new DataplaneError(msg.toolMessage(tool, line), line);
};

/**
 * The simulated data plane. State lives in memory for the life of the object (like links outlive the panel,
 * it outlives nothing). Errors carry the same texts the linux driver surfaces from wg and ip.
 */
export class SimulatedDriver implements Driver {
  readonly kind = 'simulated' as const;
  private readonly links = new Map<string, SimLink>();
  private readonly removed = new Set<string>();
  private readonly counters: SimulatedStats = { ensureCalls: 0, applyPeersCalls: 0, restarts: 0, creates: 0 };
  private nextIndex = 2;
  private readonly latencyMs: number;
  private readonly now: () => number;
  private host: HostNetwork[];
  private readonly held: Set<string>;

  constructor(opts: SimulatedDriverOptions = {}) {
    this.latencyMs = opts.latencyMs ?? 0;
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000));
    this.host = (opts.hostNetworks ?? SIMULATED_HOST_NETWORKS).map((n) => ({ ...n }));
    this.held = new Set(opts.heldInterfaces ?? []);
  }

  async health(): Promise<DriverHealth> {
    await this.delay();
    return { ok: true };
  }

  async versions(): Promise<WireguardVersions> {
    await this.delay();
    return { wireguard: 'simulated', 'wireguard-dkms': 'simulated', 'wireguard-tools': 'simulated' };
  }

  async listInterfaces(): Promise<string[]> {
    await this.delay();
    return [...this.links.keys()].sort();
  }

  async ensureInterface(spec: InterfaceSpec): Promise<void> {
    this.counters.ensureCalls++;
    await this.delay();
    checkInterfaceSpec(spec);
    const publicKey = publicKeyFrom(spec.privateKey);
    if (spec.listenPort !== 0) {
      for (const [name, link] of this.links) {
        if (name !== spec.name && link.spec.listenPort === spec.listenPort) fail('wg', msg.WG_ADDRESS_IN_USE);
      }
    }
    const link = this.links.get(spec.name);
    if (link) {
      link.spec = { ...spec };
      link.publicKey = publicKey;
      return;
    }
    if (this.held.has(spec.name)) throw new InterfaceHeldError(spec.name, msg.toolMessage('wireguard-go', msg.WG_GO_SOCKET_IN_USE));
    this.counters.creates++;
    if (this.removed.has(spec.name)) this.counters.restarts++;
    this.links.set(spec.name, { spec: { ...spec }, publicKey, index: this.nextIndex++, peers: new Map(), owners: new Map() });
  }

  async removeInterface(name: string): Promise<void> {
    await this.delay();
    if (this.links.delete(name)) this.removed.add(name);
  }

  async applyPeers(name: string, changes: PeerChanges): Promise<void> {
    this.counters.applyPeersCalls++;
    await this.delay();
    // wg parses the whole command line before touching the device: validation errors change nothing.
    for (const key of changes.remove) if (!isValidKey(key)) fail('wg', msg.wgBadKey(key));
    const upserts = changes.upsert.map((peer) => {
      if (!isValidKey(peer.publicKey)) fail('wg', msg.wgBadKey(peer.publicKey));
      const keepalive = peer.persistentKeepalive;
      if (!Number.isInteger(keepalive) || keepalive < 0 || keepalive > 65535) fail('wg', msg.wgBadKeepalive(keepalive));
      const allowedIps = peer.allowedIps.map((ip) => normalizeAllowedIp(ip) ?? fail('wg', msg.wgBadAllowedIp(ip)));
      return { publicKey: peer.publicKey, allowedIps: dedupe(allowedIps), keepalive, endpoint: peer.endpoint ?? null };
    });
    const link = this.links.get(name);
    if (!link) return fail('wg', msg.WG_NO_DEVICE);
    for (const key of changes.remove) {
      for (const ip of link.peers.get(key)?.allowedIps ?? []) link.owners.delete(ip);
      link.peers.delete(key);
    }
    for (const peer of upserts) {
      const current = link.peers.get(peer.publicKey);
      for (const ip of current?.allowedIps ?? []) link.owners.delete(ip);
      for (const ip of peer.allowedIps) {
        const holder = link.owners.get(ip);
        const other = holder && holder !== peer.publicKey ? link.peers.get(holder) : undefined;
        if (other) other.allowedIps = other.allowedIps.filter((held) => held !== ip); // wg moves the address
        link.owners.set(ip, peer.publicKey);
      }
      link.peers.set(peer.publicKey, {
        publicKey: peer.publicKey,
        endpoint: peer.endpoint ?? current?.endpoint ?? null,
        allowedIps: peer.allowedIps,
        latestHandshake: current?.latestHandshake ?? 0,
        transferRx: current?.transferRx ?? 0,
        transferTx: current?.transferTx ?? 0,
        persistentKeepalive: peer.keepalive,
      });
    }
  }

  async inspect(name: string): Promise<InterfaceState | null> {
    await this.delay();
    const link = this.links.get(name);
    if (!link) return null;
    const { spec } = link;
    const addresses = [spec.address, spec.addressIpv6].filter((a): a is string => !!a).map((a) => normalizeAddress(a) ?? a);
    return {
      name,
      publicKey: link.publicKey,
      listenPort: spec.listenPort,
      addresses,
      mtu: spec.mtu || msg.DEFAULT_MTU,
      up: true,
      peers: sortPeers([...link.peers.values()].map((p) => ({ ...p, allowedIps: [...p.allowedIps] }))),
    };
  }

  /** The peers' counters in the twin's (insertion) order, like the dump's unsorted read, and the parked peers. */
  async transfers(name: string): Promise<PeerTransfers | null> {
    await this.delay();
    const link = this.links.get(name);
    if (!link) return null;
    const keys: string[] = [];
    const rx = new Float64Array(link.peers.size);
    const tx = new Float64Array(link.peers.size);
    const parked: ParkedPeer[] = [];
    for (const peer of link.peers.values()) {
      rx[keys.length] = peer.transferRx;
      tx[keys.length] = peer.transferTx;
      keys.push(peer.publicKey);
      if (peer.allowedIps.length === 0) parked.push([peer.publicKey, peer.endpoint]);
    }
    return { keys, rx, tx, parked };
  }

  /** The peers with a handshake at or after `since`, in `wg show`'s order. */
  async sessions(name: string, since: number): Promise<PeerSession[] | null> {
    await this.delay();
    const link = this.links.get(name);
    if (!link) return null;
    const out: PeerSession[] = [];
    for (const p of link.peers.values()) {
      if (p.latestHandshake === 0 || p.latestHandshake < since) continue;
      out.push({ publicKey: p.publicKey, endpoint: p.endpoint, latestHandshake: p.latestHandshake, transferRx: p.transferRx, transferTx: p.transferTx });
    }
    return sortPeers(out);
  }

  /** The configured host networks plus each link's addresses and their subnet routes, as `ip` lists them. */
  async hostNetworks(): Promise<HostNetwork[]> {
    await this.delay();
    const links = [...this.links.values()].flatMap(({ spec }) =>
      [spec.address, spec.addressIpv6].filter((a): a is string => !!a).flatMap((a): HostNetwork[] => [
        { cidr: normalizeAddress(a) ?? a, source: 'address', dev: spec.name },
        { cidr: normalizeAllowedIp(a) ?? a, source: 'route', dev: spec.name },
      ]),
    );
    return [...this.host.map((n) => ({ ...n })), ...links];
  }

  async close(): Promise<void> {}

  /** Simulation only: replaces the host's own networks (an uplink gained an address, a route was added). */
  setHostNetworks(networks: HostNetwork[]): void {
    this.host = networks.map((n) => ({ ...n }));
  }

  /** Simulation only: a live daemon elsewhere now holds `name` (its creation fails with InterfaceHeldError). */
  holdInterface(name: string): void {
    this.held.add(name);
  }

  /** Simulation only: the daemon holding `name` is gone. */
  releaseInterface(name: string): void {
    this.held.delete(name);
  }

  /** Simulation only: counters of driver operations since construction. */
  stats(): SimulatedStats {
    return { ...this.counters };
  }

  /** Simulation only: the link's index, which changes only when the link is re-created (like an ifindex). */
  linkIndex(name: string): number | null {
    return this.links.get(name)?.index ?? null;
  }

  /** Simulation only: records a handshake (and optionally traffic counters) of a peer, as if it had connected. */
  simulateHandshake(iface: string, publicKey: string, handshake: SimulatedHandshake): void {
    const peer = this.links.get(iface)?.peers.get(publicKey);
    if (!peer) throw new DataplaneError(`no peer ${publicKey} on ${iface}`);
    peer.endpoint = handshake.endpoint;
    peer.latestHandshake = handshake.at ?? this.now();
    if (handshake.rx !== undefined) peer.transferRx = handshake.rx;
    if (handshake.tx !== undefined) peer.transferTx = handshake.tx;
  }

  private async delay(): Promise<void> {
    if (this.latencyMs > 0) await sleep(this.latencyMs);
  }
}

function dedupe(values: string[]): string[] {
  return [...new Set(values)];
}
