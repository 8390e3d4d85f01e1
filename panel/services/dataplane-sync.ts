// The one way into the data plane: a serialized lane driving WireGuard, firewall and shaping from store changes.
import type { Driver } from '../dataplane/wireguard/driver.ts';
import type { FilterRule, FirewallConf, PortForwardRule, RulePosition } from '../dataplane/firewall/firewall.ts';
import type { AccountRow } from '../store/repositories/accounts.ts';
import type { ServerRow } from '../store/repositories/servers.ts';
import { ShapingError } from '../dataplane/shaping/shaping.ts';
import { planAccountBatch, type AccountChange, type ServerBatch } from './dataplane-batch.ts';
import { wireguardBatchStep } from './dataplane-wireguard-step.ts';
import { DataplaneLane, type LaneOptions } from './dataplane-lane.ts';
import { interfaceSpec, serverFirewallSpec, shapedPeer, shapingTarget, type DesiredPeer } from './dataplane-specs.ts';
import { reconcileStore } from './dataplane-reconcile.ts';
import { NO_POLICY, type DataplaneSyncDeps, type PolicySource, type SyncFollower, type SyncReconcileReport } from './dataplane-sync-deps.ts';
import { desiredServer } from './desired-state.ts';
import { dataplaneViews, requireServer, type DataplaneViews } from './dataplane-views.ts';
import { Ikev2Shaping } from './ikev2/ikev2-shaping.ts';
import { laneWriters, type LaneWriters } from './lane-writers.ts';
import { UndoLedger, type SyncSubsystem, type UndoStep } from './dataplane-undo.ts';

export { peerChanges } from './dataplane-specs.ts';
export { DEFAULT_FIREWALL_CONF } from './dataplane-sync-deps.ts';
export type { DataplaneSyncDeps, PolicySource, SyncFollower, SyncReconcileReport } from './dataplane-sync-deps.ts';
export type { LaneOptions } from './dataplane-lane.ts';
export type { DataplaneViews } from './dataplane-views.ts';

/**
 * The data-plane side of every store change, per subsystem: WireGuard (links, peers), firewall (NAT, marks,
 * forwards, rules) and shaping (per-peer HTB classes).
 *
 * Ordering (how a failure leaves store and data plane consistent): each mutation runs inside {@link serial}, so the
 * store write and its data-plane calls happen as one unit with nothing interleaved (better-sqlite3 transactions
 * cannot span an `await`). The row is written and committed first, then each subsystem is called once (one batched
 * call each); when one fails, the subsystems already changed get the inverse change and the service writes the
 * previous row back, so the request fails with nothing changed. A crash between commit and the calls leaves the
 * store ahead of the data plane, which the reconcile on boot (and `PUT /system/reload`) repairs. Reconcile runs in
 * the same lane, so no change can slip between its read of the store and its writes.
 *
 * Group commit: account changes queued together (`serial(task, { batch: true })`, see {@link DataplaneLane}) write
 * their rows one after the other and then share one call per subsystem and interface — one `wg set` with all their
 * peers, one `ipset restore`, one `tc -batch` — each request answered once the batch is in the kernel. A failed batch
 * is undone and its changes rerun one by one, so a refused change fails alone, exactly as without batching.
 *
 * One writer per subsystem: WireGuard, firewall and shaping are written here only; DNS, IPsec and the traffic-log
 * chains through {@link writers}, which refuse to write outside the lane. An undo that fails is logged and marks its
 * subsystem and interface for reconcile ({@link needsReconcile}): the firewall and shaping of that interface are set
 * up again from the store by its next change, and the next full reconcile repairs everything.
 */
export class DataplaneSync {
  private readonly lane = new DataplaneLane<AccountChange>((changes) => this.applyAccountChanges(changes));
  private policy: PolicySource = NO_POLICY;
  private readonly followers: SyncFollower[] = [];
  /** Interfaces the shaper / firewall were set up for in this process (apply needs a prior ensure). */
  private readonly shaped = new Set<string>();
  private readonly walled = new Set<string>();
  /** Failed undos: logged, and their subsystem marked for reconcile. */
  private readonly undos: UndoLedger;
  /** Live views (see {@link DataplaneViews}). */
  readonly views: DataplaneViews;
  /** The write side of DNS, IPsec and the traffic-log chains, usable only inside the lane (see {@link LaneWriters}). */
  readonly writers: LaneWriters;
  /** The shaping tree of IKEv2 clients on charon's TUN (rebuilt after each daemon start, changed with each account). */
  readonly ikev2Shaping: Ikev2Shaping;

