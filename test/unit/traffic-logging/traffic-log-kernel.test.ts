// Unit tests of traffic logging's kernel side: NFLOG chain rendering (against real iptables-save output), the plan
// through the firewall engine, ulogd.conf and the parser of ulogd's JSON lines (captured from ulogd 2.0.8).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SimulatedFirewall } from '../../../panel/dataplane/firewall/simulated/simulated-firewall.ts';
import { LOG_STATES, renderTrafficLogChains, type TrafficLogChainSpec } from '../../../panel/dataplane/render/traffic-log-chain.ts';
import { renderUlogdConf } from '../../../panel/dataplane/render/traffic-log-ulogd-conf.ts';
import { chainSpecFor } from '../../../panel/services/traffic-logging/log-chain-follower.ts';
import { parseUlogdJson } from '../../../panel/dataplane/render/ulogd-json-parser.ts';
import { DEFAULT_FLAGS, type StoredTrafficLogging } from '../../../panel/store/repositories/traffic-logging.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures/traffic-log');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const ALL: TrafficLogChainSpec = { states: [...LOG_STATES], incoming: true, group: 4747, threshold: 16, perSecond: 20, tunnels: ['wg+', 'ipsec+'] };

describe('renderTrafficLogChains', () => {
  it('writes every rule exactly as iptables-save and ip6tables-save print it (live == wanted compares)', () => {
    const rules = renderTrafficLogChains(ALL).flatMap((c) => c.rules);
    assert.equal(rules.length, 9);
    for (const file of ['traffic-log-save-v4.txt', 'traffic-log-save-v6.txt']) {
      const saved = fixture(file).split('\n').filter((l) => l.startsWith('-A VPNHOST-LOG'));
      assert.deepEqual([...rules].sort(), [...saved].sort(), file);
    }
  });

  it('one NFLOG rule per selected state, in a fixed order; the tunnel dispatch; -o only with incoming', () => {
    const [states, dispatch] = renderTrafficLogChains({ ...ALL, states: ['untracked', 'new'], incoming: false, tunnels: ['wg+'] });
    assert.equal(states.chain, 'VPNHOST-LOG-STATE');
    assert.deepEqual(states.rules.map((r) => /--nflog-prefix (\S+)/.exec(r)?.[1]), ['new', 'untracked']);
    assert.match(states.rules[0], / --connbytes 1:1 /, 'NEW once: the first packet');
    assert.match(states.rules[1], / -m limit --limit 20\/sec --limit-burst 40 /, 'per-packet states are capped');
    assert.deepEqual(dispatch.rules, ['-A VPNHOST-LOG -i wg+ -j VPNHOST-LOG-STATE']);
  });
});

describe('Firewall.setTrafficLog (engine on the in-memory kernel)', () => {
  it('installs both chains and the FORWARD/INPUT hooks in both families, writes nothing when unchanged, follows a flag change and removes everything', async () => {
    const fw = new SimulatedFirewall();
    await fw.setTrafficLog(ALL);
    const dump = await fw.dump();
    for (const family of ['# iptables', '# ip6tables']) assert.ok(dump.includes(family));
    assert.equal(dump.split('\n').filter((l) => l === '*mangle -A FORWARD -j VPNHOST-LOG').length, 2, 'FORWARD hook per family');
    assert.equal(dump.split('\n').filter((l) => l === '*mangle -A INPUT -j VPNHOST-LOG').length, 2, 'INPUT hook per family');
    assert.equal(dump.split('\n').filter((l) => l.includes('-j NFLOG')).length, 10);
    const writes = fw.stats().restores;
    await fw.setTrafficLog(ALL);
    assert.equal(fw.stats().restores, writes, 'a second apply of the same spec writes nothing');
    await fw.setTrafficLog({ ...ALL, states: ['new'] });
    assert.equal((await fw.dump()).split('\n').filter((l) => l.includes('-j NFLOG')).length, 2);
    await fw.setTrafficLog(null);
    assert.doesNotMatch(await fw.dump(), /VPNHOST-LOG/);
    const after = fw.stats().restores;
    await fw.setTrafficLog(null);
    assert.equal(fw.stats().restores, after, 'removing what is absent writes nothing');
  });

  it('chainSpecFor: null when off or without a method; the selected states and incoming otherwise', () => {
    const base = { enabled: true, enabled_remote_syslog: true, enabled_tsdb: false, flags: { ...DEFAULT_FLAGS, related: true, incoming: true } } as StoredTrafficLogging;
    const nflog = { group: 9, threshold: 4 };
    assert.equal(chainSpecFor({ ...base, enabled: false }, nflog), null);
    assert.equal(chainSpecFor({ ...base, enabled_remote_syslog: false }, nflog), null);
    const spec = chainSpecFor(base, nflog);
    assert.deepEqual(spec?.states, LOG_STATES.filter((s) => base.flags[s]));
    assert.ok(spec?.states.includes('related'));
    assert.equal(spec?.incoming, true);
    assert.equal(spec?.group, 9);
  });
});

