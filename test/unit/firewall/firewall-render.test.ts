// Fixture tests of the firewall renderers and parsers against real iptables-save -c / ipset save output.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { FWD_CHAIN, MARK_CHAIN, POST_CHAIN, markSetName, ownerOfChain, ownerOfLine } from '../../../panel/dataplane/render/firewall-chains.ts';
import { listMarks, listNat } from '../../../panel/dataplane/render/firewall-listing.ts';
import { parseIpsetSave, renderSetAdd, renderSetCreate, renderSetSync, setCreateFits } from '../../../panel/dataplane/render/firewall-ipset.ts';
import { emptyPlan, renderFirewallRestore } from '../../../panel/dataplane/render/firewall-restore.ts';
import {
  mergeTopChain,
  packetMark,
  renderFilterRule,
  renderInput,
  renderOutput,
  renderServerChains,
  renderServerDispatch,
  renderSystemInput,
  ruleNameOf,
  type GlobalRuleInput,
  type ServerRuleInput,
} from '../../../panel/dataplane/render/firewall-rules.ts';
import { chainRules, formatCounted, parseIptablesSaveCounters } from '../../../panel/dataplane/render/parse-iptables-save-counters.ts';
import type { FilterRule } from '../../../panel/dataplane/firewall/firewall.ts';
import { WG7 } from './wg7-fixture.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/iptables/${name}`, import.meta.url), 'utf8');
const SAVE_V4 = fixture('firewall-save-v4.txt');
const SAVE_V6 = fixture('firewall-save-v6.txt');
const IPSET = fixture('firewall-ipset-save.txt');

/** The server the fixtures were saved from (test/fixtures/iptables/README.md). */
const wg7: ServerRuleInput = WG7;
const globals: GlobalRuleInput = {
  apiPort: 8443,
  listenPorts: [51820],
  policyInput: 'DROP',
  policyOutput: 'ACCEPT',
  rules: [{ name: 'r1', action: 'DROP', chain: 'INPUT', protocol: 'TCP', s_ip: '10.9.0.0/16', d_ip: '', s_port: '', d_port: '22' }],
};

describe('parseIptablesSaveCounters', () => {
  const v4 = parseIptablesSaveCounters(SAVE_V4);
  it('reads chains with policies, rules in order with counters, foreign rules included', () => {
    assert.equal(v4.get('filter')?.get('INPUT')?.policy, 'DROP');
    assert.equal(v4.get('filter')?.get('VPNHOST-IN')?.policy, '-');
    assert.deepEqual(chainRules(v4, 'filter', 'INPUT'), ['-A INPUT -j VPNHOST-IN', '-A INPUT -s 203.0.113.9/32 -j ACCEPT']);
    const first = v4.get('filter')?.get('VPNHOST-IN-SYS')?.rules[0];
    assert.deepEqual(first, { rule: '-A VPNHOST-IN-SYS -i lo -m comment --comment "vpnhost:rule:system_CONTROLPANEL" -j ACCEPT', packets: 4, bytes: 336 });
    assert.equal(formatCounted(first!), '[4:336] -A VPNHOST-IN-SYS -i lo -m comment --comment "vpnhost:rule:system_CONTROLPANEL" -j ACCEPT');
    assert.equal(chainRules(v4, 'nat', 'NOPE'), null);
  });
  it('reads plain iptables-save (no counters) as zero counters', () => {
    const plain = parseIptablesSaveCounters('*nat\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -j MASQUERADE\nCOMMIT\n');
    assert.deepEqual(plain.get('nat')?.get('POSTROUTING')?.rules, [{ rule: '-A POSTROUTING -j MASQUERADE', packets: 0, bytes: 0 }]);
  });
});

