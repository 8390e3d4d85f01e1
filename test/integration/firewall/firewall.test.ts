// Firewall API through inject(): info, conf (policies, ip_forward, internal_traffic), filter rules at top and end with
// every check and text, the built-in system_CONTROLPANEL, delete, NAT and mangle listings; refusals change nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { E, OWN } from '../../../panel/http/errors.ts';
import { FIREWALL_TEXTS } from '../../../panel/dataplane/firewall/firewall-texts.ts';
import { makePanel, type TestPanel } from '../wireguard/panel-fixture.ts';
import { policySnapshot, refused, unauthorized } from './policy-fixture.ts';

const DEFAULT_CONF = { internal_traffic: true, ip_forward: true, policy_forward: 'ACCEPT', policy_input: 'ACCEPT', policy_output: 'ACCEPT' };
const rule = (name: string, extra: Record<string, string> = {}) => ({
  name, action: 'DROP', chain: 'INPUT', protocol: 'TCP', s_ip: '198.51.100.0/24', d_ip: '', s_port: '', d_port: '22', ...extra,
});
const dump = (p: TestPanel) => p.dataplane.firewall.dump();

test('GET /firewall/info answers the versions and ip_forward as strings', async () => {
  const p = await makePanel();
  try {
    const info = await p.ok('GET', '/firewall/info');
    assert.deepEqual(Object.keys(info).sort(), ['ip_forward', 'iproute2', 'iptables']);
    for (const v of Object.values(info)) assert.equal(typeof v, 'string');
  } finally {
    await p.close();
  }
});

test('firewall conf: defaults, partial changes applied to the kernel (policies, ip_forward), every error text', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    assert.deepEqual(await p.ok('GET', '/firewall/conf'), DEFAULT_CONF);
    assert.equal(await p.ok('PUT', '/firewall/conf', { policy_input: 'DROP', ip_forward: '0' }), 'success');
    assert.deepEqual(await p.ok('GET', '/firewall/conf'), { ...DEFAULT_CONF, policy_input: 'DROP', ip_forward: false });
    assert.match(await dump(p), /:INPUT DROP/);
    assert.equal((await p.ok('GET', '/firewall/info')).ip_forward, '0');
    await p.ok('PUT', '/firewall/conf', { policy_forward: 'DROP', policy_output: 'DROP', internal_traffic: 'false', ip_forward: 'true' });
    assert.deepEqual(await p.ok('GET', '/firewall/conf'), { internal_traffic: false, ip_forward: true, policy_forward: 'DROP', policy_input: 'DROP', policy_output: 'DROP' });
    assert.equal((await p.ok('GET', '/firewall/info')).ip_forward, '1');
    await p.ok('PUT', '/firewall/conf', { policy_forward: 'ACCEPT', policy_output: 'ACCEPT', policy_input: 'ACCEPT', internal_traffic: '1' });
    assert.deepEqual(await p.ok('GET', '/firewall/conf'), DEFAULT_CONF);
    assert.equal(await p.ok('PUT', '/firewall/conf', {}), 'success');

    for (const v of ['drop', 'REJECT', '', 'ACCEPT ']) {
      await refused(p, 'PUT', '/firewall/conf', { policy_input: v }, E.FW_POLICY_INPUT, 400);
      await refused(p, 'PUT', '/firewall/conf', { policy_forward: v }, E.FW_POLICY_FORWARD, 400);
      await refused(p, 'PUT', '/firewall/conf', { policy_output: v }, E.FW_POLICY_OUTPUT, 400);
    }
    // INPUT before FORWARD before OUTPUT; a valid field next to a bad one is not applied either
    await refused(p, 'PUT', '/firewall/conf', { policy_output: 'x', policy_forward: 'x', policy_input: 'x' }, E.FW_POLICY_INPUT);
    await refused(p, 'PUT', '/firewall/conf', { policy_output: 'x', policy_forward: 'x', policy_input: 'DROP' }, E.FW_POLICY_FORWARD);
    await refused(p, 'PUT', '/firewall/conf', { policy_output: 'x', policy_input: 'DROP', ip_forward: '0' }, E.FW_POLICY_OUTPUT);
    for (const v of ['2', 'yes', '']) {
      await refused(p, 'PUT', '/firewall/conf', { internal_traffic: v }, OWN.WRONG_INTERNAL_TRAFFIC, 400);
      await refused(p, 'PUT', '/firewall/conf', { ip_forward: v }, OWN.WRONG_IP_FORWARD, 400);
    }
  } finally {
    await p.close();
  }
});

