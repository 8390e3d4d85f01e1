// Full reconcile of the firewall and shaping subsystems (boot, PUT /system/reload): each fixes only what differs.
import type { FilterRule, Firewall, FirewallConf, ServerFirewallSpec } from './firewall/firewall.ts';
import type { ShapedPeer, Shaper, ShapingTarget } from './shaping/shaping.ts';

/** One subsystem object (server, interface, global state) that failed to reconcile. */
export interface ReconcileFailure {
  /** `firewall:<name>`, `firewall:global`, `shaping:<name>`. */
  name: string;
  error: Error;
}

/**
 * Firewall: the global state (policies, `ip_forward`, operator rules) first, then removes the servers whose chains
 * exist live but are not desired, then `ensureServer` for each desired server (the firewall reads its live chains
 * and sets and writes only differences). Never throws; returns the failures.
 */
export async function reconcileFirewall(
  firewall: Firewall,
  global: { conf: FirewallConf; rules: FilterRule[] },
  servers: ServerFirewallSpec[],
): Promise<ReconcileFailure[]> {
  const failures: ReconcileFailure[] = [];
  const attempt = async (name: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (error) {
      failures.push({ name: `firewall:${name}`, error: error as Error });
    }
  };
  await attempt('global', () => firewall.ensureGlobal(global.conf, global.rules));
  const wanted = new Set(servers.map((s) => s.name));
  for (const name of await firewall.listServers().catch(() => [] as string[])) {
    if (!wanted.has(name)) await attempt(name, () => firewall.removeServer(name));
  }
  for (const spec of servers) await attempt(spec.name, () => firewall.ensureServer(spec));
  return failures;
}

/**
 * Shaping: `ensure` of each desired interface (the shaper reads the live tc state and changes only the classes and
 * filters that differ), and `remove` of interfaces that are going away (their IFB device outlives the link).
 * Never throws; returns the failures.
 */
export async function reconcileShaping(
  shaper: Shaper,
  desired: Array<{ target: ShapingTarget; peers: ShapedPeer[] }>,
  removed: string[],
): Promise<ReconcileFailure[]> {
  const failures: ReconcileFailure[] = [];
  for (const name of removed) {
    try {
      await shaper.remove(name);
    } catch (error) {
      failures.push({ name: `shaping:${name}`, error: error as Error });
    }
  }
  for (const item of desired) {
    try {
      await shaper.ensure(item.target, item.peers);
    } catch (error) {
      failures.push({ name: `shaping:${item.target.name}`, error: error as Error });
    }
  }
  return failures;
}
