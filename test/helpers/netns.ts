// Network-namespace helpers for system tests: unique namespaces, veth pairs, commands inside, full cleanup.
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';

const created = new Set<string>();
const handedOut = new Set<string>();
const UAPI_DIR = '/var/run/wireguard';

/** Output of a command run in a namespace. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * Runs `ip netns exec NS cmd args...`; throws with the stderr on a non-zero exit unless `allowFailure`. `input` goes
 * through a pipe (a socket): tools that open `/dev/stdin` by path (`wg ... private-key /dev/stdin`) need the
 * panel's `ExecaRunner({ netns })` instead.
 */
export async function execIn(
  ns: string,
  cmd: string,
  args: string[],
  opts: { input?: string; allowFailure?: boolean; timeoutMs?: number } = {},
): Promise<ExecResult> {
  const result = await execa('ip', ['netns', 'exec', ns, cmd, ...args], {
    input: opts.input,
    stdin: opts.input === undefined ? 'ignore' : undefined,
    reject: false,
    timeout: opts.timeoutMs ?? 30_000,
  });
  const out = { stdout: String(result.stdout), stderr: String(result.stderr), exitCode: result.exitCode ?? 1 };
  if (out.exitCode !== 0 && !opts.allowFailure) {
    throw new Error(`${cmd} ${args.join(' ')} failed in ${ns} (${out.exitCode}): ${out.stderr.trim()}`);
  }
  return out;
}

/** Creates a namespace named `<prefix>-<pid>-<random>` with loopback up; it is removed by {@link destroyAll}. */
export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${process.pid}-${randomInt(1e6)}`;
  await execa('ip', ['netns', 'add', name]);
  created.add(name);
  await execIn(name, 'ip', ['link', 'set', 'lo', 'up']);
  return name;
}

/**
 * Links two test namespaces with a veth pair, addresses each end (`cidrA` in `nsA`, `cidrB` in `nsB`) and brings
 * both up. Returns the link names.
 */
export async function vethPair(nsA: string, nsB: string, cidrA: string, cidrB: string): Promise<{ a: string; b: string }> {
  if (!created.has(nsA) || !created.has(nsB)) throw new Error('vethPair only links namespaces created by this helper');
  const id = randomInt(1e6);
  const a = `vha${id}`;
  const b = `vhb${id}`;
  await execIn(nsA, 'ip', ['link', 'add', a, 'type', 'veth', 'peer', 'name', b, 'netns', nsB]);
  await execIn(nsA, 'ip', ['addr', 'add', cidrA, 'dev', a]);
  await execIn(nsA, 'ip', ['link', 'set', a, 'up']);
  await execIn(nsB, 'ip', ['addr', 'add', cidrB, 'dev', b]);
  await execIn(nsB, 'ip', ['link', 'set', b, 'up']);
  return { a, b };
}

/**
 * Links the host's namespace with a test namespace over a veth pair on a random /30 of 10.196.0.0/15 (the host end
 * goes away with the namespace, which holds the other). For daemons in `ns` that must reach a socket of this process.
 */
export async function hostLink(ns: string): Promise<{ hostIp: string; nsIp: string; hostLink: string }> {
  if (!created.has(ns)) throw new Error('hostLink only links namespaces created by this helper');
  const block = randomInt(1 << 14) * 4;
  const prefix = `10.${196 + (block >> 16)}.${(block >> 8) & 0xff}`;
  const hostIp = `${prefix}.${(block & 0xff) + 1}`;
  const nsIp = `${prefix}.${(block & 0xff) + 2}`;
  const id = randomInt(1e6);
  const host = `vhh${id}`;
  await execa('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', `vhn${id}`, 'netns', ns]);
  await execa('ip', ['addr', 'add', `${hostIp}/30`, 'dev', host]);
  await execa('ip', ['link', 'set', host, 'up']);
  await execIn(ns, 'ip', ['addr', 'add', `${nsIp}/30`, 'dev', `vhn${id}`]);
  await execIn(ns, 'ip', ['link', 'set', `vhn${id}`, 'up']);
  return { hostIp, nsIp, hostLink: host };
}

/** `wg` + 6 random digits, not used by any wireguard-go socket and not handed out before in this process. */
export function uniqueWgName(): string {
  for (let i = 0; i < 1000; i++) {
    const name = `wg${randomInt(100000, 1000000)}`;
    if (!handedOut.has(name) && !existsSync(`${UAPI_DIR}/${name}.sock`)) {
      handedOut.add(name);
      return name;
    }
  }
  throw new Error('no free interface name');
}

/** Processes living in a namespace (`ip netns pids NS`), e.g. the wireguard-go daemons started in it. */
export async function namespacePids(ns: string): Promise<number[]> {
  const result = await execa('ip', ['netns', 'pids', ns], { reject: false });
  return String(result.stdout).split(/\s+/).filter(Boolean).map(Number);
}

/** Stops every process inside one test namespace (wireguard-go daemons first of all) and deletes it. */
export async function destroyNamespace(ns: string): Promise<void> {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const pids = await namespacePids(ns);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
    }
    for (let i = 0; i < 50 && (await namespacePids(ns)).length > 0; i++) await sleep(20);
  }
  await execa('ip', ['netns', 'del', ns], { reject: false });
  created.delete(ns);
}

/** Destroys every namespace this helper created (call in `finally`/`after`). */
export async function destroyAll(): Promise<void> {
  for (const ns of [...created]) await destroyNamespace(ns);
}
