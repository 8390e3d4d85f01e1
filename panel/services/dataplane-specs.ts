// Rows → per-subsystem desired state (WireGuard peer, firewall peer/server, shaped peer) and the minimal changes.
import type { InterfaceSpec, PeerChanges, PeerSpec } from '../dataplane/wireguard/driver.ts';
import { formatCidr, parseCidr } from '../dataplane/cidr.ts';
import { IPSEC_DEVICE } from '../dataplane/ipsec/ipsec.ts';
import type { FirewallPeer, FirewallPeerChanges, PortForwardRule, ServerFirewallSpec } from '../dataplane/firewall/firewall.ts';
import type { ShapedPeer, ShapingChanges, ShapingTarget } from '../dataplane/shaping/shaping.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { PeerRow } from '../store/repositories/accounts.ts';
import type { ServerRow } from '../store/repositories/servers.ts';
import { formatIpv4 } from './addressing.ts';

/**
 * One enabled peer as every subsystem wants it: WireGuard (key, allowed IPs), firewall (mark, addresses) and
 * shaping (key, addresses, rates in Mbit/s, 0 = unlimited).
 */
export interface DesiredPeer {
  publicKey: string;
  /** Bare IPv4 address. */
  ipv4: string;
  /** IPv6 address as the account stores it (`fd00:1::2/128`), or null. */
  ipv6: string | null;
  /** The account's `mangle` mark. */
  mark: number;
  downloadMbit: number;
  uploadMbit: number;
}

/** The peer an account row asks for (the row must be enabled; callers decide). */
export function desiredPeer(row: PeerRow): DesiredPeer {
  return {
    publicKey: row.public_key,
    ipv4: formatIpv4(row.ip),
    ipv6: row.allowed_ips_ipv6,
    mark: row.mangle,
    downloadMbit: row.b_download,
    uploadMbit: row.b_upload,
  };
}

/** WireGuard: the interface a server row asks for (decrypts the private key). */
export function interfaceSpec(row: ServerRow, box: SecretBox): InterfaceSpec {
  return {
    name: row.interface_name,
    privateKey: box.open(row.private_key),
    listenPort: row.listen_port,
    address: row.address,
    addressIpv6: row.ipv6 && row.address_ipv6 ? row.address_ipv6 : null,
    mtu: row.mtu,
  };
}

/** WireGuard: the peer (server-side keepalive stays off; clients keep NAT mappings open). */
export function wireguardPeer(peer: DesiredPeer): PeerSpec {
  const allowedIps = [`${peer.ipv4}/32`];
  if (peer.ipv6) allowedIps.push(peer.ipv6);
  return { publicKey: peer.publicKey, allowedIps, persistentKeepalive: 0 };
}

/**
 * WireGuard: a suspended peer parked — the same key without allowed IPs (no traffic is routed to it or accepted from
 * it), its counters and endpoint kept for the next traffic sample, which removes it.
 */
export function parkedPeer(peer: PeerSpec): PeerSpec {
  return { publicKey: peer.publicKey, allowedIps: [], persistentKeepalive: 0 };
}

/** Firewall: the peer, identified by its mark. */
export function firewallPeer(peer: DesiredPeer): FirewallPeer {
  return { mark: peer.mark, address: peer.ipv4, addressIpv6: peer.ipv6 };
}

/** Shaping: the peer, identified by its public key. */
export function shapedPeer(peer: DesiredPeer): ShapedPeer {
  return { key: peer.publicKey, ipv4: peer.ipv4, ipv6: peer.ipv6, downloadMbit: peer.downloadMbit, uploadMbit: peer.uploadMbit };
}

/** Shaping: the interface and the subnet whose host offsets are the class minors. */
export function shapingTarget(row: ServerRow): ShapingTarget {
  return { name: row.interface_name, address: row.address };
}

/**
 * Shaping of IKEv2 clients: the TUN `device` with the smallest IPv4 network covering the subnets of every server
 * with `ikev2=1` (one tree on the one TUN serves them all; a client's class minor is its host offset in that
 * network, unique because every account address is). null when no server has IKEv2. Subnets further apart than one
 * /16 leave hosts past minor 65,534 unshapeable (the shaper refuses them with its `minorRange` text).
 */
