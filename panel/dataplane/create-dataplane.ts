// Builds the data-plane bundle (linux or simulated); the linux tools' wrappers are imported lazily.
import { join } from 'node:path';
import type { Dataplane } from './dataplane.ts';
import type { Dns } from './dns/dns.ts';
import { SimulatedDns } from './dns/simulated/simulated-dns.ts';
import type { Driver } from './wireguard/driver.ts';
import type { Firewall } from './firewall/firewall.ts';
import type { Ipsec } from './ipsec/ipsec.ts';
import { SimulatedIpsec } from './ipsec/simulated/simulated-ipsec.ts';
import type { DaemonRunner } from './linux/runner.ts';
import type { Shaper } from './shaping/shaping.ts';
import { SimulatedFirewall } from './firewall/simulated/simulated-firewall.ts';
import { SimulatedShaper } from './shaping/simulated/simulated-shaper.ts';
import { SimulatedDriver } from './wireguard/simulated/simulated-driver.ts';

/** Options of a linux bundle. */
export interface LinuxDataplaneOptions {
  kind: 'linux';
  /** Data directory of the panel; the WireGuard seam keeps its list of created links under `<dataDir>/dataplane`. */
  dataDir: string;
  /** `kernel`, `userspace` (wireguard-go) or `auto`. */
  wireguard?: 'auto' | 'kernel' | 'userspace';
  /** Runs every tool (default: a fresh `ExecaRunner`); tests bind one to a network namespace. */
  runner?: DaemonRunner;
  /** The panel's API TCP port, kept reachable by the firewall's `system_CONTROLPANEL` rule; null = none. */
  apiPort: number | null;
  /** IKEv2: load strongSwan's `kernel-libipsec` (ESP in userspace) — default from VPNHOST_IPSEC_LIBIPSEC=1. */
  ipsecLibipsec?: boolean;
  /**
   * IKEv2 through one shared connection whose addresses come from the panel's identity lease responder (any IKE
   * identity, connect cost independent of the number of accounts) — default on; off with
   * `VPNHOST_IPSEC_IDENTITY_LEASES=0`, and off with a `runner`, which may put charon in another namespace (then one
   * connection and pool per account).
   */
  ipsecIdentityLeases?: boolean;
  /** unbound's `unbound-control` port on 127.0.0.1 (default 8954); its files live in `<dataDir>/unbound`. */
  dnsControlPort?: number;
}

/** Options of a simulated bundle; any part may be given (tests hand in a failing or pre-loaded twin). */
export interface SimulatedDataplaneOptions {
  kind: 'simulated';
  wireguard?: Driver;
  firewall?: Firewall;
  shaper?: Shaper;
  ipsec?: Ipsec;
  dns?: Dns;
  apiPort?: number | null;
}

/** Options of {@link createDataplane}. */
export type DataplaneOptions = LinuxDataplaneOptions | SimulatedDataplaneOptions;

/** Builds the bundle of {@link Dataplane} seams for `opts.kind`. */
export async function createDataplane(opts: DataplaneOptions): Promise<Dataplane> {
  if (opts.kind === 'simulated') return createSimulatedDataplane(opts);
  const [{ LinuxDriver }, { ExecaRunner }, { IptablesFirewall }, { TcShaper }, { UnboundDns }] = await Promise.all([
    import('./wireguard/linux/linux-driver.ts'),
    import('./linux/runner.ts'),
    import('./firewall/linux/iptables-firewall.ts'),
    import('./shaping/linux/tc-shaper.ts'),
    import('./dns/linux/unbound-dns.ts'),
  ]);
  const { CharonIpsec } = await import('./ipsec/linux/charon-ipsec.ts');
  const runner = opts.runner ?? new ExecaRunner();
  const wireguard = new LinuxDriver({ runner, stateDir: join(opts.dataDir, 'dataplane'), wireguard: opts.wireguard });
  const ipsec = new CharonIpsec({
    runner, dir: join(opts.dataDir, 'ipsec'), libipsec: opts.ipsecLibipsec ?? process.env.VPNHOST_IPSEC_LIBIPSEC === '1',
    ...(identityLeases(opts) ? { identityLeases: { address: process.env.VPNHOST_IPSEC_LEASE_ADDRESS || '127.0.0.1' } } : {}),
  });
  const dns = new UnboundDns({ runner, dir: join(opts.dataDir, 'unbound'), controlPort: opts.dnsControlPort });
  return bundle('linux', wireguard, new IptablesFirewall({ runner, apiPort: opts.apiPort }), new TcShaper({ runner }), dns, ipsec);
}

/**
 * Whether charon serves every client through the shared connection and the panel's identity lease responder: on
 * unless `VPNHOST_IPSEC_IDENTITY_LEASES=0` or the option says otherwise, and off by default with a runner (the
 * responder's socket lives in the panel's namespace, charon may live in the runner's).
 */
function identityLeases(opts: LinuxDataplaneOptions): boolean {
  if (opts.runner) return opts.ipsecIdentityLeases === true;
  return opts.ipsecIdentityLeases ?? process.env.VPNHOST_IPSEC_IDENTITY_LEASES !== '0';
}

/**
 * The simulated bundle, synchronously (tests, the demo): `SimulatedDriver`, `SimulatedFirewall`, and a
 * `SimulatedShaper` that sees exactly the links of the WireGuard twin (shaping a missing link fails as on linux).
 */
export function createSimulatedDataplane(opts: Omit<SimulatedDataplaneOptions, 'kind'> = {}): Dataplane {
  const wireguard = opts.wireguard ?? new SimulatedDriver();
  const firewall = opts.firewall ?? new SimulatedFirewall({ apiPort: opts.apiPort ?? null });
  const ipsec = opts.ipsec ?? new SimulatedIpsec();
  // The shaper sees the WireGuard twin's links and the IPsec twin's TUN (there while it runs, as with libipsec).
  const shaper =
    opts.shaper ??
    new SimulatedShaper({ interfaceExists: async (name: string) => (await wireguard.listInterfaces()).includes(name) || (await ipsec.device()) === name });
  return bundle('simulated', wireguard, firewall, shaper, opts.dns ?? new SimulatedDns(), ipsec);
}

function bundle(kind: Dataplane['kind'], wireguard: Driver, firewall: Firewall, shaper: Shaper, dns: Dns, ipsec: Ipsec): Dataplane {
  return {
    kind, wireguard, firewall, shaper, dns, ipsec,
    close: async () => {
      await dns.close();
      await ipsec.close();
      await wireguard.close();
    },
  };
}
