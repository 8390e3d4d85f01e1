// Pure DHCPv4 codec (RFC 2131/2132) for the identity lease responder: requests in, OFFER/ACK/NAK out.
import { isIPv4 } from 'node:net';

/** DHCP message types (option 53). */
export const DHCP = { DISCOVER: 1, OFFER: 2, REQUEST: 3, DECLINE: 4, ACK: 5, NAK: 6, RELEASE: 7, INFORM: 8 } as const;

const BOOTREQUEST = 1;
const BOOTREPLY = 2;
const MAGIC = 0x63825363;
/** Offset of the options (after the fixed BOOTP header and the magic cookie). */
const OPTIONS_AT = 240;

const OPT = { MASK: 1, DNS: 6, REQUESTED_IP: 50, LEASE: 51, TYPE: 53, SERVER_ID: 54, CLIENT_ID: 61, END: 255, PAD: 0 } as const;

/** What the responder needs of a client's BOOTREQUEST. */
export interface DhcpRequest {
  /** Message type (option 53). */
  type: number;
  xid: number;
  flags: number;
  /** Relay agent address (strongSwan sets its own source address when it unicasts to a server). */
  giaddr: string;
  /** Client hardware address (6 bytes for Ethernet). */
  chaddr: Buffer;
  /** Client identifier (option 61) as sent: strongSwan's dhcp plugin puts the peer's EAP identity here, untyped. */
  clientId: Buffer | null;
  /** Option 50. */
  requestedIp: string | null;
  /** Option 54. */
  serverId: string | null;
}

function ipAt(buf: Buffer, at: number): string {
  return `${buf[at]}.${buf[at + 1]}.${buf[at + 2]}.${buf[at + 3]}`;
}

function ipBytes(ip: string): number[] {
  if (!isIPv4(ip)) throw new Error(`not an IPv4 address: ${ip}`);
  return ip.split('.').map(Number);
}

/** Parses a BOOTREQUEST; null for anything else (replies, short or malformed packets, missing message type). */
export function parseDhcpRequest(buf: Buffer): DhcpRequest | null {
  if (buf.length < OPTIONS_AT + 3 || buf[0] !== BOOTREQUEST || buf.readUInt32BE(236) !== MAGIC) return null;
  const hlen = Math.min(buf[2], 16);
  const options = new Map<number, Buffer>();
  for (let at = OPTIONS_AT; at < buf.length; ) {
    const code = buf[at];
    if (code === OPT.END) break;
    if (code === OPT.PAD) {
      at += 1;
      continue;
    }
    if (at + 2 > buf.length) return null;
    const len = buf[at + 1];
    if (at + 2 + len > buf.length) return null;
    if (!options.has(code)) options.set(code, buf.subarray(at + 2, at + 2 + len));
    at += 2 + len;
  }
  const type = options.get(OPT.TYPE);
  if (!type || type.length !== 1) return null;
  const ip = (code: number) => {
    const v = options.get(code);
    return v && v.length === 4 ? ipAt(v, 0) : null;
  };
  return {
    type: type[0], xid: buf.readUInt32BE(4), flags: buf.readUInt16BE(10), giaddr: ipAt(buf, 24),
    chaddr: Buffer.from(buf.subarray(28, 28 + hlen)), clientId: options.get(OPT.CLIENT_ID) ?? null,
    requestedIp: ip(OPT.REQUESTED_IP), serverId: ip(OPT.SERVER_ID),
  };
}

/** What a reply carries besides the request's echo. */
export interface DhcpReplyFields {
  type: typeof DHCP.OFFER | typeof DHCP.ACK | typeof DHCP.NAK;
  /** The address handed out (ignored for NAK). */
  yiaddr: string;
  /** Our address (option 54). */
  serverId: string;
  /** DNS servers (option 6), IPv4 only. */
  dns: string[];
  leaseSeconds: number;
}

/** A BOOTREPLY to `request`: xid, flags, giaddr and chaddr echoed; a host mask (/32, the client's own address). */
export function buildDhcpReply(request: DhcpRequest, fields: DhcpReplyFields): Buffer {
  const options: number[] = [OPT.TYPE, 1, fields.type, OPT.SERVER_ID, 4, ...ipBytes(fields.serverId)];
  if (fields.type !== DHCP.NAK) {
    const lease = fields.leaseSeconds >>> 0;
    options.push(OPT.LEASE, 4, (lease >>> 24) & 0xff, (lease >>> 16) & 0xff, (lease >>> 8) & 0xff, lease & 0xff);
    options.push(OPT.MASK, 4, 255, 255, 255, 255);
    const dns = fields.dns.filter((d) => isIPv4(d)).slice(0, 63);
    if (dns.length > 0) options.push(OPT.DNS, dns.length * 4, ...dns.flatMap(ipBytes));
  }
  options.push(OPT.END);
  const buf = Buffer.alloc(OPTIONS_AT + options.length);
  buf[0] = BOOTREPLY;
  buf[1] = 1; // Ethernet
  buf[2] = Math.min(request.chaddr.length, 16);
  buf.writeUInt32BE(request.xid >>> 0, 4);
  buf.writeUInt16BE(request.flags & 0xffff, 10);
  if (fields.type !== DHCP.NAK) Buffer.from(ipBytes(fields.yiaddr)).copy(buf, 16);
  Buffer.from(ipBytes(request.giaddr)).copy(buf, 24);
  request.chaddr.copy(buf, 28, 0, 16);
  buf.writeUInt32BE(MAGIC, 236);
  Buffer.from(options).copy(buf, OPTIONS_AT);
  return buf;
}