describe('server rules', () => {
  it('render exactly what iptables-save prints (every rendered line is in the real dump)', () => {
    for (const [family, text] of [[4, SAVE_V4], [6, SAVE_V6]] as const) {
      const live = parseIptablesSaveCounters(text);
      for (const chain of renderServerChains(wg7, family)) {
        assert.deepEqual(chainRules(live, chain.table, chain.chain), chain.rules, `${family} ${chain.chain}`);
      }
      for (const d of renderServerDispatch(wg7, family)) {
        const live4 = chainRules(live, d.top.table, d.top.chain) ?? [];
        for (const line of d.lines) assert.ok(live4.includes(line), `${family} ${line}`);
      }
    }
  });
  it('NAT needs the tunnel bit: the subnet alone never matches (127.0.0.0/8 cannot catch the host)', () => {
    const post = renderServerChains({ ...wg7, networks: { 4: ['127.0.0.0/8'], 6: [] } }, 4).find((c) => c.chain === 'VPNHOST-POST-wg7');
    assert.deepEqual(post?.rules[0], '-A VPNHOST-POST-wg7 -s 127.0.0.0/8 ! -o wg7 -m mark --mark 0x1000000/0x1000000 -j SNAT --to-source 192.0.2.1');
  });
  it('MASQUERADE without external IP, the external interface when given, no hairpin without forwards', () => {
    const s = { ...wg7, externalIp: null, externalInterface: 'eth0', forwards: [] };
    const chains = renderServerChains(s, 4);
    assert.deepEqual(chains.find((c) => c.chain === 'VPNHOST-POST-wg7')?.rules, [
      '-A VPNHOST-POST-wg7 -s 10.7.0.0/24 -o eth0 -m mark --mark 0x1000000/0x1000000 -j MASQUERADE',
    ]);
    assert.deepEqual(chains.find((c) => c.chain === 'VPNHOST-PRE-wg7')?.rules, []);
    // Without an external IP the DNAT chain is not entered from OUTPUT (127.0.0.1:dst_port stays the host's).
    assert.deepEqual(renderServerDispatch(s, 4).find((d) => d.top.chain === 'VPNHOST-NATOUT')?.lines, []);
  });
  it('DNAT without external IP matches local destinations', () => {
    const chains = renderServerChains({ ...wg7, externalIp: null, forwards: [{ dst_port: 53, protocol: 'udp', to_ip: '10.7.0.2', to_port: 5353 }] }, 4);
    assert.deepEqual(chains.find((c) => c.chain === 'VPNHOST-PRE-wg7')?.rules, [
      '-A VPNHOST-PRE-wg7 -p udp -m udp --dport 53 -m addrtype --dst-type LOCAL -j DNAT --to-destination 10.7.0.2:5353',
    ]);
  });
  it('internal traffic: server off drops wg->wg, global off drops anything from a tunnel into this one', () => {
    const fwd = (s: ServerRuleInput) => renderServerChains({ ...s, forwards: [] }, 4).find((c) => c.chain === 'VPNHOST-FWD-wg7')?.rules;
    assert.deepEqual(fwd({ ...wg7, internalTraffic: true }), [
      '-A VPNHOST-FWD-wg7 -o wg7 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A VPNHOST-FWD-wg7 -i wg7 -j ACCEPT',
    ]);
    assert.equal(fwd({ ...wg7, internalTraffic: true, globalInternalTraffic: false })?.[1],
      '-A VPNHOST-FWD-wg7 -o wg7 -m mark --mark 0x1000000/0x1000000 -m conntrack ! --ctstate DNAT -j DROP');
  });
  it('a server without IPv6 has no IPv6 chains; IPv6 has no DNAT chain', () => {
    assert.deepEqual(renderServerChains({ ...wg7, networks: { 4: ['10.7.0.0/24'], 6: [] } }, 6), []);
    assert.deepEqual(renderServerChains(wg7, 6).map((c) => c.chain), ['VPNHOST-MARK-wg7', 'VPNHOST-POST-wg7', 'VPNHOST-FWD-wg7']);
  });
  it('mergeTopChain keeps other servers, drops stale lines of no server, output dispatch before input dispatch', () => {
    const live = [
      '-A VPNHOST-FWD -o wg1 -j VPNHOST-FWD-wg1',
      '-A VPNHOST-FWD -i wg1 -j VPNHOST-FWD-wg1',
      '-A VPNHOST-FWD -s 10.0.0.0/8 -m comment --comment "old" -j ACCEPT',
      '-A VPNHOST-FWD -o wg7 -j VPNHOST-FWD-wg7',
    ];
    const merged = mergeTopChain(live, 'wg7', renderServerDispatch(wg7, 4).find((d) => d.top === FWD_CHAIN)!.lines);
    assert.deepEqual(merged, [
      '-A VPNHOST-FWD -o wg1 -j VPNHOST-FWD-wg1',
      '-A VPNHOST-FWD -o wg7 -j VPNHOST-FWD-wg7',
      '-A VPNHOST-FWD -i wg1 -j VPNHOST-FWD-wg1',
      '-A VPNHOST-FWD -i wg7 -j VPNHOST-FWD-wg7',
    ]);
    assert.deepEqual(mergeTopChain(merged, 'wg7', []), [live[0], live[1]]);
    // The old renderer's lock-out rule in the same chain name goes at the first ensure.
    const legacy = ['-A VPNHOST-POST -s 127.0.0.0/8 ! -o wg0 -m comment --comment "vpnhost:wg0" -j SNAT --to-source 192.0.2.30'];
    assert.deepEqual(mergeTopChain(legacy, 'wg7', ['-A VPNHOST-POST -j VPNHOST-POST-wg7']), ['-A VPNHOST-POST -j VPNHOST-POST-wg7']);
  });
  it('owners of lines and chains, set names, packet marks', () => {
    assert.equal(ownerOfLine('-A VPNHOST-NATOUT -j VPNHOST-PRE-wg12'), 'wg12');
    assert.equal(ownerOfLine('-A VPNHOST-IN -j VPNHOST-IN-SYS'), null);
    assert.equal(ownerOfChain('VPNHOST-MARK-wg3'), 'wg3');
    assert.equal(ownerOfChain('VPNHOST-IN-SYS'), null);
    assert.equal(markSetName('wg3', 6), 'vpnhost-wg3-6');
    assert.equal(packetMark(5), 0x1000005);
    assert.equal(MARK_CHAIN.hook, 'PREROUTING');
    assert.equal(POST_CHAIN.table, 'nat');
  });
});