  constructor(private readonly deps: DataplaneSyncDeps) {
    this.views = dataplaneViews(deps);
    const { shaper, ipsec, dns, firewall } = deps.dataplane;
    this.ikev2Shaping = new Ikev2Shaping({ shaper, device: () => ipsec.device(), servers: deps.servers, accounts: deps.accounts, logger: deps.logger });
    this.writers = laneWriters({ dns, ipsec, firewall }, () => this.lane.active);
    // after a failed undo, the interface's firewall and shaping are set up again from the store by its next change
    const forget = (iface: string) => [this.walled, this.shaped].forEach((set) => set.delete(iface));
    this.undos = new UndoLedger((step) => step.subsystem !== 'wireguard' && forget(step.iface), deps.logger);
  }

  /**
   * The `subsystem:interface` entries whose undo failed since the last full reconcile (sorted): their live state may
   * differ from the store until the next change of that interface (firewall, shaping) or the next reconcile.
   */
  needsReconcile(): string[] {
    return this.undos.marked();
  }

  /** The WireGuard seam, for reads (dumps, handshakes, host networks). */
  get driver(): Driver {
    return this.deps.dataplane.wireguard;
  }

  /** Plugs in the firewall store (port forwards, filter rules, conf) read by reconcile and account changes. */
  setPolicySource(source: PolicySource): void {
    this.policy = source;
  }

  /** Adds a {@link SyncFollower} (IKEv2). */
  addFollower(follower: SyncFollower): void {
    this.followers.push(follower);
    follower.onDaemonChange?.(() => this.ikev2Shaping.ensure());
  }

  /**
   * Runs `task` after every earlier serialized task has settled; resolves or rejects with its outcome. With
   * `{ batch: true }` (account changes whose one data-plane step is {@link applyAccountChange}) it may share one
   * data-plane batch with the account changes queued right after it (group commit, see {@link DataplaneLane}).
   */
  serial<T>(task: () => Promise<T> | T, opts?: LaneOptions): Promise<T> {
    return this.lane.run(task, opts);
  }

  /** WireGuard interface spec of a server row (decrypts the private key). */
  interfaceSpec(row: ServerRow) {
    return interfaceSpec(row, this.deps.box);
  }

  // ---- servers (call inside serial) ----

  /**
   * A new server: the link, then its firewall chains, then its (empty) shaping trees. On failure everything made
   * is removed again (the link too, unless another daemon holds the name) and the error is rethrown.
   */
  async createServer(row: ServerRow, opts: { keepLinkOnFailure?: (err: unknown) => boolean } = {}): Promise<void> {
    const { wireguard } = this.deps.dataplane;
    try {
      await wireguard.ensureInterface(this.interfaceSpec(row));
      await this.ensureServerPolicy(row, []);
      if (row.ikev2 === 1) await this.reshapeIkev2();
    } catch (err) {
      const iface = row.interface_name;
      await this.undos.run({ subsystem: 'firewall', iface, run: () => this.removeServerPolicy(iface) });
      if (!opts.keepLinkOnFailure?.(err)) await this.undos.run({ subsystem: 'wireguard', iface, run: () => wireguard.removeInterface(iface) });
      throw err;
    }
  }

