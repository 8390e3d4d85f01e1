// A real panel (linux data plane) migrates the flat tc tree of the previous release on start, rates kept, and rebuilds every class after `tc qdisc del`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { test } from 'node:test';
import { destroyNamespace, execIn, uniqueWgName } from '../helpers/netns.ts';
import { startLinuxPanel, waitBooted } from '../helpers/linux-panel.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { peerClasses, tcLines } from '../helpers/tc-state.ts';

/** The accounts the fixture's tree was rendered for (test/fixtures/tc/previous-release-tree.batch). */
const ACCOUNTS = [
  { name: 'a', allowed_IPs: '10.66.0.2', allowed_IPs_ipv6: 'fd66::2', b_download: '8', b_upload: '4' },
  { name: 'b', allowed_IPs: '10.66.0.3', allowed_IPs_ipv6: '', b_download: '0', b_upload: '12' },
  { name: 'c', allowed_IPs: '10.66.0.200', allowed_IPs_ipv6: 'fd66::c8', b_download: '20', b_upload: '10' },
];

test('shaping tree: the previous release\'s flat tree is migrated on start (rates kept); tc qdisc del is rebuilt on reload', async (t) => {
  if (!requireTools(t, ['wg', 'wireguard-go', 'ip', 'iptables', 'ipset', 'tc'], { root: true })) return;
  const { ns, panel } = await startLinuxPanel('vhtr');
  try {
    const api = panel.client;
    const iface = uniqueWgName();
    const ifb = `ifb-${iface}`;
    await api.ok('POST', '/wireguard', {
      name: 'mig', interface_name: iface, listen_port: 51820 + randomInt(10000), address: '10.66.0.1/24', external_ip: '192.0.2.1',
      ipv6: '1', address_ipv6: 'fd66::1/64',
    });
    for (const a of ACCOUNTS) await api.ok('POST', '/account', { wg_name: 'mig', ...a });
    const want = { [iface]: new Map([['100:2', '8Mbit'], ['100:c8', '20Mbit']]), [ifb]: new Map([['100:2', '4Mbit'], ['100:3', '12Mbit'], ['100:c8', '10Mbit']]) };
    for (const dev of [iface, ifb]) assert.deepEqual(await peerClasses(ns, dev), want[dev], dev);
    const current = async () => [...(await tcLines(ns, iface)), ...(await tcLines(ns, ifb))].join('\n');
    const fresh = await current();

    // The previous release left its flat tree (every class 1:<minor> in the root HTB, tables 1xx:) behind.
    await panel.kill('SIGTERM');
    for (const dev of [iface, ifb]) await execIn(ns, 'tc', ['qdisc', 'del', 'dev', dev, 'root']);
    await execIn(ns, 'tc', ['qdisc', 'del', 'dev', iface, 'ingress']);
    const old = readFileSync(new URL('../fixtures/tc/previous-release-tree.batch', import.meta.url), 'utf8').replaceAll('{ifb}', ifb).replaceAll('{wg}', iface);
    await execIn(ns, 'tc', ['-batch', '-'], { input: old });
    assert.match((await execIn(ns, 'tc', ['class', 'show', 'dev', iface])).stdout, /^class htb 1:2 root .*rate 8Mbit/m, 'the old layout is in place');

    await panel.restart();
    await waitBooted(panel);
    for (const dev of [iface, ifb]) assert.deepEqual(await peerClasses(ns, dev), want[dev], `${dev} after the migration`);
    assert.doesNotMatch((await execIn(ns, 'tc', ['class', 'show', 'dev', iface])).stdout, /class htb 1:2 /, 'no class of the old layout left');
    assert.equal(await current(), fresh, 'the migrated tree is the one a fresh start builds');
    const view = await api.ok<string>('GET', '/account/a/traffic_control');
    assert.match(view, /class 100:2 rate 8Mbit ceil 8Mbit .*peer \S+ 10\.66\.0\.2 fd66::2;/);

    // Someone deletes both trees: a reload puts every class and filter back.
    for (const dev of [iface, ifb]) await execIn(ns, 'tc', ['qdisc', 'del', 'dev', dev, 'root']);
    assert.deepEqual(await peerClasses(ns, iface), new Map());
    await api.ok('PUT', '/system/reload');
    assert.equal(await current(), fresh, 'rebuilt after tc qdisc del');
    // A right state costs reads only: a second reload leaves the same tree (and counters).
    await api.ok('PUT', '/system/reload');
    assert.equal(await current(), fresh);
  } finally {
    await panel.cleanup();
    await destroyNamespace(ns);
  }
});
