// The one door to external commands of the data plane: argv arrays through execa, optional network namespace.
import { randomBytes } from 'node:crypto';
import { open, statfs, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { DataplaneError } from '../wireguard/driver.ts';
import { toolMessage } from '../tool-messages.ts';

/** Output of a finished command. */
export interface CommandResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Options of one command run. */
export interface RunOptions {
  /**
   * Text fed on stdin (private keys travel this way, never on argv); never echoed into errors. It is handed over
   * as an unlinked 0600 file on tmpfs rather than a pipe: Node's pipes are sockets, which `wg ... /dev/stdin`
   * cannot open by path.
   */
  input?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Start the command in its own session (daemons that must outlive the panel's process group). */
  detached?: boolean;
  /** Return a non-zero exit instead of throwing (for probes such as "does this link exist"). */
  allowFailure?: boolean;
}

/** Options of a long-running child started with {@link CommandRunner.spawn}. */
export interface SpawnOptions {
  /** Its own session: it outlives the panel (and is not killed with it). Default false: killed when the panel exits. */
  detached?: boolean;
  /** Where its output goes: `ignore`; `pipe` (stderr piped, read `stderr`; stdout ignored); an open fd (a log file) for both. */
  output?: 'ignore' | 'pipe' | number;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** After `kill`, SIGKILL follows when it still runs this long (default execa's 5 s). */
  forceKillAfterMs?: number;
}

/** A child started by {@link CommandRunner.spawn}. */
export interface SpawnedProcess {
  /** Its pid (null when it could not be started). */
  readonly pid: number | null;
  /** Its stderr when `output` was `pipe`. */
  readonly stderr: NodeJS.ReadableStream | null;
  /** Settles when it ended: exit code or signal, or why it could not be started. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; startError: string | null }>;
  kill(signal?: NodeJS.Signals): void;
  /** Lets the panel exit while it runs. */
  unref(): void;
}

/**
 * Runs one external command with an argv array (never a shell string). A non-zero exit throws a
 * {@link DataplaneError} whose message is `<tool>: <last stderr line>` and whose detail is the stderr, with any
 * text fed on stdin blanked out.
 */
export interface CommandRunner {
  run(cmd: string, args: string[], opts?: RunOptions): Promise<CommandResult>;
}

/** A {@link CommandRunner} that also starts daemons: the one door for unbound and ulogd (charon goes through `run`). */
export interface DaemonRunner extends CommandRunner {
  /**
   * Starts a long-running command with an argv array, in the runner's namespace, and answers at once; the caller
   * supervises it through the returned {@link SpawnedProcess}.
   */
  spawn(cmd: string, args: string[], opts?: SpawnOptions): SpawnedProcess;
}

/** Options of {@link ExecaRunner}. */
export interface ExecaRunnerOptions {
  /** Run every command inside this network namespace (`ip netns exec <ns> cmd ...`); for tests. */
  netns?: string;
  /** Kill a command that runs longer than this (default 30 s). */
  timeoutMs?: number;
}

/** {@link CommandRunner} and {@link DaemonRunner} on execa. */
export class ExecaRunner implements DaemonRunner {
  constructor(private readonly opts: ExecaRunnerOptions = {}) {}

  /** `cmd args` as run: wrapped in `ip netns exec <ns>` (which execs, so the pid is the command's) when set. */
  private argv(cmd: string, args: string[]): [string, string[]] {
    return this.opts.netns ? ['ip', ['netns', 'exec', this.opts.netns, cmd, ...args]] : [cmd, args];
  }

  spawn(cmd: string, args: string[], opts: SpawnOptions = {}): SpawnedProcess {
    const [file, argv] = this.argv(cmd, args);
    const output = opts.output ?? 'ignore';
    const child = execa(file, argv, {
      stdin: 'ignore',
      // A plain fd number is passed through to the child as is (execa's types list only named values here).
      stdout: (output === 'pipe' ? 'ignore' : output) as 'ignore',
      stderr: output as 'pipe',
      env: { PATH: withSbin(process.env.PATH), ...opts.env },
      detached: opts.detached ?? false,
      // a detached daemon outlives the panel; an attached one is killed with it
      cleanup: !opts.detached,
      reject: false,
      buffer: false,
      ...(opts.forceKillAfterMs !== undefined ? { forceKillAfterDelay: opts.forceKillAfterMs } : {}),
    });
    const exited = child.then((result) => ({
      code: result.exitCode ?? null,
      signal: (result.signal as NodeJS.Signals | undefined) ?? null,
      startError: result.failed && result.exitCode === undefined && result.signal === undefined ? result.shortMessage ?? 'could not be started' : null,
    }));
    return {
      pid: child.pid ?? null,
      stderr: output === 'pipe' ? child.stderr : null,
      exited,
      kill: (signal) => void child.kill(signal),
      unref: () => child.unref(),
    };
  }

  async run(cmd: string, args: string[], opts: RunOptions = {}): Promise<CommandResult> {
    const [file, argv] = this.argv(cmd, args);
    const stdinFile = opts.input === undefined ? null : await memoryFile(opts.input);
    try {
      return await this.execute(cmd, file, argv, opts, stdinFile);
    } finally {
      await stdinFile?.close();
    }
  }

  private async execute(cmd: string, file: string, argv: string[], opts: RunOptions, stdinFile: FileHandle | null): Promise<CommandResult> {
    const result = await execa(file, argv, {
      input: stdinFile ? undefined : opts.input,
      // A plain fd number is passed through to the spawned process as is (execa's types only list 0 for stdin).
      stdin: stdinFile ? (stdinFile.fd as 0) : opts.input === undefined ? 'ignore' : 'pipe',
      env: { PATH: withSbin(process.env.PATH), ...opts.env },
      extendEnv: true,
      detached: opts.detached ?? false,
      cleanup: !opts.detached,
      reject: false,
      timeout: this.opts.timeoutMs ?? 30_000,
      stripFinalNewline: false,
      encoding: 'utf8',
    });
    const stdout = String(result.stdout ?? '');
    const stderr = redact(String(result.stderr ?? ''), opts.input);
    const exitCode = result.exitCode ?? (result.timedOut ? 124 : 1);
    if (exitCode !== 0 && !opts.allowFailure) {
      const reason = result.timedOut ? 'timed out' : lastLine(stderr) || (result.failed && !result.exitCode ? spawnReason(result) : `exit code ${exitCode}`);
      throw new DataplaneError(toolMessage(cmd, reason), stderr);
    }
    return { stdout, stderr, exitCode };
  }
}

const TMPFS_MAGIC = 0x01021994;
const MEMORY_DIRS = ['/dev/shm', '/run'];

/**
 * An unlinked 0600 file on tmpfs (RAM) holding `text` at offset 0, open for reading from the start; null when no
 * tmpfs is writable (the caller then falls back to a pipe).
 */
async function memoryFile(text: string): Promise<FileHandle | null> {
  for (const dir of MEMORY_DIRS) {
    try {
      if ((await statfs(dir)).type !== TMPFS_MAGIC) continue;
      const path = join(dir, `.vpnhost-${process.pid}-${randomBytes(8).toString('hex')}`);
      const handle = await open(path, 'wx+', 0o600);
      await unlink(path);
      const data = Buffer.from(text);
      await handle.write(data, 0, data.length, 0);
      return handle;
    } catch {
      continue;
    }
  }
  return null;
}

/** The last non-empty line of a tool's stderr (the one that names the failure). */
export function lastLine(text: string): string {
  // `ip -batch` ends with "Command failed -:N" after the line that names the error.
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !/^Command failed /.test(l));
  return lines[lines.length - 1] ?? '';
}

/** Blanks every non-trivial line of `input` (e.g. a private key) out of `text`. */
export function redact(text: string, input: string | undefined): string {
  if (!input) return text;
  let out = text;
  for (const secret of input.split('\n').map((l) => l.trim()).filter((l) => l.length >= 8)) {
    out = out.split(secret).join('[redacted]');
  }
  return out;
}

function spawnReason(result: { code?: string; shortMessage?: string }): string {
  return result.code === 'ENOENT' ? 'command not found' : 'could not be started';
}

/** `path` with /usr/sbin and /sbin appended (where ip, iptables and the daemons live). */
export function withSbin(path: string | undefined): string {
  const parts = (path ?? '/usr/bin:/bin').split(':');
  for (const dir of ['/usr/sbin', '/sbin']) if (!parts.includes(dir)) parts.push(dir);
  return parts.join(':');
}
