// Firewall contract: what every firewall implementation (simulated twin, linux) must show; run by each of them.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { E } from '../../shared/wire/error-texts.ts';
import type { FirewallBackend } from '../../panel/dataplane/firewall/firewall-backend.ts';
import { FIREWALL_TEXTS } from '../../panel/dataplane/firewall/firewall-texts.ts';
import type { FilterRule, Firewall, FirewallConf, ServerFirewallSpec } from '../../panel/dataplane/firewall/firewall.ts';

/** What an implementation hands the contract. */
export interface FirewallFixture {
  /** Built with API port 8443. */
  firewall: Firewall;
  /** The same host, raw: to add foreign rules and read what is really there. */
  raw: FirewallBackend;
  cleanup(): Promise<void>;
}

/** Options of {@link runFirewallContract}. */
export interface FirewallContractOptions {
  /** Checked by every test before the fixture is built; false skips (e.g. `requireTools`). */
  gate?(t: TestContext): boolean;
}

export const API_PORT = 8443;

export const CONF: FirewallConf = { internal_traffic: true, ip_forward: true, policy_input: 'ACCEPT', policy_forward: 'ACCEPT', policy_output: 'ACCEPT' };

export const server = (name: string, over: Partial<ServerFirewallSpec> = {}): ServerFirewallSpec => ({
  name,
  subnets: ['10.61.0.1/24'],
  listenPort: 51820,
  externalIp: '192.0.2.61',
  externalInterface: null,
  internalTraffic: true,
  peers: [
    { mark: 11, address: '10.61.0.2', addressIpv6: null },
    { mark: 12, address: '10.61.0.3', addressIpv6: null },
  ],
  forwards: [],
  ...over,
});

export const rule = (name: string, over: Partial<FilterRule> = {}): FilterRule => ({
  name,
  action: 'DROP',
  chain: 'INPUT',
  protocol: 'TCP',
  s_ip: '',
  d_ip: '',
  s_port: '',
  d_port: '2222',
  ...over,
});

