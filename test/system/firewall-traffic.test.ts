// Firewall on real traffic: gateway, client (a veth standing in for the tunnel) and "internet" namespaces.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it, type TestContext } from 'node:test';
import { IptablesFirewall } from '../../panel/dataplane/firewall/linux/iptables-firewall.ts';
import type { FirewallConf, ServerFirewallSpec } from '../../panel/dataplane/firewall/firewall.ts';
import { ExecaRunner, type CommandRunner, type RunOptions } from '../../panel/dataplane/linux/runner.ts';
import { createNamespace, destroyAll, execIn, uniqueWgName } from '../helpers/netns.ts';
import { probe, startService, type Service } from '../helpers/net-probe.ts';
import { requireTools } from '../helpers/require-tools.ts';

const TOOLS = ['ip', 'iptables', 'iptables-save', 'iptables-restore', 'ip6tables-save', 'ip6tables-restore', 'ipset', 'conntrack', 'sysctl'];
const API_PORT = 8443;
const LISTEN_PORT = 51820;
const EXTERNAL_IP = '192.0.2.1';
const INET_IP = '192.0.2.100';
const CLIENT_IP = '10.77.0.2';
const CONF: FirewallConf = { internal_traffic: true, ip_forward: true, policy_input: 'ACCEPT', policy_forward: 'ACCEPT', policy_output: 'ACCEPT' };

/** Records every command (argv) it runs, then runs it. */
class RecordingRunner implements CommandRunner {
  readonly calls: string[][] = [];
  constructor(private readonly inner: CommandRunner) {}
  run(cmd: string, args: string[], opts?: RunOptions) {
    this.calls.push([cmd, ...args]);
    return this.inner.run(cmd, args, opts);
  }
}

