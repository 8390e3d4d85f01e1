// Error texts of the real tools (wg, ip) as the drivers surface them; the simulated twin raises the same ones.

/** Prefix the runner puts before the last stderr line of a failed tool: `wg: <line>`. */
export function toolMessage(tool: string, line: string): string {
  return `${tool}: ${line}`;
}

export const WG_ADDRESS_IN_USE = 'Unable to modify interface: Address already in use';
export const WG_NO_DEVICE = 'Unable to modify interface: No such device';
export const WG_ACCESS_NO_DEVICE = 'Unable to access interface: No such device';
export const wgBadKey = (key: string) => `Key is not the correct length or format: \`${key}'`;
export const WG_BAD_PRIVATE_KEY = 'Key is not the correct length or format';
export const wgBadAllowedIp = (ip: string) => `Unable to parse IP address: \`${ip}'`;
export const wgBadKeepalive = (value: number) =>
  `Persistent keepalive interval is neither 0/off nor 1-65535: \`${value}'`;
export const ipBadPrefix = (cidr: string) => `Error: any valid prefix is expected rather than "${cidr}".`;
export const IP_MTU_TOO_BIG = 'Error: mtu greater than device maximum.';
export const IP_MTU_TOO_SMALL = 'Error: mtu less than device minimum.';
export const invalidInterfaceName = (name: string) => `invalid interface name: ${name}`;
export const INVALID_PORT = 'Listen port must be 0-65535';
/** wireguard-go's failure when another live daemon answers on the interface's UAPI socket. */
export const WG_GO_SOCKET_IN_USE = 'UAPI listen error: unix socket in use';

/** Interface names the panel manages: `wg` then digits, at most 15 characters (IFNAMSIZ - 1). */
export const INTERFACE_NAME_PATTERN = /^wg\d{1,13}$/;

/** Default MTU of a WireGuard link when the spec says 0. */
export const DEFAULT_MTU = 1420;
