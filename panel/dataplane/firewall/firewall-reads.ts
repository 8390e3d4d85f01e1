// The firewall's read side: live views of what the panel owns in iptables and ipset, read through the backend.
import { CHAIN_PREFIX, SET_PREFIX, markSetName, ownerOfChain, ownerOfLine, serverChains, type OwnedChain, type Table } from '../render/firewall-chains.ts';
import { parseIpsetSave } from '../render/firewall-ipset.ts';
import { listMarks, listNat, type MangleListEntry, type NatListEntry } from '../render/firewall-listing.ts';
import { formatCounted, parseIptablesSaveCounters, type CountedSnapshot } from '../render/parse-iptables-save-counters.ts';
import type { FirewallBackend } from './firewall-backend.ts';
import type { Family, FirewallInfoView } from './firewall.ts';

/** The tables the panel writes, in the order iptables-save lists them. */
export const TABLES: Table[] = ['mangle', 'nat', 'filter'];
/** The forwarding switches (IPv4, IPv6) the panel turns on. */
export const FORWARD_KEYS = ['net.ipv4.ip_forward', 'net.ipv6.conf.all.forwarding'];
/** A server's mark set (`vpnhost-wg0-4`); group 1 is the server. */
const SERVER_SET = /^vpnhost-(wg\d+)-[46]$/;

/** One family's rules with their counters (`iptables-save -c`). */
export async function snapshot(backend: FirewallBackend, family: Family): Promise<CountedSnapshot> {
  return parseIptablesSaveCounters(await backend.save(family));
}

/** Every server that owns a chain (either family) or a mark set on the host, sorted. */
export async function ownedServers(backend: FirewallBackend, families: Family[]): Promise<string[]> {
  const names = new Set<string>();
  for (const family of families) {
    for (const chains of (await snapshot(backend, family)).values()) {
      for (const chain of chains.keys()) {
        const owner = ownerOfChain(chain);
        if (owner) names.add(owner);
      }
    }
  }
  for (const set of await backend.ipsetNames()) {
    const match = SERVER_SET.exec(set);
    if (match) names.add(match[1]);
  }
  return [...names].sort();
}

/** One server's view of a table: its lines in the given top chains and its sub-chains, with counters, per family. */
export async function serverView(backend: FirewallBackend, families: Family[], name: string, table: Table, tops: OwnedChain[]): Promise<string> {
  const out: string[] = [];
  for (const family of families) {
    const chains = (await snapshot(backend, family)).get(table);
    const lines: string[] = [];
    for (const top of tops) {
      for (const rule of chains?.get(top.chain)?.rules ?? []) if (ownerOfLine(rule.rule) === name) lines.push(formatCounted(rule));
    }
    for (const { chain } of serverChains(name).filter((c) => c.table === table)) {
      for (const rule of chains?.get(chain)?.rules ?? []) lines.push(formatCounted(rule));
    }
    if (lines.length === 0) continue;
    out.push(`# ip${family === 6 ? '6' : ''}tables -t ${table}`, ...lines);
  }
  return out.join('\n');
}

/** The ipset lines of one peer (`add vpnhost-wg0-4 10.0.0.2 ... skbmark ...`) for the families it has. */
export async function peerSetEntries(backend: FirewallBackend, name: string, addresses: Array<[Family, string | undefined]>): Promise<string[]> {
  const entries: string[] = [];
  for (const [family, address] of addresses) {
    if (!address) continue;
    const setName = markSetName(name, family);
    const entry = parseIpsetSave(await backend.ipsetSave(setName)).get(setName)?.entries.get(address);
    if (entry) entries.push(entry.line);
  }
  return entries;
}

/** Every DNAT/SNAT the panel owns, both families. */
export async function natList(backend: FirewallBackend, families: Family[]): Promise<NatListEntry[]> {
  const out: NatListEntry[] = [];
  for (const family of families) out.push(...listNat(await snapshot(backend, family), family));
  return out;
}

/** Every peer mark of every server set. */
export async function mangleList(backend: FirewallBackend): Promise<MangleListEntry[]> {
  const out: MangleListEntry[] = [];
  for (const set of (await backend.ipsetNames()).sort()) {
    const match = SERVER_SET.exec(set);
    if (!match) continue;
    out.push(...listMarks(match[1], parseIpsetSave(await backend.ipsetSave(set)).get(set) ?? null));
  }
  return out;
}

/** `ip_forward` and the tool versions (GET /firewall/info). */
export async function firewallInfo(backend: FirewallBackend): Promise<FirewallInfoView> {
  const [versions, ipForward] = await Promise.all([backend.versions(), backend.sysctlGet(FORWARD_KEYS[0])]);
  return { ip_forward: ipForward, iproute2: versions.iproute2, iptables: versions.iptables };
}

/**
 * A stable text of everything the panel owns (its chains, the jumps into them, the filter policies, its sets
 * without hash tuning), for tests that compare the kernel state before and after.
 */
export async function ownedDump(backend: FirewallBackend, families: Family[]): Promise<string> {
  const out: string[] = [];
  for (const family of families) {
    const live = await snapshot(backend, family);
    out.push(`# ip${family === 6 ? '6' : ''}tables`);
    for (const table of TABLES) {
      const chains = [...(live.get(table) ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      for (const [chain, saved] of chains) {
        if (saved.policy !== '-' && table === 'filter') out.push(`*${table} :${chain} ${saved.policy}`);
        for (const { rule } of saved.rules) {
          if (chain.startsWith(CHAIN_PREFIX) || / -j VPNHOST-\S+$/.test(rule)) out.push(`*${table} ${rule}`);
        }
      }
    }
  }
  out.push('# ipset');
  for (const name of (await backend.ipsetNames()).filter((s) => s.startsWith(SET_PREFIX)).sort()) {
    const set = parseIpsetSave(await backend.ipsetSave(name)).get(name);
    if (!set) continue;
    out.push(set.create.replace(/ (initval|bucketsize|hashsize) \S+/g, ''));
    out.push(...[...set.entries].map(([a, e]) => `add ${name} ${a} mark ${e.mark}`).sort());
  }
  return `${out.join('\n')}\n`;
}
