// Wrapper of the userspace daemon `wireguard-go`, used when the kernel has no WireGuard module.
import { DataplaneError, InterfaceHeldError } from '../driver.ts';
import { toolMessage, WG_GO_SOCKET_IN_USE } from '../../tool-messages.ts';
import type { CommandRunner } from '../../linux/runner.ts';

/** Consent to run where a kernel module could exist; LOG_LEVEL empty so the daemon does not hold our stdio pipes. */
const USERSPACE_ENV = { WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: '1', LOG_LEVEL: '' };

/** `ERROR: (wg0) 2026/11/23 10:35:27 UAPI listen error: unix socket in use` → the text after the timestamp. */
const ERROR_LINE = /^ERROR: \([^)]*\) \d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d (.+)$/;

/**
 * The message of a failed `wireguard-go IF` run. The daemon prints its error line (`ERROR: (IF) <date> <time>
 * <message>`) on stdout and a framed "kernel has first class support" banner on stderr, so the runner's usual
 * last-stderr-line would name the banner's frame. Returns the last ERROR message, else the last line that is not
 * part of the banner, else `exit code N`.
 */
export function wireguardGoError(stdout: string, stderr: string, exitCode: number): string {
  const lines = `${stdout}\n${stderr}`.split('\n').map((l) => l.trim()).filter(Boolean);
  const errors = lines.map((l) => ERROR_LINE.exec(l)?.[1]).filter((m): m is string => !!m);
  if (errors.length > 0) return errors[errors.length - 1];
  const plain = lines.filter((l) => !/^[┌│└]/.test(l));
  return plain[plain.length - 1] ?? `exit code ${exitCode}`;
}

/** The `wireguard-go` daemon. */
export class WireguardGoTool {
  constructor(private readonly runner: CommandRunner) {}

  /**
   * `wireguard-go IF`: creates the tun link and its UAPI socket (/var/run/wireguard/IF.sock). The command forks
   * the daemon into the background and returns once the link exists; it is started in its own session so the
   * daemon outlives the panel (a link is removed with `ip link del`, after which the daemon exits by itself).
   * Fails with {@link InterfaceHeldError} when another live daemon answers on the socket, else with a
   * {@link DataplaneError} carrying wireguard-go's own error line (see {@link wireguardGoError}).
   */
  async start(iface: string): Promise<void> {
    const result = await this.runner.run('wireguard-go', [iface], { env: USERSPACE_ENV, detached: true, allowFailure: true });
    if (result.exitCode === 0) return;
    const message = toolMessage('wireguard-go', wireguardGoError(result.stdout, result.stderr, result.exitCode));
    if (message.endsWith(WG_GO_SOCKET_IN_USE)) throw new InterfaceHeldError(iface, message);
    throw new DataplaneError(message, `${result.stdout}${result.stderr}`);
  }

  /** `wireguard-go --version` → e.g. `0.0.20220316`; null when the daemon is not installed. */
  async version(): Promise<string | null> {
    const result = await this.runner.run('wireguard-go', ['--version'], { allowFailure: true });
    if (result.exitCode !== 0) return null;
    return /v(\d[\w.]*)/.exec(result.stdout)?.[1] ?? null;
  }
}
