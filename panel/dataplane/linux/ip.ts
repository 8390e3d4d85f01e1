// Wrapper of iproute2 `ip`: link and address reads as JSON (`ip -j`), changes as one `ip -batch -` run.
import type { HostNetwork } from '../wireguard/driver.ts';
import { parseHostAddresses, parseHostRoutes } from '../render/parse-ip-host.ts';
import { parseIpAddrJson, type LinkInfo } from '../render/parse-ip-link.ts';
import type { CommandRunner } from './runner.ts';

/** The `ip` tool. */
export class IpTool {
  constructor(private readonly runner: CommandRunner) {}

  /** `ip -j addr show dev IF` parsed; null when the link does not exist. */
  async link(iface: string): Promise<LinkInfo | null> {
    const result = await this.runner.run('ip', ['-j', 'addr', 'show', 'dev', iface], { allowFailure: true });
    if (result.exitCode !== 0) {
      if (/Cannot find device|does not exist/.test(result.stderr)) return null;
      await this.runner.run('ip', ['-j', 'addr', 'show', 'dev', iface]);
    }
    return parseIpAddrJson(result.stdout);
  }

  /** `ip -j link show` → names of every link in the namespace. */
  async linkNames(): Promise<string[]> {
    const { stdout } = await this.runner.run('ip', ['-j', 'link', 'show']);
    const links = JSON.parse(stdout.trim() === '' ? '[]' : stdout) as Array<{ ifname?: string }>;
    return links.map((l) => l.ifname ?? '').filter(Boolean);
  }

  /**
   * `ip link add dev IF type wireguard` (kernel WireGuard). Returns false when the kernel lacks the link type
   * ("Unknown device type" / "not supported"); other failures throw.
   */
  async addWireguardLink(iface: string): Promise<boolean> {
    const result = await this.runner.run('ip', ['link', 'add', 'dev', iface, 'type', 'wireguard'], { allowFailure: true });
    if (result.exitCode === 0) return true;
    if (/Unknown device type|not supported|Error: Unknown/i.test(result.stderr)) return false;
    await this.runner.run('ip', ['link', 'add', 'dev', iface, 'type', 'wireguard']);
    return true;
  }

  /** `ip link del dev IF`; no-op when the link is absent. */
  async deleteLink(iface: string): Promise<void> {
    const result = await this.runner.run('ip', ['link', 'del', 'dev', iface], { allowFailure: true });
    if (result.exitCode !== 0 && !/Cannot find device/.test(result.stderr)) {
      await this.runner.run('ip', ['link', 'del', 'dev', iface]);
    }
  }

  /**
   * `ip -batch -` with one command per line on stdin (e.g. `address replace 10.0.1.1/24 dev wg1`,
   * `link set dev wg1 mtu 1420 up`): several changes for one process. No-op for an empty list.
   */
  async batch(commands: string[]): Promise<void> {
    if (commands.length === 0) return;
    await this.runner.run('ip', ['-batch', '-'], { input: `${commands.join('\n')}\n` });
  }

  /**
   * Networks in use: `ip -j addr show` (every link's addresses) plus `ip -j -4 route show` and
   * `ip -j -6 route show` (main table destinations, default routes left out), run side by side.
   */
  async hostNetworks(): Promise<HostNetwork[]> {
    const [addrs, v4, v6] = await Promise.all([
      this.runner.run('ip', ['-j', 'addr', 'show']),
      this.runner.run('ip', ['-j', '-4', 'route', 'show']),
      this.runner.run('ip', ['-j', '-6', 'route', 'show'], { allowFailure: true }), // IPv6 may be off
    ]);
    return [...parseHostAddresses(addrs.stdout), ...parseHostRoutes(v4.stdout), ...(v6.exitCode === 0 ? parseHostRoutes(v6.stdout) : [])];
  }

  /** `ip -V` succeeds. */
  async probe(): Promise<void> {
    await this.runner.run('ip', ['-V']);
  }
}
