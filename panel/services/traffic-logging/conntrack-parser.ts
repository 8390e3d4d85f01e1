// Pure parser of `conntrack -E -o timestamp,extended,id` lines into FlowEvents (the original-direction tuple).
import type { FlowEvent, FlowState } from './flow-event.ts';

const EVENT = /^\s*(?:\[(\d+)\.(\d{1,9})\]\s+)?\[(NEW|UPDATE|DESTROY)\]\s+(ipv4|ipv6)\s+\d+\s+(\S+)\s+\d+\s+(.*)$/;

/**
 * Parses one event line of `conntrack -E -o timestamp,extended,id`, e.g.
 * `[1795435848.325233]    [NEW] ipv4     2 tcp      6 120 SYN_SENT src=10.0.1.2 dst=1.1.1.1 sport=36106 dport=443
 * [UNREPLIED] src=1.1.1.1 dst=203.0.113.1 sport=443 dport=36106 mark=5 id=3052747403`.
 * The first `src/dst/sport/dport/bytes` are the original direction; `mark=` and `id=` follow the reply tuple.
 * `[UPDATE]` counts as `established` only when a TCP connection is in ESTABLISHED, or for other protocols when the
 * first reply is seen (the UPDATE without `[ASSURED]`; the later assured one is dropped); other UPDATEs are dropped.
 * Returns null for anything else (summary lines, unparsable text). `now` stamps lines without a timestamp.
 */
export function parseConntrackLine(line: string, now: () => Date = () => new Date()): FlowEvent | null {
  const m = EVENT.exec(line);
  if (!m) return null;
  const [, sec, frac, kind, l3, protocol, rest] = m;
  const tokens = rest.trim().split(/\s+/);
  let tcpState: string | null = null;
  if (tokens[0] && /^[0-9]+$/.test(tokens[0])) tokens.shift(); // timeout
  if (tokens[0] && /^[A-Z_]+$/.test(tokens[0])) tcpState = tokens.shift() ?? null;
  const first: Record<string, string> = {};
  const last: Record<string, string> = {};
  let inReply = false;
  for (const token of tokens) {
    if (token.startsWith('[')) continue;
    const eq = token.indexOf('=');
    if (eq <= 0) continue;
    const key = token.slice(0, eq);
    const value = token.slice(eq + 1);
    if (key === 'src' && 'src' in first) inReply = true;
    if (!inReply && !(key in first)) first[key] = value;
    last[key] = value;
  }
  if (!first.src || !first.dst) return null;
  let state: FlowState;
  if (kind === 'NEW') state = 'new';
  else if (kind === 'DESTROY') state = 'destroy';
  else if (protocol === 'tcp' ? tcpState === 'ESTABLISHED' : !tokens.includes('[ASSURED]')) state = 'established';
  else return null;
  const time = sec ? new Date(Number(sec) * 1000 + Math.floor(Number(`0.${frac}`) * 1000)) : now();
  const int = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : null);
  const markText = inReply ? last.mark : first.mark;
  return {
    time,
    state,
    family: l3 === 'ipv6' ? 6 : 4,
    protocol,
    src: first.src,
    dst: first.dst,
    sport: int(first.sport),
    dport: int(first.dport),
    mark: markText === undefined ? null : markText.startsWith('0x') ? Number.parseInt(markText, 16) : int(markText),
    bytes: int(first.bytes),
    id: int(last.id),
  };
}
