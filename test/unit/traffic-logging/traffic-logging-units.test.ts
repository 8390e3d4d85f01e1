// Unit tests of traffic logging's pure parts: RFC 5424 rendering, backlog cap, attribution, selection.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backlog } from '../../../panel/services/traffic-logging/backlog.ts';
import { FlowAttribution, ipv4FromNumber } from '../../../panel/services/traffic-logging/flow-attribution.ts';
import type { FlowRecord } from '../../../panel/services/traffic-logging/flow-event.ts';
import { selected } from '../../../panel/services/traffic-logging/flow-pipeline.ts';
import { escapeParam, formatSyslog } from '../../../panel/services/traffic-logging/syslog-format.ts';
import { DEFAULT_FLAGS, type FlowOwnerRow } from '../../../panel/store/repositories/traffic-logging.ts';

describe('RFC 5424 rendering', () => {
  const record: FlowRecord = {
    event: {
      time: new Date('2026-01-02T03:04:05.006Z'), state: 'new', family: 4, protocol: 'udp', src: '10.0.1.2', dst: '9.9.9.9', sport: 5000, dport: 53,
      interface_in: 'wg1', interface_out: 'eth0', length: 40, tos: 16, mark: 0x1000005,
    },
    account: 'bob"]\\x', address: '10.0.1.2', outgoing: true,
  };

  it('escapes ", \\ and ] in parameter values', () => {
    assert.equal(escapeParam('a"b]c\\d'), 'a\\"b\\]c\\\\d');
  });

  it('writes PRI 134, version 1, time, host, app, pid, msgid, one SD element and the message; flags pick attributes', () => {
    assert.equal(
      formatSyslog(record, { ...DEFAULT_FLAGS, len: true }, 'gw 1', 42),
      '<134>1 2026-01-02T03:04:05.006Z gw1 vpnhost-panel 42 flow [flow@32473 account="bob\\"\\]\\\\x" address="10.0.1.2" state="new" ' +
        'direction="out" proto="udp" src="10.0.1.2" dst="9.9.9.9" sport="5000" dport="53" len="40"] bob"]\\x udp 10.0.1.2:5000 -> 9.9.9.9:53 new',
    );
    assert.ok(!formatSyslog(record, DEFAULT_FLAGS, '', 1).includes('len='), 'len only when selected');
    const all = { ...DEFAULT_FLAGS, interface_in: true, interface_out: true, len: true, tos: true, mark: true };
    assert.match(formatSyslog(record, all, 'gw', 1), / dport="53" in="wg1" out="eth0" len="40" tos="16" mark="16777221"\] /);
    const input = { ...record, event: { ...record.event, interface_out: null } };
    assert.match(formatSyslog(input, all, 'gw', 1), / in="wg1" len="40" /, 'no out for a packet to the gateway itself');
    for (const flag of ['interface_in', 'interface_out', 'tos', 'mark'] as const) {
      assert.doesNotMatch(formatSyslog(record, { ...all, [flag]: false }, 'gw', 1), new RegExp(` ${{ interface_in: 'in', interface_out: 'out', tos: 'tos', mark: 'mark' }[flag]}=`), `${flag} only when selected`);
    }
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
    const ev = { time: new Date(0), state: 'new' as const, family: 4 as const, protocol: 'tcp', src: '10.0.1.2', dst: '1.1.1.1', sport: 1, dport: 2, interface_in: 'wg0', interface_out: 'eth0', length: 60, tos: 0, mark: 5 };
    assert.equal(ipv4FromNumber(rows[0].ip), '10.0.1.2');
    assert.deepEqual(at.attribute(ev, false), { event: ev, account: 'a', address: '10.0.1.2', outgoing: true });
    assert.equal(at.attribute({ ...ev, src: 'fd00:0::2' }, false)?.account, 'a', 'IPv6 in any spelling');
    const inbound = { ...ev, src: '1.1.1.1', dst: '10.0.1.2' };
    assert.equal(at.attribute(inbound, false), null);
    assert.equal(at.attribute(inbound, true)?.outgoing, false);
    rows = [...rows, { name: 'b', ip: (10 << 24) + (1 << 8) + 3, allowed_ips_ipv6: null, interface_name: 'wg0' }];
    assert.equal(at.attribute({ ...ev, src: '10.0.1.3' }, false), null, 'index not yet rebuilt');
    now = 1001;
    assert.equal(at.attribute({ ...ev, src: '10.0.1.3' }, false)?.account, 'b');
  });

  it('selects states by their flags', () => {
    const ev = { time: new Date(0), state: 'new' as const, family: 4 as const, protocol: 'tcp', src: 'x', dst: 'y', sport: 1, dport: 2, interface_in: 'wg0', interface_out: 'eth0', length: 60, tos: 0, mark: 5 };
    assert.equal(selected(ev, DEFAULT_FLAGS), true);
    for (const state of ['established', 'related', 'invalid', 'untracked'] as const) {
      assert.equal(selected({ ...ev, state }, DEFAULT_FLAGS), false, state);
      assert.equal(selected({ ...ev, state }, { ...DEFAULT_FLAGS, [state]: true }), true, state);
    }
  });
});
