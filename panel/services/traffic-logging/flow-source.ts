// The kernel source of logged packets: its contract, the ulogd2 (NFLOG) implementation and an in-memory twin.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandRunner } from '../../dataplane/linux/runner.ts';
import { UlogdDaemon, type UlogdDaemonOptions, type UlogdState } from '../../dataplane/traffic-log/ulogd-daemon.ts';
import type { FlowEvent } from './flow-event.ts';
import { parseUlogdJson } from './ulogd-json-parser.ts';

/** A running subscription; `stop` ends it. */
export interface FlowSubscription {
  stop(): Promise<void>;
}

/** How the source's daemon is doing (`pid` null: down), for stats and logs. */
export type FlowSourceState = UlogdState;

/**
 * Where logged packets come from. `available()` tells whether the tool exists (`TSDB agent not installed`
 * otherwise); `start` delivers events until stopped and restarts a daemon that died, reporting it via `onError`.
 * `nflog` names the NFLOG group and batch size the kernel rules must use to reach it.
 */
export interface FlowSource {
  readonly nflog: { group: number; threshold: number };
  available(): Promise<boolean>;
  start(onEvent: (event: FlowEvent) => void, onError: (err: unknown) => void): FlowSubscription;
  state(): FlowSourceState;
}

/** Default NFLOG group of the panel's rules and how many packets the kernel batches per hand-over. */
const DEFAULT_NFLOG = { group: 4747, threshold: 16 } as const;

/** Where distributions put ulogd's plugins (Debian: the multiarch directory). */
const ULOGD_PLUGIN_DIRS = ['/usr/lib/x86_64-linux-gnu/ulogd', '/usr/lib/aarch64-linux-gnu/ulogd', '/usr/lib64/ulogd', '/usr/lib/ulogd', '/usr/local/lib/ulogd'];

/**
 * Whether ulogd's JSON output (Debian: the separate package `ulogd2-json`) is installed next to its other plugins.
 * A layout none of {@link ULOGD_PLUGIN_DIRS} matches is trusted (`ulogd -V` already answered).
 */
export function hasJsonOutputPlugin(dirs: readonly string[] = ULOGD_PLUGIN_DIRS): boolean {
  const present = dirs.filter((dir) => existsSync(dir));
  return present.length === 0 || present.some((dir) => existsSync(join(dir, 'ulogd_output_JSON.so')));
}

/** Options of {@link UlogdSource}: where ulogd keeps its files, and the NFLOG settings. */
export type UlogdSourceOptions = Pick<UlogdDaemonOptions, 'dir' | 'netns' | 'flushMs' | 'minRestartMs' | 'maxRestartMs'> & { group?: number; threshold?: number };

/**
 * Packets logged by the panel's NFLOG rules (mangle `VPNHOST-LOG`, one rule per selected connection state), read
 * by ulogd2 and handed to the panel as JSON lines over a unix socket (see {@link UlogdDaemon}). Chosen over
 * conntrack events because NFLOG sees the packet: it can log the states conntrack never reports (RELATED, INVALID,
 * UNTRACKED have no event of their own) and the packet's interfaces in and out, length, TOS and mark; the rules
 * keep it to one record per connection and state. `available()` runs `ulogd -V` through the panel's runner.
 */
export class UlogdSource implements FlowSource {
  readonly nflog: { group: number; threshold: number };
  private readonly daemon: UlogdDaemon;

  constructor(private readonly runner: CommandRunner, opts: UlogdSourceOptions) {
    this.nflog = { group: opts.group ?? DEFAULT_NFLOG.group, threshold: opts.threshold ?? DEFAULT_NFLOG.threshold };
    this.daemon = new UlogdDaemon({ ...opts, ...this.nflog });
  }

  async available(): Promise<boolean> {
    try {
      if ((await this.runner.run('ulogd', ['-V'], { allowFailure: true })).exitCode !== 0) return false;
    } catch {
      return false;
    }
    return hasJsonOutputPlugin();
  }

  start(onEvent: (event: FlowEvent) => void, onError: (err: unknown) => void): FlowSubscription {
    const started = this.daemon.start((line) => {
      const event = parseUlogdJson(line);
      if (event) onEvent(event);
    }, onError).catch(onError);
    return {
      stop: async () => {
        await started;
        await this.daemon.stop();
      },
    };
  }

  state(): FlowSourceState {
    return this.daemon.state();
  }
}

/**
 * In-memory twin: tests and the simulated data plane push events by hand; `installed` toggles availability, `down`
 * (a failure text) makes it report a dead daemon.
 */
export class SimulatedFlowSource implements FlowSource {
  readonly nflog = { ...DEFAULT_NFLOG };
  installed = true;
  down: string | null = null;
  private readonly listeners = new Set<(event: FlowEvent) => void>();

  async available(): Promise<boolean> {
    return this.installed;
  }

  start(onEvent: (event: FlowEvent) => void): FlowSubscription {
    this.listeners.add(onEvent);
    return { stop: async () => void this.listeners.delete(onEvent) };
  }

  state(): FlowSourceState {
    return { pid: this.listeners.size > 0 && !this.down ? 0 : null, restarts: this.down ? 1 : 0, lastError: this.down };
  }

  /** Delivers `event` to every running subscription. */
  emit(event: FlowEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Number of running subscriptions. */
  get subscribers(): number {
    return this.listeners.size;
  }
}
