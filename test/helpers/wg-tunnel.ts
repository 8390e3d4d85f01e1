// A WireGuard tunnel between two test namespaces (wireguard-go + wg), for system tests of what runs on a wg link.
import { randomInt } from 'node:crypto';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { uniqueWgName, vethPair } from './netns.ts';

/** The two ends of a tunnel. */
export interface WgTunnel {
  /** Interface in the gateway namespace (address `<net>.1/24`). */
  server: string;
  /** Interface in the client namespace (address `<net>.2/24`). */
  client: string;
}

const USERSPACE_ENV = { WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: '1', LOG_LEVEL: '' };

async function wgEnd(ns: string, name: string, privateKey: string, address: string, port: number, peer: { publicKey: string; allowed: string; endpoint?: string }): Promise<void> {
  const run = new ExecaRunner({ netns: ns });
  await run.run('wireguard-go', [name], { env: USERSPACE_ENV, detached: true });
  const args = ['set', name, 'listen-port', String(port), 'private-key', '/dev/stdin', 'peer', peer.publicKey, 'allowed-ips', peer.allowed];
  if (peer.endpoint) args.push('endpoint', peer.endpoint, 'persistent-keepalive', '1');
  await run.run('wg', args, { input: privateKey });
  await run.run('ip', ['addr', 'add', address, 'dev', name]);
  await run.run('ip', ['link', 'set', name, 'up']);
}

/**
 * Links `gw` and `cl` with a veth pair (`192.168.<x>.1/.2`) and runs a WireGuard tunnel over it: `<net>.1/24` on
 * the gateway's interface, `<net>.2/24` on the client's (`net` like `10.71.0`). Both ends are wireguard-go daemons
 * inside the namespaces (they die with them).
 */
export async function wgTunnel(gw: string, cl: string, net: string): Promise<WgTunnel> {
  const x = randomInt(1, 250);
  await vethPair(gw, cl, `192.168.${x}.1/24`, `192.168.${x}.2/24`);
  const server = uniqueWgName();
  const client = uniqueWgName();
  const sk = generateKeyPair();
  const ck = generateKeyPair();
  const port = 40000 + randomInt(10000);
  await wgEnd(gw, server, sk.privateKey, `${net}.1/24`, port, { publicKey: ck.publicKey, allowed: `${net}.2/32` });
  await wgEnd(cl, client, ck.privateKey, `${net}.2/24`, port + 1, { publicKey: sk.publicKey, allowed: `${net}.0/24`, endpoint: `192.168.${x}.1:${port}` });
  return { server, client };
}
