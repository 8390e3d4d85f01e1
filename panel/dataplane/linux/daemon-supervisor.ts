// The one supervisor of the panel's daemons (unbound, charon, ulogd): spawn through the runner, readiness, stop with
// grace, adoption or removal of a daemon an earlier panel left, restart with backoff, state for health and metrics.
import { closeSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DaemonRunner, SpawnedProcess } from './runner.ts';
import { RestartBackoff, type RestartPolicy } from './restart-backoff.ts';

/** What one supervised daemon is and how it is run. */
export interface DaemonSpec {
  /** Short name in errors and logs (`unbound`, `charon`, `ulogd`). */
  name: string;
  /** The command and its argv (in the foreground: the spawned pid is the daemon's). */
  cmd: string;
  args: string[];
  env?: Record<string, string>;
  /** Own session: the daemon outlives the panel (adopted by the next one) instead of dying with it. */
  detached: boolean;
  /** Its pid file (read to find a daemon an earlier panel left). */
  pidPath: string;
  /**
   * The daemon writes `pidPath` itself (ulogd refuses to start over a pid file naming a live process, so the
   * supervisor must not write it first); else the supervisor writes the spawned pid there.
   */
  writesPidFile: boolean;
  /** How a live process is known as this daemon (guards against pid reuse): an argv element or an `K=V` of its environment. */
  marker: { arg: string } | { env: string };
  /**
   * Where its stdout and stderr are appended; without it stderr is piped to the panel (only for attached daemons: a
   * detached one would lose its stderr with the panel).
   */
  outputPath?: string;
  /** The daemon's own log file, when it keeps one apart from its output (read since the spawn to explain a failure). */
  logPath?: string;
  /** A daemon an earlier panel left running: `adopt` it (it keeps serving) or `kill` it before a new start. */
  leftover: 'adopt' | 'kill';
  /** Answers true once the daemon serves (polled after a spawn); without it the daemon is ready once spawned. */
  ready?: () => Promise<boolean>;
  /** Longest wait for `ready` (default 10 s); then the daemon is stopped and the start fails. */
  readyTimeoutMs?: number;
  /** After SIGTERM, SIGKILL follows when it still runs this long (default 5 s). */
  stopGraceMs?: number;
  /** Restart it when it dies on its own; null: its owner restarts it (the watchdog, through the subsystem's reconcile). */
  restart: RestartPolicy | null;
  /**
   * Why the daemon failed, from what it wrote since the spawn: its own log's text (`logPath`) and its output (the
   * output file's text, or the piped stderr's tail); '' when it says nothing about a failure. Default: the last
   * line of the output. A death with nothing explained reads `<name> (pid N) exited with code|signal X`.
   */
  explain?: (written: { log: string; output: string }) => string;
  /** Hears each death nobody asked for (with why), before any restart. */
  onExit?: (why: string) => void;
}

/** What {@link DaemonSupervisor.state} reports (health checks and metrics read it). */
export interface DaemonState {
  /** pid of the live daemon, null while it is down. */
  pid: number | null;
  /** Restarts by the supervisor after the daemon died on its own, since `start`. */
  restarts: number;
  /** Why it last died without being asked to (explained from its output), null when it never did since `start`. */
  lastError: string | null;
  /** True after the restart policy's limit of quick deaths: no restart is attempted until the next `start`. */
  gaveUp: boolean;
}

/** Timers of the supervisor (a fake in unit tests). */
export interface SupervisorTimers {
  now(): number;
  /** Runs `fn` after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

const realTimers: SupervisorTimers = {
  now: () => performance.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * One daemon under supervision. `start` spawns it through the {@link DaemonRunner} (argv array, the runner's
 * namespace), writes its pid file and waits until `ready` answers (bounded; a daemon that exits first or never gets
 * ready fails the start with its explained output and is stopped). A death nobody asked for is recorded in
 * {@link state} and heard by `onExit`; with a restart policy the daemon is spawned again after the
 * {@link RestartBackoff} delay, until the policy gives up. `stop` sends SIGTERM and SIGKILL after the grace. A
 * detached daemon outlives the panel; the next panel adopts it from the pid file (then only {@link alive}'s pid probe
 * notices its death) or kills it first, as the spec says.
 */
export class DaemonSupervisor {
  private child: SpawnedProcess | null = null;
  private adopted: number | null = null;
  private wanted = false;
  private cancelRestart: (() => void) | null = null;
  private readonly backoff: RestartBackoff | null;
  private current: DaemonState = { pid: null, restarts: 0, lastError: null, gaveUp: false };

