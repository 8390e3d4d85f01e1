// Ordered checks of POST/PUT /account parameters: each failure throws the spec's text, in the spec's order.
import { isValidKey, publicKeyFrom } from '../dataplane/keys.ts';
import { ApiError, E, OWN } from '../http/errors.ts';
import type { TextScalar } from '../../shared/wire/common-wire.ts';
import type { AccountCreateBody, AccountUpdateBody } from '../../shared/wire/account.ts';
import { cidrContains, formatCidr, isSubnetZeroHost, parseCidr, reservedRangeOf, type Cidr } from '../schemas/ip.ts';
import type { AccountRow, AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';
import { formatIpv4, isHostOf, parseV4Cidr } from './addressing.ts';
import type { HostNetworkView } from './host-networks.ts';
import { asText, isName, optionalInt } from './server-checks.ts';

/** Account parameters that passed their checks; absent ones were not sent. */
export interface AccountInput {
  name?: string;
  username?: string;
  password?: string;
  status?: 'enable' | 'disable';
  /** IPv4 peer address as a number. */
  ip?: number;
  /** IPv6 peer address as canonical `/128` CIDR, `null` to clear. */
  ipv6?: string | null;
  /** Peer keys; `privateKey` is '' when only a public key was given. */
  keys?: { privateKey: string; publicKey: string };
  b_download?: number;
  b_upload?: number;
}

/** Repositories and limits the checks consult (indexed lookups only). */
export interface AccountCheckStores {
  servers: ServersRepository;
  accounts: AccountsRepository;
  /** The license's account limit. */
  accountLimit(): number;
  /** The host's networks besides the panel's own interfaces (links, routes, the panel's listen address). */
  host: HostNetworkView;
}

const MAX_BANDWIDTH = 10000;
const PASSWORD = /^[\x20-\x7e]{1,128}$/;

/**
 * POST /account checks in the spec's order: account limit, server, name format, name in use, username in use,
 * username format, IP format, IP in use, IP in range, keys; then status, password and bandwidths (no spec texts).
 */
export function checkAccountCreate(body: AccountCreateBody, stores: AccountCheckStores): { server: ServerRow; input: AccountInput } {
  if (stores.accounts.count() >= stores.accountLimit()) throw new ApiError(E.ACCOUNT_LIMIT_EXCEEDED);
  const wgName = asText(body.wg_name);
  const server = wgName === undefined ? undefined : stores.servers.get(wgName);
  if (!server) throw new ApiError(E.WIREGUARD_SERVER_NOT_VALID);
  const input: AccountInput = {};
  const name = asText(body.name);
  if (name !== undefined && !isName(name)) throw new ApiError(E.WRONG_NAME);
  if (name !== undefined && stores.accounts.nameInUse(name)) throw new ApiError(E.NAME_IN_USE);
  input.name = name;
  const username = asText(body.username);
  if (username !== undefined && stores.accounts.usernameInUse(username)) throw new ApiError(E.USERNAME_IN_USE);
  if (username !== undefined && !isName(username)) throw new ApiError(E.WRONG_USERNAME);
  input.username = username;
  checkAddresses(body.allowed_IPs, body.allowed_IPs_ipv6, true, E.WRONG_IP, server, null, stores, input);
  input.keys = checkKeys(body, server, stores);
  checkCommon(body, input);
  return { server, input };
}

/**
 * PUT /account/<name> checks in the spec's order: server (`wg_name`, when sent, must be the account's own server —
 * accounts do not move), address format (the spec's text for it here is `Wrong external IP format`), address in
 * use, address in range; then status, password and bandwidths.
 */
export function checkAccountUpdate(
  body: AccountUpdateBody,
  row: AccountRow,
  server: ServerRow,
  stores: AccountCheckStores,
): AccountInput {
  const wgName = asText(body.wg_name);
  if (wgName !== undefined && wgName !== server.name) throw new ApiError(E.WIREGUARD_SERVER_NOT_VALID);
  const input: AccountInput = {};
  checkAddresses(body.allowed_IPs, body.allowed_IPs_ipv6, false, E.WRONG_EXTERNAL_IP, server, row, stores, input);
  checkCommon(body, input);
  return input;
}

/**
 * Peer addresses: format (IPv4 then IPv6), reserved ranges, in use (by a peer, the server or the host), in the
 * server's range (IPv6: not the subnet's all-zero host); a bare address is a host route.
 */
function checkAddresses(
  v4Value: TextScalar | undefined,
  v6Value: TextScalar | undefined,
  v4Required: boolean,
  formatText: string,
  server: ServerRow,
  row: AccountRow | null,
  stores: AccountCheckStores,
  input: AccountInput,
): void {
  const v4Text = asText(v4Value);
  const v6Text = asText(v6Value);
  let ip: number | undefined;
  if (v4Text !== undefined || v4Required) {
    const cidr = v4Text === undefined ? null : parseV4Cidr(v4Text.trim());
    if (!cidr || cidr.prefix !== 32) throw new ApiError(formatText);
    ip = cidr.ip;
  }
  let v6: string | null | undefined;
  if (v6Text !== undefined) {
    v6 = v6Text === '' ? null : parseV6Host(v6Text.trim());
    if (v6 === undefined) throw new ApiError(formatText);
  }
  const v4Cidr = ip === undefined ? null : parseCidr(`${formatIpv4(ip)}/32`);
  const v6Cidr = v6 ? parseCidr(v6) : null;
  if ((v4Cidr && reservedRangeOf(v4Cidr)) || (v6Cidr && reservedRangeOf(v6Cidr))) throw new ApiError(OWN.RESERVED_ADDRESS);
  const selfId = row?.id ?? 0;
  const serverCidr = parseV4Cidr(server.address)!;
  if (ip !== undefined && (ip === serverCidr.ip || stores.accounts.ipInUse(ip, selfId))) throw new ApiError(E.IP_IN_USE);
  if (v6 && (stores.accounts.ipv6InUse(v6, selfId) || v6.split('/')[0] === server.address_ipv6.split('/')[0])) {
    throw new ApiError(E.IP_IN_USE);
  }
  if (usedByHost(v4Cidr, stores.host) || usedByHost(v6Cidr, stores.host)) throw new ApiError(E.IP_IN_USE);
  if (ip !== undefined && !isHostOf(ip, serverCidr)) throw new ApiError(E.IP_NOT_IN_RANGE);
  if (v6) {
    const range = server.ipv6 && server.address_ipv6 ? parseCidr(server.address_ipv6) : null;
    // The all-zero host of the subnet (subnet-router anycast) is refused like the IPv4 network address.
    if (!range || !cidrContains(range, v6.split('/')[0]) || isSubnetZeroHost(v6.split('/')[0], range)) {
      throw new ApiError(E.IP_NOT_IN_RANGE);
    }
  }
  input.ip = ip;
  input.ipv6 = v6;
}

/** Whether the host itself uses the peer address (an address or route outside the panel's interfaces). */
function usedByHost(cidr: Cidr | null, host: HostNetworkView): boolean {
  return cidr !== null && host.overlapping(cidr) !== null;
}

/** An IPv6 host address (bare or `/128`) as canonical `/128` CIDR; undefined when malformed. */
function parseV6Host(text: string): string | undefined {
  const cidr = parseCidr(text.includes('/') ? text : `${text}/128`);
  return cidr && cidr.version === 6 && cidr.prefix === 128 ? formatCidr(cidr) : undefined;
}

/**
 * Key checks: both keys must form a pair; a private key alone gets its public key; a public key alone is taken as
 * the client's own (no private key is kept). The public key must be free (another account's or the server's key
 * would collide on the interface).
 */
function checkKeys(body: AccountCreateBody, server: ServerRow, stores: AccountCheckStores): AccountInput['keys'] {
  const priv = asText(body.private_key);
  const pub = asText(body.public_key);
  if (priv === undefined && pub === undefined) return undefined;
  let keys: { privateKey: string; publicKey: string };
  if (priv !== undefined) {
    if (!isValidKey(priv)) throw new ApiError(E.KEYS_INVALID);
    const derived = publicKeyFrom(priv);
    if (pub !== undefined && pub !== derived) throw new ApiError(E.KEYS_INVALID);
    keys = { privateKey: priv, publicKey: derived };
  } else {
    if (!isValidKey(pub)) throw new ApiError(E.KEYS_INVALID);
    keys = { privateKey: '', publicKey: pub! };
  }
  if (keys.publicKey === server.public_key || stores.accounts.publicKeyInUse(keys.publicKey)) {
    throw new ApiError(E.KEYS_INVALID);
  }
  return keys;
}

/** Status, password and bandwidths (the spec has no texts for these). */
function checkCommon(body: AccountUpdateBody, input: AccountInput): void {
  const status = asText(body.status);
  if (status !== undefined) {
    if (status !== 'enable' && status !== 'disable') throw new ApiError(OWN.WRONG_STATUS);
    input.status = status;
  }
  const password = asText(body.password);
  if (password !== undefined) {
    if (!PASSWORD.test(password)) throw new ApiError(OWN.WRONG_PASSWORD);
    input.password = password;
  }
  input.b_download = optionalInt(body.b_download, OWN.WRONG_B_DOWNLOAD, (n) => n >= 0 && n <= MAX_BANDWIDTH);
  input.b_upload = optionalInt(body.b_upload, OWN.WRONG_B_UPLOAD, (n) => n >= 0 && n <= MAX_BANDWIDTH);
}
