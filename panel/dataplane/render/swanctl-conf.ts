// Pure renderer of swanctl.conf (connections and pools; no secrets) from the IKEv2 desired state, for swanctl.
import type { IpsecDesired } from '../ipsec/ipsec.ts';
import type { ViciTree } from '../ipsec/linux/vici-client.ts';
import { probeConn, sharedConn, userConn, userPool } from './swanctl-tree.ts';

/** A value in swanctl.conf syntax: always double-quoted, `\` and `"` escaped, no newlines. */
export function quote(value: string): string {
  if (/[\r\n\u0000]/.test(value)) throw new Error('swanctl.conf values cannot hold line breaks');
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A tree as swanctl.conf sections (lists joined with commas). */
function renderTree(tree: ViciTree, indent = ''): string {
  const out: string[] = [];
  for (const [key, value] of Object.entries(tree)) {
    if (typeof value === 'string') out.push(`${indent}${key} = ${quote(value)}`);
    else if (Array.isArray(value)) out.push(`${indent}${key} = ${quote(value.join(','))}`);
    else out.push(`${indent}${key} {`, renderTree(value, `${indent}  `), `${indent}}`);
  }
  return out.filter((l) => l !== '').join('\n');
}

/**
 * swanctl.conf of the whole desired state: the probe connection and either (`shared`, with the panel's identity lease
 * responder) the one connection every client uses, or one connection and one pool per account. It holds no secret:
 * certificates, key and EAP secrets are loaded over vici (connections find the certificate by identity).
 */
export function renderSwanctlConf(desired: IpsecDesired, opts: { shared?: boolean } = {}): string {
  const conns: ViciTree = { ...probeConn(desired.settings, desired.serverId) };
  const pools: ViciTree = {};
  if (opts.shared) Object.assign(conns, sharedConn(desired.settings, desired.serverId));
  else {
    for (const user of desired.users) {
      Object.assign(conns, userConn(desired.settings, user, desired.serverId));
      Object.assign(pools, userPool(user));
    }
  }
  return [
    '# Written by vpnhost from its store; changes here are overwritten.',
    'connections {', renderTree(conns, '  '), '}',
    'pools {', renderTree(pools, '  '), '}',
    '',
  ].join('\n');
}
