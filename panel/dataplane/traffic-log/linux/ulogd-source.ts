// The NFLOG source of logged packets: ulogd2 decodes them to JSON lines on a unix socket of the panel.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DaemonRunner } from '../../linux/runner.ts';
import { parseUlogdJson } from '../../render/ulogd-json-parser.ts';
import type { FlowEvent } from '../flow-event.ts';
import { DEFAULT_NFLOG, type FlowSource, type FlowSourceState, type FlowSubscription } from '../flow-source.ts';
import { UlogdDaemon, type UlogdDaemonOptions } from './ulogd-daemon.ts';

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

  constructor(private readonly runner: DaemonRunner, opts: UlogdSourceOptions) {
    this.nflog = { group: opts.group ?? DEFAULT_NFLOG.group, threshold: opts.threshold ?? DEFAULT_NFLOG.threshold };
    this.daemon = new UlogdDaemon({ ...opts, ...this.nflog, runner });
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
