// Backup and restore on the linux driver: after changes and deletes, a restore brings the kernel state (WireGuard
// peers and interfaces, the panel's iptables rules and ipsets) back to what it was at backup time, with no duplicates.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createNamespace, destroyNamespace, execIn, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';

const A_VETH = '10.198.0.1';
const B_VETH = '10.198.0.2';

interface Account {
  public_key: string;
}

/**
 * The peers of the namespace's WireGuard links as sorted lines (interface, public key, allowed IPs), from
 * `wg show <if> dump` per link (`wg show all` would also list other namespaces' wireguard-go sockets).
 */
async function peers(ns: string): Promise<string[]> {
  const out: string[] = [];
  for (const link of await links(ns)) {
    const lines = (await execIn(ns, 'wg', ['show', link, 'dump'])).stdout.split('\n').filter(Boolean).slice(1);
    for (const f of lines.map((l) => l.split('\t'))) out.push(`${link} ${f[0]} ${f[3]}`);
  }
  return out.sort();
}

/** The rules and sets of the namespace, counters and comments dropped, sorted (duplicates would show twice). */
async function firewall(ns: string): Promise<{ rules: string[]; sets: string[] }> {
  const save = (await execIn(ns, 'iptables-save', [])).stdout.split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.replace(/\[\d+:\d+\]/g, '').trim());
  const sets = (await execIn(ns, 'ipset', ['save'])).stdout.split('\n').filter(Boolean).sort();
  return { rules: save.sort(), sets };
}

async function links(ns: string): Promise<string[]> {
  // wireguard-go makes tun devices, so the links are found by name (the panel's interfaces are wg<N>)
  return (JSON.parse((await execIn(ns, 'ip', ['-j', 'link', 'show'])).stdout) as Array<{ ifname: string }>)
    .map((l) => l.ifname).filter((name) => /^wg\d+$/.test(name)).sort();
}

test('restore on the linux driver: peers, interfaces, rules and sets as at backup time, no duplicates', async (t) => {
  if (!requireTools(t, ['wg', 'wireguard-go', 'ip', 'iptables', 'iptables-save', 'ipset'], { root: true })) return;
  const nsA = await createNamespace('vhba');
  let nsB: string | null = null;
  let panel: PanelProcess | null = null;
  try {
    nsB = await createNamespace('vhbb');
    const veth = await vethPair(nsA, nsB, `${A_VETH}/30`, `${B_VETH}/30`);
    panel = await PanelProcess.start({ driver: 'linux', netns: nsA, wireguard: 'userspace', externalInterface: veth.a, licenseAccounts: 20 });
    const api = panel.client;
    const iface = uniqueWgName();
    const port = 51820 + Math.floor(Math.random() * 10000);
    await api.ok('POST', '/wireguard', { name: 'one', interface_name: iface, listen_port: port, address: '10.78.0.1/24', external_ip: A_VETH });
    const alice = await api.ok<Account>('POST', '/account', { wg_name: 'one', allowed_IPs: '10.78.0.2', name: 'alice', b_download: '10' });
    await api.ok('POST', '/account', { wg_name: 'one', allowed_IPs: '10.78.0.3', name: 'bob' });
    await api.ok('POST', '/account', { wg_name: 'one', allowed_IPs: '10.78.0.4', name: 'carol', status: 'disable' });
    await api.ok('POST', '/port_forward', { dst_port: '8443', protocol: 'tcp', to_peer: 'alice', to_port: '443' });
    await api.ok('POST', '/firewall/rules/filter/end', {
      name: 'blockssh', action: 'DROP', chain: 'INPUT', protocol: 'TCP', s_ip: '198.51.100.0/24', d_ip: '', s_port: '', d_port: '22',
    });
    const before = { peers: await peers(nsA), firewall: await firewall(nsA), links: await links(nsA), accounts: await api.ok('GET', '/account') };
    assert.equal(before.peers.length, 2, before.peers.join('\n'));
    assert.ok(before.peers.some((l) => l.includes(alice.public_key)));
    const made = await api.ok<{ backup_name: string }>('POST', '/backups', { statistics: '1' });

    // drift through the API: a second server, accounts deleted/added/enabled, forward and rule gone
    const iface2 = uniqueWgName();
    await api.ok('POST', '/wireguard', { name: 'two', interface_name: iface2, listen_port: port + 1, address: '10.79.0.1/24', external_ip: A_VETH });
    await api.ok('POST', '/account', { wg_name: 'two', allowed_IPs: '10.79.0.2', name: 'dave' });
    await api.ok('DELETE', '/port_forward/8443/tcp');
    await api.ok('DELETE', '/account/bob');
    await api.ok('PUT', '/account/carol', { status: 'enable' });
    await api.ok('DELETE', '/firewall/rules/filter/blockssh');
    assert.notDeepEqual(await peers(nsA), before.peers);
    assert.notDeepEqual((await firewall(nsA)).rules, before.firewall.rules);

    assert.equal(await api.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
    assert.deepEqual(await api.ok('GET', '/account'), before.accounts);
    assert.deepEqual(await links(nsA), before.links, 'the second server interface removed');
    assert.deepEqual(await peers(nsA), before.peers);
    const after = await firewall(nsA);
    assert.deepEqual(after.sets, before.firewall.sets);
    assert.deepEqual(after.rules, before.firewall.rules, 'the same rules, none twice');
    assert.equal((await api.ok<{ status: string }>('GET', '/system/status')).status, 'OK');

    // a second restore of the same archive changes nothing (idempotent, still no duplicates)
    assert.equal(await api.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
    assert.deepEqual(await peers(nsA), before.peers);
    assert.deepEqual((await firewall(nsA)).rules, before.firewall.rules);
  } finally {
    await panel?.cleanup();
    if (nsB) await destroyNamespace(nsB);
    await destroyNamespace(nsA);
  }
});
