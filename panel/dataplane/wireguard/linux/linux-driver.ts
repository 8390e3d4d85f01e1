// The linux WireGuard seam: links (kernel or wireguard-go), keys, addresses and peers through wg and ip, incrementally.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { normalizeAddress } from '../../cidr.ts';
import {
  DataplaneError,
  InterfaceHeldError,
  type Driver,
  type DriverHealth,
  type HostNetwork,
  type InterfaceSpec,
  type InterfaceState,
  type PeerChanges,
  type PeerSession,
  type PeerTransfers,
  type WireguardVersions,
} from '../driver.ts';
import { publicKeyFrom } from '../../keys.ts';
import type { LinkInfo } from '../../render/parse-ip-link.ts';
import { parseWgUapiSessions } from '../../render/parse-wg-sessions.ts';
import { checkInterfaceSpec } from '../../spec-check.ts';
import { DEFAULT_MTU, toolMessage, WG_GO_SOCKET_IN_USE } from '../../tool-messages.ts';
import { IpTool } from '../../linux/ip.ts';
import { ManagedState, type WireguardMode } from '../../linux/managed-state.ts';
import type { CommandRunner } from '../../linux/runner.ts';
import { WgTool } from './wg.ts';
import { probeUapiSocket, removeStaleSocket, uapiSocketPath } from './uapi-socket.ts';
import { readUapiAnswer } from './uapi-transfers.ts';
import { WireguardGoTool } from './wireguard-go.ts';

/** Options of {@link LinuxDriver}. */
export interface LinuxDriverOptions {
  /** Runs every command (argv arrays); an `ExecaRunner`, optionally bound to a network namespace. */
  runner: CommandRunner;
  /** Directory of the panel's data-plane state (the list of interfaces this panel created). */
  stateDir: string;
  /** `kernel` (ip link type wireguard), `userspace` (wireguard-go) or `auto` (kernel when it works). */
  wireguard?: 'auto' | 'kernel' | 'userspace';
}

const KERNEL_MODULE_VERSION = '/sys/module/wireguard/version';
const NOT_INSTALLED = 'not installed';

/**
 * {@link Driver} on the real tools. Reads are `wg show IF dump` and `ip -j addr show dev IF`; writes are
 * incremental (`wg set`, `ip -batch`), so an interface that is already right costs only reads and is never
 * restarted. Interface changes are serialised; `applyPeers` is one `wg set`. NAT, marks and forwarding belong to
 * the firewall subsystem (`IptablesFirewall`), never to this driver.
 */
export class LinuxDriver implements Driver {
  readonly kind = 'linux' as const;
  private readonly wg: WgTool;
  private readonly ip: IpTool;
  private readonly wgGo: WireguardGoTool;
  private readonly state: ManagedState;
  private readonly mode: 'auto' | 'kernel' | 'userspace';
  private kernelWorks: boolean | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(opts: LinuxDriverOptions) {
    this.wg = new WgTool(opts.runner);
    this.ip = new IpTool(opts.runner);
    this.wgGo = new WireguardGoTool(opts.runner);
    this.state = new ManagedState(opts.stateDir);
    this.mode = opts.wireguard ?? 'auto';
  }

  /** Runs `wg --version` and `ip -V`. */
  async health(): Promise<DriverHealth> {
    try {
      await this.wg.version();
      await this.ip.probe();
      return { ok: true };
    } catch (error) {
      return { ok: false, detail: (error as Error).message };
    }
  }

  /** `wg --version`, `/sys/module/wireguard/version` (kernel) and `wireguard-go --version` (userspace). */
  async versions(): Promise<WireguardVersions> {
    const [tools, kernel, userspace] = await Promise.all([
      this.wg.version(),
      readFile(KERNEL_MODULE_VERSION, 'utf8').then((v) => v.trim(), () => null),
      this.wgGo.version(),
    ]);
    const useKernel = kernel !== null && this.mode !== 'userspace';
    const wireguard = useKernel ? kernel : userspace ? `wireguard-go ${userspace}` : NOT_INSTALLED;
    return { wireguard, 'wireguard-dkms': kernel ?? NOT_INSTALLED, 'wireguard-tools': tools };
  }

  /** Managed interfaces that exist now (`ip -j link show` ∩ the state file); vanished ones are forgotten. */
  async listInterfaces(): Promise<string[]> {
    return this.serial(async () => {
      const managed = Object.keys(await this.state.all());
      const existing = new Set(await this.ip.linkNames());
      await this.state.remove(...managed.filter((name) => !existing.has(name)));
      return managed.filter((name) => existing.has(name)).sort();
    });
  }

  async ensureInterface(spec: InterfaceSpec): Promise<void> {
    checkInterfaceSpec(spec);
    await this.serial(async () => {
      const link = await this.ip.link(spec.name);
      if (link) {
        await this.update(spec, link);
        await this.state.add(spec.name, (await this.state.mode(spec.name)) ?? this.detectMode(spec.name));
      } else {
        await this.create(spec);
      }
    });
  }

  /** Deletes the link (`ip link del`); the daemon exits with it. */
  async removeInterface(name: string): Promise<void> {
    await this.serial(async () => {
      await this.ip.deleteLink(name);
      await this.waitForDaemonExit(name);
      await this.state.remove(name);
    });
  }

  /** One `wg set` process (per 500 peers); no read before or after. */
  async applyPeers(name: string, changes: PeerChanges): Promise<void> {
    await this.wg.setPeers(name, changes);
  }

