// Ordered checks of POST/PUT /wireguard parameters: each failure throws the spec's text, in the spec's order.
import { ApiError, E, OWN } from '../http/errors.ts';
import { isValidKey, publicKeyFrom } from '../dataplane/keys.ts';
import { INTERFACE_PATTERN, NAME_PATTERN, type FormScalar, type TextScalar } from '../../shared/wire/common-wire.ts';
import { toBoolean, toInteger } from '../../shared/wire/form.ts';
import { canonicalIp, cidrContains, formatCidr, isSubnetZeroHost, parseCidr, parseIp, reservedRangeOf } from '../schemas/ip.ts';
import type { WireguardCreateBody, WireguardUpdateBody } from '../../shared/wire/wireguard.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';
import { formatIpv4, isHostOf, isServerAddress, parseV4Cidr, type V4Cidr } from './addressing.ts';
import type { HostNetworkView } from './host-networks.ts';

/** Server parameters that passed their checks; absent ones were not sent. */
export interface ServerInput {
  name?: string;
  interface_name?: string;
  /** Set together: the private key and the public key derived from it. */
  keys?: { privateKey: string; publicKey: string };
  listen_port?: number;
  external_ip?: string;
  address?: V4Cidr;
  dns_1?: string;
  dns_2?: string;
  mtu?: number;
  keep_alive?: number;
  allowed_ips?: string;
  endpoint?: string;
  internal_traffic?: boolean;
  ipv6?: boolean;
  address_ipv6?: string;
  dns_1_ipv6?: string;
  dns_2_ipv6?: string;
  b_download?: number;
  b_upload?: number;
  ikev2?: boolean;
}

/** Listen ports a new server may use; an edit accepts any valid UDP port (the spec scopes the range to creation). */
export const CREATE_PORT_RANGE = { min: 51820, max: 65535 } as const;
export const EDIT_PORT_RANGE = { min: 1, max: 65535 } as const;
const MAX_MTU = 9100;
/** Smallest MTU `ip link` accepts for an IPv4 link; 1-67 are refused like out-of-range values. */
const MIN_LINK_MTU = 68;
const MAX_INT32 = 2147483647;
/**
 * Largest PersistentKeepalive wg and wg-quick take. `keep_alive` accepts the spec's 0-2147483647, and a larger
 * value than this is stored, answered and handed to clients as this cap: what the API shows is what is applied.
 */
export const KEEP_ALIVE_CAP = 65535;
const MAX_BANDWIDTH = 10000;
/** Names the API itself uses below /wireguard/ (a server of that name could never be read). */
const RESERVED_NAMES = new Set(['info', 'online']);
const HOSTNAME = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Repositories the checks consult (indexed lookups only), and the networks the host already uses. */
export interface ServerCheckStores {
  servers: ServersRepository;
  accounts: AccountsRepository;
  /** The host's networks besides the panel's own interfaces (links, routes, the panel's listen address). */
  host: HostNetworkView;
}

/**
 * POST /wireguard checks in the spec's order: name in use, interface name format, name format, keys, interface in
 * use, port in use, external IP, port format, address (format, then overlap), DNS1, DNS2; then the parameters the
 * spec gives no text for (mtu, keep_alive, allowed_ips, endpoint, flags, IPv6 fields, bandwidths). `portRange` is
 * {@link CREATE_PORT_RANGE}; a restore checking a stored server passes {@link EDIT_PORT_RANGE} (an edit may move it).
 */
export function checkServerCreate(
  body: WireguardCreateBody,
  stores: ServerCheckStores,
  portRange: { min: number; max: number } = CREATE_PORT_RANGE,
): ServerInput {
  const out: ServerInput = {};
  const name = asText(body.name);
  if (name !== undefined && (RESERVED_NAMES.has(name) || stores.servers.nameInUse(name))) throw new ApiError(E.NAME_IN_USE);
  const iface = asText(body.interface_name);
  if (iface !== undefined && !INTERFACE_PATTERN.test(iface)) throw new ApiError(E.WRONG_INTERFACE_NAME);
  if (name !== undefined && !isName(name)) throw new ApiError(E.WRONG_NAME);
  out.name = name;
  out.interface_name = iface;
  out.keys = checkKeys(body, null, stores);
  if (iface !== undefined && stores.servers.interfaceInUse(iface)) throw new ApiError(E.INTERFACE_IN_USE);
  checkRest(body, out, null, stores, portRange);
  return out;
}

