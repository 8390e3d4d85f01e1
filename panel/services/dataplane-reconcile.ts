// The whole-store reconcile of the data plane (boot, `PUT /system/reload`): WireGuard, firewall, shaping, followers.
import type { Dataplane } from '../dataplane/dataplane.ts';
import { reconcile, ReconcileError, type ReconcileReport } from '../dataplane/reconcile.ts';
import { reconcileFirewall, reconcileShaping, type ReconcileFailure } from '../dataplane/reconcile-policy.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServersRepository } from '../store/repositories/servers.ts';
import type { PolicySource, SyncFollower } from './dataplane-sync.ts';
import { interfaceSpec, serverFirewallSpec, shapedPeer, shapingTarget, wireguardPeer } from './dataplane-specs.ts';
import { buildDesiredState } from './desired-state.ts';

/** What a whole-store reconcile reads and where it records which interfaces it set up. */
export interface StoreReconcileContext {
  dataplane: Dataplane;
  servers: ServersRepository;
  accounts: AccountsRepository;
  box: SecretBox;
  externalInterface?: string | null;
  policy: PolicySource;
  followers: readonly SyncFollower[];
  /** Interfaces whose firewall / shaping are set up: cleared, then refilled with those that reconciled. */
  walled: Set<string>;
  shaped: Set<string>;
}

/**
 * Makes every subsystem match the whole store, one after the other: WireGuard links and peers (links must exist
 * before tc and the rules that name them), then the firewall (global state, servers with marks and forwards), then
 * shaping, then the followers (IKEv2, traffic logging). Each reads the live state and changes only what differs; one
 * failing object does not stop the rest, a {@link ReconcileError} names every failure at the end. Run it in the
 * sync's lane.
 */
export async function reconcileStore(ctx: StoreReconcileContext, onProgress?: (done: number, total: number) => void): Promise<ReconcileReport> {
  const { wireguard, firewall, shaper } = ctx.dataplane;
  const desired = buildDesiredState(ctx.servers, ctx.accounts);
  const wanted = new Set(desired.map((d) => d.row.interface_name));
  const extra = (await wireguard.listInterfaces()).filter((name) => !wanted.has(name));
  const failures: ReconcileFailure[] = [];
  failures.push(...(await reconcileShaping(shaper, [], extra)));
  let report: ReconcileReport;
  try {
    report = await reconcile(
      wireguard,
      desired.map((d) => ({ spec: interfaceSpec(d.row, ctx.box), peers: d.peers.map(wireguardPeer) })),
      { onProgress },
    );
  } catch (err) {
    if (!(err instanceof ReconcileError)) throw err;
    report = err.report;
    failures.push(...err.failures.map((f) => ({ name: `wireguard:${f.name}`, error: f.error })));
  }
  ctx.walled.clear();
  ctx.shaped.clear();
  const fwFailures = await reconcileFirewall(
    firewall,
    ctx.policy.firewallGlobal(),
    desired.map((d) => serverFirewallSpec(d.row, d.peers, ctx.policy.forwards(d.row), ctx.externalInterface)),
  );
  failures.push(...fwFailures);
  for (const d of desired) if (!fwFailures.some((f) => f.name === `firewall:${d.row.interface_name}`)) ctx.walled.add(d.row.interface_name);
  const tcFailures = await reconcileShaping(
    shaper,
    desired.map((d) => ({ target: shapingTarget(d.row), peers: d.peers.map(shapedPeer) })),
    [],
  );
  failures.push(...tcFailures);
  for (const d of desired) if (!tcFailures.some((f) => f.name === `shaping:${d.row.interface_name}`)) ctx.shaped.add(d.row.interface_name);
  for (const f of ctx.followers) {
    try {
      await f.reconcile();
    } catch (err) {
      failures.push({ name: f.name, error: err instanceof Error ? err : new Error(String(err)) });
    }
  }
  if (failures.length > 0) throw new ReconcileError(report, failures);
  return report;
}
