// Parsers of `tc -s qdisc|class show` and `tc filter show` text (iproute2's HTB classes print no JSON).
import { ROOT_HT } from './tc-setup.ts';

/** Counters tc prints under a qdisc or class (`Sent N bytes P pkt (dropped D, overlimits O ...)`). */
export interface TcStats {
  bytes: number;
  packets: number;
  dropped: number;
  overlimits: number;
}

/** One qdisc line. */
export interface TcQdisc {
  kind: string;
  /** Handle as printed, e.g. `1:`, `ffff:`, `8001:`. */
  handle: string;
  /** `root`, `ingress` (parent ffff:fff1) or the parent class, e.g. `1:2`. */
  parent: string;
  /** HTB's `default` minor (hex as printed), when kind is htb. */
  htbDefault: string | null;
  stats: TcStats;
}

/** One HTB class. */
export interface TcClass {
  /** Major handle number (hex as printed, e.g. `1`). */
  major: string;
  minor: number;
  /** `root` or the parent class. */
  parent: string;
  /** Leaf qdisc handle when one is attached (`8001:`), else null (HTB's default pfifo). */
  leaf: string | null;
  rateBit: number;
  ceilBit: number;
  stats: TcStats;
}

/** A u32 handle split into its parts. */
export interface U32Fh {
  ht: number;
  bucket: number;
  node: number;
}

/** One filter entry (tc prints a header line per classifier instance without `fh`/`handle`; those are dropped). */
export interface TcFilter {
  protocol: string;
  pref: number;
  kind: string;
  /** u32 handle, or null for other classifiers. */
  fh: U32Fh | null;
  /** Handle of other classifiers (`0x1`), or null. */
  handle: string | null;
  /** u32 hash table definitions: `ht divisor N`. */
  divisor: number | null;
  /** Linked hash table id. */
  link: number | null;
  /** Target class as printed, e.g. `1:2`. */
  flowid: string | null;
  /** u32 keys as `value/mask@offset` (hex as printed). */
  matches: string[];
  /** u32 hash key as `mask@offset`. */
  hash: string | null;
  /** Device of a mirred redirect action. */
  mirred: string | null;
  /** The lines tc printed for this filter. */
  text: string[];
}

const NO_STATS: TcStats = { bytes: 0, packets: 0, dropped: 0, overlimits: 0 };

/** Parses `tc [-s] qdisc show dev X`. */
export function parseQdiscs(text: string): TcQdisc[] {
  const out: TcQdisc[] = [];
  for (const block of blocks(text, 'qdisc ')) {
    const head = block[0];
    const m = /^qdisc (\S+) (\S+) (root|parent (\S+))/.exec(head);
    if (!m) continue;
    let parent = m[3] === 'root' ? 'root' : m[4];
    if (parent === 'ffff:fff1') parent = 'ingress';
    const def = /\bdefault (\S+)/.exec(head);
    out.push({ kind: m[1], handle: m[2], parent, htbDefault: m[1] === 'htb' ? (def?.[1] ?? '0').replace(/^0x/, '') : null, stats: statsOf(block) });
  }
  return out;
}

/** Parses `tc [-s] class show dev X` (HTB classes; other kinds are skipped). */
export function parseClasses(text: string): TcClass[] {
  const out: TcClass[] = [];
  for (const block of blocks(text, 'class ')) {
    const head = block[0];
    const m = /^class htb ([0-9a-f]+):([0-9a-f]+) (root|parent (\S+))/.exec(head);
    if (!m) continue;
    out.push({
      major: m[1],
      minor: parseInt(m[2], 16),
      parent: m[3] === 'root' ? 'root' : m[4],
      leaf: /\bleaf (\S+)/.exec(head)?.[1] ?? null,
      rateBit: rateOf(/\brate (\S+)/.exec(head)?.[1]),
      ceilBit: rateOf(/\bceil (\S+)/.exec(head)?.[1]),
      stats: statsOf(block),
    });
  }
  return out;
}

