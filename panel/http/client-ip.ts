// The client address of a request: the socket peer, or X-Forwarded-For when the peer is a trusted proxy.
import { canonicalIp, sameIp } from '../schemas/ip.ts';

/**
 * The client address for access-hash binding, in canonical text (`::ffff:1.2.3.4` → `1.2.3.4`).
 * `X-Forwarded-For` is honoured only when the socket peer is one of `trustProxy`: the entries are walked from the
 * right, skipping trusted proxies, and the first untrusted address is the client. Without a trusted peer the header
 * is ignored. Returns null when no usable address is known.
 */
export function clientIp(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustProxy: readonly string[] = [],
): string | null {
  const peer = socketAddress ? canonicalIp(stripZone(socketAddress)) : null;
  if (!peer) return null;
  const trusted = (ip: string) => trustProxy.some((proxy) => sameIp(proxy, ip));
  if (!trusted(peer) || forwardedFor === undefined) return peer;
  const chain = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  let client = peer;
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = canonicalIp(stripZone(chain[i]));
    if (!hop) return null;
    client = hop;
    if (!trusted(hop)) break;
  }
  return client;
}

function stripZone(address: string): string {
  const pct = address.indexOf('%');
  return pct >= 0 ? address.slice(0, pct) : address;
}