describe('firewall on real traffic (namespaces gw, client, internet)', () => {
  let gw = '';
  let client = '';
  let inet = '';
  let tunnel = '';
  let external = '';
  let runner: RecordingRunner;
  let fw: IptablesFirewall;
  const services: Service[] = [];
  let ready = false;

  const spec = (over: Partial<ServerFirewallSpec> = {}): ServerFirewallSpec => ({
    name: tunnel,
    subnets: ['10.77.0.1/16'],
    listenPort: LISTEN_PORT,
    externalIp: EXTERNAL_IP,
    externalInterface: external,
    internalTraffic: true,
    peers: [{ mark: 7, address: CLIENT_IP, addressIpv6: null }],
    forwards: [],
    ...over,
  });

  const setUp = async (t: TestContext): Promise<boolean> => {
    if (!requireTools(t, TOOLS, { root: true })) return false;
    if (!ready) {
      gw = await createNamespace('vhfg');
      client = await createNamespace('vhfc');
      inet = await createNamespace('vhfi');
      tunnel = uniqueWgName();
      const id = randomInt(1e6);
      external = `vhe${id}`;
      // The tunnel stand-in: a veth named like a WireGuard interface on the gateway side.
      await execIn(gw, 'ip', ['link', 'add', tunnel, 'type', 'veth', 'peer', 'name', `vhc${id}`, 'netns', client]);
      await execIn(gw, 'ip', ['addr', 'add', '10.77.0.1/16', 'dev', tunnel]);
      await execIn(gw, 'ip', ['link', 'set', tunnel, 'up']);
      await execIn(client, 'ip', ['addr', 'add', `${CLIENT_IP}/16`, 'dev', `vhc${id}`]);
      await execIn(client, 'ip', ['link', 'set', `vhc${id}`, 'up']);
      await execIn(client, 'ip', ['route', 'add', 'default', 'via', '10.77.0.1']);
      await execIn(gw, 'ip', ['link', 'add', external, 'type', 'veth', 'peer', 'name', `vhi${id}`, 'netns', inet]);
      await execIn(gw, 'ip', ['addr', 'add', `${EXTERNAL_IP}/24`, 'dev', external]);
      await execIn(gw, 'ip', ['link', 'set', external, 'up']);
      await execIn(inet, 'ip', ['addr', 'add', `${INET_IP}/24`, 'dev', `vhi${id}`]);
      await execIn(inet, 'ip', ['link', 'set', `vhi${id}`, 'up']);
      // IPv6 on both links (nodad: usable at once).
      await execIn(gw, 'ip', ['-6', 'addr', 'add', 'fd00:77::1/64', 'dev', tunnel, 'nodad']);
      await execIn(client, 'ip', ['-6', 'addr', 'add', 'fd00:77::2/64', 'dev', `vhc${id}`, 'nodad']);
      await execIn(client, 'ip', ['-6', 'route', 'add', 'default', 'via', 'fd00:77::1']);
      await execIn(gw, 'ip', ['-6', 'addr', 'add', '2001:db8:77::1/64', 'dev', external, 'nodad']);
      await execIn(inet, 'ip', ['-6', 'addr', 'add', '2001:db8:77::100/64', 'dev', `vhi${id}`, 'nodad']);
      services.push(await startService(inet, 'tcp', '::', 82, 'inet6'));
      services.push(await startService(client, 'tcp', '0.0.0.0', 80, 'client'));
      services.push(await startService(client, 'udp', '0.0.0.0', 5353, 'cudp'));
      services.push(await startService(inet, 'tcp', '0.0.0.0', 81, 'inet'));
      services.push(await startService(gw, 'tcp', '0.0.0.0', API_PORT, 'api'));
      services.push(await startService(gw, 'tcp', '0.0.0.0', 2222, 'gw2222'));
      services.push(await startService(gw, 'udp', '0.0.0.0', LISTEN_PORT, 'wg'));
      runner = new RecordingRunner(new ExecaRunner({ netns: gw }));
      fw = new IptablesFirewall({ runner, apiPort: API_PORT });
      ready = true;
    }
    await fw.resetAll();
    await fw.ensureGlobal(CONF, []);
    return true;
  };

  before(() => undefined);
  after(async () => {
    for (const s of services) s.stop();
    await destroyAll();
  });

  it('a TCP service on the client is reached from the internet through external_ip:dst_port, and not after the forward is removed', async (t) => {
    if (!(await setUp(t))) return;
    assert.match(await probe(inet, 'tcp', EXTERNAL_IP, 8080), /^FAIL/, 'nothing forwarded yet');
    await fw.ensureServer(spec({ forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: CLIENT_IP, to_port: 80 }] }));
    assert.equal(await probe(inet, 'tcp', EXTERNAL_IP, 8080), `client ${INET_IP}`, 'DNAT keeps the caller\'s address');
    // Hairpin: the host itself reaching external_ip:dst_port (masqueraded to the tunnel address).
    assert.equal(await probe(gw, 'tcp', EXTERNAL_IP, 8080), 'client 10.77.0.1');
    // Hairpin: a peer reaching its own forward through external_ip:dst_port (masqueraded too: a packet from its
    // own address would be dropped as a martian).
    assert.equal(await probe(client, 'tcp', EXTERNAL_IP, 8080), 'client 10.77.0.1');
    assert.match(await fw.natRules(tunnel), /\[[1-9]\d*:\d+\] -A VPNHOST-PRE-wg\d+ -d 192\.0\.2\.1\/32 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10\.77\.0\.2:80/);
    await fw.setForwards(tunnel, []);
    assert.match(await probe(inet, 'tcp', EXTERNAL_IP, 8080), /^FAIL/, 'forward removed');
  });

  it('removing a UDP forward cuts its running flow at once (the flow\'s conntrack entry goes with it)', async (t) => {
    if (!(await setUp(t))) return;
    await fw.ensureServer(spec({ forwards: [{ dst_port: 5300, protocol: 'udp', to_ip: CLIENT_IP, to_port: 5353 }] }));
    assert.equal(await probe(inet, 'udp', EXTERNAL_IP, 5300, 1500, 40000), `cudp ${INET_IP}`);
    assert.equal(await probe(inet, 'udp', EXTERNAL_IP, 5300, 1500, 40000), `cudp ${INET_IP}`, 'the same flow again');
    const before = fw.stats().conntrackDeletes;
    await fw.setForwards(tunnel, []);
    assert.equal(fw.stats().conntrackDeletes, before + 1);
    assert.match(await probe(inet, 'udp', EXTERNAL_IP, 5300, 1500, 40000), /^FAIL timeout/, 'the flow does not outlive the forward');
  });

  it('peer traffic leaves source-NATed to external_ip and carries the peer mark', async (t) => {
    if (!(await setUp(t))) return;
    await fw.ensureServer(spec());
    await execIn(gw, 'iptables', ['-t', 'mangle', '-A', 'POSTROUTING', '-m', 'mark', '--mark', '0x1000007', '-m', 'comment', '--comment', 'test-count']);
    try {
      assert.equal(await probe(client, 'tcp', INET_IP, 81), `inet ${EXTERNAL_IP}`);
      const saved = (await execIn(gw, 'iptables-save', ['-c', '-t', 'mangle'])).stdout;
      assert.match(saved, /\[[1-9]\d*:\d+\] -A POSTROUTING -m mark --mark 0x1000007 -m comment --comment test-count/);
      assert.match(await fw.mangleRules(tunnel, 7), /^add vpnhost-wg\d+-4 10\.77\.0\.2 packets [1-9]\d* bytes \d+ skbmark 0x7\/0xffffff$/m);
    } finally {
      await execIn(gw, 'iptables', ['-t', 'mangle', '-D', 'POSTROUTING', '-m', 'mark', '--mark', '0x1000007', '-m', 'comment', '--comment', 'test-count']);
    }
  });

  it('IPv6: peer traffic leaves masqueraded through ip6tables and carries the peer mark from the inet6 set', async (t) => {
    if (!(await setUp(t))) return;
    await fw.ensureServer(spec({ subnets: ['10.77.0.1/16', 'fd00:77::1/64'], peers: [{ mark: 7, address: CLIENT_IP, addressIpv6: 'fd00:77::2' }] }));
    const count = ['-t', 'mangle', '-A', 'POSTROUTING', '-m', 'mark', '--mark', '0x1000007', '-m', 'comment', '--comment', 'test-count6'];
    await execIn(gw, 'ip6tables', count);
    try {
      assert.equal(await probe(client, 'tcp', '2001:db8:77::100', 82), 'inet6 2001:db8:77::1');
      assert.match((await execIn(gw, 'ip6tables-save', ['-c', '-t', 'mangle'])).stdout, /\[[1-9]\d*:\d+\] -A POSTROUTING -m mark --mark 0x1000007 -m comment --comment test-count6/);
      assert.match(await fw.mangleRules(tunnel, 7), /^add vpnhost-wg\d+-6 fd00:77::2 packets [1-9]\d* bytes \d+ skbmark 0x7\/0xffffff$/m);
      assert.match(await fw.natRules(tunnel), /# ip6tables -t nat\n(.*\n)*\[[1-9]\d*:\d+\] -A VPNHOST-POST-wg\d+ -s fd00:77::\/64 -o vhe\d+ -m mark/);
    } finally {
      await execIn(gw, 'ip6tables', count.map((a) => (a === '-A' ? '-D' : a)));
    }
  });

  it('a DROP filter rule blocks a probe from the client; deleting it restores access', async (t) => {
    if (!(await setUp(t))) return;
    await fw.ensureServer(spec());
    assert.equal(await probe(client, 'tcp', '10.77.0.1', 2222), `gw2222 ${CLIENT_IP}`);
    await fw.addFilterRule({ name: 'blockssh', action: 'DROP', chain: 'INPUT', protocol: 'TCP', s_ip: '10.77.0.0/16', d_ip: '', s_port: '', d_port: '2222' }, 'top');
    assert.match(await probe(client, 'tcp', '10.77.0.1', 2222), /^FAIL timeout/);
    await fw.deleteFilterRule('blockssh');
    assert.equal(await probe(client, 'tcp', '10.77.0.1', 2222), `gw2222 ${CLIENT_IP}`);
  });

  it('policy_input=DROP keeps the API port and the WireGuard port reachable, and loopback working', async (t) => {
    if (!(await setUp(t))) return;
    await fw.ensureServer(spec());
    await fw.ensureGlobal({ ...CONF, policy_input: 'DROP', policy_output: 'DROP' }, [
      { name: 'dropall', action: 'DROP', chain: 'INPUT', protocol: 'ANY', s_ip: '', d_ip: '', s_port: '', d_port: '' },
    ]);
    try {
      assert.equal(await probe(client, 'tcp', '10.77.0.1', API_PORT), `api ${CLIENT_IP}`);
      assert.equal(await probe(inet, 'tcp', EXTERNAL_IP, API_PORT), `api ${INET_IP}`);
      assert.equal(await probe(client, 'udp', '10.77.0.1', LISTEN_PORT), `wg ${CLIENT_IP}`);
      assert.equal(await probe(gw, 'tcp', '127.0.0.1', API_PORT), 'api 127.0.0.1');
      assert.match(await probe(client, 'tcp', '10.77.0.1', 2222), /^FAIL timeout/, 'anything else is dropped');
    } finally {
      await fw.ensureGlobal(CONF, []);
    }
  });

  it('host-originated traffic is never source-NATed, whatever the subnet (127.0.0.0/8, the external network)', async (t) => {
    if (!(await setUp(t))) return;
    await fw.ensureServer(spec({ name: 'wg991', subnets: ['127.0.0.1/8'], externalIp: '192.0.2.30', externalInterface: null, peers: [] }));
    await fw.ensureServer(spec({ name: 'wg992', subnets: ['192.0.2.1/24'], externalIp: '192.0.2.99', externalInterface: null, peers: [] }));
    await fw.ensureServer(spec());
    for (let i = 0; i < 3; i++) assert.equal(await probe(gw, 'tcp', '127.0.0.1', API_PORT), 'api 127.0.0.1');
    assert.equal(await probe(gw, 'tcp', INET_IP, 81), `inet ${EXTERNAL_IP}`, 'the host keeps its own source address');
    assert.match(await fw.natRules('wg991'), /\[0:0\] -A VPNHOST-POST-wg991 -s 127\.0\.0\.0\/8 /);
    assert.match(await fw.natRules('wg992'), /\[0:0\] -A VPNHOST-POST-wg992 -s 192\.0\.2\.0\/24 /);
  });

  it('resetAll leaves no panel chain, set or jump and keeps a foreign rule; traffic still flows', async (t) => {
    if (!(await setUp(t))) return;
    await execIn(gw, 'iptables', ['-A', 'INPUT', '-s', '203.0.113.9/32', '-j', 'ACCEPT']);
    await fw.ensureServer(spec({ forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: CLIENT_IP, to_port: 80 }] }));
    await fw.ensureGlobal({ ...CONF, policy_input: 'DROP' }, []);
    await fw.resetAll();
    for (const tool of ['iptables-save', 'ip6tables-save']) {
      const saved = (await execIn(gw, tool, [])).stdout;
      assert.ok(!/VPNHOST/.test(saved), saved);
      assert.ok(!/:INPUT DROP/.test(saved));
    }
    assert.match((await execIn(gw, 'iptables-save', [])).stdout, /-A INPUT -s 203\.0\.113\.9\/32 -j ACCEPT/);
    assert.equal((await execIn(gw, 'ipset', ['list', '-n'])).stdout.trim(), '');
    assert.equal(await probe(client, 'tcp', '10.77.0.1', API_PORT), `api ${CLIENT_IP}`);
    await execIn(gw, 'iptables', ['-D', 'INPUT', '-s', '203.0.113.9/32', '-j', 'ACCEPT']);
  });

  it('marks of 50,000 peers go in with one ipset restore, and the lookup is right on real packets', async (t) => {
    if (!(await setUp(t))) return;
    await fw.ensureServer(spec({ peers: [] }));
    const peers = Array.from({ length: 50_000 }, (_, k) => ({ mark: 1000 + k, address: `10.77.${(k + 2) >> 8}.${(k + 2) & 255}`, addressIpv6: null }));
    assert.equal(peers[0].address, CLIENT_IP);
    runner.calls.length = 0;
    const started = performance.now();
    await fw.applyPeers(tunnel, { upsert: peers, remove: [] });
    const applyMs = performance.now() - started;
    assert.deepEqual(runner.calls.map((c) => c.slice(0, 2).join(' ')), ['ipset restore'], 'one ipset restore, nothing else');
    const count = (await execIn(gw, 'ipset', ['list', '-t', `vpnhost-${tunnel}-4`])).stdout;
    assert.match(count, /Number of entries: 50000/);
    await execIn(gw, 'iptables', ['-t', 'mangle', '-A', 'POSTROUTING', '-m', 'mark', '--mark', `0x${(0x1000000 + 1000).toString(16)}`, '-m', 'comment', '--comment', 'test-mark-1000']);
    await execIn(gw, 'iptables', ['-t', 'mangle', '-A', 'POSTROUTING', '-m', 'mark', '--mark', `0x${(0x1000000 + 1001).toString(16)}`, '-m', 'comment', '--comment', 'test-mark-1001']);
    try {
      assert.equal(await probe(client, 'tcp', INET_IP, 81), `inet ${EXTERNAL_IP}`);
      const saved = (await execIn(gw, 'iptables-save', ['-c', '-t', 'mangle'])).stdout;
      assert.match(saved, /\[[1-9]\d*:\d+\] -A POSTROUTING -m mark --mark 0x10003e8 -m comment --comment test-mark-1000/);
      assert.match(saved, /\[0:0\] -A POSTROUTING -m mark --mark 0x10003e9 -m comment --comment test-mark-1001/);
      // A full reconcile of the 50,000 finds nothing to change.
      const stats = fw.stats();
      const t0 = performance.now();
      await fw.ensureServer(spec({ peers }));
      const ensureMs = performance.now() - t0;
      assert.deepEqual(fw.stats(), stats);
      t.diagnostic(`applyPeers(50,000 upserts): ${applyMs.toFixed(0)} ms; ensureServer reconcile of 50,000 (no change): ${ensureMs.toFixed(0)} ms`);
      // One more peer is one ipset line.
      runner.calls.length = 0;
      await fw.applyPeers(tunnel, { upsert: [{ mark: 99_999, address: '10.77.250.1', addressIpv6: null }], remove: [1001] });
      assert.deepEqual(runner.calls.map((c) => c.slice(0, 2).join(' ')), ['ipset restore']);
    } finally {
      for (const m of [1000, 1001]) {
        await execIn(gw, 'iptables', ['-t', 'mangle', '-D', 'POSTROUTING', '-m', 'mark', '--mark', `0x${(0x1000000 + m).toString(16)}`, '-m', 'comment', '--comment', `test-mark-${m}`]);
      }
    }
  });
});