test('filter rules: system_CONTROLPANEL first, added at top and end in order, deleted; the kernel follows', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    const builtIn = await p.ok('GET', '/firewall/rules/filter');
    assert.equal(builtIn.length, 1);
    assert.equal(builtIn[0].name, 'system_CONTROLPANEL');
    assert.equal(builtIn[0].action, 'ACCEPT');
    assert.equal(builtIn[0].chain, 'INPUT');
    assert.match(builtIn[0].d_port, /51820/);

    assert.equal(await p.ok('POST', '/firewall/rules/filter/end', rule('b1')), 'success');
    await p.ok('POST', '/firewall/rules/filter/end', rule('c2', { protocol: 'udp', action: 'accept', d_port: '53', s_ip: '' }));
    await p.ok('POST', '/firewall/rules/filter/top', rule('a0', { protocol: 'ICMP', d_port: '', s_ip: '2001:db8::/32' }));
    await p.ok('POST', '/firewall/rules/filter/top', rule('Z', { protocol: 'ANY', d_port: '', s_ip: '10.9.8.7/8', d_ip: '0.0.0.0/0' }));
    const list = await p.ok('GET', '/firewall/rules/filter');
    assert.deepEqual(list.map((r: { name: string }) => r.name), ['system_CONTROLPANEL', 'Z', 'a0', 'b1', 'c2']);
    assert.deepEqual(list[1], { name: 'Z', action: 'DROP', chain: 'INPUT', protocol: 'ANY', s_ip: '10.0.0.0/8', d_ip: '', s_port: '', d_port: '' });
    assert.deepEqual(list[4], { name: 'c2', action: 'ACCEPT', chain: 'INPUT', protocol: 'UDP', s_ip: '', d_ip: '', s_port: '', d_port: '53' });
    // in the kernel's INPUT lists in the same order: the IPv4-only rules in iptables, the IPv6 one in ip6tables
    const [v4, v6] = (await dump(p)).split('# ip6tables');
    const order = (text: string) => [...text.matchAll(/-A VPNHOST-IN .*"vpnhost:rule:(\w+)"/g)].map((m) => m[1]);
    assert.deepEqual(order(v4), ['system_CONTROLPANEL', 'Z', 'b1', 'c2']);
    assert.deepEqual(order(v6), ['system_CONTROLPANEL', 'a0', 'c2']);

    // port edges: 0 and 65535 pass
    await p.ok('POST', '/firewall/rules/filter/end', rule('edge', { s_port: '0', d_port: '65535' }));
    assert.equal(await p.ok('DELETE', '/firewall/rules/filter/edge'), 'success');
    assert.equal(await p.ok('DELETE', '/firewall/rules/filter/a0'), 'success');
    assert.deepEqual((await p.ok('GET', '/firewall/rules/filter')).map((r: { name: string }) => r.name), ['system_CONTROLPANEL', 'Z', 'b1', 'c2']);
    assert.ok(!(await dump(p)).includes('vpnhost:rule:a0"'));
  } finally {
    await p.close();
  }
});