describe('global rules', () => {
  const live = parseIptablesSaveCounters(SAVE_V4);
  it('system_CONTROLPANEL and the operator list render as saved', () => {
    assert.deepEqual(chainRules(live, 'filter', 'VPNHOST-IN-SYS'), renderSystemInput(globals));
    assert.deepEqual(chainRules(live, 'filter', 'VPNHOST-IN'), renderInput(globals, 4));
    assert.deepEqual(chainRules(live, 'filter', 'VPNHOST-OUT'), renderOutput(globals));
  });
  it('with INPUT ACCEPT only the API and listen ports; OUTPUT DROP keeps replies and WireGuard going out', () => {
    assert.deepEqual(renderSystemInput({ ...globals, policyInput: 'ACCEPT', listenPorts: [51821, 51820, 51821, 0] }), [
      '-A VPNHOST-IN-SYS -p tcp -m tcp --dport 8443 -m comment --comment "vpnhost:rule:system_CONTROLPANEL" -j ACCEPT',
      '-A VPNHOST-IN-SYS -p udp -m udp --dport 51820 -m comment --comment "vpnhost:rule:system_CONTROLPANEL" -j ACCEPT',
      '-A VPNHOST-IN-SYS -p udp -m udp --dport 51821 -m comment --comment "vpnhost:rule:system_CONTROLPANEL" -j ACCEPT',
    ]);
    assert.deepEqual(renderOutput({ ...globals, policyOutput: 'DROP' }), [
      '-A VPNHOST-OUT -o lo -m comment --comment "vpnhost:rule:system_CONTROLPANEL" -j ACCEPT',
      '-A VPNHOST-OUT -m conntrack --ctstate RELATED,ESTABLISHED -m comment --comment "vpnhost:rule:system_CONTROLPANEL" -j ACCEPT',
      '-A VPNHOST-OUT -p udp -m udp --sport 51820 -m comment --comment "vpnhost:rule:system_CONTROLPANEL" -j ACCEPT',
    ]);
  });
  it('filter rules per family, protocol and ports', () => {
    const rule = (over: Partial<FilterRule>): FilterRule => ({ name: 'x1', action: 'ACCEPT', chain: 'INPUT', protocol: 'ANY', s_ip: '', d_ip: '', s_port: '', d_port: '', ...over });
    assert.equal(renderFilterRule(rule({}), 4), '-A VPNHOST-IN -m comment --comment "vpnhost:rule:x1" -j ACCEPT');
    assert.equal(renderFilterRule(rule({}), 6), '-A VPNHOST-IN -m comment --comment "vpnhost:rule:x1" -j ACCEPT');
    assert.equal(renderFilterRule(rule({ protocol: 'ICMP' }), 6), '-A VPNHOST-IN -p ipv6-icmp -m comment --comment "vpnhost:rule:x1" -j ACCEPT');
    assert.equal(renderFilterRule(rule({ s_ip: '2001:db8::/32' }), 4), null);
    assert.equal(renderFilterRule(rule({ d_ip: '192.0.2.0/24' }), 6), null);
    assert.equal(
      renderFilterRule(rule({ protocol: 'UDP', s_ip: '192.0.2.0/24', d_ip: '198.51.100.7/32', s_port: '53', d_port: '0', action: 'DROP' }), 4),
      '-A VPNHOST-IN -s 192.0.2.0/24 -d 198.51.100.7/32 -p udp -m udp --sport 53 -m comment --comment "vpnhost:rule:x1" -j DROP',
    );
    assert.equal(ruleNameOf('-A VPNHOST-IN -m comment --comment "vpnhost:rule:abc9" -j DROP'), 'abc9');
  });
});

