// Wrapper of wireguard-tools `wg`: reads with `wg show <if> dump`, writes with incremental `wg set`.
import type { PeerChanges, PeerSession } from '../driver.ts';
import { parseWgDump, type WgDump } from '../../render/parse-wg-dump.ts';
import { parseWgDumpSessions } from '../../render/parse-wg-sessions.ts';
import { parseWgTransfers, type PeerTransfers } from '../../render/parse-wg-transfers.ts';
import { renderWgSetArgs } from '../../render/wg-set-args.ts';
import type { CommandRunner } from '../../linux/runner.ts';

/** Interface-level settings `wg set` changes in place. */
export interface WgInterfaceSettings {
  listenPort?: number;
  /** Base64 private key; sent on stdin (`private-key /dev/stdin`), never on argv. */
  privateKey?: string;
}

/** The `wg` tool. */
export class WgTool {
  constructor(private readonly runner: CommandRunner) {}

  /** `wg show IF dump` parsed; null when wg cannot access the interface. */
  async show(iface: string): Promise<WgDump | null> {
    const result = await this.runner.run('wg', ['show', iface, 'dump'], { allowFailure: true });
    if (result.exitCode !== 0) return null;
    return parseWgDump(result.stdout);
  }

  /** `wg show IF dump` read for its transfer counters only (see {@link parseWgTransfers}); null when wg cannot access IF. */
  async transfers(iface: string): Promise<PeerTransfers | null> {
    const result = await this.runner.run('wg', ['show', iface, 'dump'], { allowFailure: true });
    if (result.exitCode !== 0) return null;
    return parseWgTransfers(result.stdout);
  }

  /** `wg show IF dump` read for its peers with a handshake at or after `since` (see parseWgDumpSessions); null when wg cannot access IF. */
  async sessions(iface: string, since: number): Promise<PeerSession[] | null> {
    const result = await this.runner.run('wg', ['show', iface, 'dump'], { allowFailure: true });
    if (result.exitCode !== 0) return null;
    return parseWgDumpSessions(result.stdout, since);
  }

  /** `wg set IF listen-port N private-key /dev/stdin`: changes port and/or key in place. */
  async setInterface(iface: string, settings: WgInterfaceSettings): Promise<void> {
    const args = ['set', iface];
    if (settings.listenPort !== undefined) args.push('listen-port', String(settings.listenPort));
    if (settings.privateKey !== undefined) args.push('private-key', '/dev/stdin');
    if (args.length === 2) return;
    await this.runner.run('wg', args, settings.privateKey !== undefined ? { input: `${settings.privateKey}\n` } : {});
  }

  /**
   * Applies a batch of peer changes: exactly one `wg set IF peer ... peer ...` process (more only past
   * {@link import('../../render/wg-set-args.ts').WG_SET_CHUNK} peers). No read before or after.
   */
  async setPeers(iface: string, changes: PeerChanges): Promise<void> {
    for (const args of renderWgSetArgs(iface, changes)) await this.runner.run('wg', args);
  }

  /** `wg --version` → the tools version, e.g. `1.0.20210914`. */
  async version(): Promise<string> {
    const { stdout } = await this.runner.run('wg', ['--version']);
    return /v(\d[\w.]*)/.exec(stdout)?.[1] ?? stdout.trim();
  }
}
