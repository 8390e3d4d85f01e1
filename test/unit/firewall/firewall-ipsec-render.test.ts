// Fixture tests of the IKEv2 part of a server's rules: dispatch by subnet on charon's TUN into the server's own chains.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkServer } from '../../../panel/dataplane/firewall/firewall-checks.ts';
import { FIREWALL_TEXTS } from '../../../panel/dataplane/firewall/firewall-texts.ts';
import { FirewallError } from '../../../panel/dataplane/firewall/firewall.ts';
import { listNat } from '../../../panel/dataplane/render/firewall-listing.ts';
import { mergeTopChain, renderServerChains, renderServerDispatch, type ServerRuleInput } from '../../../panel/dataplane/render/firewall-rules.ts';
import { parseIptablesSaveCounters } from '../../../panel/dataplane/render/parse-iptables-save-counters.ts';
import { WG7 } from './wg7-fixture.ts';

/** wg7 of the WireGuard fixtures with IKEv2 on (`ikev2=1`): its clients come in on ipsec0 from 10.7.0.0/24. */
const wg7: ServerRuleInput = { ...WG7, ipsec: { device: 'ipsec0', address: '10.7.0.1' } };
const rulesOf = (s: ServerRuleInput, family: 4 | 6, chain: string) => renderServerChains(s, family).find((c) => c.chain === chain)?.rules;
const dispatchOf = (s: ServerRuleInput, family: 4 | 6, top: string) => renderServerDispatch(s, family).find((d) => d.top.chain === top)?.lines;