  /**
   * A changed server: the link when its WireGuard settings changed, the firewall rules when NAT/forwarding
   * settings changed (rules only: the peers' marks stay), the shaping trees (with every peer) when the subnet
   * changed (class minors derive from it). On failure the old row's state is put back and the error rethrown.
   */
  async updateServer(before: ServerRow, after: ServerRow): Promise<void> {
    const { wireguard, firewall, shaper } = this.deps.dataplane;
    const oldSpec = this.interfaceSpec(before);
    const newSpec = this.interfaceSpec(after);
    const ext = this.deps.externalInterface;
    const oldFw = serverFirewallSpec(before, [], this.policy.forwards(before), ext);
    const newFw = serverFirewallSpec(after, [], this.policy.forwards(after), ext);
    const wgChanged = JSON.stringify(oldSpec) !== JSON.stringify(newSpec);
    const fwChanged = JSON.stringify({ ...oldFw, forwards: [] }) !== JSON.stringify({ ...newFw, forwards: [] });
    const tcChanged = before.address !== after.address;
    try {
      if (wgChanged) await wireguard.ensureInterface(newSpec);
      if (fwChanged || tcChanged) {
        const server = desiredServer(after, this.deps.accounts);
        if (tcChanged || !this.walled.has(after.interface_name)) {
          await firewall.ensureServer(serverFirewallSpec(after, server.peers, this.policy.forwards(after), ext));
        } else {
          await firewall.ensureServer(newFw, { rulesOnly: true });
        }
        this.walled.add(after.interface_name);
        if (tcChanged) {
          await shaper.ensure(shapingTarget(after), server.peers.map(shapedPeer));
          this.shaped.add(after.interface_name);
          if (before.ikev2 === 1 || after.ikev2 === 1) await this.reshapeIkev2();
        }
      }
    } catch (err) {
      const iface = before.interface_name;
      if (wgChanged) await this.undos.run({ subsystem: 'wireguard', iface, run: () => wireguard.ensureInterface(oldSpec) });
      if (fwChanged || tcChanged) {
        await this.undos.run({ subsystem: 'firewall', iface, run: () => this.ensureServerPolicy(before, desiredServer(before, this.deps.accounts).peers) });
      }
      throw err;
    }
    for (const f of this.followers) await f.serverChanged(before, after).catch((err: unknown) => this.followerFailed(f, err));
  }

  /** A deleted server: its shaping trees and IFB device, its firewall chains and sets, then the link. */
  async removeServer(row: ServerRow): Promise<void> {
    await this.removeServerPolicy(row.interface_name);
    await this.deps.dataplane.wireguard.removeInterface(row.interface_name);
    if (row.ikev2 === 1) await this.reshapeIkev2();
  }

  // ---- accounts (call inside serial) ----

  /**
   * The one batched call per subsystem an account change needs, from the row before and after (null = absent;
   * only enabled rows have a peer): `wg set`, one `ipset restore` of its mark, one `tc -batch` of its classes and
   * filters — each only when that subsystem's view of the peer changed (a password change costs nothing). Inside a
   * `batch` task of the lane the change is parked and applied with the others of its batch (the promise settles
   * then); otherwise it is applied at once.
   *
   * A suspended peer (enabled → disabled, row kept) is parked, not removed: its allowed IPs are cleared (no traffic
   * passes either way) and it keeps its counters and endpoint, so the suspend reads nothing; the next traffic sample
   * counts its last bytes and removes it, keeping its endpoint in the store (TrafficStatisticsService.sampleAndSettle).
   * When it comes back before that, it gets its addresses again and its counters go on; after, the server sets the
   * kept endpoint and sends a keepalive at once, so the tunnel resumes without waiting for the client's re-handshake
   * timer. A deleted account's peer is removed after its mark and classes, so a refusal of those leaves it untouched;
   * a suspended account's too, as it may still be parked (its key could come back with another account).
   */
  applyAccountChange(server: ServerRow, before: AccountRow | null, after: AccountRow | null): Promise<void> {
    return this.lane.park({ server, before, after }) ?? this.applyAccountChanges([{ server, before, after }]);
  }

  /**
   * Applies account changes together: per server one `wg set`, one `ipset restore` and one `tc -batch` carrying all
   * of them (see {@link planAccountBatch}). On a failure every subsystem already changed gets the inverse batch and
   * the error is rethrown (the callers write their rows back). Followers hear of each change once all succeeded.
   */
  async applyAccountChanges(changes: AccountChange[]): Promise<void> {
    const started = performance.now();
    const batches = planAccountBatch(changes);
    const undo: UndoStep[] = [];
    try {
      for (const batch of batches) await this.applyServerBatch(batch, undo);
    } catch (err) {
      for (const step of undo.reverse()) await this.undos.run(step);
      throw err;
    }
    this.deps.logger?.debug({ changes: changes.length, ms: Math.round(performance.now() - started) }, 'account changes applied');
    for (const batch of batches) {
      for (const c of batch.changes) {
        for (const f of this.followers) await f.accountChanged(c.server, c.before, c.after).catch((err: unknown) => this.followerFailed(f, err));
      }
    }
  }

