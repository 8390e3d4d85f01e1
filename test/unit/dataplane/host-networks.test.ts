// Host networks: `ip -j addr`/`ip -j route` parsing, the services' view of them, wireguard-go's error line, UAPI probes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { execa } from 'execa';
import { probeUapiSocket, removeStaleSocket } from '../../../panel/dataplane/wireguard/linux/uapi-socket.ts';
import { wireguardGoError } from '../../../panel/dataplane/wireguard/linux/wireguard-go.ts';
import { parseHostAddresses, parseHostRoutes } from '../../../panel/dataplane/render/parse-ip-host.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { parseCidr } from '../../../panel/schemas/ip.ts';
import { HostNetworkReader } from '../../../panel/services/host-networks.ts';

const ADDR = JSON.stringify([
  { ifindex: 1, ifname: 'lo', addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8, scope: 'host' }, { family: 'inet6', local: '::1', prefixlen: 128 }] },
  { ifindex: 2, ifname: 'eth0', addr_info: [{ family: 'inet', local: '10.199.0.1', prefixlen: 30 }, { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' }] },
  { ifindex: 3, ifname: 'wg0', addr_info: [] },
]);

test('parses every address of every link, link-local included', () => {
  assert.deepEqual(parseHostAddresses(ADDR), [
    { cidr: '127.0.0.1/8', source: 'address', dev: 'lo' },
    { cidr: '::1/128', source: 'address', dev: 'lo' },
    { cidr: '10.199.0.1/30', source: 'address', dev: 'eth0' },
    { cidr: 'fe80::1/64', source: 'address', dev: 'eth0' },
  ]);
  assert.deepEqual(parseHostAddresses(''), []);
});

test('parses route destinations without default routes; bare destinations are host routes', () => {
  const v4 = JSON.stringify([
    { dst: 'default', gateway: '10.199.0.2', dev: 'eth0' },
    { dst: '10.199.0.0/30', dev: 'eth0', protocol: 'kernel', scope: 'link', prefsrc: '10.199.0.1' },
    { dst: '192.0.2.9', dev: 'eth0' },
    { type: 'blackhole', dst: '10.50.0.0/16', flags: [] },
    { dst: '0.0.0.0/0', dev: 'tun0' },
  ]);
  assert.deepEqual(parseHostRoutes(v4), [
    { cidr: '10.199.0.0/30', source: 'route', dev: 'eth0' },
    { cidr: '192.0.2.9/32', source: 'route', dev: 'eth0' },
    { cidr: '10.50.0.0/16', source: 'route', dev: null },
  ]);
  assert.deepEqual(parseHostRoutes(JSON.stringify([{ dst: 'fd00::/64', dev: 'eth0' }, { dst: '2001:db8::5', dev: 'eth0' }])), [
    { cidr: 'fd00::/64', source: 'route', dev: 'eth0' },
    { cidr: '2001:db8::5/128', source: 'route', dev: 'eth0' },
  ]);
});

test('view: the panel interfaces are left out, the listen address counts, an unspecified one adds nothing', async () => {
  const driver = new SimulatedDriver({
    hostNetworks: [
      { cidr: '10.199.0.1/30', source: 'address', dev: 'eth0' },
      { cidr: '10.0.1.1/24', source: 'address', dev: 'wg0' },
    ],
  });
  const view = await new HostNetworkReader(driver, { listenAddress: '192.0.2.80' }).fresh(['wg0']);
  assert.equal(view.overlapping(parseCidr('10.199.0.5/24')!), '10.199.0.1/30');
  assert.equal(view.overlapping(parseCidr('10.0.1.1/24')!), null, 'the server interface itself');
  assert.equal(view.overlapping(parseCidr('192.0.2.1/24')!), '192.0.2.80 (panel listen address)');
  assert.equal(view.overlapping(parseCidr('10.200.0.1/24')!), null);
  const any = await new HostNetworkReader(driver, { listenAddress: '0.0.0.0' }).fresh([]);
  assert.equal(any.overlapping(parseCidr('0.0.0.0/8')!), null);
  assert.equal(any.overlapping(parseCidr('10.0.1.9/32')!), '10.0.1.1/24', 'a wg link not in the list counts');
});

test('view: the cached read is reused within its TTL, re-read after', async () => {
  let reads = 0;
  const driver = new SimulatedDriver();
  const counting = Object.assign(Object.create(driver) as SimulatedDriver, {
    hostNetworks: () => {
      reads++;
      return driver.hostNetworks();
    },
  });
  let now = 0;
  const reader = new HostNetworkReader(counting, { ttlMs: 1000, now: () => now });
  await reader.cached([]);
  await reader.cached([]);
  assert.equal(reads, 1);
  now = 1500;
  await reader.cached([]);
  assert.equal(reads, 2);
  await reader.fresh([]);
  assert.equal(reads, 3);
});

test('the simulated host: loopback and the documentation uplink, plus its links as ip lists them', async () => {
  const driver = new SimulatedDriver();
  const before = await driver.hostNetworks();
  assert.deepEqual(before.map((n) => n.cidr), ['127.0.0.1/8', '::1/128', '203.0.113.1/24', '203.0.113.0/24']);
});

const BANNER = ['┌──────────────────────────────────────────────────────┐', '│   Running wireguard-go is not required because this  │', '└──────────────────────────────────────────────────────┘'].join('\n');

test("wireguard-go: the ERROR line on stdout is the message, not the banner's frame on stderr", () => {
  const stdout = 'ERROR: (wg777002) 2026/11/23 10:35:27 UAPI listen error: unix socket in use\n';
  assert.equal(wireguardGoError(stdout, `${BANNER}\n`, 1), 'UAPI listen error: unix socket in use');
  assert.equal(wireguardGoError('', `${BANNER}\nsomething else broke\n${BANNER}\n`, 1), 'something else broke');
  assert.equal(wireguardGoError('', `${BANNER}\n`, 3), 'exit code 3');
});

test('UAPI socket probe: absent, live (a listener answers), stale (file left behind), not a socket', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-uapi-'));
  const server = createServer();
  try {
    const path = join(dir, 'wg1.sock');
    assert.equal(await probeUapiSocket(path), 'absent');
    await new Promise<void>((resolve) => server.listen(path, resolve));
    assert.equal(await probeUapiSocket(path), 'live');
    // What a daemon killed with SIGKILL leaves: its socket file, with nobody listening.
    const stalePath = join(dir, 'wg2.sock');
    const daemon = execa(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(stalePath)}, () => console.log('up'))`], { reject: false });
    await new Promise<void>((resolve) => daemon.stdout!.once('data', () => resolve()));
    assert.equal(await probeUapiSocket(stalePath), 'live');
    daemon.kill('SIGKILL');
    await daemon;
    assert.equal(await probeUapiSocket(stalePath), 'stale');
    await removeStaleSocket(stalePath);
    assert.equal(await probeUapiSocket(stalePath), 'absent');
    writeFileSync(join(dir, 'wg3.sock'), '');
    assert.equal(await probeUapiSocket(join(dir, 'wg3.sock')), 'stale');
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
