// Unit tests of traffic logging's pure parts: conntrack line parser, RFC 5424 rendering, backlog cap, attribution.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CommandRunner } from '../../../panel/dataplane/linux/runner.ts';
import { Backlog } from '../../../panel/services/traffic-logging/backlog.ts';
import { ConntrackSource } from '../../../panel/services/traffic-logging/flow-source.ts';
import { parseConntrackLine } from '../../../panel/services/traffic-logging/conntrack-parser.ts';
import { FlowAttribution, ipv4FromNumber } from '../../../panel/services/traffic-logging/flow-attribution.ts';
import type { FlowRecord } from '../../../panel/services/traffic-logging/flow-event.ts';
import { selected } from '../../../panel/services/traffic-logging/flow-pipeline.ts';
import { escapeParam, formatSyslog } from '../../../panel/services/traffic-logging/syslog-format.ts';
import { DEFAULT_FLAGS, type FlowOwnerRow } from '../../../panel/store/repositories/traffic-logging.ts';

describe('parseConntrackLine', () => {
  it('reads a NEW tcp event: time, original tuple, mark after the reply tuple, conntrack id', () => {
    const e = parseConntrackLine(
      '[1795435848.325233]\t    [NEW] ipv4     2 tcp      6 120 SYN_SENT src=10.0.1.2 dst=192.0.2.10 sport=36106 dport=443 [UNREPLIED] src=192.0.2.10 dst=203.0.113.1 sport=443 dport=36106 mark=5 id=3052747403',
    );
    assert.deepEqual(e, {
      time: new Date(1795435848325), state: 'new', family: 4, protocol: 'tcp', src: '10.0.1.2', dst: '192.0.2.10',
      sport: 36106, dport: 443, mark: 5, bytes: null, id: 3052747403,
    });
  });

  it('UPDATE is established for TCP only at ESTABLISHED, for other protocols on the first (not assured) update', () => {
    assert.equal(parseConntrackLine('[1.5]\t [UPDATE] ipv4     2 tcp      6 60 SYN_RECV src=10.0.1.2 dst=1.1.1.1 sport=1 dport=2 src=1.1.1.1 dst=10.0.1.2 sport=2 dport=1 id=9'), null);
    assert.equal(parseConntrackLine('[1.5]\t [UPDATE] ipv4     2 tcp      6 432000 ESTABLISHED src=10.0.1.2 dst=1.1.1.1 sport=1 dport=2 src=1.1.1.1 dst=10.0.1.2 sport=2 dport=1 [ASSURED] id=9')?.state, 'established');
    const icmp = parseConntrackLine('[1795435848.318604]\t [UPDATE] ipv4     2 icmp     1 30 src=127.0.0.1 dst=127.0.0.1 type=8 code=0 id=20359 src=127.0.0.1 dst=127.0.0.1 type=0 code=0 id=20359 id=4161431717');
    assert.equal(icmp?.state, 'established');
    assert.equal(icmp?.sport, null);
    assert.equal(icmp?.id, 4161431717);
    assert.equal(parseConntrackLine('[1.5]\t [UPDATE] ipv4     2 udp      17 120 src=10.0.1.2 dst=1.1.1.1 sport=1 dport=2 src=1.1.1.1 dst=10.0.1.2 sport=2 dport=1 [ASSURED] id=9'), null);
  });

  it('DESTROY carries the original direction\'s bytes; IPv6; junk and the summary line are null', () => {
    const d = parseConntrackLine('[2.000001]\t[DESTROY] ipv4     2 tcp      6 120 CLOSE src=10.0.1.2 dst=1.1.1.1 sport=1 dport=9 packets=1 bytes=60 [UNREPLIED] src=1.1.1.1 dst=10.0.1.2 sport=9 dport=1 packets=1 bytes=40 mark=0x10 id=7');
    assert.equal(d?.state, 'destroy');
    assert.equal(d?.bytes, 60);
    assert.equal(d?.mark, 16);
    const v6 = parseConntrackLine('[3.1]\t    [NEW] ipv6     10 udp      17 30 src=fd00::2 dst=2001:db8::1 sport=5 dport=53 [UNREPLIED] src=2001:db8::1 dst=fd00::2 sport=53 dport=5 id=1');
    assert.equal(v6?.family, 6);
    assert.equal(v6?.src, 'fd00::2');
    assert.equal(parseConntrackLine('conntrack v1.4.7 (conntrack-tools): 5 flow events have been shown.'), null);
    assert.equal(parseConntrackLine(''), null);
  });
});

