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
  const listening = async () => (await execIn(ns, 'ss', ['-Htln', 'sport = :5201'], { allowFailure: true })).stdout
    .includes(bind.includes(':') ? `[${bind}]:5201` : `${bind}:5201`);
  let ready = false;
  for (let i = 0; i < 100 && !(ready = await listening()) && child.exitCode === null; i++) await sleep(50);
  if (!ready) {
    child.kill('SIGKILL'); // never listening (or exited): the caller's measurement would only fail later, less clearly
    const res = await child;
    throw new Error(`iperf3 -s -B ${bind} in ${ns} did not listen (exit ${res.exitCode ?? res.signal}): ${String(res.stderr).slice(0, 300)}`);
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

/** What {@link shapedRate} measured for one limit. */
export interface ShapedRate {
  /** The measurement that reached the band, else the last one (Mbit/s). */
  mbit: number;
  /** Every measurement taken, in order (Mbit/s). */
  all: number[];
}

/**
 * The rate a shaped path carries against its `limit` (Mbit/s), checked in the band `limit × (1 ± tolerance)`.
 * What shaping guarantees is the ceiling: no measurement may exceed the band (it fails at once). The floor is what the
 * class lets through when the sender can push more, and a sender starved of CPU on a busy machine (userspace WireGuard,
 * iperf3) pushes less, whatever the shaper does: a measurement under the band is taken again, up to `tries` in all, and
 * the check fails only when none reaches it.
 */
export async function shapedRate(measure: () => Promise<number>, limit: number, what: string, tolerance = 0.15, tries = 3): Promise<ShapedRate> {
  const all: number[] = [];
  const band = `±${Math.round(tolerance * 100)}% of ${limit} Mbit/s`;
  for (let i = 0; i < tries; i++) {
    const mbit = await measure();
    all.push(mbit);
    if (mbit > limit * (1 + tolerance)) throw new Error(`${what}: ${mbit.toFixed(2)} Mbit/s is over ${band} (shaping must cap it)`);
    if (mbit >= limit * (1 - tolerance)) return { mbit, all };
  }
  throw new Error(`${what}: ${all.map((m) => m.toFixed(2)).join(', ')} Mbit/s in ${tries} measurements, none within ${band}`);
}