  /**
   * One server's share of a batch. With the server's firewall and shaping set up (the usual case) the three
   * subsystems are independent and run side by side, so a batch costs the slowest tool, not the sum; each one that
   * succeeded leaves its undo, and the first failure is rethrown once all have settled.
   */
  private async applyServerBatch(batch: ServerBatch, undo: UndoStep[]): Promise<void> {
    const { server } = batch;
    const iface = server.interface_name;
    const steps: Array<[SyncSubsystem, () => Promise<(() => Promise<void>) | null>]> = [
      ['wireguard', () => wireguardBatchStep(this.deps.dataplane.wireguard, this.deps.accounts, batch)], ['firewall', () => this.firewallStep(batch)], ['shaping', () => this.shapingStep(batch)],
    ];
    if (!this.walled.has(iface) || !this.shaped.has(iface)) {
      // A full setup of the server's firewall and shaping from the store (after a failure or before any reconcile).
      for (const [subsystem, step] of steps) {
        const back = await step();
        if (back) undo.push({ subsystem, iface, run: back });
      }
    } else {
      const outcomes = await Promise.allSettled(steps.map(([, step]) => step()));
      outcomes.forEach((o, i) => {
        if (o.status === 'fulfilled' && o.value) undo.push({ subsystem: steps[i][0], iface, run: o.value });
      });
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
    }
    // Deleted accounts' peers leave last: a refused mark or class keeps the peer (and its counters) untouched.
    if (batch.wgLeaving.length) await this.deps.dataplane.wireguard.applyPeers(iface, { upsert: [], remove: batch.wgLeaving });
  }

  /** The batch's `ipset restore` (and the forwards of peers that appeared or moved); returns its undo. */
  private async firewallStep(batch: ServerBatch): Promise<(() => Promise<void>) | null> {
    if (!batch.fw) return null;
    const { server } = batch;
    const iface = server.interface_name;
    if (!this.walled.has(iface)) {
      await this.ensureServerPolicy(server, desiredServer(server, this.deps.accounts).peers);
      return null;
    }
    const { firewall } = this.deps.dataplane;
    await firewall.applyPeers(iface, batch.fw);
    const fwUndo = batch.fwUndo;
    const back = () => firewall.applyPeers(iface, fwUndo);
    try {
      await this.restoreForwards(server, batch.readdressed);
    } catch (err) {
      await this.undos.run({ subsystem: 'firewall', iface, run: back });
      throw err;
    }
    return back;
  }

  /** The batch's `tc -batch` (and the IKEv2 TUN tree's); returns its undo. */
  private async shapingStep(batch: ServerBatch): Promise<(() => Promise<void>) | null> {
    if (!batch.tc) return null;
    const { server } = batch;
    const iface = server.interface_name;
    const { shaper } = this.deps.dataplane;
    if (!this.shaped.has(iface)) {
      await this.ensureServerPolicy(server, desiredServer(server, this.deps.accounts).peers);
      await this.ikev2Shaping.apply(server, batch.tc);
      return null;
    }
    try {
      await shaper.apply(shapingTarget(server), batch.tc);
    } catch (err) {
      // A failed tc run leaves the shaper without the interface: the next change ensures it from the store.
      if (!(err instanceof ShapingError && err.message.startsWith('shaping:'))) this.shaped.delete(iface);
      throw err;
    }
    await this.ikev2Shaping.apply(server, batch.tc);
    const tcUndo = batch.tcUndo;
    return async () => {
      await shaper.apply(shapingTarget(server), tcUndo);
      await this.ikev2Shaping.apply(server, tcUndo);
    };
  }


  private followerFailed(f: SyncFollower, err: unknown): void {
    this.deps.logger?.error({ err: (err as Error)?.message }, `${f.name} did not follow a change`);
  }

  // ---- network policy (each runs in the lane) ----

  /** Replaces a server's port forwards (`firewall.setForwards`); throws the firewall's `FirewallError`. */
  applyForwards(serverName: string, forwards: PortForwardRule[]): Promise<void> {
    return this.serial(async () => {
      const row = requireServer(this.deps.servers, serverName);
      await this.deps.dataplane.firewall.setForwards(row.interface_name, forwards);
    });
  }