  constructor(private readonly runner: DaemonRunner, readonly spec: DaemonSpec, private readonly timers: SupervisorTimers = realTimers) {
    this.backoff = spec.restart ? new RestartBackoff(spec.restart) : null;
  }

  /** A copy of the daemon's state. */
  state(): DaemonState {
    return { ...this.current, pid: this.alive() };
  }

  /** pid of the live daemon (its child, or one adopted from the pid file), else null; notices an adopted one's death. */
  alive(): number | null {
    if (this.child) return this.child.pid;
    if (this.adopted === null && this.spec.leftover === 'adopt') {
      this.adopted = this.leftover();
      // a daemon an earlier panel started was wanted: its death is a crash
      if (this.adopted !== null) this.wanted = true;
    }
    if (this.adopted !== null && !isProcessOf(this.adopted, this.spec)) {
      if (this.wanted) this.current.lastError ??= `${this.spec.name} (pid ${this.adopted}) is no longer running`;
      this.adopted = null;
    }
    return this.adopted;
  }

  /**
   * Starts the daemon (a leftover is adopted, or killed first) and resolves with its pid once it is ready. Throws
   * `<name>: <why>` when it exits before that, cannot be spawned, or is not ready in time.
   */
  async start(): Promise<number> {
    this.wanted = true;
    this.current = { pid: null, restarts: 0, lastError: null, gaveUp: false };
    this.backoff?.reset();
    const running = this.alive();
    if (running !== null) return running;
    if (this.spec.leftover === 'kill') await this.killLeftover();
    try {
      return await this.launch();
    } catch (err) {
      // a start that failed is the caller's to handle: no restart behind its back
      this.wanted = false;
      this.cancelRestart?.();
      this.cancelRestart = null;
      throw err;
    }
  }

  /** Stops the daemon (SIGTERM, SIGKILL after the grace) and any pending restart; no death is recorded. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    const pid = child?.pid ?? this.alive();
    this.wanted = false;
    this.cancelRestart?.();
    this.cancelRestart = null;
    this.adopted = null;
    const grace = this.spec.stopGraceMs ?? 5_000;
    if (child) {
      child.kill('SIGTERM');
      let cancel = () => undefined as void;
      const late = new Promise<void>((resolve) => (cancel = this.timers.after(grace, resolve)));
      const ended = await Promise.race([child.exited.then(() => true), late.then(() => false)]);
      cancel();
      if (!ended) child.kill('SIGKILL');
      await child.exited;
    } else if (pid !== null) {
      await this.stopPid(pid, grace);
    }
    rmSync(this.spec.pidPath, { force: true });
  }

  /** Forgets the child handle; a detached daemon keeps running for the next panel to adopt. */
  release(): void {
    this.cancelRestart?.();
    this.cancelRestart = null;
    if (this.child) this.adopted = this.child.pid;
    this.child = null;
  }

  private async launch(): Promise<number> {
    const { child, output } = this.spawn();
    const startedAt = this.timers.now();
    let exit: string | null = null;
    void child.exited.then(({ code, signal, startError }) => {
      exit = startError ?? (signal ? `exited with signal ${signal}` : `exited with code ${code}`);
      if (this.child !== child) return;
      this.child = null;
      const explained = output();
      this.died(explained ? `${this.spec.name}: ${explained}` : `${this.spec.name} (pid ${child.pid}) ${exit}`, this.timers.now() - startedAt);
    });
    if (!this.spec.ready) return child.pid ?? 0;
    const deadline = startedAt + (this.spec.readyTimeoutMs ?? 10_000);
    for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
      if (exit !== null) throw new Error(`${this.spec.name}: ${output() || exit}`);
      if (this.child !== child) throw new Error(`${this.spec.name}: stopped while starting`);
      if (await this.spec.ready().catch(() => false)) return child.pid ?? 0;
      if (this.timers.now() > deadline) {
        const why = output();
        await this.stop();
        this.wanted = true;
        throw new Error(`${this.spec.name}: not ready within ${this.spec.readyTimeoutMs ?? 10_000} ms${why ? `: ${why}` : ''}`);
      }
      await sleep(delay);
    }
  }

