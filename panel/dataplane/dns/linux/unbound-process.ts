// The unbound daemon as a supervised child: started in the foreground (`-d`), its exit noticed, adopted by pid file.
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DaemonRunner, SpawnedProcess } from '../../linux/runner.ts';

/** How the daemon ended, as `state().crash` reports it. */
function exitText(pid: number, code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `unbound (pid ${pid}) exited with signal ${signal}` : `unbound (pid ${pid}) exited with code ${code}`;
}

/** Whether `pid` is a live unbound process started with config file `confPath` (guards against pid reuse). */
function isUnboundWith(pid: number, confPath: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && argv.some((a) => a.endsWith('unbound')) && argv.includes(confPath);
  } catch {
    return false;
  }
}

/** Options of {@link UnboundProcess}. */
export interface UnboundProcessOptions {
  /** `unbound.conf` the daemon runs with. */
  confPath: string;
  /** Its pid file (written by unbound, read to adopt a daemon a previous panel started). */
  pidPath: string;
  /** Append-only log of the daemon's stderr. */
  logPath: string;
  /** Starts the daemon (in the runner's namespace: `ip netns exec` execs, so the pid is unbound's). */
  runner: DaemonRunner;
}

/**
 * One unbound daemon. `start` spawns `unbound -d -c <conf>` in its own session (it outlives a panel restart, like
 * the WireGuard links) with stderr to the log file; the child's exit is recorded as a crash unless `stop` asked for
 * it. A daemon left by an earlier panel is adopted from the pid file (then only pid checks notice its death).
 */
export class UnboundProcess {
  private child: SpawnedProcess | null = null;
  private pid: number | null = null;
  private stopping = false;
  /** Set when the daemon died without `stop`. */
  crash: string | null = null;

  constructor(private readonly opts: UnboundProcessOptions) {}

  /** The pid of the live daemon (adopting one from the pid file), or null; records a crash when it vanished. */
  alive(): number | null {
    if (this.pid === null) this.adopt();
    if (this.pid !== null && !isUnboundWith(this.pid, this.opts.confPath)) {
      this.crash ??= `unbound (pid ${this.pid}) is no longer running`;
      this.pid = null;
      this.child = null;
    }
    return this.pid;
  }

  /**
   * Spawns the daemon and waits (bounded by `timeoutMs`) until `ready()` answers true. Throws with the daemon's
   * last log line when it exits first or never gets ready (then it is killed).
   */
  async start(ready: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
    const log = openSync(this.opts.logPath, 'a', 0o600);
    const logStart = this.logSize();
    let exited: string | null = null;
    let spawnError: string | null = null;
    let child: SpawnedProcess;
    try {
      // through the runner (argv array, never a shell string); detached: the daemon outlives the panel
      child = this.opts.runner.spawn('unbound', ['-d', '-c', this.opts.confPath], { detached: true, output: log });
    } finally {
      closeSync(log);
    }
    void child.exited.then(({ code, signal, startError }) => {
      spawnError = startError;
      exited = exitText(child.pid ?? 0, code, signal);
      if (this.child === child) {
        // a stop() forgets the child first, so only a death it did not ask for is a crash
        if (!this.stopping && !startError) this.crash = exited;
        this.child = null;
        this.pid = null;
      }
    });
    child.unref();
    this.child = child;
    this.pid = child.pid ?? null;
    this.stopping = false;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (spawnError) throw new Error(`unbound: ${spawnError}`);
      if (exited) throw new Error(`unbound: ${this.lastLogLine(logStart) || exited}`);
      if (await ready().catch(() => false)) {
        this.crash = null;
        return this.pid!;
      }
      await sleep(50);
    }
    await this.stop();
    throw new Error(`unbound: not ready within ${timeoutMs} ms${this.lastLogLine(logStart) ? `: ${this.lastLogLine(logStart)}` : ''}`);
  }

  /** Stops the daemon (SIGTERM, SIGKILL after 5 s); no crash is recorded. */
  async stop(): Promise<void> {
    const pid = this.alive();
    if (pid === null) return;
    this.stopping = true;
    this.child = null;
    this.pid = null;
    signal(pid, 'SIGTERM');
    for (let i = 0; i < 100 && isUnboundWith(pid, this.opts.confPath); i++) await sleep(50);
    if (isUnboundWith(pid, this.opts.confPath)) signal(pid, 'SIGKILL');
    for (let i = 0; i < 40 && isUnboundWith(pid, this.opts.confPath); i++) await sleep(50);
  }

  /** Forgets the child handle (the daemon keeps running). */
  release(): void {
    this.child = null;
  }

  private adopt(): void {
    try {
      const pid = Number(readFileSync(this.opts.pidPath, 'utf8').trim());
      if (Number.isSafeInteger(pid) && pid > 0 && isUnboundWith(pid, this.opts.confPath)) this.pid = pid;
    } catch {
      // no pid file: nothing to adopt
    }
  }

  private logSize(): number {
    try {
      return readFileSync(this.opts.logPath).length;
    } catch {
      return 0;
    }
  }

  /**
   * What the daemon logged since byte `from` about its failure: its last two `error` lines (unbound names the cause,
   * e.g. `can't bind socket: Address already in use for 10.0.0.1 port 53`, before `fatal error: could not open
   * ports`) joined with `; `, else its last line; without unbound's `[time] unbound[pid:0] ` prefix.
   */
  private lastLogLine(from: number): string {
    try {
      const text = readFileSync(this.opts.logPath).subarray(from).toString('utf8');
      const lines = text.split('\n').map((l) => l.trim().replace(/^\[\d+\] unbound\[\d+:\d+\] /, '')).filter(Boolean);
      const errors = lines.filter((l) => /error/i.test(l)).slice(-2);
      return errors.length > 0 ? errors.join('; ') : lines[lines.length - 1] ?? '';
    } catch {
      return '';
    }
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

