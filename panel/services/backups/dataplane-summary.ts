// Pure renderer of the data-plane configuration the panel owns, per WireGuard server, for the operator to read.
import type { DesiredServer } from '../desired-state.ts';

/**
 * A wg-quick-like text of one server and its enabled peers. The private key is NOT written (it stays sealed in
 * panel.db); restore never reads these files — the store is the source of truth and a reconcile rebuilds the data plane.
 */
export function renderServerSummary(server: DesiredServer): string {
  const { row } = server;
  const lines = [
    `# ${row.name}: data-plane configuration at backup time (read-only copy; restore rebuilds it from panel.db)`,
    '[Interface]',
    `# Name = ${row.name}`,
    `Address = ${row.address}${row.ipv6 && row.address_ipv6 ? `, ${row.address_ipv6}` : ''}`,
    `ListenPort = ${row.listen_port}`,
    `# PublicKey = ${row.public_key}`,
    '# PrivateKey: sealed in panel.db',
    ...(row.mtu ? [`MTU = ${row.mtu}`] : []),
    `# ExternalIP = ${row.external_ip}`,
    `# Bandwidth (Mbit/s) = down ${row.b_download}, up ${row.b_upload}`,
  ];
  for (const peer of server.peers) {
    lines.push('', '[Peer]', `PublicKey = ${peer.publicKey}`, `AllowedIPs = ${peer.ipv4}/32${peer.ipv6 ? `, ${peer.ipv6}` : ''}`);
    lines.push(`# Mark = ${peer.mark}, Bandwidth (Mbit/s) = down ${peer.downloadMbit}, up ${peer.uploadMbit}`);
  }
  return `${lines.join('\n')}\n`;
}