describe('renderUlogdConf', () => {
  it('one NFLOG → BASE → IFINDEX → IP2STR → JSON stack to the panel\'s unix socket', () => {
    const conf = renderUlogdConf({ group: 4747, threshold: 16, flushMs: 200, socketPath: '/var/lib/vpnhost/ulogd/flows.sock', logPath: '/var/lib/vpnhost/ulogd/ulogd.log' });
    assert.match(conf, /^stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,json1:JSON$/m);
    assert.match(conf, /\[log1\]\ngroup=4747\nnetlink_qthreshold=16\nnetlink_qtimeout=20\n/);
    assert.match(conf, /\[json1\]\nsync=1\nmode="unix"\nfile="\/var\/lib\/vpnhost\/ulogd\/flows.sock"\n/);
    assert.match(conf, /^logfile="\/var\/lib\/vpnhost\/ulogd\/ulogd.log"$/m);
    assert.throws(() => renderUlogdConf({ group: 1, threshold: 1, flushMs: 10, socketPath: '/tmp/a"b', logPath: '/tmp/l' }), /unusable path/);
  });
});

describe('parseUlogdJson (lines captured from ulogd 2.0.8)', () => {
  const lines = fixture('ulogd-2.0.8-json.jsonl').trim().split('\n');

  it('a TCP NEW packet: state from the prefix, kernel time, ports, in/out, length, TOS, mark', () => {
    assert.deepEqual(parseUlogdJson(lines[0]), {
      time: new Date(1795449634 * 1000 + 509), state: 'new', family: 4, protocol: 'tcp', src: '127.0.0.1', dst: '127.0.0.1',
      sport: 48554, dport: 8080, interface_in: 'lo', interface_out: null, length: 60, tos: 0, mark: 0x1000005,
    });
    assert.equal(parseUlogdJson(lines[1])?.state, 'established');
    assert.equal(parseUlogdJson(lines[1])?.length, 52);
  });

  it('UDP with TOS 0x20, an ICMP error as related (no ports), IPv6 with traffic class and payload + 40', () => {
    assert.deepEqual(
      [lines[2], lines[3]].map((l) => { const e = parseUlogdJson(l)!; return [e.state, e.protocol, e.sport, e.dport, e.tos, e.length]; }),
      [['new', 'udp', 33784, 9, 32, 29], ['related', 'icmp', null, null, 192, 57]],
    );
    const v6 = parseUlogdJson(lines[4])!;
    assert.deepEqual([v6.family, v6.protocol, v6.src, v6.tos, v6.length, v6.state], [6, 'ipv6-icmp', '::1', 32, 104, 'established']);
  });

  it('an out interface when routed; null for other prefixes, junk, arrays and lines without addresses', () => {
    const routed = JSON.parse(lines[0]) as Record<string, unknown>;
    assert.equal(parseUlogdJson(JSON.stringify({ ...routed, 'oob.in': 'wg0', 'oob.out': 'eth0' }))?.interface_out, 'eth0');
    assert.equal(parseUlogdJson(JSON.stringify({ ...routed, 'oob.prefix': 'IN-DROP' })), null);
    assert.equal(parseUlogdJson(JSON.stringify({ ...routed, src_ip: undefined })), null);
    assert.equal(parseUlogdJson('not json'), null);
    assert.equal(parseUlogdJson('[1,2]'), null);
  });
});
