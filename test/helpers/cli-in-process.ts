// Runs a short `vpnhost ...` command (not serve/worker) in the test's own process: the dispatcher's `main()` with its
// stdout and stderr captured. A spawned `bin/vpnhost.js` costs about a second of CPU (node start, the tsx loader
// thread, loading the sources); tests that are about the command's effect, not the binary, run it here instead.
import { main } from '../../bin/cli/main.ts';

/** What a command printed and its exit code, as a spawned `vpnhost` would show them. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `vpnhost <args>` in process with `env` set for the call (and restored after). Calls are serialized: the
 * capture replaces `process.stdout.write` / `process.stderr.write` while a command runs.
 */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const run = queue.then(() => runNow(args, env));
  queue = run.catch(() => undefined);
  return run;
}

async function runNow(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  const exitCode = process.exitCode;
  let stdout = '';
  let stderr = '';
  // Only text is the command's: the test runner's own messages to its parent go through process.stdout as binary
  // (serialized) chunks, and pass through untouched.
  const capture = (append: (text: string) => void, original: typeof process.stdout.write) =>
    function write(this: NodeJS.WriteStream, chunk: string | Uint8Array, ...rest: unknown[]): boolean {
      if (typeof chunk !== 'string') return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
      append(chunk);
      (rest.find((arg) => typeof arg === 'function') as (() => void) | undefined)?.();
      return true;
    } as typeof process.stdout.write;
  setEnv(env);
  process.stdout.write = capture((text) => (stdout += text), stdoutWrite);
  process.stderr.write = capture((text) => (stderr += text), stderrWrite);
  try {
    const code = await main(args);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
    process.exitCode = exitCode;
    setEnv(saved);
  }
}

function setEnv(env: Record<string, string | undefined>): void {
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
}
