// iperf3 helpers for system tests: a server inside a namespace, and one timed TCP measurement in Mbit/s.
import { setTimeout as sleep } from 'node:timers/promises';
import { execa, type ResultPromise } from 'execa';
import { execIn } from './netns.ts';

/** A running `iperf3 -s` inside a namespace. */
export interface IperfServer {
  stop(): Promise<void>;
}

/** Starts `iperf3 -s -B <bind>` in `ns` and waits until it listens on `<bind>:5201`. */
export async function startIperfServer(ns: string, bind: string): Promise<IperfServer> {
  const child: ResultPromise = execa('ip', ['netns', 'exec', ns, 'iperf3', '-s', '-B', bind], { reject: false, stdin: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const ss = await execIn(ns, 'ss', ['-Htln', 'sport = :5201'], { allowFailure: true });
    if (ss.stdout.includes(bind.includes(':') ? `[${bind}]:5201` : `${bind}:5201`)) break;
    await sleep(50);
  }
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await child;
    },
  };
}

/**
 * Runs `iperf3 -c <server>` from `ns` for `seconds` (after a 1 s omitted warm-up) and returns the received rate in
 * Mbit/s. `reverse` measures server → client (`-R`).
 */
export async function measureMbit(ns: string, server: string, opts: { reverse?: boolean; seconds?: number } = {}): Promise<number> {
  const args = ['-c', server, '-J', '-t', String(opts.seconds ?? 4), '-O', '1'];
  if (opts.reverse) args.push('-R');
  const result = await execIn(ns, 'iperf3', args, { timeoutMs: 60_000 });
  const report = JSON.parse(result.stdout) as { end?: { sum_received?: { bits_per_second?: number } }; error?: string };
  const bits = report.end?.sum_received?.bits_per_second;
  if (typeof bits !== 'number') throw new Error(`iperf3 gave no rate: ${report.error ?? result.stdout.slice(0, 200)}`);
  return bits / 1e6;
}
