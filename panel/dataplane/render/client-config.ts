// Pure renderer of a peer's wg-quick client configuration (the text behind config_text and config_qr).

/** What a client configuration is made of. */
export interface ClientConfigInput {
  /** Base64 private key of the peer; empty when the client kept its own (the line is then left out). */
  privateKey: string;
  /** Peer addresses as CIDRs, e.g. `10.0.1.2/32` and optionally an IPv6 /128. */
  addresses: string[];
  /** DNS servers handed to the client; empty entries are skipped, no line when none. */
  dns: string[];
  /** Interface MTU; 0 leaves the line out (wg-quick picks one). */
  mtu: number;
  /** Base64 public key of the server interface. */
  serverPublicKey: string;
  /** Server host (address or domain) and UDP port. */
  endpointHost: string;
  endpointPort: number;
  /** Routes sent through the tunnel, e.g. `0.0.0.0/0`. */
  allowedIps: string[];
  /** PersistentKeepalive seconds; 0 leaves the line out. */
  persistentKeepalive: number;
}

/** Renders the `[Interface]` + `[Peer]` text `wg-quick` (and the mobile apps) import. */
export function renderClientConfig(input: ClientConfigInput): string {
  const lines = ['[Interface]'];
  if (input.privateKey) lines.push(`PrivateKey = ${input.privateKey}`);
  lines.push(`Address = ${input.addresses.join(', ')}`);
  const dns = input.dns.filter((d) => d.length > 0);
  if (dns.length > 0) lines.push(`DNS = ${dns.join(', ')}`);
  if (input.mtu > 0) lines.push(`MTU = ${input.mtu}`);
  lines.push('', '[Peer]', `PublicKey = ${input.serverPublicKey}`);
  lines.push(`AllowedIPs = ${input.allowedIps.join(', ')}`);
  lines.push(`Endpoint = ${formatEndpoint(input.endpointHost, input.endpointPort)}`);
  if (input.persistentKeepalive > 0) lines.push(`PersistentKeepalive = ${input.persistentKeepalive}`);
  return `${lines.join('\n')}\n`;
}

/** `host:port`, with an IPv6 host in brackets as wg expects. */
function formatEndpoint(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return bare.includes(':') ? `[${bare}]:${port}` : `${bare}:${port}`;
}
