// ulogd2 for the panel: its own config dir, pid file and the unix socket it writes to; supervised by DaemonSupervisor.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DaemonSupervisor, type DaemonState } from '../../linux/daemon-supervisor.ts';
import { DEFAULT_RESTART_POLICY } from '../../linux/restart-backoff.ts';
import { ExecaRunner, type DaemonRunner } from '../../linux/runner.ts';
import { renderUlogdConf } from '../../render/traffic-log-ulogd-conf.ts';

/** Options of {@link UlogdDaemon}. */
export interface UlogdDaemonOptions {
  /** Directory of `ulogd.conf`, `ulogd.pid`, `ulogd.log` and the socket `flows.sock` (created 0700). */
  dir: string;
  group: number;
  threshold: number;
  /** Longest wait of a partial NFLOG batch (default 200 ms). */
  flushMs?: number;
  /** Start ulogd inside this network namespace (`ip netns exec`); default the panel's own. Used when no `runner` is given. */
  netns?: string;
  /** Starts ulogd (default an `ExecaRunner` in `netns`). */
  runner?: DaemonRunner;
  /** First restart delay after ulogd died (default 500 ms), doubled per quick death up to `maxRestartMs` (30 s). */
  minRestartMs?: number;
  maxRestartMs?: number;
}

/**
 * One ulogd2 (`ulogd -c <dir>/ulogd.conf -p <dir>/ulogd.pid`, foreground, attached: it dies with the panel).
 * ulogd's JSON plugin is a unix-socket client, so the panel listens on `<dir>/flows.sock` first, then starts
 * ulogd; each connection delivers one JSON object per line to `onLine`. The {@link DaemonSupervisor} kills a ulogd
 * a killed panel left (it would hold the NFLOG group) and restarts one that died with the
 * {@link DEFAULT_RESTART_POLICY} backoff, after `onError` heard why (ulogd's last log line).
 */
export class UlogdDaemon {
  readonly confPath: string;
  readonly pidPath: string;
  readonly logPath: string;
  readonly socketPath: string;
  private server: Server | null = null;
  private readonly connections = new Set<Socket>();
  private readonly runner: DaemonRunner;
  private supervisor: DaemonSupervisor | null = null;

  constructor(private readonly opts: UlogdDaemonOptions) {
    this.confPath = join(opts.dir, 'ulogd.conf');
    this.pidPath = join(opts.dir, 'ulogd.pid');
    this.logPath = join(opts.dir, 'ulogd.log');
    this.socketPath = join(opts.dir, 'flows.sock');
    this.runner = opts.runner ?? new ExecaRunner({ netns: opts.netns });
  }

  state(): DaemonState {
    return this.supervisor?.state() ?? { pid: null, restarts: 0, lastError: null, gaveUp: false };
  }

  /** Writes the config, listens on the socket, then starts ulogd; resolves once ulogd was spawned. */
  async start(onLine: (line: string) => void, onError: (err: Error) => void): Promise<void> {
    mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.opts.dir, 0o700);
    writeFileSync(this.confPath, renderUlogdConf({
      group: this.opts.group, threshold: this.opts.threshold, flushMs: this.opts.flushMs ?? 200,
      socketPath: this.socketPath, logPath: this.logPath,
    }), { mode: 0o600 });
    const supervisor = new DaemonSupervisor(this.runner, {
      name: 'ulogd', cmd: 'ulogd', args: ['-c', this.confPath, '-p', this.pidPath], detached: false,
      pidPath: this.pidPath, writesPidFile: true, marker: { arg: this.confPath }, logPath: this.logPath,
      leftover: 'kill', stopGraceMs: 3_000, explain: ulogdWhy,
      restart: { ...DEFAULT_RESTART_POLICY, minMs: this.opts.minRestartMs ?? DEFAULT_RESTART_POLICY.minMs, maxMs: this.opts.maxRestartMs ?? DEFAULT_RESTART_POLICY.maxMs },
      onExit: (why) => onError(new Error(why)),
    });
    this.supervisor = supervisor;
    // the stale ulogd holds the NFLOG group and may be connected to an old socket: gone before we listen
    rmSync(this.socketPath, { force: true });
    const server = createServer((socket) => {
      this.connections.add(socket);
      socket.on('close', () => this.connections.delete(socket));
      socket.on('error', () => undefined);
      createInterface({ input: socket }).on('line', onLine);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    await supervisor.start();
  }

  /** Stops ulogd (SIGTERM, then SIGKILL after 3 s) and the socket; nothing is restarted. */
  async stop(): Promise<void> {
    await this.supervisor?.stop();
    for (const socket of this.connections) socket.destroy();
    this.connections.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(this.socketPath, { force: true });
  }
}

/** ulogd's last error line (`<7>`/`<8>`) since the spawn, else its last log line, else its stderr's; without the `<date> <level> file:line ` prefix. */
function ulogdWhy({ log, output }: { log: string; output: string }): string {
  const lines = log.split('\n').map((l) => l.trim()).filter(Boolean);
  const errors = lines.filter((l) => / <[78]> /.test(l));
  const last = errors[errors.length - 1] ?? lines[lines.length - 1] ?? '';
  return last.replace(/^.*? <\d> \S+:\d+ /, '') || (output.trim().split('\n').pop() ?? '');
}