describe('renderFirewallRestore', () => {
  const live = parseIptablesSaveCounters(SAVE_V4);
  it('nothing to write when live equals wanted', () => {
    const plan = emptyPlan();
    plan.chains.push(...renderServerChains(wg7, 4));
    plan.hooks.push(FWD_CHAIN, POST_CHAIN, MARK_CHAIN);
    plan.policies.push({ table: 'filter', chain: 'INPUT', policy: 'DROP' });
    assert.equal(renderFirewallRestore(live, plan), null);
  });
  it('creates missing chains and hooks; refills a changed chain; sets a policy', () => {
    const plan = emptyPlan();
    plan.chains.push({ table: 'nat', chain: 'VPNHOST-PRE-wg7', rules: [] }, { table: 'nat', chain: 'VPNHOST-POST-wg9', rules: ['-A VPNHOST-POST-wg9 -j MASQUERADE'] });
    plan.hooks.push(POST_CHAIN);
    plan.policies.push({ table: 'filter', chain: 'INPUT', policy: 'ACCEPT' });
    assert.equal(renderFirewallRestore(parseIptablesSaveCounters(''), { ...emptyPlan(), hooks: [POST_CHAIN] }), '*nat\n-I POSTROUTING 1 -j VPNHOST-POST\nCOMMIT\n');
    assert.equal(
      renderFirewallRestore(live, plan),
      '*nat\n:VPNHOST-PRE-wg7 - [0:0]\n:VPNHOST-POST-wg9 - [0:0]\n-A VPNHOST-POST-wg9 -j MASQUERADE\nCOMMIT\n*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n',
    );
  });
  it('removes chains after their references, deletes every listed rule, dedupes hooks', () => {
    const doubled = parseIptablesSaveCounters(`${SAVE_V4}*raw\nCOMMIT\n`.replace('[0:0] -A FORWARD -j VPNHOST-FWD', '[0:0] -A FORWARD -j VPNHOST-FWD\n[0:0] -A FORWARD -j VPNHOST-FWD'));
    const plan = emptyPlan();
    plan.remove.push({ table: 'filter', chain: 'VPNHOST-FWD-wg7' }, { table: 'filter', chain: 'VPNHOST-GONE' });
    plan.chains.push({ table: 'filter', chain: 'VPNHOST-FWD', rules: [] });
    plan.hooks.push(FWD_CHAIN);
    plan.deleteRules.push({ table: 'filter', rule: '-A INPUT -j VPNHOST-IN' });
    assert.equal(
      renderFirewallRestore(doubled, plan),
      [
        '*filter',
        ':VPNHOST-FWD - [0:0]',
        ':VPNHOST-FWD-wg7 - [0:0]',
        '-D INPUT -j VPNHOST-IN',
        '-D FORWARD -j VPNHOST-FWD',
        '-X VPNHOST-FWD-wg7',
        'COMMIT',
        '',
      ].join('\n'),
    );
  });
});

