// Unit tests of the firewall's input checks: normalisation (as iptables prints) and the texts of refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { E } from '../../../shared/wire/error-texts.ts';
import { checkConf, checkFilterRule, checkForwards, checkServer } from '../../../panel/dataplane/firewall/firewall-checks.ts';
import { FIREWALL_TEXTS } from '../../../panel/dataplane/firewall/firewall-texts.ts';

const rule = { name: 'r1', action: 'DROP', chain: 'INPUT', protocol: 'TCP', s_ip: '', d_ip: '', s_port: '', d_port: '' };
const refuses = (fn: () => unknown, text: string) => assert.throws(fn, (err: Error & { text?: string }) => err.text === text);

describe('firewall checks', () => {
  it('filter rules: CIDRs masked, any-address dropped, ports normalised', () => {
    assert.deepEqual(checkFilterRule({ ...rule, s_ip: '10.1.2.3/8', d_ip: '0.0.0.0/0', s_port: '0053', d_port: '0' }), {
      ...rule, s_ip: '10.0.0.0/8', d_ip: '', s_port: '53', d_port: '0',
    });
    assert.equal(checkFilterRule({ ...rule, d_ip: 'FD00:0::1/64' }).d_ip, 'fd00::/64');
    refuses(() => checkFilterRule({ ...rule, s_ip: '10.0.0.1' }), E.FW_SRC_CIDR);
    refuses(() => checkFilterRule({ ...rule, name: 'a b' }), E.FW_RULE_NAME);
    refuses(() => checkFilterRule({ ...rule, name: '' }), E.FW_RULE_NAME);
    refuses(() => checkFilterRule({ ...rule, d_port: '-1' }), FIREWALL_TEXTS.WRONG_RULE_PORT);
    refuses(() => checkFilterRule({ ...rule, name: 42 }), E.FW_RULE_NAME);
  });
  it('conf: policies with the spec texts, in INPUT, FORWARD, OUTPUT order', () => {
    const conf = { internal_traffic: true, ip_forward: true, policy_input: 'DROP', policy_forward: 'ACCEPT', policy_output: 'ACCEPT' };
    assert.equal(checkConf(conf).policy_input, 'DROP');
    refuses(() => checkConf({ ...conf, policy_input: 'x', policy_forward: 'y' }), E.FW_POLICY_INPUT);
    refuses(() => checkConf({ ...conf, policy_forward: 'y', policy_output: 'z' }), E.FW_POLICY_FORWARD);
    refuses(() => checkConf({ ...conf, policy_output: 'z' }), E.FW_POLICY_OUTPUT);
  });
  it('server: networks per family, masked and deduplicated; bare peer addresses; interface names', () => {
    const s = checkServer({
      name: 'wg3', subnets: ['10.3.0.1/24', '10.3.0.9/24', 'fd00:3::1/64'], listenPort: 51820, externalIp: '192.0.2.3/32',
      externalInterface: 'eth0', internalTraffic: true, peers: [{ mark: 1, address: '10.3.0.2/32', addressIpv6: 'fd00:3:0::2' }], forwards: [],
    }, true);
    assert.deepEqual(s.input.networks, { 4: ['10.3.0.0/24'], 6: ['fd00:3::/64'] });
    assert.equal(s.input.externalIp, '192.0.2.3');
    assert.deepEqual([...s.addresses], [['10.3.0.2', 1], ['fd00:3::2', 1]]);
    const base = { subnets: ['10.3.0.1/24'], listenPort: 1, externalIp: null, externalInterface: null, internalTraffic: true, peers: [], forwards: [] };
    refuses(() => checkServer({ ...base, name: 'wg12345678901234' }, true), E.WRONG_INTERFACE_NAME);
    refuses(() => checkServer({ ...base, name: 'wg1', externalInterface: 'eth0; rm' }, true), FIREWALL_TEXTS.WRONG_EXTERNAL_INTERFACE);
    refuses(() => checkServer({ ...base, name: 'wg1', peers: [{ mark: 1, address: 'fd00::2', addressIpv6: null }] }, true), E.WRONG_IP);
  });
  it('forwards: the first failing check answers, in the spec\'s order', () => {
    const ctx = { addresses: new Map([['10.3.0.2', 1]]), listenPorts: [51820], otherKeys: new Set(['80_tcp']), apiPort: 8443 };
    const f = { dst_port: 80, protocol: 'tcp', to_ip: '10.3.0.9', to_port: 0 };
    refuses(() => checkForwards([f], ctx), E.PF_ALREADY_ENABLED);
    refuses(() => checkForwards([{ ...f, dst_port: 81 }], ctx), E.PF_TO_PORT_RANGE);
    refuses(() => checkForwards([{ ...f, dst_port: 81, to_port: 1 }], ctx), E.PF_INCORRECT_PEER);
    refuses(() => checkForwards([{ ...f, dst_port: 1.5 }], ctx), E.PF_PROTOCOL);
    assert.deepEqual(checkForwards([{ ...f, dst_port: 81, to_port: 1, to_ip: '10.3.0.2/32' }], ctx), [{ dst_port: 81, protocol: 'tcp', to_ip: '10.3.0.2', to_port: 1 }]);
  });
});
