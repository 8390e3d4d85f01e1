// Pure parser of `ip -j addr show dev <if>` (JSON): index, MTU, up flag and global addresses of one link.

/** What the panel needs to know about a link. */
export interface LinkInfo {
  ifindex: number;
  name: string;
  mtu: number;
  /** Administratively up (`UP` among the flags). */
  up: boolean;
  /** Addresses as `local/prefixlen`, link-local (scope link) addresses left out, in the order ip lists them. */
  addresses: string[];
}

interface IpAddrJson {
  ifindex?: number;
  ifname?: string;
  mtu?: number;
  flags?: string[];
  addr_info?: Array<{ local?: string; prefixlen?: number; scope?: string }>;
}

/** Parses the JSON array `ip -j addr show dev IF` prints; null when it holds no link. Throws on bad JSON. */
export function parseIpAddrJson(text: string): LinkInfo | null {
  const parsed = JSON.parse(text.trim() === '' ? '[]' : text) as IpAddrJson[];
  const link = parsed.find((entry) => typeof entry.ifindex === 'number');
  if (!link) return null;
  return {
    ifindex: link.ifindex ?? 0,
    name: link.ifname ?? '',
    mtu: link.mtu ?? 0,
    up: (link.flags ?? []).includes('UP'),
    addresses: (link.addr_info ?? [])
      .filter((a) => a.local && a.prefixlen !== undefined && a.scope !== 'link')
      .map((a) => `${a.local}/${a.prefixlen}`),
  };
}
