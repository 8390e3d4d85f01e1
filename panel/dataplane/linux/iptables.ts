// Wrapper of iptables: reads with `iptables-save`, writes with `iptables-restore --noflush` payloads.
import { renderIptablesRestore } from '../render/iptables-restore.ts';
import type { InterfaceRules } from '../render/iptables-rules.ts';
import { parseIptablesSave, type IptablesSnapshot } from '../render/parse-iptables-save.ts';
import type { CommandRunner } from './runner.ts';

/** The iptables tools (IPv4). */
export class IptablesTool {
  constructor(private readonly runner: CommandRunner) {}

  /** `iptables-save` parsed (every table, one process). */
  async snapshot(): Promise<IptablesSnapshot> {
    const { stdout } = await this.runner.run('iptables-save', []);
    return parseIptablesSave(stdout);
  }

  /** `iptables-restore --noflush` with the payload on stdin (atomic per table). */
  async restore(payload: string): Promise<void> {
    await this.runner.run('iptables-restore', ['--noflush'], { input: payload });
  }

  /**
   * Makes the interface's rules in the dedicated chains equal `wanted` (null: none), touching no other rule.
   * Reads once; writes only when something differs. Returns whether it wrote.
   */
  async syncInterface(iface: string, wanted: InterfaceRules | null): Promise<boolean> {
    const payload = renderIptablesRestore(await this.snapshot(), iface, wanted);
    if (payload === null) return false;
    await this.restore(payload);
    return true;
  }
}
