// Pure `ipset restore` lines of the per-server mark sets, and the parser of `ipset save` output.
import { PEER_MARK_MASK, type Family } from '../firewall/firewall.ts';

/** One entry of a mark set. */
export interface SetEntry {
  /** The peer mark (skbmark value, mask {@link PEER_MARK_MASK}). */
  mark: number;
  packets: number;
  bytes: number;
  /** The entry as `ipset save` prints it (`add NAME ADDR packets P bytes B skbmark 0xM/0xffffff`). */
  line: string;
}

/** One set of an `ipset save` dump. */
export interface SavedSet {
  /** The `create` line verbatim. */
  create: string;
  /** Entries by address as ipset prints it (`10.0.0.2`, `fd00::2`). */
  entries: Map<string, SetEntry>;
}

/** Size limit of a mark set: past it `ipset` refuses `add` ("Hash is full"). */
const SET_MAXELEM = 1048576;

/** The `create` line of a mark set: `hash:ip` with `skbinfo` (the mark) and `counters` (per-peer counters). */
export function renderSetCreate(name: string, family: Family): string {
  return `create ${name} hash:ip family ${family === 4 ? 'inet' : 'inet6'} hashsize 1024 maxelem ${SET_MAXELEM} counters skbinfo`;
}

/** Whether a live `create` line has what the panel needs (same type, family, counters and skbinfo). */
export function setCreateFits(create: string, family: Family): boolean {
  const words = create.split(/\s+/);
  return (
    words[2] === 'hash:ip' &&
    words.includes(family === 4 ? 'inet' : 'inet6') &&
    words.includes('counters') &&
    words.includes('skbinfo') &&
    Number(words[words.indexOf('maxelem') + 1]) === SET_MAXELEM
  );
}

/** `add` of one peer; with `ipset restore -exist` it also updates the mark of a present entry. */
export function renderSetAdd(name: string, address: string, mark: number): string {
  return `add ${name} ${address} skbmark 0x${mark.toString(16)}/0x${PEER_MARK_MASK.toString(16)}`;
}

/** `del` of one peer (no error under `-exist` when absent). */
export function renderSetDel(name: string, address: string): string {
  return `del ${name} ${address}`;
}

/**
 * Lines that bring one live set to `wanted` (address → mark): `create` when missing; when the live set does not
 * fit (type or options), a temporary set is created (or flushed), filled and swapped in (a set in use by a rule cannot be destroyed);
 * otherwise `del` of extra entries and `add` of missing or re-marked ones. Empty when nothing differs.
 */
export function renderSetSync(live: SavedSet | null, name: string, family: Family, wanted: Map<string, number>): string[] {
  if (live && !setCreateFits(live.create, family)) {
    const tmp = `${name}-t`.slice(0, 31);
    return [
      renderSetCreate(tmp, family),
      `flush ${tmp}`,
      ...[...wanted].map(([address, mark]) => renderSetAdd(tmp, address, mark)),
      `swap ${tmp} ${name}`,
      `destroy ${tmp}`,
    ];
  }
  const lines: string[] = live ? [] : [renderSetCreate(name, family)];
  for (const address of live?.entries.keys() ?? []) if (!wanted.has(address)) lines.push(renderSetDel(name, address));
  for (const [address, mark] of wanted) {
    if (live?.entries.get(address)?.mark !== mark) lines.push(renderSetAdd(name, address, mark));
  }
  return lines;
}

/**
 * Parses `ipset save` (or `ipset list -o save`) text: `create NAME TYPE ...` opens a set, `add NAME ADDR [packets P
 * bytes B] [skbmark V[/M]]` adds an entry to it. Unknown lines are skipped.
 */
export function parseIpsetSave(text: string): Map<string, SavedSet> {
  const sets = new Map<string, SavedSet>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const words = line.split(/\s+/);
    if (words[0] === 'create' && words[1]) {
      sets.set(words[1], { create: line, entries: new Map() });
    } else if (words[0] === 'add' && words[1] && words[2]) {
      const set = sets.get(words[1]);
      if (!set) continue;
      const field = (key: string) => {
        const at = words.indexOf(key);
        return at > 2 ? words[at + 1] : undefined;
      };
      const mark = field('skbmark');
      set.entries.set(words[2], {
        mark: mark ? parseInt(mark.split('/')[0], 16) & PEER_MARK_MASK : 0,
        packets: Number(field('packets') ?? 0),
        bytes: Number(field('bytes') ?? 0),
        line,
      });
    }
  }
  return sets;
}
