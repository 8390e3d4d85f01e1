// The WireGuard share of an account batch: one `wg set` for the server's changed peers (DataplaneSync's step).
import type { Driver } from '../dataplane/wireguard/driver.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServerBatch } from './dataplane-batch.ts';
import { wireguardPeer } from './dataplane-specs.ts';

/**
 * The batch's `wg set` but deleted peers (suspended peers parked, kept endpoints put back); answers its undo, or null
 * when the batch changes no WireGuard peer. Runs inside the lane, called by DataplaneSync only (the one writer).
 */
export async function wireguardBatchStep(wireguard: Driver, accounts: AccountsRepository, batch: ServerBatch): Promise<(() => Promise<void>) | null> {
  if (!batch.wg) return null;
  const iface = batch.server.interface_name;
  const resumed = batch.resumed.map((r) => ({ ...r, endpoint: accounts.lastEndpoint(r.accountId) })).filter((r) => r.endpoint);
  const endpoints = new Map(resumed.map((r) => [r.peer.publicKey, r.endpoint!]));
  const upsert = batch.wg.upsert.map((p) => (endpoints.has(p.publicKey) ? { ...p, endpoint: endpoints.get(p.publicKey)!, persistentKeepalive: 1 } : p));
  await wireguard.applyPeers(iface, { upsert, remove: batch.wg.remove });
  // Turning keepalive on made the server send one (a handshake initiation); off again keeps the desired state.
  if (resumed.length) await wireguard.applyPeers(iface, { upsert: resumed.map((r) => wireguardPeer(r.peer)), remove: [] });
  for (const r of resumed) accounts.setLastEndpoint(r.accountId, null);
  const wgUndo = batch.wgUndo;
  return () => wireguard.applyPeers(iface, wgUndo);
}
