// Real strongSwan: the panel's marks, NAT, port forwards, filter rules and shaping apply to an IKEv2 client (TUN ipsec0).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { measureMbit, startIperfServer, type IperfServer } from '../helpers/iperf.ts';
import { probe, startService, type Service } from '../helpers/net-probe.ts';
import { createNamespace, destroyNamespace, execIn, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { pings, StrongswanClient } from '../helpers/strongswan-client.ts';
import { startWgClient } from '../helpers/wg-client.ts';

const NET = '10.79.0';
const SERVER_IP = `${NET}.1`;
const ALICE = `${NET}.5`;
const A_VETH = '10.199.0.1';
const B_VETH = '10.199.0.2';
const A_VETH_C = '10.199.1.1';
const C_VETH = '10.199.1.2';
const DOMAIN = 'vpn.ikev2-policy.test';
const LIMIT = 8;

/** Packet counter of the first `iptables-save -c` line of `table` in `ns` matching `re`. */
async function ruleCounter(ns: string, table: string, re: RegExp): Promise<number> {
  const save = (await execIn(ns, 'iptables-save', ['-c', '-t', table])).stdout;
  const line = save.split('\n').find((l) => re.test(l));
  assert.ok(line, `no rule ${re} in ${table}:\n${save}`);
  return Number(/^\[(\d+):/.exec(line)![1]);
}

test('IKEv2 client under the panel policy: marks, SNAT, port forward, filter rule, bandwidth limit on the TUN', async (t) => {
  if (!requireTools(t, ['swanctl', 'charon-systemd', 'start-stop-daemon', 'wg', 'wireguard-go', 'ip', 'iptables', 'ipset', 'tc', 'iperf3', 'ping'], { root: true })) return;
  const started = Date.now();
  const nsA = await createNamespace('vhpa');
  const namespaces = [nsA];
  const services: Array<Service | IperfServer> = [];
  let panel: PanelProcess | null = null;
  const clientDir = mkdtempSync(join(tmpdir(), 'vpnhost-ike-policy-'));
  try {
    const nsB = await createNamespace('vhpb');
    const nsC = await createNamespace('vhpc');
    namespaces.push(nsB, nsC);
    await vethPair(nsA, nsB, `${A_VETH}/30`, `${B_VETH}/30`);
    const vethC = await vethPair(nsA, nsC, `${A_VETH_C}/30`, `${C_VETH}/30`);
    // nsC is "the internet": the IKEv2 client's traffic to it leaves through vethC (source NAT to the external IP)
    panel = await PanelProcess.start({ driver: 'linux', netns: nsA, wireguard: 'userspace', externalInterface: vethC.a,
      env: { VPNHOST_IPSEC_LIBIPSEC: '1' } });
    const api = panel.client;
    const port = 51820 + Math.floor(Math.random() * 10000);
    await api.ok('POST', '/wireguard', {
      name: 'ike_pol', interface_name: uniqueWgName(), listen_port: port, address: `${SERVER_IP}/24`, external_ip: A_VETH_C, ikev2: 1,
    });
    const iface = (await api.ok<{ interface_name: string }>('GET', '/wireguard/ike_pol')).interface_name;
    await api.ok('POST', '/account', { wg_name: 'ike_pol', allowed_IPs: ALICE, name: 'alice', username: 'alice_pol', password: 'Secret-pol-1' });
    await api.ok('POST', '/account', { wg_name: 'ike_pol', allowed_IPs: `${NET}.6`, name: 'bob' });
    await api.ok('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Policy Test CA', ca_organization: 'vpnhost' });
    await api.ok('PUT', '/ikev2/generate_server_rsa', { server_domain: DOMAIN, server_ip: A_VETH, server_common_name: DOMAIN, server_organization: 'vpnhost' });
    await api.ok('PUT', '/ikev2', { enabled: 1 });
    assert.match((await execIn(nsA, 'ip', ['-o', 'link', 'show', 'dev', 'ipsec0'])).stdout, /ipsec0/, "charon's TUN has the known name");

    // the client routes the server subnet and "the internet" (nsC) through the tunnel, as a real full-tunnel client
    const client = new StrongswanClient(nsB, clientDir, { server: A_VETH, remoteTs: [`${NET}.0/24`, `${A_VETH_C.replace(/\.1$/, '.0')}/30`] });
    await client.start();
    await client.load(JSON.parse(await api.ok<string>('GET', '/account/alice/ikev2_profile')), 'Secret-pol-1');
    assert.equal(await client.connect(), true, 'IKE SA up');
    assert.match((await execIn(nsB, 'ip', ['-4', '-o', 'addr', 'show'])).stdout, new RegExp(`${ALICE.replace(/\./g, '\\.')}/`), "the account's own address");

    // WireGuard peer bob in nsC beside it
    await startWgClient(nsC, uniqueWgName(), await api.ok<string>('GET', '/account/bob/config_text'), `${NET}.0/24`);

    // marks: the dispatch by source subnet on ipsec0 and alice's set entry count her packets
    const dispatch = new RegExp(`-A VPNHOST-MARK -s ${NET.replace(/\./g, '\\.')}\\.0/24 -i ipsec0 -j VPNHOST-MARK-${iface}$`);
    const dispatchBefore = await ruleCounter(nsA, 'mangle', dispatch);
    const subChainBefore = await ruleCounter(nsA, 'mangle', new RegExp(`^\\[\\d+:\\d+\\] -A VPNHOST-MARK-${iface} -j SET`));
    assert.equal(await pings(nsB, SERVER_IP), true, 'ping through the IKEv2 tunnel');
    assert.ok((await ruleCounter(nsA, 'mangle', dispatch)) > dispatchBefore, 'the TUN dispatch line counted the client');
    assert.ok((await ruleCounter(nsA, 'mangle', new RegExp(`^\\[\\d+:\\d+\\] -A VPNHOST-MARK-${iface} -j SET`))) > subChainBefore, 'the sub-chain counted it');
    const entry = (await execIn(nsA, 'ipset', ['list', `vpnhost-${iface}-4`])).stdout.split('\n').find((l) => l.startsWith(`${ALICE} `));
    assert.ok(entry && Number(/packets (\d+)/.exec(entry)![1]) > 0, `alice's mark entry counted her packets: ${entry}`);

    // source NAT: the client reaches "the internet" as the server's external IP
    services.push(await startService(nsC, 'tcp', C_VETH, 7001, 'inet'));
    assert.equal(await probe(nsB, 'tcp', C_VETH, 7001, 3000), `inet ${A_VETH_C}`, 'IKEv2 traffic is SNATed to external_ip');

    // port forward to alice: from the internet and from the host itself (hairpin through the TUN)
    services.push(await startService(nsB, 'tcp', ALICE, 8080, 'alice'));
    await api.ok('POST', '/port_forward', { dst_port: '9080', protocol: 'tcp', to_peer: 'alice', to_port: '8080' });
    assert.equal(await probe(nsC, 'tcp', A_VETH_C, 9080, 3000), `alice ${C_VETH}`, 'forward from outside reaches the IKEv2 client');
    assert.equal(await probe(nsA, 'tcp', A_VETH_C, 9080, 3000), `alice ${SERVER_IP}`, 'hairpin from the host, SNAT to the server address');

    // a user firewall rule blocks the IKEv2 client like the WireGuard peer
    services.push(await startService(nsA, 'tcp', SERVER_IP, 7002, 'srv'));
    assert.equal(await probe(nsB, 'tcp', SERVER_IP, 7002, 3000), `srv ${ALICE}`);
    assert.equal(await probe(nsC, 'tcp', SERVER_IP, 7002, 3000), `srv ${NET}.6`);
    await api.ok('POST', '/firewall/rules/filter/top', { name: 'blockpol', action: 'DROP', chain: 'INPUT', protocol: 'TCP', s_ip: '', d_ip: '', s_port: '', d_port: '7002' });
    assert.match(await probe(nsB, 'tcp', SERVER_IP, 7002, 1500), /^FAIL/, 'IKEv2 client blocked');
    assert.match(await probe(nsC, 'tcp', SERVER_IP, 7002, 1500), /^FAIL/, 'WireGuard peer blocked');
    await api.ok('DELETE', '/firewall/rules/filter/blockpol');
    assert.equal(await probe(nsB, 'tcp', SERVER_IP, 7002, 3000), `srv ${ALICE}`);

    // bandwidth: unlimited goes well over the limit; limited stays under it (+15%) both ways, counted in its TUN class
    services.push(await startIperfServer(nsA, SERVER_IP));
    const freeDown = await measureMbit(nsB, SERVER_IP, { reverse: true, seconds: 3 });
    const freeUp = await measureMbit(nsB, SERVER_IP, { seconds: 3 });
    assert.ok(freeDown > 3 * LIMIT && freeUp > 3 * LIMIT, `unlimited: ${freeDown.toFixed(1)} / ${freeUp.toFixed(1)} Mbit/s`);
    await api.ok('PUT', '/account/alice', { b_download: String(LIMIT), b_upload: String(LIMIT) });
    const classes = (await execIn(nsA, 'tc', ['class', 'show', 'dev', 'ipsec0'])).stdout;
    assert.match(classes, new RegExp(`class htb 100:5 root .*rate ${LIMIT}Mbit`), `alice's class on ipsec0:\n${classes}`);
    assert.match((await execIn(nsA, 'tc', ['class', 'show', 'dev', 'ifb-ipsec0'])).stdout, new RegExp(`class htb 100:5 root .*rate ${LIMIT}Mbit`));
    const down = await measureMbit(nsB, SERVER_IP, { reverse: true, seconds: 4 });
    const up = await measureMbit(nsB, SERVER_IP, { seconds: 4 });
    assert.ok(down <= LIMIT * 1.15 && down >= LIMIT * 0.5, `limited download ${down.toFixed(2)} Mbit/s`);
    assert.ok(up <= LIMIT * 1.15 && up >= LIMIT * 0.5, `limited upload ${up.toFixed(2)} Mbit/s`);
    const sent = /class htb 100:5 [\s\S]*?Sent (\d+) bytes/.exec((await execIn(nsA, 'tc', ['-s', 'class', 'show', 'dev', 'ipsec0', 'classid', '100:5'])).stdout);
    assert.ok(sent && Number(sent[1]) > 1_000_000, `the TUN class counted the download: ${sent?.[1]}`);
    console.log(`ikev2 policy: unlimited ${freeDown.toFixed(1)}/${freeUp.toFixed(1)} Mbit/s, limit ${LIMIT}: ${down.toFixed(2)}/${up.toFixed(2)} Mbit/s (down/up)`);

    // charon killed: its TUN (and the tree on it) is gone; the watchdog's reconcile starts charon and rebuilds the tree
    const pid = Number((await api.ok<{ pid_charon: string }>('GET', '/ikev2/info')).pid_charon);
    process.kill(pid, 'SIGKILL');
    let rebuilt = '';
    for (let i = 0; i < 120 && !/class htb 100:5 /.test(rebuilt); i++) {
      await new Promise((r) => setTimeout(r, 250));
      rebuilt = (await execIn(nsA, 'tc', ['class', 'show', 'dev', 'ipsec0'], { allowFailure: true })).stdout;
    }
    assert.match(rebuilt, new RegExp(`class htb 100:5 root .*rate ${LIMIT}Mbit`), 'the TUN tree is back after the restart');
    assert.notEqual(Number((await api.ok<{ pid_charon: string }>('GET', '/ikev2/info')).pid_charon), pid);

    // lifting the limit removes the class again (one incremental change, no rebuild)
    await api.ok('PUT', '/account/alice', { b_download: '0', b_upload: '0' });
    assert.doesNotMatch((await execIn(nsA, 'tc', ['class', 'show', 'dev', 'ipsec0'])).stdout, /class htb 100:5 /);
    t.diagnostic(`took ${Date.now() - started} ms`); // a figure, not a check: the machine's speed is no property of the policy
  } finally {
    for (const s of services) await s.stop();
    await panel?.cleanup();
    for (const ns of namespaces.reverse()) await destroyNamespace(ns);
    rmSync(clientDir, { recursive: true, force: true });
  }
});
