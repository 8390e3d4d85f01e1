// The desired data-plane state read from the store: every server's interface with its enabled accounts as peers.
import type { InterfaceSpec, PeerSpec } from '../dataplane/driver.ts';
import type { DesiredInterface } from '../dataplane/reconcile.ts';
import type { AccountsRepository, PeerRow } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';

/** Turns rows into driver specs (implemented by DataplaneSync). */
export interface SpecBuilder {
  interfaceSpec(row: ServerRow): InterfaceSpec;
  peerSpec(row: PeerRow): PeerSpec;
}

/**
 * Servers (few) with their enabled peers, each server's peers streamed from the (server_id) index with only the
 * three columns a peer needs — no secrets of accounts are read.
 */
export function buildDesiredState(
  servers: ServersRepository,
  accounts: AccountsRepository,
  specs: SpecBuilder,
): DesiredInterface[] {
  return servers.list().map((row) => {
    const peers: PeerSpec[] = [];
    for (const peer of accounts.iterateEnabledPeers(row.id)) peers.push(specs.peerSpec(peer));
    return { spec: specs.interfaceSpec(row), peers };
  });
}
