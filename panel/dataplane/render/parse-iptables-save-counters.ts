// Pure parser of `iptables-save -c` output: per table, each chain's policy and its rules with their counters.

/** One rule of a chain with its counters. */
export interface CountedRule {
  /** The rule verbatim without counters: `-A CHAIN ...`. */
  rule: string;
  packets: number;
  bytes: number;
}

/** One chain: its policy (`-` for a user chain) and rules in order. */
export interface SavedChain {
  policy: string;
  rules: CountedRule[];
}

/** One table: chains in declaration order. */
export type SavedChains = Map<string, SavedChain>;

/** A parsed dump, by table name (`filter`, `nat`, `mangle`, ...). */
export type CountedSnapshot = Map<string, SavedChains>;

const COUNTED = /^\[(\d+):(\d+)\]\s+(-A\s+(\S+).*)$/;

/**
 * Parses `iptables-save -c` (or plain `iptables-save`) text. Chain lines `:NAME POLICY [p:b]` declare chains;
 * rule lines `[p:b] -A CHAIN ...` (or `-A CHAIN ...`, counters 0) are attributed to their chain; comments, blank
 * and COMMIT lines are skipped. A rule of an undeclared chain declares it (policy `-`).
 */
export function parseIptablesSaveCounters(text: string): CountedSnapshot {
  const tables: CountedSnapshot = new Map();
  let current: SavedChains | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('*')) {
      current = new Map();
      tables.set(line.slice(1), current);
      continue;
    }
    if (!current || line === '' || line.startsWith('#') || line === 'COMMIT') continue;
    if (line.startsWith(':')) {
      const [name, policy] = line.slice(1).split(/\s+/);
      current.set(name, { policy: policy ?? '-', rules: current.get(name)?.rules ?? [] });
      continue;
    }
    const counted = COUNTED.exec(line);
    const rule = counted ? counted[3] : line.startsWith('-A ') ? line : null;
    if (rule === null) continue;
    const chain = counted ? counted[4] : rule.split(/\s+/)[1];
    let saved = current.get(chain);
    if (!saved) {
      saved = { policy: '-', rules: [] };
      current.set(chain, saved);
    }
    saved.rules.push({ rule, packets: counted ? Number(counted[1]) : 0, bytes: counted ? Number(counted[2]) : 0 });
  }
  return tables;
}

/** The rule texts of one chain (no counters), or null when the chain does not exist. */
export function chainRules(snapshot: CountedSnapshot, table: string, chain: string): string[] | null {
  const saved = snapshot.get(table)?.get(chain);
  return saved ? saved.rules.map((r) => r.rule) : null;
}

/** A rule as `iptables-save -c` prints it: `[packets:bytes] -A CHAIN ...`. */
export function formatCounted(rule: CountedRule): string {
  return `[${rule.packets}:${rule.bytes}] ${rule.rule}`;
}
