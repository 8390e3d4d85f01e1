// Wrapper of the userspace daemon `wireguard-go`, used when the kernel has no WireGuard module.
import type { CommandRunner } from './runner.ts';

/** Consent to run where a kernel module could exist; LOG_LEVEL empty so the daemon does not hold our stdio pipes. */
const USERSPACE_ENV = { WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: '1', LOG_LEVEL: '' };

/** The `wireguard-go` daemon. */
export class WireguardGoTool {
  constructor(private readonly runner: CommandRunner) {}

  /**
   * `wireguard-go IF`: creates the tun link and its UAPI socket (/var/run/wireguard/IF.sock). The command forks
   * the daemon into the background and returns once the link exists; it is started in its own session so the
   * daemon outlives the panel (a link is removed with `ip link del`, after which the daemon exits by itself).
   */
  async start(iface: string): Promise<void> {
    await this.runner.run('wireguard-go', [iface], { env: USERSPACE_ENV, detached: true });
  }

  /** `wireguard-go --version` → e.g. `0.0.20220316`; null when the daemon is not installed. */
  async version(): Promise<string | null> {
    const result = await this.runner.run('wireguard-go', ['--version'], { allowFailure: true });
    if (result.exitCode !== 0) return null;
    return /v(\d[\w.]*)/.exec(result.stdout)?.[1] ?? null;
  }
}