describe('RFC 5424 rendering', () => {
  const record: FlowRecord = {
    event: { time: new Date('2026-01-02T03:04:05.006Z'), state: 'new', family: 4, protocol: 'udp', src: '10.0.1.2', dst: '9.9.9.9', sport: 5000, dport: 53, mark: null, bytes: 12, id: 1 },
    account: 'bob"]\\x', address: '10.0.1.2', interface_in: 'wg1', outgoing: true,
  };

  it('escapes ", \\ and ] in parameter values', () => {
    assert.equal(escapeParam('a"b]c\\d'), 'a\\"b\\]c\\\\d');
  });

  it('writes PRI 134, version 1, time, host, app, pid, msgid, one SD element and the message; flags pick attributes', () => {
    assert.equal(
      formatSyslog(record, { ...DEFAULT_FLAGS, len: true }, 'gw 1', 42),
      '<134>1 2026-01-02T03:04:05.006Z gw1 vpnhost-panel 42 flow [flow@32473 account="bob\\"\\]\\\\x" address="10.0.1.2" state="new" ' +
        'direction="out" proto="udp" src="10.0.1.2" dst="9.9.9.9" sport="5000" dport="53" len="12"] bob"]\\x udp 10.0.1.2:5000 -> 9.9.9.9:53 new',
    );
    assert.ok(!formatSyslog(record, DEFAULT_FLAGS, '', 1).includes('len='), 'len only when selected');
    assert.match(formatSyslog(record, DEFAULT_FLAGS, '', 1), /^<134>1 \S+ - vpnhost-panel 1 flow /, 'an empty host is -');
  });
});

describe('Backlog', () => {
  it('keeps at most cap items, dropping and counting the oldest; a failed batch goes back in front', () => {
    const b = new Backlog<number>(3);
    for (let i = 1; i <= 5; i++) b.push(i);
    assert.equal(b.size, 3);
    assert.equal(b.dropped, 2);
    const batch = b.take(2);
    assert.deepEqual(batch, [3, 4]);
    b.push(6);
    b.push(7);
    b.putBack(batch);
    assert.equal(b.dropped, 4, 'over the cap again: the oldest (the batch put back) dropped');
    assert.deepEqual(b.take(10), [5, 6, 7]);
    assert.equal(b.size, 0);
  });
});

describe('FlowAttribution and selection', () => {
  it('finds the account by source, by destination only with incoming, and sees new accounts after maxAge', () => {
    let now = 0;
    let rows: FlowOwnerRow[] = [{ name: 'a', ip: (10 << 24) + (1 << 8) + 2, allowed_ips_ipv6: 'fd00::2/128', interface_name: 'wg0' }];
    const at = new FlowAttribution(() => rows, 1000, () => now);
    const ev = { time: new Date(0), state: 'new' as const, family: 4 as const, protocol: 'tcp', src: '10.0.1.2', dst: '1.1.1.1', sport: 1, dport: 2, mark: null, bytes: null, id: null };
    assert.equal(ipv4FromNumber(rows[0].ip), '10.0.1.2');
    assert.deepEqual(at.attribute(ev, false), { event: ev, account: 'a', address: '10.0.1.2', interface_in: 'wg0', outgoing: true });
    assert.equal(at.attribute({ ...ev, src: 'fd00:0::2' }, false)?.account, 'a', 'IPv6 in any spelling');
    const inbound = { ...ev, src: '1.1.1.1', dst: '10.0.1.2' };
    assert.equal(at.attribute(inbound, false), null);
    assert.equal(at.attribute(inbound, true)?.outgoing, false);
    rows = [...rows, { name: 'b', ip: (10 << 24) + (1 << 8) + 3, allowed_ips_ipv6: null, interface_name: 'wg0' }];
    assert.equal(at.attribute({ ...ev, src: '10.0.1.3' }, false), null, 'index not yet rebuilt');
    now = 1001;
    assert.equal(at.attribute({ ...ev, src: '10.0.1.3' }, false)?.account, 'b');
  });

  it('selects states by their flags; destroy only with len', () => {
    const ev = { time: new Date(0), state: 'new' as const, family: 4 as const, protocol: 'tcp', src: 'x', dst: 'y', sport: 1, dport: 2, mark: null, bytes: null, id: null };
    assert.equal(selected(ev, DEFAULT_FLAGS), true);
    assert.equal(selected({ ...ev, state: 'established' }, DEFAULT_FLAGS), false);
    assert.equal(selected({ ...ev, state: 'established' }, { ...DEFAULT_FLAGS, established: true }), true);
    assert.equal(selected({ ...ev, state: 'destroy' }, DEFAULT_FLAGS), false);
    assert.equal(selected({ ...ev, state: 'destroy' }, { ...DEFAULT_FLAGS, len: true }), true);
  });
});

describe('ConntrackSource.available', () => {
  it('asks `conntrack --version` through the runner: exit 0 is installed; a failure or a missing tool is not', async () => {
    const calls: Array<[string, string[]]> = [];
    const runner = (exitCode: number | 'missing'): CommandRunner => ({
      async run(cmd, args) {
        calls.push([cmd, args]);
        if (exitCode === 'missing') throw new Error('conntrack: command not found');
        return { stdout: '', stderr: '', exitCode };
      },
    });
    assert.equal(await new ConntrackSource(runner(0)).available(), true);
    assert.equal(await new ConntrackSource(runner(1)).available(), false);
    assert.equal(await new ConntrackSource(runner('missing')).available(), false);
    assert.deepEqual(calls[0], ['conntrack', ['--version']]);
  });
});