export function ipsecShapingTarget(device: string, rows: ServerRow[]): ShapingTarget | null {
  const nets = rows.filter((row) => row.ikev2 === 1).map((row) => parseCidr(row.address)).filter((c) => c?.family === 4);
  if (nets.length === 0) return null;
  const first = nets[0]!;
  let prefix = Math.min(...nets.map((c) => c!.prefix));
  const top = (value: bigint, p: number) => value >> BigInt(32 - p);
  while (prefix > 0 && !nets.every((c) => top(c!.value, prefix) === top(first.value, prefix))) prefix--;
  return { name: device, address: formatCidr({ family: 4, value: first.value, prefix }, true) };
}

/**
 * Firewall: the server's chains. `externalInterface` is the row's (probed at creation) or the panel's
 * `--external-interface`; forwards are those of enabled peers only (a suspended peer's forwards come back with it).
 */
export function serverFirewallSpec(
  row: ServerRow,
  peers: DesiredPeer[],
  forwards: PortForwardRule[],
  externalInterface: string | null | undefined,
): ServerFirewallSpec {
  const addresses = new Set(peers.flatMap((p) => [p.ipv4, ...(p.ipv6 ? [p.ipv6.split('/')[0]] : [])]));
  return {
    name: row.interface_name,
    subnets: [row.address, ...(row.ipv6 && row.address_ipv6 ? [row.address_ipv6] : [])],
    listenPort: row.listen_port,
    externalIp: row.external_ip ? row.external_ip.split('/')[0] : null,
    externalInterface: row.external_interface ?? externalInterface ?? null,
    internalTraffic: row.internal_traffic === 1,
    peers: peers.map(firewallPeer),
    forwards: forwards.filter((f) => addresses.has(f.to_ip.split('/')[0])),
    // IKEv2 clients of the server (kernel-libipsec's TUN) get the same chains, sets and marks as its WireGuard peers.
    ipsecDevice: row.ikev2 === 1 ? IPSEC_DEVICE : null,
  };
}

/** The minimal WireGuard change turning peer `before` into peer `after` (either may be absent); null when none. */
export function peerChanges(before: PeerSpec | null, after: PeerSpec | null): PeerChanges | null {
  if (after) {
    if (before && before.publicKey === after.publicKey && samePeer(before, after)) return null;
    const remove = before && before.publicKey !== after.publicKey ? [before.publicKey] : [];
    return { upsert: [after], remove };
  }
  return before ? { upsert: [], remove: [before.publicKey] } : null;
}

/** The minimal firewall change (peers keyed by mark); null when none. */
export function firewallChanges(before: FirewallPeer | null, after: FirewallPeer | null): FirewallPeerChanges | null {
  if (after) {
    if (before && before.mark === after.mark && before.address === after.address && before.addressIpv6 === after.addressIpv6) return null;
    return { upsert: [after], remove: before && before.mark !== after.mark ? [before.mark] : [] };
  }
  return before ? { upsert: [], remove: [before.mark] } : null;
}

/**
 * The minimal shaping change (peers keyed by public key); null when none. A peer unlimited both before and after
 * costs no tc call at all (it has no class either way).
 */
export function shapingChanges(before: ShapedPeer | null, after: ShapedPeer | null): ShapingChanges | null {
  const limited = (p: ShapedPeer | null) => !!p && (p.downloadMbit > 0 || p.uploadMbit > 0);
  if (!limited(before) && !limited(after)) return null;
  if (after) {
    if (before && before.key === after.key && before.ipv4 === after.ipv4 && before.ipv6 === after.ipv6 &&
      before.downloadMbit === after.downloadMbit && before.uploadMbit === after.uploadMbit) return null;
    return { upsert: [after], remove: before && before.key !== after.key ? [before.key] : [] };
  }
  return { upsert: [], remove: [before!.key] };
}

function samePeer(a: PeerSpec, b: PeerSpec): boolean {
  return a.persistentKeepalive === b.persistentKeepalive && a.allowedIps.join(',') === b.allowedIps.join(',');
}
