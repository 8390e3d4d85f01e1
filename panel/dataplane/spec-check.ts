// Checks both drivers run on an InterfaceSpec before touching anything, failing with the texts the tools use.
import { normalizeAddress } from './cidr.ts';
import { DataplaneError, type InterfaceSpec } from './wireguard/driver.ts';
import { isValidKey } from './keys.ts';
import * as msg from './tool-messages.ts';

const fail = (tool: string, line: string): never => {
  throw new DataplaneError(msg.toolMessage(tool, line), line);
};

/** Throws a {@link DataplaneError} when the spec holds something wg or ip would refuse (the key is never echoed). */
export function checkInterfaceSpec(spec: InterfaceSpec): void {
  if (!msg.INTERFACE_NAME_PATTERN.test(spec.name)) fail('ip', msg.invalidInterfaceName(spec.name));
  if (!isValidKey(spec.privateKey)) fail('wg', msg.WG_BAD_PRIVATE_KEY);
  if (!Number.isInteger(spec.listenPort) || spec.listenPort < 0 || spec.listenPort > 65535) fail('wg', msg.INVALID_PORT);
  for (const address of [spec.address, spec.addressIpv6]) {
    if (address === null) continue;
    if (!address.includes('/') || !normalizeAddress(address)) fail('ip', msg.ipBadPrefix(address));
  }
  if (!Number.isInteger(spec.mtu) || spec.mtu < 0) fail('ip', msg.IP_MTU_TOO_SMALL);
  if (spec.mtu !== 0 && spec.mtu < 68) fail('ip', msg.IP_MTU_TOO_SMALL);
  if (spec.mtu > 65535) fail('ip', msg.IP_MTU_TOO_BIG);
}
