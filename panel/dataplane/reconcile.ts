// Full reconcile (boot, PUT /system/reload): makes a driver match the desired interfaces and peers with minimal ops.
import { normalizeAddress, normalizeAllowedIp } from './cidr.ts';
import { DataplaneError, type Driver, type InterfaceSpec, type InterfaceState, type PeerSpec, type PeerState } from './wireguard/driver.ts';
import { publicKeyFrom } from './keys.ts';
import { DEFAULT_MTU } from './tool-messages.ts';

/** One interface with all its peers, as the store wants it. */
export interface DesiredInterface {
  spec: InterfaceSpec;
  peers: PeerSpec[];
}

/** What a reconcile changed. */
export interface ReconcileReport {
  /** Interfaces created, or whose visible state (key, port, addresses, MTU) had to be fixed. */
  interfacesCreatedOrFixed: number;
  /** Managed interfaces removed because nothing desires them. */
  interfacesRemoved: number;
  peersAdded: number;
  peersUpdated: number;
  peersRemoved: number;
}

/** Options of {@link reconcile}. */
export interface ReconcileOptions {
  /** Called after each interface (desired or removed) is done. */
  onProgress?(done: number, total: number): void;
}

/** Raised after a reconcile that went through every interface but failed on some; `report` counts what was done. */
export class ReconcileError extends DataplaneError {
  constructor(
    readonly report: ReconcileReport,
    readonly failures: Array<{ name: string; error: Error }>,
  ) {
    super(
      `reconcile failed for ${failures.map((f) => f.name).join(', ')}`,
      failures.map((f) => `${f.name}: ${f.error.message}`).join('\n'),
    );
    this.name = 'ReconcileError';
  }
}

/**
 * Brings `driver` to the desired state: `ensureInterface` for each desired interface (in place, no restart),
 * then one `applyPeers` per interface carrying only the differences (missing peers, peers whose allowed IPs or
 * keepalive differ, extra peers), and removes managed interfaces nothing desires (`driver.listInterfaces()`
 * lists only interfaces the driver created, so foreign interfaces are never touched). One failing interface does
 * not stop the others; a {@link ReconcileError} is thrown at the end when any failed.
 */
export async function reconcile(
  driver: Driver,
  desired: DesiredInterface[],
  opts: ReconcileOptions = {},
): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    interfacesCreatedOrFixed: 0,
    interfacesRemoved: 0,
    peersAdded: 0,
    peersUpdated: 0,
    peersRemoved: 0,
  };
  const failures: Array<{ name: string; error: Error }> = [];
  const wanted = new Set(desired.map((d) => d.spec.name));
  const extra = (await driver.listInterfaces()).filter((name) => !wanted.has(name));
  const total = desired.length + extra.length;
  let done = 0;

  // Removals first: they may free listen ports the desired interfaces need.
  for (const name of extra) {
    try {
      await driver.removeInterface(name);
      report.interfacesRemoved++;
    } catch (error) {
      failures.push({ name, error: error as Error });
    }
    opts.onProgress?.(++done, total);
  }
  for (const item of desired) {
    try {
      await reconcileInterface(driver, item, report);
    } catch (error) {
      failures.push({ name: item.spec.name, error: error as Error });
    }
    opts.onProgress?.(++done, total);
  }
  if (failures.length > 0) throw new ReconcileError(report, failures);
  return report;
}

async function reconcileInterface(driver: Driver, item: DesiredInterface, report: ReconcileReport): Promise<void> {
  const before = await driver.inspect(item.spec.name);
  await driver.ensureInterface(item.spec);
  if (!before || !interfaceMatches(before, item.spec)) report.interfacesCreatedOrFixed++;
  const current = new Map((before?.peers ?? []).map((p) => [p.publicKey, p]));
  const wantedPeers = new Map(item.peers.map((p) => [p.publicKey, p]));
  const upsert: PeerSpec[] = [];
  for (const peer of wantedPeers.values()) {
    const live = current.get(peer.publicKey);
    if (!live) {
      upsert.push(peer);
      report.peersAdded++;
    } else if (!peerMatches(live, peer)) {
      upsert.push(peer);
      report.peersUpdated++;
    }
  }
  const remove = [...current.keys()].filter((key) => !wantedPeers.has(key));
  report.peersRemoved += remove.length;
  if (upsert.length > 0 || remove.length > 0) await driver.applyPeers(item.spec.name, { upsert, remove });
}

/** Whether the live interface already shows what the spec asks for (NAT rules are not visible here). */
function interfaceMatches(state: InterfaceState, spec: InterfaceSpec): boolean {
  let publicKey: string;
  try {
    publicKey = publicKeyFrom(spec.privateKey);
  } catch {
    return false;
  }
  const wantAddresses = [spec.address, spec.addressIpv6].filter((a): a is string => !!a).map((a) => normalizeAddress(a) ?? a);
  return (
    state.publicKey === publicKey &&
    state.listenPort === spec.listenPort &&
    (spec.mtu || DEFAULT_MTU) === state.mtu &&
    state.up &&
    sameSet(state.addresses, wantAddresses)
  );
}

function peerMatches(live: PeerState, want: PeerSpec): boolean {
  const wantIps = want.allowedIps.map((ip) => normalizeAllowedIp(ip) ?? ip);
  return live.persistentKeepalive === want.persistentKeepalive && sameSet(live.allowedIps, wantIps);
}

function sameSet(a: string[], b: string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((v) => right.has(v));
}
