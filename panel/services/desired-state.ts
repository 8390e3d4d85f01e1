// The desired data-plane state read from the store: every server with its enabled accounts as peers.
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';
import { desiredPeer, type DesiredPeer } from './dataplane-specs.ts';

/** One server and its enabled peers; each subsystem derives its own desired state from it (dataplane-specs.ts). */
export interface DesiredServer {
  row: ServerRow;
  peers: DesiredPeer[];
}

/**
 * Servers (few) with their enabled peers, each server's peers streamed from the (server_id) index with only the
 * columns the data plane needs — no secrets of accounts are read.
 */
export function buildDesiredState(servers: ServersRepository, accounts: AccountsRepository): DesiredServer[] {
  return servers.list().map((row) => desiredServer(row, accounts));
}

/** One server's desired state. */
export function desiredServer(row: ServerRow, accounts: AccountsRepository): DesiredServer {
  const peers: DesiredPeer[] = [];
  for (const peer of accounts.iterateEnabledPeers(row.id)) peers.push(desiredPeer(peer));
  return { row, peers };
}
