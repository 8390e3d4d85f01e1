// Bandwidth limits of IKEv2 clients: one HTB tree (egress = download) plus its IFB (upload) on charon's TUN device.
import type { Logger } from 'pino';
import type { Shaper, ShapingChanges, ShapingTarget } from '../../dataplane/shaping/shaping.ts';
import type { AccountsRepository } from '../../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../../store/repositories/servers.ts';
import { ipsecShapingTarget, shapedPeer } from '../dataplane-specs.ts';
import { desiredServer } from '../desired-state.ts';

/** Collaborators of {@link Ikev2Shaping}. */
export interface Ikev2ShapingDeps {
  /** The shaper, written only by DataplaneSync (which owns this tree) inside the lane. */
  shaper: Shaper;
  /** charon's TUN device (a read of the IPsec seam), null while it does not run. */
  device: () => Promise<string | null>;
  servers: ServersRepository;
  accounts: AccountsRepository;
  logger?: Logger;
}

/**
 * Keeps the shaping tree on the IKEv2 TUN equal to the store, through the same shaper (and so the same per-interface
 * peer book) as the WireGuard trees. Classes exist for every limited, enabled account of every server with
 * `ikev2=1` — not only for accounts with a live SA: the tree then never follows SA events (no vici event stream,
 * no race between an SA coming up and its first packets), and an account change is the same O(1) `tc -batch` as on
 * wgN. The TUN appears when charon starts and goes with it, so {@link ensure} runs after every start (and on
 * reconcile), and {@link apply} does nothing until then. Every method runs inside the data-plane lane.
 */
export class Ikev2Shaping {
  /** What the shaper holds for the TUN (null: nothing ensured in this process, or charon not running). */
  private target: ShapingTarget | null = null;

  constructor(private readonly deps: Ikev2ShapingDeps) {}

  /**
   * Full reconcile of the TUN tree (O(accounts of IKEv2 servers), reads the live tc state, writes only what
   * differs): after charon (re)started or stopped, on `PUT /system/reload`, when a server's `ikev2` flag, subnet
   * or existence changed. Without a device or an IKEv2 server, removes what is left (its IFB device).
   */
  async ensure(): Promise<void> {
    const { shaper } = this.deps;
    const device = await this.deps.device();
    const rows = this.deps.servers.list();
    const target = device ? ipsecShapingTarget(device, rows) : null;
    const held = this.target;
    this.target = null;
    if (!target) {
      if (held) await shaper.remove(held.name);
      return;
    }
    const peers = rows.filter((row) => row.ikev2 === 1).flatMap((row) => desiredServer(row, this.deps.accounts).peers.map(shapedPeer));
    await shaper.ensure(target, peers);
    this.target = target;
  }

  /**
   * One batch of changes of a server's accounts (the one the WireGuard tree took): one `tc -batch` on the TUN when
   * the server has IKEv2 and the tree exists. A failure is logged and the tree forgotten, never thrown: the
   * WireGuard side already took the change, and the next {@link ensure} (reconcile) repairs the TUN.
   */
  async apply(server: ServerRow, changes: ShapingChanges): Promise<void> {
    if (server.ikev2 !== 1 || !this.target) return;
    try {
      await this.deps.shaper.apply(this.target, changes);
    } catch (err) {
      this.target = null;
      this.deps.logger?.error({ err: (err as Error).message }, 'ikev2 shaping change failed; the next reconcile rebuilds it');
    }
  }

  /** The target the TUN tree is held under (views and tests). */
  get held(): ShapingTarget | null {
    return this.target;
  }
}