  /** `ip -j addr show dev IF` and `wg show IF dump`, run side by side. */
  async inspect(name: string): Promise<InterfaceState | null> {
    const [link, dump] = await Promise.all([this.ip.link(name), this.wg.show(name)]);
    if (!link) return null;
    if (!dump) throw new DataplaneError(toolMessage('wg', `Unable to access interface: ${name}`));
    return {
      name,
      publicKey: dump.publicKey ?? '',
      listenPort: dump.listenPort,
      addresses: link.addresses,
      mtu: link.mtu,
      up: link.up,
      peers: dump.peers,
    };
  }

  /** One `wg show <if> dump` (the link is asked for only when wg cannot access the interface: missing → null). */
  async transfers(name: string): Promise<PeerTransfers | null> {
    const counters = await this.wg.transfers(name);
    if (counters) return counters;
    if (!(await this.ip.link(name))) return null;
    throw new DataplaneError(toolMessage('wg', `Unable to access interface: ${name}`));
  }

  /**
   * A wireguard-go interface's answer to `get=1` on its UAPI socket (no process; the daemon formats what `wg show`
   * would read), else (kernel WireGuard, or a socket that fails) one `wg show <if> dump`; only the peers with a
   * handshake at or after `since` become objects. The link is asked for only when neither reads: missing → null.
   */
  async sessions(name: string, since: number): Promise<PeerSession[] | null> {
    const answer = await readUapiAnswer(name).catch(() => null);
    if (answer) return parseWgUapiSessions(answer, since);
    const sessions = await this.wg.sessions(name, since);
    if (sessions) return sessions;
    if (!(await this.ip.link(name))) return null;
    throw new DataplaneError(toolMessage('wg', `Unable to access interface: ${name}`));
  }

  /** `ip -j addr show` plus `ip -j -4/-6 route show` (see {@link IpTool.hostNetworks}). */
  async hostNetworks(): Promise<HostNetwork[]> {
    return this.ip.hostNetworks();
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  /** Creates the link, then key/port (`wg set`), addresses/MTU/up (`ip -batch`); rolls back on failure. */
  private async create(spec: InterfaceSpec): Promise<void> {
    await this.claimName(spec.name);
    const mode = await this.createLink(spec.name);
    await this.state.add(spec.name, mode);
    try {
      await this.wg.setInterface(spec.name, { listenPort: spec.listenPort, privateKey: spec.privateKey });
      const addresses = [spec.address, spec.addressIpv6].filter((a): a is string => !!a);
      await this.ip.batch([
        ...addresses.map((a) => `address replace ${a} dev ${spec.name}`),
        `link set dev ${spec.name} mtu ${spec.mtu || DEFAULT_MTU} up`,
      ]);
    } catch (error) {
      await this.ip.deleteLink(spec.name).catch(() => undefined);
      await this.waitForDaemonExit(spec.name);
      await this.state.remove(spec.name);
      throw error;
    }
  }

  /** Changes in place only what differs from the spec; an interface that is right costs one `wg show`. */
  private async update(spec: InterfaceSpec, link: LinkInfo): Promise<void> {
    const dump = await this.wg.show(spec.name);
    if (!dump) throw new DataplaneError(toolMessage('wg', `Unable to access interface: ${spec.name}`));
    const settings: { listenPort?: number; privateKey?: string } = {};
    if (spec.listenPort !== 0 && dump.listenPort !== spec.listenPort) settings.listenPort = spec.listenPort;
    if (dump.publicKey !== publicKeyFrom(spec.privateKey)) settings.privateKey = spec.privateKey;
    await this.wg.setInterface(spec.name, settings);
    const want = [spec.address, spec.addressIpv6].filter((a): a is string => !!a).map((a) => normalizeAddress(a) ?? a);
    const commands = [
      ...link.addresses.filter((a) => !want.includes(a)).map((a) => `address del ${a} dev ${spec.name}`),
      ...want.filter((a) => !link.addresses.includes(a)).map((a) => `address replace ${a} dev ${spec.name}`),
    ];
    if (link.mtu !== (spec.mtu || DEFAULT_MTU)) commands.push(`link set dev ${spec.name} mtu ${spec.mtu || DEFAULT_MTU}`);
    if (!link.up) commands.push(`link set dev ${spec.name} up`);
    await this.ip.batch(commands);
  }

  private async createLink(name: string): Promise<WireguardMode> {
    if (this.mode !== 'userspace' && this.kernelWorks !== false) {
      const created = await this.ip.addWireguardLink(name);
      this.kernelWorks = created;
      if (created) return 'kernel';
      if (this.mode === 'kernel') throw new DataplaneError(toolMessage('ip', 'Error: Unknown device type.'));
    }
    await this.wgGo.start(name);
    return 'userspace';
  }

  private detectMode(name: string): WireguardMode {
    return existsSync(uapiSocketPath(name)) ? 'userspace' : 'kernel';
  }

  /**
   * Before a link is made: a UAPI socket of that name in the shared /var/run/wireguard that a live daemon answers
   * on belongs to another namespace's interface (`wg` would talk to it, and wireguard-go cannot start) →
   * {@link InterfaceHeldError}; a stale one (its daemon died, e.g. `kill -9`) is removed.
   */
  private async claimName(name: string): Promise<void> {
    const path = uapiSocketPath(name);
    const state = await probeUapiSocket(path);
    if (state === 'live') throw new InterfaceHeldError(name, toolMessage('wireguard-go', WG_GO_SOCKET_IN_USE));
    if (state === 'stale') await removeStaleSocket(path);
  }

  /** wireguard-go leaves when its link goes; wait (bounded) for its socket to vanish so the name can be reused. */
  private async waitForDaemonExit(name: string): Promise<void> {
    for (let i = 0; i < 100 && existsSync(uapiSocketPath(name)); i++) await sleep(20);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