test('every filter-rule error text, in the spec\'s order, changes nothing', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/firewall/rules/filter/end', rule('taken'));
    for (const where of ['top', 'end']) {
      const path = `/firewall/rules/filter/${where}`;
      for (const name of ['', 'with space', 'under_score', 'dash-ed', 'dot.ted', 'ümlaut']) {
        await refused(p, 'POST', path, rule(name), E.FW_RULE_NAME, 400);
      }
      const { name: _n, ...noName } = rule('x');
      await refused(p, 'POST', path, noName, E.FW_RULE_NAME, 400);
      await refused(p, 'POST', path, rule('taken'), E.FW_RULE_EXISTS, 409);
      await refused(p, 'POST', path, rule('taken', { chain: 'FORWARD', d_ip: 'x' }), E.FW_RULE_EXISTS, 409);
      await refused(p, 'POST', path, rule('system_CONTROLPANEL'), E.FW_RULE_EXISTS, 409);
      for (const chain of ['FORWARD', 'OUTPUT', 'input', '']) {
        await refused(p, 'POST', path, rule('n1', { chain, d_ip: 'x' }), E.FW_CHAIN, 400);
      }
      const { chain: _c, ...noChain } = rule('n1');
      await refused(p, 'POST', path, noChain, E.FW_CHAIN, 400);
      for (const d_ip of ['10.0.0.1', 'abc', '10.0.0.0/33', '300.0.0.0/8']) {
        await refused(p, 'POST', path, rule('n2', { d_ip, s_ip: 'x' }), E.FW_DST_CIDR, 400);
      }
      for (const s_ip of ['10.0.0.1', 'abc', 'fd00::/129']) {
        await refused(p, 'POST', path, rule('n3', { s_ip, action: 'x' }), E.FW_SRC_CIDR, 400);
      }
      for (const action of ['REJECT', '', 'LOG']) await refused(p, 'POST', path, rule('n4', { action }), FIREWALL_TEXTS.WRONG_ACTION, 400);
      for (const protocol of ['SCTP', '', 'all']) await refused(p, 'POST', path, rule('n5', { protocol }), FIREWALL_TEXTS.WRONG_PROTOCOL, 400);
      for (const port of ['65536', '-1', 'ssh', '1-2']) {
        await refused(p, 'POST', path, rule('n6', { d_port: port }), FIREWALL_TEXTS.WRONG_RULE_PORT, 400);
        await refused(p, 'POST', path, rule('n7', { s_port: port }), FIREWALL_TEXTS.WRONG_RULE_PORT, 400);
      }
      await refused(p, 'POST', path, rule('n8', { s_ip: '10.0.0.0/8', d_ip: 'fd00::/64' }), FIREWALL_TEXTS.MIXED_FAMILIES, 400);
    }
    await refused(p, 'DELETE', '/firewall/rules/filter/system_CONTROLPANEL', undefined, E.FW_RULE_BUILTIN, 409);
    await refused(p, 'DELETE', '/firewall/rules/filter/nothere', undefined, E.FW_RULE_NOT_FOUND, 422);
    await refused(p, 'DELETE', '/firewall/rules/filter/TAKEN', undefined, E.FW_RULE_NOT_FOUND, 422);
  } finally {
    await p.close();
  }
});

test('NAT and mangle listings: every server\'s live NAT rules; every peer mark named after its account', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv', external_ip: '192.0.2.10' });
    const a = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'alice' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'bob', status: 'disable' });
    const nat = await p.ok<Array<Record<string, unknown>>>('GET', '/firewall/rules/nat');
    assert.ok(nat.some((r) => r.name === 'wg0' && r.action === 'SNAT' && r['to-source'] === '192.0.2.10' && r.chain === 'POSTROUTING'), JSON.stringify(nat));
    for (const r of nat) for (const key of ['name', 'action', 'chain', 's_ip', 'd_ip', 'to-source']) assert.equal(typeof r[key], 'string', key);
    const mangle = await p.ok<Array<Record<string, unknown>>>('GET', '/firewall/rules/mangle');
    assert.deepEqual(mangle.map((m) => [m.name, m.s_ip, m['set-mark']]), [['alice', '10.0.1.2', `0x${Number(a.mangle).toString(16)}/0xffffff`]]);
    for (const key of ['name', 'action', 'chain', 's_ip', 'd_ip', 'set-mark']) assert.equal(typeof mangle[0][key], 'string', key);
  } finally {
    await p.close();
  }
});

test('rules and conf come back after a firewall reset on PUT /system/reload, identical', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('PUT', '/firewall/conf', { policy_input: 'DROP', internal_traffic: '0' });
    await p.ok('POST', '/firewall/rules/filter/end', rule('b1'));
    await p.ok('POST', '/firewall/rules/filter/top', rule('a0', { d_port: '80' }));
    const before = await policySnapshot(p);
    await p.dataplane.firewall.resetAll();
    assert.notEqual(await policySnapshot(p), before);
    await p.ok('PUT', '/system/reload');
    assert.equal(await policySnapshot(p), before);
  } finally {
    await p.close();
  }
});

test('every firewall endpoint answers 401 without the access hash', async () => {
  const p = await makePanel();
  try {
    for (const [method, path] of [
      ['GET', '/firewall/info'], ['GET', '/firewall/conf'], ['PUT', '/firewall/conf'], ['GET', '/firewall/rules/filter'],
      ['POST', '/firewall/rules/filter/top'], ['POST', '/firewall/rules/filter/end'], ['DELETE', '/firewall/rules/filter/x'],
      ['GET', '/firewall/rules/nat'], ['GET', '/firewall/rules/mangle'],
    ] as const) await unauthorized(p, method, path);
  } finally {
    await p.close();
  }
});