  /** Spawns the daemon, writes its pid file; `output()` explains its output since this spawn. */
  private spawn(): { child: SpawnedProcess; output: () => string } {
    const { spec } = this;
    const explain = spec.explain ?? (({ output }) => lastLine(output));
    const logFrom = spec.logPath ? fileSize(spec.logPath) : 0;
    const log = () => (spec.logPath ? readFrom(spec.logPath, logFrom) : '');
    let child: SpawnedProcess;
    let output: () => string;
    if (spec.outputPath) {
      const from = fileSize(spec.outputPath);
      const fd = openSync(spec.outputPath, 'a', 0o600);
      try {
        child = this.runner.spawn(spec.cmd, spec.args, { detached: spec.detached, output: fd, env: spec.env, forceKillAfterMs: spec.stopGraceMs });
      } finally {
        closeSync(fd);
      }
      const path = spec.outputPath;
      output = () => explain({ log: log(), output: readFrom(path, from) });
    } else {
      child = this.runner.spawn(spec.cmd, spec.args, { detached: spec.detached, output: 'pipe', env: spec.env, forceKillAfterMs: spec.stopGraceMs });
      let tail = '';
      child.stderr?.on('data', (chunk: Buffer) => void (tail = (tail + chunk.toString('utf8')).slice(-4000)));
      output = () => explain({ log: log(), output: tail });
    }
    if (spec.detached) child.unref();
    if (child.pid !== null && !spec.writesPidFile) writeFileSync(spec.pidPath, `${child.pid}\n`, { mode: 0o600 });
    this.child = child;
    this.adopted = null;
    return { child, output };
  }

  /** A death nobody asked for: recorded, heard, and restarted after the policy's delay (unless it gave up). */
  private died(why: string, ranMs: number): void {
    if (!this.wanted) return;
    this.current.lastError = why;
    this.spec.onExit?.(why);
    if (!this.backoff) return;
    const delay = this.backoff.died(ranMs);
    if (delay === null) {
      this.current.gaveUp = true;
      return;
    }
    this.cancelRestart = this.timers.after(delay, () => {
      this.cancelRestart = null;
      if (!this.wanted || this.child) return;
      this.current.restarts++;
      this.launch().catch((err: Error) => {
        // a restart that fails before it is ready counts as one more quick death
        if (this.wanted && !this.child && !this.cancelRestart) this.died(err.message, 0);
      });
    });
  }

  /** The pid in the pid file when it is this daemon, else null. */
  private leftover(): number | null {
    try {
      const pid = Number(readFileSync(this.spec.pidPath, 'utf8').trim());
      return Number.isSafeInteger(pid) && pid > 0 && isProcessOf(pid, this.spec) ? pid : null;
    } catch {
      return null;
    }
  }

  private async killLeftover(): Promise<void> {
    const pid = this.leftover();
    if (pid !== null) await this.stopPid(pid, 0);
    rmSync(this.spec.pidPath, { force: true });
  }

  /** SIGTERM (none when `graceMs` is 0), SIGKILL after `graceMs`, then waits (bounded) until the pid is gone. */
  private async stopPid(pid: number, graceMs: number): Promise<void> {
    if (graceMs > 0) {
      signal(pid, 'SIGTERM');
      for (let waited = 0; waited < graceMs && isProcessOf(pid, this.spec); waited += 50) await sleep(50);
    }
    if (isProcessOf(pid, this.spec)) signal(pid, 'SIGKILL');
    for (let i = 0; i < 40 && isProcessOf(pid, this.spec); i++) await sleep(50);
  }
}

/** Whether `pid` is a live (not zombie) process of `spec`'s command carrying its marker. */
export function isProcessOf(pid: number, spec: Pick<DaemonSpec, 'cmd' | 'marker'>): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') return false;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!argv.some((a) => basename(a) === basename(spec.cmd))) return false;
    if ('arg' in spec.marker) return argv.includes(spec.marker.arg);
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(spec.marker.env);
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function readFrom(path: string, from: number): string {
  try {
    return readFileSync(path).subarray(from).toString('utf8');
  } catch {
    return '';
  }
}

/** The last non-empty line of `text`. */
function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines[lines.length - 1] ?? '';
}
