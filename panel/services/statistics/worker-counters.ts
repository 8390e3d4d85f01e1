// The sample worker's own read of WireGuard counters (linux data plane): the UAPI socket of wireguard-go, else `wg`.
import type { PeerTransfers } from '../../dataplane/wireguard/driver.ts';
import { ExecaRunner } from '../../dataplane/linux/runner.ts';
import { readUapiTransfers } from '../../dataplane/wireguard/linux/uapi-transfers.ts';
import { WgTool } from '../../dataplane/wireguard/linux/wg.ts';

/** An interface the worker could not read: the sampler reads it through the driver (`Driver.transfers`). */
export interface UnresolvedRead {
  iface: string;
  /** Why, when it was an error rather than "nothing answers here" (no daemon, wg cannot access the interface). */
  error?: string;
}

/**
 * Reads the counters of `ifaces` in the worker thread, so neither the read nor its parse runs on the API's thread:
 * a wireguard-go interface over its UAPI socket (no process at all), else (kernel WireGuard) one `wg show <if> dump`
 * spawned from here. An interface neither answers for — missing, a daemon that died, or a kernel interface in a
 * namespace the panel reaches only through its runner — is returned unresolved, and the sampler asks the driver,
 * whose answer decides between "gone" (baselines dropped) and "unreadable" (left out).
 */
export class WorkerCounterReader {
  private readonly wg = new WgTool(new ExecaRunner());
  private held = new Map<string, PeerTransfers>();

  constructor(private readonly uapiDir?: string) {}

  /** Reads `ifaces` one after the other and holds the counters for {@link take}; returns those not read. */
  async read(ifaces: string[]): Promise<UnresolvedRead[]> {
    this.held = new Map();
    const unresolved: UnresolvedRead[] = [];
    for (const iface of ifaces) {
      try {
        const counters = (await readUapiTransfers(iface, { dir: this.uapiDir })) ?? (await this.wg.transfers(iface));
        if (counters) this.held.set(iface, counters);
        else unresolved.push({ iface });
      } catch (err) {
        unresolved.push({ iface, error: (err as Error).message });
      }
    }
    return unresolved;
  }

  /** The counters held for `iface` by the last {@link read} (each handed out once), or undefined. */
  take(iface: string): PeerTransfers | undefined {
    const counters = this.held.get(iface);
    this.held.delete(iface);
    return counters;
  }
}
