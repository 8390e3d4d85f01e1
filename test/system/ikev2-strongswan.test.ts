// Real strongSwan on both sides: the panel (linux driver, its own charon) in namespace A, a strongSwan client in B.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { IKEV2_DEFAULTS } from '../../panel/schemas/ikev2.ts';
import { createNamespace, destroyNamespace, execIn, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { pings, StrongswanClient } from '../helpers/strongswan-client.ts';

const SERVER_IP = '10.78.0.1';
const A_VETH = '10.198.0.1';
const B_VETH = '10.198.0.2';
const A_VETH_C = '10.198.1.1';
const C_VETH = '10.198.1.2';
const DOMAIN = 'vpn.ikev2.test';

test('IKEv2 client (strongSwan, EAP-MSCHAPv2) through the panel: ping, online, drop, disabled, wrong password; WireGuard beside it', async (t) => {
  if (!requireTools(t, ['swanctl', 'charon-systemd', 'start-stop-daemon', 'wg', 'wireguard-go', 'ip', 'iptables', 'ping'], { root: true })) return;
  const nsA = await createNamespace('vhia');
  const namespaces = [nsA];
  let panel: PanelProcess | null = null;
  const clientDir = mkdtempSync(join(tmpdir(), 'vpnhost-ike-client-'));
  try {
    const nsB = await createNamespace('vhib');
    const nsC = await createNamespace('vhic');
    namespaces.push(nsB, nsC);
    const veth = await vethPair(nsA, nsB, `${A_VETH}/30`, `${B_VETH}/30`);
    await vethPair(nsA, nsC, `${A_VETH_C}/30`, `${C_VETH}/30`);
    panel = await PanelProcess.start({ driver: 'linux', netns: nsA, wireguard: 'userspace', externalInterface: veth.a, env: { VPNHOST_IPSEC_LIBIPSEC: '1', VPNHOST_PANEL_WATCHDOG_SECONDS: '0' },
      ...(process.env.IKE_KEEP_LOG ? { dataDir: join(clientDir, 'panel') } : {}) });
    const api = panel.client;
    const iface = uniqueWgName();
    const port = 51820 + Math.floor(Math.random() * 10000);
    await api.ok('POST', '/wireguard', {
      name: 'ike_wg', interface_name: iface, listen_port: port, address: `${SERVER_IP}/24`, external_ip: A_VETH_C, ikev2: 1, dns_1: SERVER_IP, dns_2: SERVER_IP,
    });
    await api.ok('POST', '/account', { wg_name: 'ike_wg', allowed_IPs: '10.78.0.5', name: 'alice', username: 'alice_ike', password: 'Secret-alice-1' });
    const wgBob = await api.ok<{ private_key: string }>('POST', '/account', { wg_name: 'ike_wg', allowed_IPs: '10.78.0.6', name: 'bob' });
    await api.ok('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Panel Test CA', ca_organization: 'vpnhost' });
    await api.ok('PUT', '/ikev2/generate_server_rsa', { server_domain: DOMAIN, server_ip: A_VETH, server_common_name: DOMAIN, server_organization: 'vpnhost' });
    // log levels through the advanced settings (charondebug_* -> the daemon's file log)
    await api.ok('PUT', '/ikev2/advanced_settings', { ...IKEV2_DEFAULTS, charondebug_cfg: 2, charondebug_ike: 1 });
    const cfg = await api.ok<{ enabled: boolean }>('PUT', '/ikev2', { enabled: 1 });
    assert.equal(cfg.enabled, true);
    const info = await api.ok<{ pid_charon: string; ipsec: string }>('GET', '/ikev2/info');
    assert.match(info.pid_charon, /^\d+$/);
    assert.match(info.ipsec, /^\d+\.\d+\.\d+/);

    // WireGuard client of bob in C, up for the whole test
    const text = await api.ok<string>('GET', '/account/bob/config_text');
    assert.ok(text.includes(wgBob.private_key));
    const wgc = uniqueWgName();
    await execIn(nsC, 'wireguard-go', [wgc]);
    const pub = (await api.ok<{ public_key: string }>('GET', '/wireguard/ike_wg')).public_key;
    const keyFile = join(clientDir, 'wg.key');
    writeFileSync(keyFile, wgBob.private_key, { mode: 0o600 });
    await execIn(nsC, 'wg', ['set', wgc, 'private-key', keyFile, 'peer', pub, 'endpoint', `${A_VETH_C}:${port}`, 'allowed-ips', '10.78.0.0/24', 'persistent-keepalive', '1']);
    await execIn(nsC, 'ip', ['addr', 'add', '10.78.0.6/32', 'dev', wgc]);
    await execIn(nsC, 'ip', ['link', 'set', wgc, 'up']);
    await execIn(nsC, 'ip', ['route', 'add', '10.78.0.0/24', 'dev', wgc]);

    // the strongSwan client in B with the profile's CA and identities
    const profile = JSON.parse(await api.ok<string>('GET', '/account/alice/ikev2_profile'));
    assert.equal(profile.remote.addr, DOMAIN);
    const client = new StrongswanClient(nsB, clientDir, { server: A_VETH, remoteTs: ['10.78.0.0/24'] });
    await client.start();
    await client.load(profile, 'Secret-alice-1');
    assert.equal(await client.connect(), true, 'IKE SA up');
    assert.equal(await pings(nsB, SERVER_IP), true, 'ping through the IKEv2 tunnel');
    assert.equal(await pings(nsC, SERVER_IP), true, 'WireGuard client of another account at the same time');
    const online = await api.ok<Array<Record<string, string>>>('GET', '/ikev2/online');
    assert.equal(online.length, 1);
    assert.equal(online[0].name, 'alice');
    assert.equal(online[0].username, 'alice_ike');
    assert.equal(online[0].allowed_IPs, '10.78.0.5');
    assert.equal(online[0].endpoint, B_VETH);
    const vip = (await execIn(nsB, 'ip', ['-4', '-o', 'addr', 'show'])).stdout;
    assert.match(vip, /10\.78\.0\.5\//, 'the account\'s own allowed_IPs address as virtual IP');

    // no secret in clear on disk: certificates, key and EAP secrets reached charon over vici only
    const files = (readdirSync(join(panel.dataDir, 'ipsec'), { recursive: true }) as string[])
      .map((f) => join(panel!.dataDir, 'ipsec', f)).filter((f) => statSync(f).isFile());
    assert.ok(files.some((f) => f.endsWith('swanctl.conf')));
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      assert.ok(!text.includes('Secret-alice-1') && !text.includes('PRIVATE KEY'), `secret in ${f}`);
    }

    // bad input: a proposal charon does not know is refused with the daemon's detail; charon and the SA stay as they were
    const refused = await api.request('PUT', '/ikev2/advanced_settings', { ...IKEV2_DEFAULTS, esp: 'aes999-sha1' });
    assert.equal(refused.statusCode, 422);
    assert.match(refused.body.error, /^IKEv2 daemon failed: swanctl: /);
    assert.equal((await api.ok<{ esp: string }>('GET', '/ikev2/advanced_settings')).esp, IKEV2_DEFAULTS.esp);
    assert.equal((await api.ok<{ pid_charon: string }>('GET', '/ikev2/info')).pid_charon, info.pid_charon);
    assert.equal(await pings(nsB, SERVER_IP), true, 'the SA survived the refused settings');

    // dropped by the API
    assert.equal(await api.ok('DELETE', '/ikev2/online/alice'), 'success');
    assert.deepEqual(await api.ok('GET', '/ikev2/online'), []);
    assert.equal(await client.saCountAfterSettling(), 0, 'the client saw the delete');

    // disabled: refused; enabled again: works without a charon restart
    await api.ok('PUT', '/account/alice', { status: 'disable' });
    assert.equal(await client.connect(), false, 'disabled account refused');
    await api.ok('PUT', '/account/alice', { status: 'enable' });
    assert.equal(await client.connect(), true, 're-enabled account connects');
    assert.equal((await api.ok<{ pid_charon: string }>('GET', '/ikev2/info')).pid_charon, info.pid_charon, 'no charon restart');
    await client.run(['--terminate', '--ike', 'panel', '--timeout', '5'], true);

    // wrong password: refused
    await client.load(profile, 'wrong-password');
    assert.equal(await client.connect(), false, 'wrong password refused');
    assert.equal(await pings(nsC, SERVER_IP, 5), true, 'WireGuard unaffected');

    // a client like Windows' built-in one: its IP address as IKE identity, the username only as EAP identity; the
    // shared EAP connection and the panel's identity lease responder give it its account's own address
    await api.ok('POST', '/account', { wg_name: 'ike_wg', allowed_IPs: '10.78.0.7', name: 'carol', username: 'carol_win', password: 'Secret-carol-1' });
    const carol = JSON.parse(await api.ok<string>('GET', '/account/carol/ikev2_profile'));
    await client.load(carol, 'Secret-carol-1', { like: 'windows' });
    assert.equal(await client.connect(), true, 'client identified by its IP address connects');
    const sas = (await client.run(['--list-sas', '--raw'])).stdout;
    assert.match(sas, new RegExp(`local-id=${B_VETH.replace(/\./g, '\\.')}\\b`), 'IKE identity = the client\'s address');
    assert.match((await execIn(nsB, 'ip', ['-4', '-o', 'addr', 'show'])).stdout, /10\.78\.0\.7\//, 'carol\'s own address');
    assert.equal(await pings(nsB, SERVER_IP), true, 'ping through the tunnel of the EAP-identified client');
    const carolOnline = await api.ok<Array<Record<string, string>>>('GET', '/ikev2/online');
    assert.deepEqual(carolOnline.map((o) => [o.name, o.username, o.allowed_IPs, o.endpoint]), [['carol', 'carol_win', '10.78.0.7', B_VETH]]);
    assert.equal(await api.ok('DELETE', '/ikev2/online/carol'), 'success');
    assert.equal(await client.saCountAfterSettling(), 0, 'dropped by DELETE /ikev2/online/carol');
    await api.ok('PUT', '/account/carol', { status: 'disable' });
    assert.equal(await client.connect(), false, 'disabled EAP-identified account refused');
    await api.ok('PUT', '/account/carol', { status: 'enable' });
    assert.equal(await client.connect(), true, 're-enabled EAP-identified account connects');
    await api.ok('PUT', '/account/carol', { status: 'disable' });
    assert.equal(await client.saCountAfterSettling(), 0, 'disabling terminates the live SA of the EAP-identified client');
    await api.ok('PUT', '/account/carol', { status: 'enable' });
    await client.load(carol, 'wrong-password', { like: 'windows' });
    assert.equal(await client.connect(), false, 'wrong password refused on the shared EAP connection');

    // charon killed: reported in /system/status; PUT /system/reload starts it and loads the credentials again
    process.kill(Number(info.pid_charon), 'SIGKILL');
    let status = '';
    for (let i = 0; i < 50 && !status.startsWith('Error'); i++) {
      status = (await api.ok<{ status: string }>('GET', '/system/status')).status;
      if (!status.startsWith('Error')) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 'Error: ikev2 daemon (charon) is not running');
    assert.equal(await api.ok('PUT', '/system/reload'), 'success');
    assert.equal((await api.ok<{ status: string }>('GET', '/system/status')).status, 'OK');
    assert.notEqual((await api.ok<{ pid_charon: string }>('GET', '/ikev2/info')).pid_charon, info.pid_charon);
    await client.load(profile, 'Secret-alice-1');
    assert.equal(await client.connect(), true, 'credentials reloaded from the store after the crash');
    assert.equal(await pings(nsB, SERVER_IP), true);
  } finally {
    if (panel && process.env.IKE_KEEP_LOG) console.log(panel.output());
    await panel?.cleanup();
    for (const ns of namespaces.reverse()) await destroyNamespace(ns);
    if (!process.env.IKE_KEEP_LOG) rmSync(clientDir, { recursive: true, force: true });
  }
});
