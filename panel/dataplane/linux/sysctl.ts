// Wrapper of `sysctl`: packet forwarding, read and written through the runner (so it lands in its namespace).
import type { CommandRunner } from './runner.ts';

/** The `sysctl` tool. */
export class SysctlTool {
  constructor(private readonly runner: CommandRunner) {}

  /** `sysctl -n KEY` → the value, trimmed. */
  async get(key: string): Promise<string> {
    const { stdout } = await this.runner.run('sysctl', ['-n', key]);
    return stdout.trim();
  }

  /** Sets KEY to VALUE with `sysctl -w KEY=VALUE` only when `sysctl -n KEY` shows another value. */
  async ensure(key: string, value: string): Promise<void> {
    if ((await this.get(key)) === value) return;
    await this.runner.run('sysctl', ['-w', `${key}=${value}`]);
  }
}
