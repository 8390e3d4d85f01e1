// The linux firewall: iptables/ip6tables save+restore, ipset and sysctl through the CommandRunner (argv arrays).
import { existsSync } from 'node:fs';
import { DataplaneError } from '../../wireguard/driver.ts';
import { lastLine, type CommandRunner } from '../../linux/runner.ts';
import { toolMessage } from '../../tool-messages.ts';
import type { FirewallBackend } from '../firewall-backend.ts';
import { FirewallEngine, type FirewallOptions } from '../firewall-engine.ts';
import type { Family } from '../firewall.ts';

/**
 * {@link FirewallBackend} on the real tools. Reads: `iptables-save -c` / `ip6tables-save -c` (every table with
 * counters, one process), `ipset list -n`, `ipset save NAME`, `sysctl -n`. Writes: `iptables-restore --noflush` /
 * `ip6tables-restore --noflush` (payload on stdin; atomic per table), `ipset restore -exist` (lines on stdin),
 * `sysctl -w`, `conntrack -D` (connections of a removed port forward). A failing tool throws the runner's `DataplaneError` (`<tool>: <last stderr line>`).
 */
export class LinuxFirewallBackend implements FirewallBackend {
  constructor(private readonly runner: CommandRunner) {}

  async save(family: Family): Promise<string> {
    return (await this.runner.run(family === 4 ? 'iptables-save' : 'ip6tables-save', ['-c'])).stdout;
  }

  async restore(family: Family, payload: string): Promise<void> {
    await this.runner.run(family === 4 ? 'iptables-restore' : 'ip6tables-restore', ['--noflush'], { input: payload });
  }

  async ipsetNames(): Promise<string[]> {
    const { stdout } = await this.runner.run('ipset', ['list', '-n']);
    return stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  }

  /** `ipset save NAME`; empty text when the set does not exist. */
  async ipsetSave(name: string): Promise<string> {
    const result = await this.runner.run('ipset', ['save', name], { allowFailure: true });
    return result.exitCode === 0 ? result.stdout : '';
  }

  async ipsetRestore(lines: string[]): Promise<void> {
    await this.runner.run('ipset', ['restore', '-exist'], { input: `${lines.join('\n')}\n` });
  }

  async sysctlGet(key: string): Promise<string> {
    return (await this.runner.run('sysctl', ['-n', key])).stdout.trim();
  }

  async sysctlSet(key: string, value: string): Promise<void> {
    await this.runner.run('sysctl', ['-w', `${key}=${value}`]);
  }

  /** `iptables --version` (e.g. `iptables v1.8.9 (nf_tables)`) and `ip -V` (first line). */
  async versions(): Promise<{ iptables: string; iproute2: string }> {
    const [iptables, ip] = await Promise.all([this.runner.run('iptables', ['--version']), this.runner.run('ip', ['-V'])]);
    return { iptables: firstLine(iptables.stdout), iproute2: firstLine(ip.stdout) };
  }

  /** `conntrack -D -p PROTO --orig-port-dst PORT [--orig-dst IP]`; exit 1 (nothing matched) is fine. */
  async conntrackDelete(protocol: 'tcp' | 'udp', dstPort: number, dstIp: string | null): Promise<void> {
    const args = ['-D', '-p', protocol, '--orig-port-dst', String(dstPort), ...(dstIp ? ['--orig-dst', dstIp] : [])];
    const result = await this.runner.run('conntrack', args, { allowFailure: true });
    if (result.exitCode !== 0 && result.exitCode !== CONNTRACK_NONE) {
      throw new DataplaneError(toolMessage('conntrack', lastLine(result.stderr) || `exit code ${result.exitCode}`), result.stderr);
    }
  }
}

/** Present when the kernel has IPv6. */
const IPV6_PROC = '/proc/sys/net/ipv6';
/** Exit code of `conntrack -D` when no entry matched ("0 flow entries have been deleted"). */
const CONNTRACK_NONE = 1;

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? '';
}

/** Options of {@link IptablesFirewall}. */
export interface IptablesFirewallOptions extends FirewallOptions {
  /** Runs every command; an `ExecaRunner`, optionally bound to a network namespace. */
  runner: CommandRunner;
}

/**
 * The product firewall: {@link FirewallEngine} on {@link LinuxFirewallBackend}. Without `families` it manages
 * IPv4 and, when the kernel has IPv6 (`/proc/sys/net/ipv6` exists; not with `ipv6.disable=1`), IPv6.
 */
export class IptablesFirewall extends FirewallEngine {
  constructor(opts: IptablesFirewallOptions) {
    super(new LinuxFirewallBackend(opts.runner), { ...opts, families: opts.families ?? (existsSync(IPV6_PROC) ? [4, 6] : [4]) });
  }
}
