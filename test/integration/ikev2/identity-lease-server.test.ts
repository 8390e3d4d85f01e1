// The panel's identity lease responder over real UDP on loopback: each EAP identity gets its account's own address.
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { test } from 'node:test';
import { DHCP, parseDhcpRequest } from '../../../panel/dataplane/ipsec/linux/dhcp-packet.ts';
import { IdentityLeaseServer } from '../../../panel/dataplane/ipsec/linux/identity-lease-server.ts';
import { buildDhcpRequest } from '../../helpers/dhcp-request.ts';

/** A client socket standing in for charon's dhcp plugin; `ask` sends one request and waits (bounded) for a reply. */
async function fakePlugin(): Promise<{
  socket: Socket;
  port: number;
  ask(server: number, packet: Buffer, waitMs?: number): Promise<Buffer | null>;
  xidAnsweredFirst(server: number, packet: Buffer, probe: Buffer): Promise<number | null>;
}> {
  const socket = createSocket('udp4');
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  const replies: Buffer[] = [];
  socket.on('message', (m) => replies.push(m));
  return {
    socket, port: socket.address().port,
    async ask(server, packet, waitMs = 1000) {
      replies.length = 0;
      socket.send(packet, server, '127.0.0.1');
      for (let t = 0; t < waitMs && replies.length === 0; t += 10) await new Promise((r) => setTimeout(r, 10));
      return replies.shift() ?? null;
    },
    /**
     * Sends `packet`, then `probe` (which gets an answer), and tells the xid of the first reply: the server answers in
     * arrival order, so silence for `packet` is shown by the probe's reply coming first, without waiting out a clock.
     */
    async xidAnsweredFirst(server, packet, probe) {
      replies.length = 0;
      socket.send(packet, server, '127.0.0.1');
      socket.send(probe, server, '127.0.0.1');
      for (let t = 0; t < 5000 && replies.length === 0; t += 10) await new Promise((r) => setTimeout(r, 10));
      return replies[0]?.readUInt32BE(4) ?? null;
    },
  };
}

const yiaddr = (b: Buffer) => [...b.subarray(16, 20)].join('.');
const typeOf = (b: Buffer) => b[b.indexOf(Buffer.from([53, 1]), 240) + 2];

test('DISCOVER/REQUEST per EAP identity: the account\'s address and DNS, NAK for another address, silence for an unknown identity, O(1) updates', async () => {
  const logged: string[] = [];
  const plugin = await fakePlugin();
  const server = new IdentityLeaseServer({ port: 0, replyPort: plugin.port, log: (l) => logged.push(l) });
  try {
    await server.start();
    await server.start(); // idempotent
    server.setUsers([
      { username: 'carol_win', password: 'x', address: '10.78.0.7', dns: ['10.78.0.1'] },
      { username: 'dave', password: 'y', address: '10.78.0.8', dns: [] },
    ]);
    const port = server.boundPort;
    assert.ok(port > 0);
    const discover = (id: string, xid: number) => buildDhcpRequest({ type: DHCP.DISCOVER, xid, giaddr: '127.0.0.1', clientId: Buffer.from(id) });
    const request = (id: string, xid: number, ip: string) =>
      buildDhcpRequest({ type: DHCP.REQUEST, xid, giaddr: '127.0.0.1', clientId: Buffer.from(id), requestedIp: ip, serverId: '127.0.0.1' });

    const offer = await plugin.ask(port, discover('carol_win', 7));
    assert.ok(offer, 'an OFFER came back');
    assert.equal(typeOf(offer), DHCP.OFFER);
    assert.equal(offer.readUInt32BE(4), 7);
    assert.equal(yiaddr(offer), '10.78.0.7');
    assert.ok(offer.includes(Buffer.from([6, 4, 10, 78, 0, 1])), 'DNS option with the server address');
    const ack = await plugin.ask(port, request('carol_win', 8, '10.78.0.7'));
    assert.equal(ack && typeOf(ack), DHCP.ACK);
    assert.equal(ack && yiaddr(ack), '10.78.0.7');
    const nak = await plugin.ask(port, request('carol_win', 9, '10.78.0.8'));
    assert.equal(nak && typeOf(nak), DHCP.NAK, 'another account\'s address is refused');
    assert.equal(parseDhcpRequest(nak!), null, 'a reply is not taken for a request');

    assert.equal(await plugin.xidAnsweredFirst(port, discover('nobody', 10), discover('dave', 100)), 100, 'unknown identity: no OFFER');
    assert.ok(logged.some((l) => l.includes('"nobody"')));

    // account changes: one entry each
    server.upsert({ username: 'dave', password: 'y', address: '10.78.0.9', dns: [] });
    assert.equal(yiaddr((await plugin.ask(port, discover('dave', 11)))!), '10.78.0.9');
    server.remove('carol_win');
    assert.equal(server.leaseOf('carol_win'), null);
    assert.equal(await plugin.xidAnsweredFirst(port, discover('carol_win', 12), discover('dave', 101)), 101, 'removed account: no OFFER');
    assert.equal(await plugin.xidAnsweredFirst(port, Buffer.from('garbage'), discover('dave', 102)), 102, 'garbage ignored');
    assert.equal(yiaddr((await plugin.ask(port, discover('dave', 13)))!), '10.78.0.9', 'still answering after garbage');
  } finally {
    await server.close();
    plugin.socket.close();
  }
});
