// Reads a device's whole tc state in a namespace (qdiscs, classes, the root's and every group's filters) for system tests.
import { execIn } from './netns.ts';

/**
 * Every line `tc` prints for `dev` (root and ingress qdiscs, classes, the filters of the root block, of the ingress
 * and of each child HTB), counters left out (HTB's `direct_packets_stat` too), each prefixed with where it came
 * from. Lines are in tc's order.
 */
export async function tcLines(ns: string, dev: string): Promise<string[]> {
  const out: string[] = [];
  const run = async (what: string, args: string[]) => {
    const res = await execIn(ns, 'tc', args, { allowFailure: true });
    out.push(...res.stdout.split('\n').filter((l) => l.trim()).map((l) => `tc ${dev} ${what} ${l.trim().replace(/ direct_packets_stat \d+/, '')}`));
    return res.stdout;
  };
  const qdiscs = await run('qdisc', ['qdisc', 'show', 'dev', dev]);
  await run('class', ['class', 'show', 'dev', dev]);
  await run('filter', ['filter', 'show', 'dev', dev]);
  await run('ingress', ['filter', 'show', 'dev', dev, 'ingress']);
  for (const m of qdiscs.matchAll(/^qdisc htb ([0-9a-f]+): parent 1:/gm)) await run(`filter ${m[1]}:`, ['filter', 'show', 'dev', dev, 'parent', `${m[1]}:`]);
  return out;
}

/** The peer classes of a device: `major:minor` → rate text (`8Mbit`), the /24 groups' classes left out. */
export async function peerClasses(ns: string, dev: string): Promise<Map<string, string>> {
  const out = (await execIn(ns, 'tc', ['class', 'show', 'dev', dev], { allowFailure: true })).stdout;
  const map = new Map<string, string>();
  for (const m of out.matchAll(/^class htb ([0-9a-f]+:[0-9a-f]+) .*? rate (\S+) /gm)) if (!m[1].startsWith('1:')) map.set(m[1], m[2]);
  return map;
}
