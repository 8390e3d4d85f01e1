// Keeps traffic logging's NFLOG chains (firewall `setTrafficLog`) in step with the stored config, in the sync's lane.
import { LOG_STATES, type TrafficLogChainSpec } from '../../dataplane/render/traffic-log-chain.ts';
import type { SyncFollower } from '../dataplane-sync.ts';
import type { TrafficLogWriter } from '../lane-writers.ts';
import type { StoredTrafficLogging } from '../../store/repositories/traffic-logging.ts';

/** Tunnel interfaces whose traffic is logged: WireGuard servers and charon's kernel-libipsec TUN (IKEv2). */
const LOGGED_TUNNELS = ['wg+', 'ipsec+'];
/** Records a second per state rule for the states logged per packet (related, invalid, untracked). */
const PER_PACKET_CAP = 20;

/**
 * The chains a stored config asks for: null when logging is off (or has no method), else one NFLOG rule per
 * selected state towards the source's group.
 */
export function chainSpecFor(config: StoredTrafficLogging, nflog: { group: number; threshold: number }): TrafficLogChainSpec | null {
  if (!config.enabled || (!config.enabled_remote_syslog && !config.enabled_tsdb)) return null;
  return {
    states: LOG_STATES.filter((s) => config.flags[s]),
    incoming: config.flags.incoming,
    group: nflog.group,
    threshold: nflog.threshold,
    perSecond: PER_PACKET_CAP,
    tunnels: LOGGED_TUNNELS,
  };
}

/**
 * The data-plane half of traffic logging: `apply()` (config changed, boot) writes the chains through the firewall
 * inside DataplaneSync's lane; as a {@link SyncFollower} it re-creates them in every full reconcile (boot,
 * `PUT /system/reload`). Account and server changes do not touch the chains (they match `wg+`/`ipsec+`).
 */
export class LogChainFollower implements SyncFollower {
  readonly name = 'traffic-logging';

  constructor(
    private readonly lane: { serial<T>(task: () => Promise<T>): Promise<T>; readonly writers: { readonly trafficLog: TrafficLogWriter } },
    private readonly desired: () => TrafficLogChainSpec | null,
  ) {}

  apply(): Promise<void> {
    return this.lane.serial(() => this.reconcile());
  }

  async accountChanged(): Promise<void> {}

  async serverChanged(): Promise<void> {}

  /** Runs inside the lane (reconcileAll calls it there). */
  reconcile(): Promise<void> {
    return this.lane.writers.trafficLog.setTrafficLog(this.desired());
  }
}