// Every expected line below was restored with iptables-restore and read back with iptables-save (nft backend)
// unchanged, so a reconcile of a right state compares equal and writes nothing.
describe('IKEv2 clients in the server chains', () => {
  it('mangle: a dispatch line by source subnet on the TUN into the same mark sub-chain (tunnel bit + the peer set)', () => {
    assert.deepEqual(dispatchOf(wg7, 4, 'VPNHOST-MARK'), [
      '-A VPNHOST-MARK -i wg7 -j VPNHOST-MARK-wg7',
      '-A VPNHOST-MARK -s 10.7.0.0/24 -i ipsec0 -j VPNHOST-MARK-wg7',
    ]);
    assert.deepEqual(rulesOf(wg7, 4, 'VPNHOST-MARK-wg7'), [
      '-A VPNHOST-MARK-wg7 -j MARK --set-xmark 0x1000000/0x1000000',
      '-A VPNHOST-MARK-wg7 -j SET --map-set vpnhost-wg7-4 src --map-mark',
    ]);
  });

  it('nat: subnet-internal traffic into the TUN keeps its source, outbound is SNATed as for wgN, forwards hairpin to the server address', () => {
    assert.deepEqual(rulesOf(wg7, 4, 'VPNHOST-POST-wg7'), [
      '-A VPNHOST-POST-wg7 -s 10.7.0.0/24 -o ipsec0 -m conntrack ! --ctstate DNAT -j RETURN',
      '-A VPNHOST-POST-wg7 -s 10.7.0.0/24 ! -o wg7 -m mark --mark 0x1000000/0x1000000 -j SNAT --to-source 192.0.2.1',
      '-A VPNHOST-POST-wg7 -s 10.7.0.0/24 -o wg7 -m mark --mark 0x1000000/0x1000000 -m conntrack --ctstate DNAT -j MASQUERADE',
      '-A VPNHOST-POST-wg7 -o wg7 -m addrtype --src-type LOCAL -m conntrack --ctstate DNAT -j MASQUERADE',
      '-A VPNHOST-POST-wg7 -s 10.7.0.0/24 -o ipsec0 -m mark --mark 0x1000000/0x1000000 -m conntrack --ctstate DNAT -j SNAT --to-source 10.7.0.1',
      '-A VPNHOST-POST-wg7 -o ipsec0 -m addrtype --src-type LOCAL -m conntrack --ctstate DNAT -j SNAT --to-source 10.7.0.1',
    ]);
    // the DNAT itself is unchanged: the route to the account address (table 220 via the TUN) takes it to the client
    assert.deepEqual(rulesOf(wg7, 4, 'VPNHOST-PRE-wg7'), [
      '-A VPNHOST-PRE-wg7 -d 192.0.2.1/32 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10.7.0.2:80',
    ]);
  });

  it('nat: without forwards only the exemption and the SNAT', () => {
    assert.deepEqual(rulesOf({ ...wg7, forwards: [], externalIp: null }, 4, 'VPNHOST-POST-wg7'), [
      '-A VPNHOST-POST-wg7 -s 10.7.0.0/24 -o ipsec0 -m conntrack ! --ctstate DNAT -j RETURN',
      '-A VPNHOST-POST-wg7 -s 10.7.0.0/24 ! -o wg7 -m mark --mark 0x1000000/0x1000000 -j MASQUERADE',
    ]);
  });

  it('filter: replies, forwarded ports, the server internal-traffic drop and the accept, for the TUN too', () => {
    assert.deepEqual(rulesOf(wg7, 4, 'VPNHOST-FWD-wg7'), [
      '-A VPNHOST-FWD-wg7 -o wg7 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A VPNHOST-FWD-wg7 -d 10.7.0.0/24 -o ipsec0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      '-A VPNHOST-FWD-wg7 -d 10.7.0.2/32 -o wg7 -p tcp -m tcp --dport 80 -m conntrack --ctstate DNAT -j ACCEPT',
      '-A VPNHOST-FWD-wg7 -d 10.7.0.2/32 -o ipsec0 -p tcp -m tcp --dport 80 -m conntrack --ctstate DNAT -j ACCEPT',
      '-A VPNHOST-FWD-wg7 -i wg7 -o wg7 -m conntrack ! --ctstate DNAT -j DROP',
      '-A VPNHOST-FWD-wg7 -s 10.7.0.0/24 -d 10.7.0.0/24 -m conntrack ! --ctstate DNAT -j DROP',
      '-A VPNHOST-FWD-wg7 -i wg7 -j ACCEPT',
      '-A VPNHOST-FWD-wg7 -s 10.7.0.0/24 -i ipsec0 -j ACCEPT',
    ]);
    assert.deepEqual(dispatchOf(wg7, 4, 'VPNHOST-FWD'), [
      '-A VPNHOST-FWD -o wg7 -j VPNHOST-FWD-wg7',
      '-A VPNHOST-FWD -d 10.7.0.0/24 -o ipsec0 -j VPNHOST-FWD-wg7',
      '-A VPNHOST-FWD -i wg7 -j VPNHOST-FWD-wg7',
      '-A VPNHOST-FWD -s 10.7.0.0/24 -i ipsec0 -j VPNHOST-FWD-wg7',
    ]);
  });

  it('filter: global internal_traffic off drops tunnel traffic into the TUN as into wgN; both on: no drop', () => {
    const off = rulesOf({ ...wg7, forwards: [], globalInternalTraffic: false }, 4, 'VPNHOST-FWD-wg7')!;
    assert.deepEqual(off.filter((r) => r.endsWith('-j DROP')), [
      '-A VPNHOST-FWD-wg7 -o wg7 -m mark --mark 0x1000000/0x1000000 -m conntrack ! --ctstate DNAT -j DROP',
      '-A VPNHOST-FWD-wg7 -d 10.7.0.0/24 -o ipsec0 -m mark --mark 0x1000000/0x1000000 -m conntrack ! --ctstate DNAT -j DROP',
    ]);
    const on = rulesOf({ ...wg7, forwards: [], internalTraffic: true }, 4, 'VPNHOST-FWD-wg7')!;
    assert.equal(on.filter((r) => r.endsWith('-j DROP')).length, 0);
  });

  it('IPv6 and servers without IKEv2 get no TUN line (IKEv2 pools are IPv4)', () => {
    const v6 = [...renderServerChains(wg7, 6).flatMap((c) => c.rules), ...renderServerDispatch(wg7, 6).flatMap((d) => d.lines)];
    assert.ok(v6.length > 0 && !v6.some((l) => l.includes('ipsec0')));
    const plain = { ...wg7, ipsec: null };
    const v4 = [...renderServerChains(plain, 4).flatMap((c) => c.rules), ...renderServerDispatch(plain, 4).flatMap((d) => d.lines)];
    assert.ok(!v4.some((l) => l.includes('ipsec0')));
  });

  it('the shared FWD chain keeps every output dispatch (TUN included) before every input dispatch', () => {
    const wg3: ServerRuleInput = { ...wg7, name: 'wg3', networks: { 4: ['10.3.0.0/24'], 6: [] }, ipsec: null };
    const live = dispatchOf(wg3, 4, 'VPNHOST-FWD')!;
    assert.deepEqual(mergeTopChain(live, 'wg7', dispatchOf(wg7, 4, 'VPNHOST-FWD')!), [
      '-A VPNHOST-FWD -o wg3 -j VPNHOST-FWD-wg3',
      '-A VPNHOST-FWD -o wg7 -j VPNHOST-FWD-wg7',
      '-A VPNHOST-FWD -d 10.7.0.0/24 -o ipsec0 -j VPNHOST-FWD-wg7',
      '-A VPNHOST-FWD -i wg3 -j VPNHOST-FWD-wg3',
      '-A VPNHOST-FWD -i wg7 -j VPNHOST-FWD-wg7',
      '-A VPNHOST-FWD -s 10.7.0.0/24 -i ipsec0 -j VPNHOST-FWD-wg7',
    ]);
  });

  it('GET /firewall/rules/nat lists the SNAT and hairpin rules, not the RETURN exemption', () => {
    const rules = rulesOf(wg7, 4, 'VPNHOST-POST-wg7')!;
    const save = `*nat\n:VPNHOST-POST-wg7 - [0:0]\n${rules.map((r) => `[1:60] ${r}`).join('\n')}\nCOMMIT\n`;
    const listed = listNat(parseIptablesSaveCounters(save), 4);
    assert.equal(listed.length, rules.length - 1);
    assert.ok(!listed.some((e) => e.action === 'RETURN'));
    assert.deepEqual(listed.filter((e) => e['to-source'] === '10.7.0.1').map((e) => e.s_ip), ['10.7.0.0/24', '']);
  });
});

describe('checkServer with an IKEv2 device', () => {
  const spec = {
    name: 'wg7', subnets: ['10.7.0.1/24', 'fd00:7::1/64'], listenPort: 51820, externalIp: null, externalInterface: null,
    internalTraffic: true, peers: [], forwards: [],
  };
  it('keeps the device and the server address of the IPv4 subnet', () => {
    assert.deepEqual(checkServer({ ...spec, ipsecDevice: 'ipsec0' }, true).input.ipsec, { device: 'ipsec0', address: '10.7.0.1' });
    assert.equal(checkServer(spec, true).input.ipsec, null);
    assert.equal(checkServer({ ...spec, ipsecDevice: null }, true).input.ipsec, null);
  });
  it('refuses a bad device name with its text', () => {
    assert.throws(() => checkServer({ ...spec, ipsecDevice: 'bad name!' }, true), (e: unknown) => e instanceof FirewallError && e.text === FIREWALL_TEXTS.WRONG_IPSEC_DEVICE);
  });
});