/** Parses `tc [-s] filter show dev X [ingress]`. */
export function parseFilters(text: string): TcFilter[] {
  const out: TcFilter[] = [];
  for (const block of blocks(text, 'filter ')) {
    const head = block[0];
    const m = /^filter (?:parent \S+ )?protocol (\S+) pref (\d+) (\S+)/.exec(head);
    if (!m) continue;
    const fhText = /\bfh (\S+)/.exec(head)?.[1] ?? null;
    const handle = /\bhandle (\S+)/.exec(head)?.[1] ?? null;
    if (fhText === null && handle === null) continue; // the classifier instance's own header line
    const body = block.slice(1).join('\n');
    out.push({
      protocol: m[1],
      pref: Number(m[2]),
      kind: m[3],
      fh: fhText === null ? null : parseFh(fhText),
      handle,
      divisor: num(/\bht divisor (\d+)/.exec(head)?.[1]),
      link: hexNum(/\blink ([0-9a-f]+):/.exec(head)?.[1]),
      flowid: /\*?flowid (\d[0-9a-f]*:[0-9a-f]*)/.exec(head)?.[1] ?? null,
      matches: [...body.matchAll(/^\s*match ([0-9a-f]{8})\/([0-9a-f]{8}) at (-?\d+)/gm)].map((x) => `${x[1]}/${x[2]}@${x[3]}`),
      hash: ((h) => (h ? `${h[1]}@${h[2]}` : null))(/hash mask ([0-9a-f]{8}) at (\d+)/.exec(body)),
      mirred: /Redirect to device (\S+?)\)/.exec(body)?.[1] ?? null,
      text: block,
    });
  }
  return out;
}

/**
 * Parses the output of one `tc -batch` of `class show dev X classid 1:<M>` + `filter show dev X parent <M>:` pairs
 * (tc prints a child block's filters without their parent): each group class line (`... leaf <M>: ...`) opens the
 * section of block M. A group whose class or child qdisc is missing prints nothing and gets no entry.
 */
export function parseGroupFilters(text: string): Map<number, TcFilter[]> {
  const out = new Map<number, TcFilter[]>();
  let current: TcFilter[] | null = null;
  let chunk: string[] = [];
  const flush = () => {
    if (current && chunk.length) current.push(...parseFilters(chunk.join('\n')));
    chunk = [];
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('class ')) {
      flush();
      const leaf = /\bleaf ([0-9a-f]+):/.exec(line)?.[1];
      current = leaf === undefined ? null : [];
      if (current) out.set(parseInt(leaf!, 16), current);
    } else chunk.push(line);
  }
  flush();
  return out;
}

/** Splits `ht:bucket:node` (hex, empty parts are 0). */
function parseFh(text: string): U32Fh {
  const [ht, bucket, node] = text.split(':');
  return { ht: parseInt(ht || '0', 16), bucket: parseInt(bucket || '0', 16), node: parseInt(node || '0', 16) };
}

/**
 * A normalised description of a scaffold filter, comparable with `scaffoldSignatures`: root hash tables (800:
 * and up, numbered by tc) are written `root`.
 */
export function describeFilter(f: TcFilter): string {
  const head = `${f.protocol}/${f.pref} ${f.kind}`;
  if (!f.fh) return `${head} handle=${f.handle ?? '?'}`;
  const ht = f.fh.ht >= ROOT_HT ? 'root' : f.fh.ht.toString(16);
  if (f.divisor !== null) return `${head} ht=${ht} divisor=${f.divisor}`;
  const parts = [`${head} fh=${ht}:${f.fh.bucket.toString(16)}:${f.fh.node.toString(16)}`];
  if (f.link !== null) parts.push(`link=${f.link.toString(16)}`);
  if (f.flowid !== null) parts.push(`flowid=${f.flowid}`);
  if (f.matches.length) parts.push(`match=${f.matches.join(',')}`);
  if (f.hash) parts.push(`hash=${f.hash}`);
  if (f.mirred) parts.push(`mirred=${f.mirred}`);
  return parts.join(' ');
}

/** A rate as tc prints it (`8Mbit`, `1500Mbit`, `10Gbit`, `800Kbit`, `96bit`) in bit/s; 0 when unreadable. */
export function rateOf(text: string | undefined): number {
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)bit$/.exec(text ?? '');
  if (!m) return 0;
  const scale = { '': 1, K: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] as '' | 'K' | 'M' | 'G' | 'T'];
  return Math.round(Number(m[1]) * scale);
}

function statsOf(block: string[]): TcStats {
  for (const line of block) {
    const m = /Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+)/.exec(line);
    if (m) return { bytes: Number(m[1]), packets: Number(m[2]), dropped: Number(m[3]), overlimits: Number(m[4]) };
  }
  return { ...NO_STATS };
}

/** Groups lines into blocks, each starting at a line that begins with `start`. */
function blocks(text: string, start: string): string[][] {
  const out: string[][] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(start)) out.push([line.trimEnd()]);
    else if (out.length && line.trim()) out[out.length - 1].push(line.trimEnd());
  }
  return out;
}

function num(text: string | undefined): number | null {
  return text === undefined ? null : Number(text);
}

function hexNum(text: string | undefined): number | null {
  return text === undefined ? null : parseInt(text, 16);
}