describe('ipset', () => {
  const sets = parseIpsetSave(IPSET);
  it('parses entries with counters and marks', () => {
    const v4 = sets.get('vpnhost-wg7-4')!;
    assert.ok(setCreateFits(v4.create, 4));
    assert.ok(!setCreateFits(v4.create, 6));
    assert.deepEqual(v4.entries.get('10.7.0.2'), { mark: 5, packets: 0, bytes: 0, line: 'add vpnhost-wg7-4 10.7.0.2 packets 0 bytes 0 skbmark 0x5/0xffffff' });
    assert.equal(sets.get('vpnhost-wg7-6')?.entries.get('fd00:7::2')?.mark, 5);
  });
  it('sync: nothing when equal, del/add of differences, create when missing, swap when unfit', () => {
    const v4 = sets.get('vpnhost-wg7-4')!;
    assert.deepEqual(renderSetSync(v4, 'vpnhost-wg7-4', 4, new Map([['10.7.0.2', 5], ['10.7.0.3', 6]])), []);
    assert.deepEqual(renderSetSync(v4, 'vpnhost-wg7-4', 4, new Map([['10.7.0.2', 7], ['10.7.0.4', 8]])), [
      'del vpnhost-wg7-4 10.7.0.3',
      'add vpnhost-wg7-4 10.7.0.2 skbmark 0x7/0xffffff',
      'add vpnhost-wg7-4 10.7.0.4 skbmark 0x8/0xffffff',
    ]);
    assert.deepEqual(renderSetSync(null, 'vpnhost-wg1-6', 6, new Map([['fd00::2', 1]])), [
      'create vpnhost-wg1-6 hash:ip family inet6 hashsize 1024 maxelem 1048576 counters skbinfo',
      'add vpnhost-wg1-6 fd00::2 skbmark 0x1/0xffffff',
    ]);
    const unfit = { create: 'create vpnhost-wg1-4 hash:ip family inet hashsize 1024 maxelem 65536', entries: new Map() };
    assert.deepEqual(renderSetSync(unfit, 'vpnhost-wg1-4', 4, new Map([['10.0.0.2', 1]])), [
      renderSetCreate('vpnhost-wg1-4-t', 4),
      'flush vpnhost-wg1-4-t',
      renderSetAdd('vpnhost-wg1-4-t', '10.0.0.2', 1),
      'swap vpnhost-wg1-4-t vpnhost-wg1-4',
      'destroy vpnhost-wg1-4-t',
    ]);
  });
});

describe('listings', () => {
  it('NAT rules of the real dump, with counters and the DNAT target', () => {
    const nat = listNat(parseIptablesSaveCounters(SAVE_V4), 4);
    assert.deepEqual(nat.find((n) => n.action === 'DNAT'), {
      name: 'wg7', action: 'DNAT', chain: 'PREROUTING', s_ip: '', d_ip: '192.0.2.1/32', 'to-source': '',
      'to-destination': '10.7.0.2:80 (8080/tcp)', family: 4, packets: 0, bytes: 0,
    });
    assert.deepEqual(nat.filter((n) => n.action === 'SNAT').map((n) => [n.s_ip, n['to-source']]), [['10.7.0.0/24', '192.0.2.1']]);
    assert.equal(nat.length, 4);
  });
  it('marks of the real set dump, sorted by mark', () => {
    const sets = parseIpsetSave(IPSET);
    assert.deepEqual(listMarks('wg7', sets.get('vpnhost-wg7-4')!).map((m) => [m.name, m.s_ip, m['set-mark']]), [
      ['5', '10.7.0.2', '0x5/0xffffff'],
      ['6', '10.7.0.3', '0x6/0xffffff'],
    ]);
    assert.deepEqual(listMarks('wg7', null), []);
  });
});