/** PUT /wireguard/<name> checks in the spec's order (keys, port in use, external IP, port, address, DNS1, DNS2). */
export function checkServerUpdate(body: WireguardUpdateBody, row: ServerRow, stores: ServerCheckStores): ServerInput {
  const out: ServerInput = {};
  out.keys = checkKeys(body, row, stores);
  checkRest(body, out, row, stores, EDIT_PORT_RANGE);
  return out;
}

function checkRest(
  body: WireguardUpdateBody,
  out: ServerInput,
  row: ServerRow | null,
  stores: ServerCheckStores,
  portRange: { min: number; max: number },
): void {
  const selfId = row?.id ?? 0;
  const port = body.listen_port === undefined ? undefined : toInteger(body.listen_port);
  if (port !== undefined && stores.servers.portInUse(port, selfId)) throw new ApiError(E.PORT_IN_USE);
  const externalIp = asText(body.external_ip);
  if (externalIp !== undefined) {
    out.external_ip = parseExternalIp(externalIp);
    if (out.external_ip === undefined) throw new ApiError(E.WRONG_EXTERNAL_IP);
  }
  if (body.listen_port !== undefined) {
    if (port === undefined || port < portRange.min || port > portRange.max) throw new ApiError(E.WRONG_PORT);
    out.listen_port = port;
  }
  const address = asText(body.address);
  if (address !== undefined) out.address = checkAddress(address, row, stores);
  out.dns_1 = optionalIp(body.dns_1, E.WRONG_DNS1);
  out.dns_2 = optionalIp(body.dns_2, E.WRONG_DNS2);
  out.mtu = optionalInt(body.mtu, OWN.WRONG_MTU, (n) => n === 0 || (n >= MIN_LINK_MTU && n <= MAX_MTU));
  const keepAlive = optionalInt(body.keep_alive, OWN.WRONG_KEEP_ALIVE, (n) => n >= 0 && n <= MAX_INT32);
  out.keep_alive = keepAlive === undefined ? undefined : Math.min(keepAlive, KEEP_ALIVE_CAP);
  if (body.allowed_ips !== undefined) out.allowed_ips = checkAllowedIps(asText(body.allowed_ips) ?? '');
  if (body.endpoint !== undefined) out.endpoint = checkEndpoint(asText(body.endpoint) ?? '');
  out.internal_traffic = optionalFlag(body.internal_traffic, OWN.WRONG_INTERNAL_TRAFFIC);
  out.ipv6 = optionalFlag(body.ipv6, OWN.WRONG_IPV6_FLAG);
  const v6 = asText(body.address_ipv6);
  if (v6 !== undefined) out.address_ipv6 = checkAddressIpv6(v6, row, stores);
  out.dns_1_ipv6 = optionalIp(body.dns_1_ipv6, OWN.WRONG_DNS1_IPV6, 6);
  out.dns_2_ipv6 = optionalIp(body.dns_2_ipv6, OWN.WRONG_DNS2_IPV6, 6);
  out.b_download = optionalInt(body.b_download, OWN.WRONG_B_DOWNLOAD, inBandwidth);
  out.b_upload = optionalInt(body.b_upload, OWN.WRONG_B_UPLOAD, inBandwidth);
  out.ikev2 = optionalFlag(body.ikev2, OWN.WRONG_IKEV2_FLAG);
}

/**
 * Key pair checks. A private key alone is completed with its public key; a public key must match the private key
 * (the given one, or on edit the stored one); a server cannot run on a public key alone. Another server's key is
 * refused too.
 */