  /** Global policies, `ip_forward` (sysctl) and the operator's INPUT rules (`firewall.ensureGlobal`). */
  applyFirewallGlobal(conf: FirewallConf, rules: FilterRule[]): Promise<void> {
    return this.serial(() => this.deps.dataplane.firewall.ensureGlobal(conf, rules));
  }

  /** One operator INPUT rule added at the top or end (`firewall.addFilterRule`): the other rules keep their counters. */
  addFilterRule(rule: FilterRule, position: RulePosition): Promise<void> {
    return this.serial(() => this.deps.dataplane.firewall.addFilterRule(rule, position));
  }

  /** One operator INPUT rule deleted (`firewall.deleteFilterRule`): the other rules keep their counters. */
  deleteFilterRule(name: string): Promise<void> {
    return this.serial(() => this.deps.dataplane.firewall.deleteFilterRule(name));
  }

  /**
   * Re-reads the server's enabled accounts from the store and applies their rates in one batched `shaper.apply`
   * (`PUT /wireguard/<name>/set_bandwidth` writes the server's values into them first).
   */
  applyServerBandwidth(serverName: string): Promise<void> {
    return this.serial(async () => {
      const row = requireServer(this.deps.servers, serverName);
      const { peers } = desiredServer(row, this.deps.accounts);
      if (!this.shaped.has(row.interface_name)) {
        await this.deps.dataplane.shaper.ensure(shapingTarget(row), peers.map(shapedPeer));
        this.shaped.add(row.interface_name);
        return;
      }
      await this.deps.dataplane.shaper.apply(shapingTarget(row), { upsert: peers.map(shapedPeer), remove: [] });
      await this.ikev2Shaping.apply(row, { upsert: peers.map(shapedPeer), remove: [] });
    });
  }

  /** Makes every subsystem match the whole store (boot, `PUT /system/reload`), in the lane: see {@link reconcileStore}. */
  reconcileAll(onProgress?: (done: number, total: number) => void): Promise<SyncReconcileReport> {
    const ctx = { ...this.deps, policy: this.policy, followers: this.followers, walled: this.walled, shaped: this.shaped };
    return this.serial(() => this.undos.settle(() => reconcileStore(ctx, onProgress)));
  }

  // ---- internals ----

  /** Full firewall and shaping setup of one server with these peers. */
  private async ensureServerPolicy(row: ServerRow, peers: DesiredPeer[]): Promise<void> {
    const { firewall, shaper } = this.deps.dataplane;
    await firewall.ensureServer(serverFirewallSpec(row, peers, this.policy.forwards(row), this.deps.externalInterface));
    this.walled.add(row.interface_name);
    await shaper.ensure(shapingTarget(row), peers.map(shapedPeer));
    this.shaped.add(row.interface_name);
  }

  /** The IKEv2 tree after a server change that moves its covering network or its peers; logged, never thrown. */
  private async reshapeIkev2(): Promise<void> {
    await this.ikev2Shaping.ensure().catch((err: unknown) => {
      this.deps.logger?.error({ err: (err as Error)?.message }, 'ikev2 shaping did not follow a server change');
    });
  }

  private async removeServerPolicy(iface: string): Promise<void> {
    const { firewall, shaper } = this.deps.dataplane;
    await shaper.remove(iface);
    this.shaped.delete(iface);
    await firewall.removeServer(iface);
    this.walled.delete(iface);
  }

  /**
   * Puts the server's stored forwards back into the firewall (compensation of a failed account delete, whose
   * forwards the firewall dropped with the peer). Runs inside the caller's lane: call it only from a serial task.
   */
  async reapplyForwards(row: ServerRow): Promise<void> {
    const { peers } = desiredServer(row, this.deps.accounts);
    const spec = serverFirewallSpec(row, peers, this.policy.forwards(row), this.deps.externalInterface);
    await this.deps.dataplane.firewall.setForwards(row.interface_name, spec.forwards);
  }

  /** Peers coming back, or moved to another address, get their stored forwards back (the firewall dropped them). */
  private async restoreForwards(row: ServerRow, peers: DesiredPeer[]): Promise<void> {
    if (peers.length === 0) return;
    const addresses = new Set(peers.map((p) => p.ipv4));
    if (!this.policy.forwards(row).some((f) => addresses.has(f.to_ip.split('/')[0]))) return;
    await this.reapplyForwards(row);
  }
}
