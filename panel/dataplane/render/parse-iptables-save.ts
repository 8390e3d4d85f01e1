// Pure parser of `iptables-save` output: per table, the chains it declares and its rule lines.

/** One table of a save dump. */
export interface SavedTable {
  /** Chains declared (`:NAME POLICY [p:b]`). */
  chains: Set<string>;
  /** Rule lines verbatim (`-A CHAIN ...`), in order. */
  rules: string[];
}

/** A parsed dump, by table name (`nat`, `filter`, ...). */
export type IptablesSnapshot = Map<string, SavedTable>;

/** Parses `iptables-save` text; comments and COMMIT lines are skipped. */
export function parseIptablesSave(text: string): IptablesSnapshot {
  const tables: IptablesSnapshot = new Map();
  let current: SavedTable | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('*')) {
      current = { chains: new Set(), rules: [] };
      tables.set(line.slice(1), current);
    } else if (!current || line === '' || line.startsWith('#') || line === 'COMMIT') {
      continue;
    } else if (line.startsWith(':')) {
      current.chains.add(line.slice(1).split(' ')[0]);
    } else if (line.startsWith('-A ')) {
      current.rules.push(line);
    }
  }
  return tables;
}