function checkKeys(
  body: WireguardUpdateBody,
  row: ServerRow | null,
  stores: ServerCheckStores,
): ServerInput['keys'] {
  const priv = asText(body.private_key);
  const pub = asText(body.public_key);
  if (priv === undefined && pub === undefined) return undefined;
  if (priv === undefined) {
    if (row && pub === row.public_key) return undefined;
    throw new ApiError(E.KEYS_INVALID);
  }
  if (!isValidKey(priv)) throw new ApiError(E.KEYS_INVALID);
  const derived = publicKeyFrom(priv);
  if (pub !== undefined && pub !== derived) throw new ApiError(E.KEYS_INVALID);
  if (stores.servers.publicKeyInUse(derived, row?.id ?? 0)) throw new ApiError(E.KEYS_INVALID);
  return { privateKey: priv, publicKey: derived };
}

/**
 * Server address: an IPv4 host address in a /30-or-wider subnet outside the reserved ranges, overlapping no other
 * server's subnet and no network the host uses (a subnet over the host's own addresses would NAT or shadow them).
 */
function checkAddress(text: string, row: ServerRow | null, stores: ServerCheckStores): V4Cidr {
  const cidr = text.includes('/') ? parseV4Cidr(text) : null;
  const parsed = cidr ? parseCidr(`${formatIpv4(cidr.ip)}/${cidr.prefix}`) : null;
  if (parsed && reservedRangeOf(parsed)) throw new ApiError(OWN.RESERVED_ADDRESS);
  if (!parsed || !isServerAddress(cidr)) throw new ApiError(OWN.WRONG_ADDRESS);
  if (stores.servers.subnetOverlaps(cidr.first, cidr.last, row?.id ?? 0)) throw new ApiError(E.IP_OR_SUBNET_IN_USE);
  if (stores.host.overlapping(parsed)) throw new ApiError(E.IP_OR_SUBNET_IN_USE);
  if (row) {
    // The server's own address must not be a peer's, and every peer must stay inside the new subnet.
    if (stores.accounts.ipInUse(cidr.ip)) throw new ApiError(E.IP_OR_SUBNET_IN_USE);
    const range = stores.accounts.ipRange(row.id);
    if (range && (!isHostOf(range.lo, cidr) || !isHostOf(range.hi, cidr))) throw new ApiError(OWN.PEERS_OUTSIDE_ADDRESS);
  }
  return cidr;
}

/**
 * IPv6 server address: a CIDR (/1../126) outside the reserved ranges whose address is not the subnet's all-zero
 * host (refused like the IPv4 network address), that no other server's subnet and no host network overlaps and
 * that is no peer's address; peers' IPv6 addresses must stay inside. Empty clears it (a new subnet is generated
 * while IPv6 is on), which strands every peer that has an IPv6 address.
 */
function checkAddressIpv6(text: string, row: ServerRow | null, stores: ServerCheckStores): string {
  const cidr = text === '' ? null : parseCidr(text);
  if (cidr?.version === 6 && reservedRangeOf(cidr)) throw new ApiError(OWN.RESERVED_ADDRESS);
  if (text !== '' && (!cidr || cidr.version !== 6 || cidr.prefix < 1 || cidr.prefix > 126 || isSubnetZeroHost(formatCidr(cidr).split('/')[0], cidr))) {
    throw new ApiError(OWN.WRONG_ADDRESS_IPV6);
  }
  const canonical = cidr ? formatCidr(cidr) : '';
  if (cidr) {
    if (ipv6SubnetInUse(canonical, stores.servers, row?.id ?? 0)) throw new ApiError(E.IP_OR_SUBNET_IN_USE);
    if (stores.host.overlapping(cidr)) throw new ApiError(E.IP_OR_SUBNET_IN_USE);
    if (stores.accounts.ipv6InUse(`${ipOf(canonical)}/128`)) throw new ApiError(E.IP_OR_SUBNET_IN_USE);
  }
  if (row) {
    for (const account of stores.accounts.iterateOfServer(row.id)) {
      if (account.allowed_ips_ipv6 && !(cidr && cidrContains(cidr, ipOf(account.allowed_ips_ipv6)))) {
        throw new ApiError(OWN.PEERS_OUTSIDE_ADDRESS);
      }
    }
  }
  return canonical;
}

