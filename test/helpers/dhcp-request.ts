// A DHCP BOOTREQUEST laid out as strongSwan's dhcp plugin sends it (relay mode: giaddr set, identity as client id).
import { isIPv4 } from 'node:net';

function ipBytes(ip: string): number[] {
  if (!isIPv4(ip)) throw new Error(`not an IPv4 address: ${ip}`);
  return ip.split('.').map(Number);
}

/** Builds the request; option order as strongSwan writes it (type, client id, requested IP, server id). */
export function buildDhcpRequest(fields: { type: number; xid: number; giaddr: string; clientId?: Buffer; requestedIp?: string; serverId?: string }): Buffer {
  const options: number[] = [53, 1, fields.type];
  if (fields.clientId) options.push(61, fields.clientId.length, ...fields.clientId);
  if (fields.requestedIp) options.push(50, 4, ...ipBytes(fields.requestedIp));
  if (fields.serverId) options.push(54, 4, ...ipBytes(fields.serverId));
  options.push(255);
  const buf = Buffer.alloc(240 + options.length);
  buf[0] = 1;
  buf[1] = 1;
  buf[2] = 6;
  buf.writeUInt32BE(fields.xid >>> 0, 4);
  Buffer.from(ipBytes(fields.giaddr)).copy(buf, 24);
  Buffer.from([0x7a, 0xa7, 1, 2, 3, 4]).copy(buf, 28);
  buf.writeUInt32BE(0x63825363, 236);
  Buffer.from(options).copy(buf, 240);
  return buf;
}
