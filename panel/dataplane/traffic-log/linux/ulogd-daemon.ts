// ulogd2 as a supervised child of the panel: own config dir, pid file and unix socket; restarted with backoff.
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ExecaRunner, type DaemonRunner, type SpawnedProcess } from '../../linux/runner.ts';
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

/** What {@link UlogdDaemon.state} reports. */
export interface UlogdState {
  /** pid of the running ulogd, null while it is down (between a death and its restart). */
  pid: number | null;
  /** Restarts after ulogd died on its own since `start`. */
  restarts: number;
  /** Why it last died (ulogd's last log line or its exit), null when it never did. */
  lastError: string | null;
}

/** A run shorter than this counts as a quick death: the next restart waits twice as long. */
const STABLE_MS = 30_000;

/** Whether `pid` is a live ulogd started with config `confPath` (guards against pid reuse). */
export function isUlogdWith(pid: number, confPath: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z' && argv.some((a) => a.endsWith('ulogd')) && argv.includes(confPath);
  } catch {
    return false;
  }
}

/**
 * One ulogd2 (`ulogd -c <dir>/ulogd.conf -p <dir>/ulogd.pid`, foreground, started by execa with an argv array and
 * killed with the panel). ulogd's JSON plugin is a unix-socket client, so the panel listens on `<dir>/flows.sock`
 * first, then starts ulogd; each connection delivers one JSON object per line to `onLine`. A ulogd left by a
 * panel that was killed is found by its pid file and stopped first (it would hold the NFLOG group). When ulogd
 * dies, `onError` hears why (its last log line) and it is started again after a delay that doubles while it keeps
 * dying quickly (bounded), and is reset by a run of 30 s.
 */
export class UlogdDaemon {
  readonly confPath: string;
  readonly pidPath: string;
  readonly logPath: string;
  readonly socketPath: string;
  private server: Server | null = null;
  private readonly connections = new Set<Socket>();
  private child: SpawnedProcess | null = null;
  private readonly runner: DaemonRunner;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private delay = 0;
  private current: UlogdState = { pid: null, restarts: 0, lastError: null };

  constructor(private readonly opts: UlogdDaemonOptions) {
    this.confPath = join(opts.dir, 'ulogd.conf');
    this.pidPath = join(opts.dir, 'ulogd.pid');
    this.logPath = join(opts.dir, 'ulogd.log');
    this.socketPath = join(opts.dir, 'flows.sock');
    this.runner = opts.runner ?? new ExecaRunner({ netns: opts.netns });
  }

  state(): UlogdState {
    return { ...this.current };
  }

  /** Writes the config, listens on the socket, then starts ulogd; resolves once ulogd was spawned. */
  async start(onLine: (line: string) => void, onError: (err: Error) => void): Promise<void> {
    this.stopped = false;
    this.delay = 0;
    this.current = { pid: null, restarts: 0, lastError: null };
    mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.opts.dir, 0o700);
    writeFileSync(this.confPath, renderUlogdConf({
      group: this.opts.group, threshold: this.opts.threshold, flushMs: this.opts.flushMs ?? 200,
      socketPath: this.socketPath, logPath: this.logPath,
    }), { mode: 0o600 });
    this.stopStale();
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
    this.launch(onError);
  }

  private launch(onError: (err: Error) => void): void {
    if (this.stopped) return;
    const logStart = fileSize(this.logPath);
    const startedAt = performance.now();
    // through the runner (argv array); attached: ulogd dies with the panel
    const child = this.runner.spawn('ulogd', ['-c', this.confPath, '-p', this.pidPath], { output: 'pipe', forceKillAfterMs: 3_000 });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    this.child = child;
    this.current.pid = child.pid ?? null;
    void child.exited.then((result) => {
      if (this.child === child) this.child = null;
      this.current.pid = null;
      if (this.stopped) return;
      const why = lastLogLine(this.logPath, logStart) || stderr.trim().split('\n').pop() || (result.startError ?? `exit code ${String(result.code ?? result.signal)}`);
      this.current.lastError = `ulogd: ${why}`;
      this.current.restarts++;
      onError(new Error(this.current.lastError));
      const ranMs = performance.now() - startedAt;
      const min = this.opts.minRestartMs ?? 500;
      this.delay = ranMs >= STABLE_MS ? min : Math.min(this.opts.maxRestartMs ?? 30_000, this.delay ? this.delay * 2 : min);
      this.timer = setTimeout(() => {
        this.timer = null;
        this.launch(onError);
      }, this.delay);
      this.timer.unref();
    });
  }

  /** Stops ulogd (SIGTERM, then SIGKILL after 3 s) and the socket; nothing is restarted. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const child = this.child;
    this.child = null;
    if (child) {
      child.kill('SIGTERM');
      await child.exited;
    }
    this.current.pid = null;
    for (const socket of this.connections) socket.destroy();
    this.connections.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(this.socketPath, { force: true });
  }

  /** Stops a ulogd an earlier (killed) panel left running with this config. */
  private stopStale(): void {
    let pid: number;
    try {
      pid = Number(readFileSync(this.pidPath, 'utf8').trim());
    } catch {
      return;
    }
    if (!Number.isSafeInteger(pid) || pid <= 0 || !isUlogdWith(pid, this.confPath)) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(this.pidPath, { force: true });
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** ulogd's last log line since byte `from`, without its `<date> <level> file:line ` prefix. */
function lastLogLine(path: string, from: number): string {
  try {
    const lines = readFileSync(path).subarray(from).toString('utf8').split('\n').map((l) => l.trim()).filter(Boolean);
    const errors = lines.filter((l) => / <[78]> /.test(l));
    const last = errors[errors.length - 1] ?? lines[lines.length - 1] ?? '';
    return last.replace(/^.*? <\d> \S+:\d+ /, '');
  } catch {
    return '';
  }
}