/** Whether the IPv6 subnet of `cidrText` overlaps another server's IPv6 subnet (servers are few). */
export function ipv6SubnetInUse(cidrText: string, servers: ServersRepository, exceptId = 0): boolean {
  const mine = parseCidr(cidrText);
  if (!mine) return false;
  return servers.list().some((other) => {
    if (other.id === exceptId || !other.address_ipv6) return false;
    const theirs = parseCidr(other.address_ipv6);
    return !!theirs && (cidrContains(theirs, ipOf(cidrText)) || cidrContains(mine, ipOf(other.address_ipv6)));
  });
}

/** External IP: an IPv4 address, optionally with a prefix (the spec calls it CIDR); canonical text. */
function parseExternalIp(text: string): string | undefined {
  const cidr = parseV4Cidr(text);
  if (!cidr) return undefined;
  return text.includes('/') ? `${formatIpv4(cidr.ip)}/${cidr.prefix}` : formatIpv4(cidr.ip);
}

/** Client AllowedIPs: comma-separated CIDRs (a bare address is a host route), canonical, joined by `, `. */
function checkAllowedIps(text: string): string {
  const items = text.split(',').map((s) => s.trim());
  const out: string[] = [];
  for (const item of items) {
    const bytes = parseIp(item.split('/')[0] ?? '', false);
    const parsed = bytes ? parseCidr(item.includes('/') ? item : `${item}/${bytes.length * 8}`) : null;
    if (!parsed) throw new ApiError(OWN.WRONG_ALLOWED_IPS);
    out.push(formatCidr(parsed));
  }
  return out.join(', ');
}

/** Endpoint handed to clients instead of external_ip: an IP address or a domain name; empty clears it. */
function checkEndpoint(text: string): string {
  if (text === '') return '';
  const ip = canonicalIp(text.replace(/^\[(.*)\]$/, '$1'));
  if (ip) return ip;
  if (HOSTNAME.test(text) && !/^[\d.]+$/.test(text)) return text.toLowerCase();
  throw new ApiError(OWN.WRONG_ENDPOINT);
}

function ipOf(cidrText: string): string {
  return cidrText.split('/')[0];
}

function inBandwidth(n: number): boolean {
  return n >= 0 && n <= MAX_BANDWIDTH;
}

/** The text of a parameter (numbers as decimal text), or undefined when absent. */
export function asText(value: TextScalar | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : String(value);
}

/** Whether a name or username has the allowed characters (1-64 of letters, digits, `_`, `-`). */
export function isName(value: string): boolean {
  return value.length <= 64 && NAME_PATTERN.test(value);
}

/** An optional integer parameter passing `ok`, else `text`. */
export function optionalInt(value: FormScalar | undefined, text: string, ok: (n: number) => boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = toInteger(value);
  if (n === undefined || !ok(n)) throw new ApiError(text);
  return n;
}

function optionalFlag(value: FormScalar | undefined, text: string): boolean | undefined {
  if (value === undefined) return undefined;
  const b = toBoolean(value);
  if (b === undefined) throw new ApiError(text);
  return b;
}

/**
 * An optional IP address parameter, canonical; empty means none. With `family` 6 only IPv6 is taken, and a
 * prefix is allowed and dropped (the spec calls the IPv6 DNS fields CIDR).
 */
function optionalIp(value: TextScalar | undefined, text: string, family?: 6): string | undefined {
  const s = asText(value);
  if (s === undefined || s === '') return s;
  if (family === 6) {
    const cidr = parseCidr(s.includes('/') ? s : `${s}/128`);
    if (!cidr || cidr.version !== 6) throw new ApiError(text);
    return ipOf(formatCidr(cidr));
  }
  const ip = canonicalIp(s);
  if (!ip || parseIp(s, false) === null) throw new ApiError(text);
  return ip;
}