/** Runs the contract against the firewall `setup` builds (one fixture for the suite, reset before each test). */
export function runFirewallContract(label: string, setup: () => Promise<FirewallFixture>, opts: FirewallContractOptions = {}): void {
  describe(`Firewall contract: ${label}`, () => {
    let building: Promise<FirewallFixture> | null = null;
    let fx: FirewallFixture;
    let fw: Firewall;
    const ready = async (t: TestContext): Promise<boolean> => {
      if (opts.gate && !opts.gate(t)) return false;
      building ??= setup();
      fx = await building;
      fw = fx.firewall;
      await fw.resetAll();
      return true;
    };
    after(async () => {
      if (building) await (await building).cleanup();
    });
    const refused = async (fn: () => Promise<unknown>, text: string) => {
      const before = await fw.dump();
      const stats = fw.stats();
      await assert.rejects(fn, (err: Error & { text?: string }) => err.name === 'FirewallError' && err.text === text);
      assert.equal(await fw.dump(), before, `a refused call (${text}) changed nothing`);
      assert.deepEqual(fw.stats(), stats);
    };

    it('ensureServer creates chains and sets; a second ensure of the same state writes nothing', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureGlobal(CONF, []);
      const spec = server('wg61', { forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.61.0.2', to_port: 80 }] });
      await fw.ensureServer(spec);
      const dump = await fw.dump();
      const stats = fw.stats();
      await fw.ensureServer(spec);
      await fw.ensureGlobal(CONF, []);
      assert.deepEqual(fw.stats(), stats, 'no write when live equals wanted');
      assert.equal(await fw.dump(), dump);
      assert.deepEqual(await fw.listServers(), ['wg61']);
      assert.match(dump, /add vpnhost-wg61-4 10\.61\.0\.2 mark 11/);
    });

    it('an IKEv2 device: the subnet dispatched on it into the same chains; written once, then nothing; gone when unset', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureGlobal(CONF, []);
      const spec = server('wg61', { ipsecDevice: 'ipsec0', forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.61.0.2', to_port: 80 }] });
      await fw.ensureServer(spec);
      const dump = await fw.dump();
      for (const line of [
        '*mangle -A VPNHOST-MARK -s 10.61.0.0/24 -i ipsec0 -j VPNHOST-MARK-wg61',
        '*nat -A VPNHOST-POST-wg61 -s 10.61.0.0/24 -o ipsec0 -m conntrack ! --ctstate DNAT -j RETURN',
        '*nat -A VPNHOST-POST-wg61 -o ipsec0 -m addrtype --src-type LOCAL -m conntrack --ctstate DNAT -j SNAT --to-source 10.61.0.1',
        '*filter -A VPNHOST-FWD -s 10.61.0.0/24 -i ipsec0 -j VPNHOST-FWD-wg61',
        '*filter -A VPNHOST-FWD-wg61 -d 10.61.0.2/32 -o ipsec0 -p tcp -m tcp --dport 80 -m conntrack --ctstate DNAT -j ACCEPT',
      ]) assert.ok(dump.includes(line), `${line}\n${dump}`);
      const stats = fw.stats();
      await fw.ensureServer(spec);
      assert.deepEqual(fw.stats(), stats, 'the kernel prints the TUN lines as rendered: no write');
      await fw.ensureServer(server('wg61', { ipsecDevice: null }), { rulesOnly: true });
      assert.ok(!(await fw.dump()).includes('ipsec0'));
    });

    it('ensureServer rulesOnly keeps the held peers and touches no set; a new family makes it a full reconcile', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureServer(server('wg61'));
      const before = fw.stats();
      await fw.ensureServer(server('wg61', { externalIp: '192.0.2.62', peers: [] }), { rulesOnly: true });
      assert.equal(fw.stats().ipsetRestores, before.ipsetRestores);
      const dump = await fw.dump();
      assert.match(dump, /10\.61\.0\.2 mark 11/);
      assert.match(dump, /--to-source 192\.0\.2\.62/);
      await fw.setForwards('wg61', [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.61.0.3', to_port: 80 }]);
      await fw.ensureServer(server('wg61', { subnets: ['10.61.0.1/24', 'fd00:61::1/64'], peers: [{ mark: 11, address: '10.61.0.2', addressIpv6: 'fd00:61::2' }] }), { rulesOnly: true });
      const full = await fw.dump();
      assert.match(full, /add vpnhost-wg61-6 fd00:61::2 mark 11/);
      assert.ok(!full.includes('mark 12'), 'a full reconcile takes the given peers');
    });

    it('text views: NAT, forward filter and one peer\'s marks with counters, limited to that server and peer', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureServer(server('wg61', { forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.61.0.2', to_port: 80 }] }));
      await fw.ensureServer(server('wg62', { subnets: ['10.62.0.1/24'], listenPort: 51821, peers: [{ mark: 21, address: '10.62.0.2', addressIpv6: null }] }));
      const nat = await fw.natRules('wg61');
      assert.ok(nat.includes('[0:0] -A VPNHOST-PRE-wg61 -d 192.0.2.61/32 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10.61.0.2:80'), nat);
      assert.match(nat, /\[\d+:\d+\] -A VPNHOST-POST-wg61 -s 10\.61\.0\.0\/24 ! -o wg61 -m mark --mark 0x1000000\/0x1000000 -j SNAT --to-source 192\.0\.2\.61/);
      assert.ok(!nat.includes('wg62'));
      const filter = await fw.filterRules('wg61');
      assert.match(filter, /-A VPNHOST-FWD-wg61 -d 10\.61\.0\.2\/32 -o wg61 -p tcp -m tcp --dport 80 -m conntrack --ctstate DNAT -j ACCEPT/);
      assert.ok(!filter.includes('wg62'));
      const mangle = await fw.mangleRules('wg61', 11);
      assert.match(mangle, /-A VPNHOST-MARK-wg61 -j SET --map-set vpnhost-wg61-4 src --map-mark/);
      assert.match(mangle, /^add vpnhost-wg61-4 10\.61\.0\.2 packets \d+ bytes \d+ skbmark 0xb\/0xffffff$/m);
      assert.ok(!mangle.includes('10.61.0.3'), 'only the asked peer');
      await assert.rejects(fw.natRules('wg69'), { text: E.WIREGUARD_SERVER_NOT_FOUND });
    });

    it('structured listings: NAT rules of every server and every peer mark', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureServer(server('wg61', { subnets: ['10.61.0.1/24', 'fd00:61::1/64'], peers: [{ mark: 11, address: '10.61.0.2', addressIpv6: 'fd00:61::2' }], forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.61.0.2', to_port: 80 }] }));
      await fw.ensureServer(server('wg62', { subnets: ['10.62.0.1/24'], externalIp: null, listenPort: 51821, peers: [{ mark: 21, address: '10.62.0.2', addressIpv6: null }] }));
      const nat = await fw.natList();
      const pick = (n: (typeof nat)[number]) => [n.name, n.action, n.chain, n.s_ip, n.d_ip, n['to-source'], n['to-destination'], n.family];
      assert.deepEqual(nat.map(pick).sort(), [
        ['wg61', 'DNAT', 'PREROUTING', '', '192.0.2.61/32', '', '10.61.0.2:80 (8080/tcp)', 4],
        ['wg61', 'MASQUERADE', 'POSTROUTING', '', '', '', '', 4],
        ['wg61', 'MASQUERADE', 'POSTROUTING', '10.61.0.0/24', '', '', '', 4],
        ['wg61', 'MASQUERADE', 'POSTROUTING', 'fd00:61::/64', '', '', '', 6],
        ['wg61', 'SNAT', 'POSTROUTING', '10.61.0.0/24', '', '192.0.2.61', '', 4],
        ['wg62', 'MASQUERADE', 'POSTROUTING', '10.62.0.0/24', '', '', '', 4],
      ].sort());
      const marks = await fw.mangleList();
      assert.deepEqual(marks.map((m) => [m.server, m.name, m.s_ip, m['set-mark'], m.action, m.chain]), [
        ['wg61', '11', '10.61.0.2', '0xb/0xffffff', 'MARK', 'PREROUTING'],
        ['wg61', '11', 'fd00:61::2', '0xb/0xffffff', 'MARK', 'PREROUTING'],
        ['wg62', '21', '10.62.0.2', '0x15/0xffffff', 'MARK', 'PREROUTING'],
      ]);
    });

    it('applyPeers is one ipset restore per batch and no rule write; an address change moves the entry', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureServer(server('wg61'));
      const before = fw.stats();
      await fw.applyPeers('wg61', {
        upsert: [{ mark: 13, address: '10.61.0.4', addressIpv6: null }, { mark: 11, address: '10.61.0.9/32', addressIpv6: null }],
        remove: [12],
      });
      assert.deepEqual(fw.stats(), { ...before, ipsetRestores: before.ipsetRestores + 1 });
      const dump = await fw.dump();
      assert.match(dump, /add vpnhost-wg61-4 10\.61\.0\.9 mark 11/);
      assert.match(dump, /add vpnhost-wg61-4 10\.61\.0\.4 mark 13/);
      assert.ok(!dump.includes('10.61.0.2 mark') && !dump.includes('10.61.0.3 mark'));
      await assert.rejects(fw.applyPeers('wg68', { upsert: [], remove: [] }), { text: E.WIREGUARD_SERVER_NOT_FOUND });
    });

    it('applyPeers batches: swapping addresses, reusing a removed peer\'s address, refusing a held one', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureServer(server('wg61'));
      await fw.applyPeers('wg61', {
        upsert: [{ mark: 11, address: '10.61.0.3', addressIpv6: null }, { mark: 12, address: '10.61.0.2', addressIpv6: null }],
        remove: [],
      });
      let dump = await fw.dump();
      assert.match(dump, /10\.61\.0\.3 mark 11/);
      assert.match(dump, /10\.61\.0\.2 mark 12/);
      await fw.applyPeers('wg61', { upsert: [{ mark: 13, address: '10.61.0.2', addressIpv6: null }], remove: [12] });
      dump = await fw.dump();
      assert.match(dump, /10\.61\.0\.2 mark 13/);
      assert.ok(!dump.includes('mark 12'));
      await refused(() => fw.applyPeers('wg61', { upsert: [{ mark: 14, address: '10.61.0.3', addressIpv6: null }], remove: [] }), E.IP_IN_USE);
      await refused(
        () => fw.applyPeers('wg61', { upsert: [{ mark: 14, address: '10.61.0.8', addressIpv6: null }, { mark: 15, address: '10.61.0.8', addressIpv6: null }], remove: [] }),
        E.IP_IN_USE,
      );
    });

    it('removing a peer removes its port forwards', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureServer(server('wg61', { forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.61.0.2', to_port: 80 }, { dst_port: 8081, protocol: 'udp', to_ip: '10.61.0.3', to_port: 81 }] }));
      const forgotten = fw.stats().conntrackDeletes;
      await fw.applyPeers('wg61', { upsert: [], remove: [11] });
      assert.equal(fw.stats().conntrackDeletes, forgotten + 1, 'the removed forward\'s connections are forgotten');
      const nat = await fw.natRules('wg61');
      assert.ok(!nat.includes('10.61.0.2:80'));
      assert.ok(nat.includes('10.61.0.3:81'));
    });

    it('port forward checks answer the spec\'s texts and change nothing', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureServer(server('wg61', { forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.61.0.2', to_port: 80 }] }));
      await fw.ensureServer(server('wg62', { subnets: ['10.62.0.1/24'], listenPort: 51821, peers: [{ mark: 21, address: '10.62.0.2', addressIpv6: null }] }));
      const set = (f: Record<string, unknown>) => fw.setForwards('wg62', [{ dst_port: 9000, protocol: 'tcp', to_ip: '10.62.0.2', to_port: 90, ...f } as never]);
      await refused(() => set({ protocol: 'icmp' }), E.PF_PROTOCOL);
      await refused(() => set({ dst_port: 0 }), E.PF_DST_PORT_RANGE);
      await refused(() => set({ dst_port: 65536 }), E.PF_DST_PORT_RANGE);
      await refused(() => set({ dst_port: 8080 }), E.PF_ALREADY_ENABLED);
      await refused(() => set({ dst_port: 51820, protocol: 'udp' }), E.PF_DST_IS_LISTEN_PORT);
      await refused(() => set({ dst_port: API_PORT }), FIREWALL_TEXTS.DST_IS_API_PORT);
      await refused(() => set({ to_port: 0 }), E.PF_TO_PORT_RANGE);
      await refused(() => set({ to_port: 65536 }), E.PF_TO_PORT_RANGE);
      await refused(() => set({ to_ip: '10.62.0.77' }), E.PF_INCORRECT_PEER);
      await refused(() => set({ to_ip: '10.61.0.2' }), E.PF_INCORRECT_PEER);
      await refused(() => fw.setForwards('wg62', [{ dst_port: 9000, protocol: 'tcp', to_ip: '10.62.0.2', to_port: 90 }, { dst_port: 9000, protocol: 'tcp', to_ip: '10.62.0.2', to_port: 91 }]), E.PF_ALREADY_ENABLED);
      await set({ dst_port: 8080, protocol: 'udp', to_port: 1 });
      await set({ dst_port: 65535, to_port: 65535 });
      assert.match(await fw.natRules('wg62'), /--dport 65535 -j DNAT --to-destination 10\.62\.0\.2:65535/);
    });

    it('server and peer checks: interface name, marks unique on the host, addresses unique', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureServer(server('wg61'));
      await refused(() => fw.ensureServer(server('eth0')), E.WRONG_INTERFACE_NAME);
      await refused(() => fw.ensureServer(server('wg62', { subnets: ['10.62.0.1/33'] })), FIREWALL_TEXTS.WRONG_SUBNET);
      await refused(() => fw.ensureServer(server('wg62', { externalIp: '192.0.2.300' })), E.WRONG_EXTERNAL_IP);
      await refused(() => fw.ensureServer(server('wg62', { subnets: ['10.62.0.1/24'], peers: [{ mark: 11, address: '10.62.0.2', addressIpv6: null }] })), FIREWALL_TEXTS.MARK_IN_USE);
      await refused(() => fw.applyPeers('wg61', { upsert: [{ mark: 0, address: '10.61.0.5', addressIpv6: null }], remove: [] }), FIREWALL_TEXTS.WRONG_MARK);
      await refused(() => fw.applyPeers('wg61', { upsert: [{ mark: 0x1000000, address: '10.61.0.5', addressIpv6: null }], remove: [] }), FIREWALL_TEXTS.WRONG_MARK);
      await refused(() => fw.applyPeers('wg61', { upsert: [{ mark: 14, address: '10.61.0.2', addressIpv6: null }], remove: [] }), E.IP_IN_USE);
      await refused(() => fw.applyPeers('wg61', { upsert: [{ mark: 14, address: '10.61.0.0/24', addressIpv6: null }], remove: [] }), E.WRONG_IP);
      await fw.applyPeers('wg61', { upsert: [{ mark: 0xffffff, address: '10.61.0.5', addressIpv6: null }], remove: [] });
      assert.match(await fw.dump(), /10\.61\.0\.5 mark 16777215/);
    });

    it('filter rules: top after system_CONTROLPANEL, end last, delete; every check with its text', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureGlobal(CONF, [rule('first')]);
      await fw.addFilterRule(rule('top1', { protocol: 'UDP', s_ip: '198.51.100.0/24' }), 'top');
      await fw.addFilterRule(rule('end1', { protocol: 'ANY', d_port: '' }), 'end');
      const names = (await fw.dump()).split('\n').filter((l) => l.startsWith('*filter -A VPNHOST-IN ') && !l.includes('ip6')).map((l) => /vpnhost:rule:(\w+)/.exec(l)?.[1]);
      assert.deepEqual(names.slice(0, 4), ['system_CONTROLPANEL', 'top1', 'first', 'end1']);
      await refused(() => fw.addFilterRule(rule('first'), 'end'), E.FW_RULE_EXISTS);
      await refused(() => fw.addFilterRule(rule('system_CONTROLPANEL'), 'top'), E.FW_RULE_EXISTS);
      await refused(() => fw.addFilterRule(rule('bad-name'), 'top'), E.FW_RULE_NAME);
      await refused(() => fw.addFilterRule(rule('x2', { chain: 'OUTPUT' as never }), 'top'), E.FW_CHAIN);
      await refused(() => fw.addFilterRule(rule('x2', { d_ip: '10.0.0.1' }), 'top'), E.FW_DST_CIDR);
      await refused(() => fw.addFilterRule(rule('x2', { s_ip: '10.0.0.1/40' }), 'top'), E.FW_SRC_CIDR);
      await refused(() => fw.addFilterRule(rule('x2', { action: 'REJECT' as never }), 'top'), FIREWALL_TEXTS.WRONG_ACTION);
      await refused(() => fw.addFilterRule(rule('x2', { protocol: 'SCTP' as never }), 'top'), FIREWALL_TEXTS.WRONG_PROTOCOL);
      await refused(() => fw.addFilterRule(rule('x2', { d_port: '65536' }), 'top'), FIREWALL_TEXTS.WRONG_RULE_PORT);
      await refused(() => fw.addFilterRule(rule('x2', { s_ip: '10.0.0.0/8', d_ip: 'fd00::/8' }), 'top'), FIREWALL_TEXTS.MIXED_FAMILIES);
      await refused(() => fw.deleteFilterRule('system_CONTROLPANEL'), E.FW_RULE_BUILTIN);
      await refused(() => fw.deleteFilterRule('nope'), E.FW_RULE_NOT_FOUND);
      await fw.deleteFilterRule('top1');
      assert.ok(!(await fw.dump()).includes('vpnhost:rule:top1'));
      await refused(() => fw.ensureGlobal({ ...CONF, policy_input: 'REJECT' as never }, []), E.FW_POLICY_INPUT);
      await refused(() => fw.ensureGlobal({ ...CONF, policy_forward: 'accept' as never }, []), E.FW_POLICY_FORWARD);
      await refused(() => fw.ensureGlobal({ ...CONF, policy_output: '' as never }, []), E.FW_POLICY_OUTPUT);
      await refused(() => fw.ensureGlobal(CONF, [rule('dup'), rule('dup')]), E.FW_RULE_EXISTS);
    });

    it('system_CONTROLPANEL follows the servers\' listen ports and the INPUT policy', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureGlobal({ ...CONF, policy_input: 'DROP' }, []);
      await fw.ensureServer(server('wg61', { listenPort: 51830 }));
      let dump = await fw.dump();
      assert.match(dump, /:INPUT DROP/);
      for (const line of ['-i lo', '-m conntrack --ctstate RELATED,ESTABLISHED', `-p tcp -m tcp --dport ${API_PORT}`, '-p udp -m udp --dport 51830']) {
        assert.ok(dump.includes(`*filter -A VPNHOST-IN-SYS ${line}`), line);
      }
      await fw.ensureServer(server('wg61', { listenPort: 51831 }));
      dump = await fw.dump();
      assert.ok(dump.includes('--dport 51831') && !dump.includes('--dport 51830'));
      await fw.ensureGlobal(CONF, []);
      assert.ok(!(await fw.dump()).includes('VPNHOST-IN-SYS -i lo'));
    });

    it('global internal_traffic off drops tunnel-to-tunnel traffic on every server; per-server off on its own', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureGlobal(CONF, []);
      await fw.ensureServer(server('wg61', { internalTraffic: false }));
      assert.match(await fw.filterRules('wg61'), /-A VPNHOST-FWD-wg61 -i wg61 -o wg61 -m conntrack ! --ctstate DNAT -j DROP/);
      await fw.ensureGlobal({ ...CONF, internal_traffic: false }, []);
      assert.match(await fw.filterRules('wg61'), /-A VPNHOST-FWD-wg61 -o wg61 -m mark --mark 0x1000000\/0x1000000 -m conntrack ! --ctstate DNAT -j DROP/);
      const stats = fw.stats();
      await fw.ensureServer(server('wg61', { internalTraffic: false }));
      assert.deepEqual(fw.stats(), stats, 'the global setting survives a server ensure');
    });

    it('IPv6: a server with an IPv6 subnet gets ip6tables chains and an inet6 set', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureServer(server('wg61', { subnets: ['10.61.0.1/24', 'fd00:61::1/64'], peers: [{ mark: 11, address: '10.61.0.2', addressIpv6: 'fd00:61:0::2/128' }] }));
      const mangle = await fw.mangleRules('wg61', 11);
      assert.match(mangle, /^add vpnhost-wg61-6 fd00:61::2 packets \d+ bytes \d+ skbmark 0xb\/0xffffff$/m);
      assert.match(await fw.natRules('wg61'), /# ip6tables -t nat\n.*\n\[\d+:\d+\] -A VPNHOST-POST-wg61 -s fd00:61::\/64 ! -o wg61 -m mark --mark 0x1000000\/0x1000000 -j MASQUERADE/);
      await fw.ensureServer(server('wg61'));
      const dump = await fw.dump();
      assert.ok(!dump.includes('vpnhost-wg61-6') && !dump.includes('fd00:61'), 'dropping IPv6 removes its chains and set');
    });

    it('removeServer removes only that server; resetAll removes everything owned and keeps foreign rules and sets', async (t) => {
      if (!(await ready(t))) return;
      await fx.raw.restore(4, '*filter\n:FOREIGN - [0:0]\n-A FOREIGN -s 203.0.113.9/32 -j ACCEPT\n-A INPUT -j FOREIGN\nCOMMIT\n');
      await fx.raw.ipsetRestore(['create foreign-set hash:ip family inet hashsize 1024 maxelem 65536']);
      try {
        await fw.ensureGlobal({ ...CONF, policy_input: 'DROP' }, [rule('r1')]);
        await fw.ensureServer(server('wg61'));
        await fw.ensureServer(server('wg62', { subnets: ['10.62.0.1/24'], listenPort: 51821, peers: [{ mark: 21, address: '10.62.0.2', addressIpv6: null }] }));
        await fw.removeServer('wg61');
        await fw.removeServer('wg61');
        const dump = await fw.dump();
        assert.ok(!dump.includes('wg61'), dump);
        assert.ok(dump.includes('VPNHOST-FWD-wg62') && dump.includes('vpnhost-wg62-4'));
        assert.deepEqual(await fw.listServers(), ['wg62']);
        await fw.resetAll();
        for (const family of [4, 6] as const) {
          const saved = await fx.raw.save(family);
          assert.ok(!saved.includes('VPNHOST'), saved);
          assert.ok(!/:(INPUT|FORWARD|OUTPUT) DROP/.test(saved), 'policies back to ACCEPT');
        }
        assert.ok((await fx.raw.save(4)).includes('-A FOREIGN -s 203.0.113.9/32 -j ACCEPT'));
        assert.ok((await fx.raw.save(4)).includes('-A INPUT -j FOREIGN'));
        const sets = await fx.raw.ipsetNames();
        assert.deepEqual(sets.filter((s) => s.startsWith('vpnhost-')), []);
        assert.ok(sets.includes('foreign-set'));
        assert.deepEqual(await fw.listServers(), []);
      } finally {
        await fx.raw.restore(4, '*filter\n-D INPUT -j FOREIGN\n-F FOREIGN\n-X FOREIGN\nCOMMIT\n').catch(() => undefined);
        await fx.raw.ipsetRestore(['destroy foreign-set']).catch(() => undefined);
      }
    });

    it('ensureServer repairs drift: a deleted rule, a missing hook jump, a duplicate jump, a lost set entry', async (t) => {
      if (!(await ready(t))) return;
      const spec = server('wg61', { forwards: [{ dst_port: 8080, protocol: 'tcp', to_ip: '10.61.0.2', to_port: 80 }] });
      await fw.ensureServer(spec);
      const right = await fw.dump();
      await fx.raw.restore(4, '*nat\n-D VPNHOST-PRE-wg61 -d 192.0.2.61/32 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10.61.0.2:80\n-D POSTROUTING -j VPNHOST-POST\nCOMMIT\n*filter\n-I FORWARD 1 -j VPNHOST-FWD\nCOMMIT\n');
      await fx.raw.ipsetRestore(['del vpnhost-wg61-4 10.61.0.3', 'add vpnhost-wg61-4 10.61.0.99 skbmark 0x63/0xffffff']);
      assert.notEqual(await fw.dump(), right);
      await fw.ensureServer(spec);
      assert.equal(await fw.dump(), right);
    });

    it('info answers the iptables version and ip_forward; ensureGlobal sets ip_forward', async (t) => {
      if (!(await ready(t))) return;
      await fw.ensureGlobal({ ...CONF, ip_forward: false }, []);
      assert.equal((await fw.info()).ip_forward, '0');
      await fw.ensureGlobal(CONF, []);
      const info = await fw.info();
      assert.equal(info.ip_forward, '1');
      assert.match(info.iptables, /^iptables v\d/);
      assert.match(info.iproute2, /iproute2/);
    });
  });
}
