// Live text views of a server and an account (NAT, filter, tc, mangle), per-server and global internal_traffic,
// PUT set_bandwidth (every peer gets the server's rates in one batch), and data-plane failures undone everywhere.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { E } from '../../../panel/http/errors.ts';
import { makePanel, type TestPanel } from '../wireguard/panel-fixture.ts';
import { policySnapshot, refused, unauthorized } from './policy-fixture.ts';

async function setup(): Promise<TestPanel> {
  const p = await makePanel();
  await p.ok('POST', '/wireguard', { name: 'srv', external_ip: '192.0.2.10', internal_traffic: '1' });
  await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'a' });
  await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'b', b_download: '2', b_upload: '3' });
  return p;
}

/** Replaces `obj[method]` by a function failing once with `err`, then restores it. */
function failOnce(obj: object, method: string, err: Error): void {
  const target = obj as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = target[method];
  target[method] = async () => {
    target[method] = original;
    throw err;
  };
}

/** Any drop of traffic into the tunnel (the per-server `-i wg0 -o wg0` one, or the global one of every tunnel). */
const INTERNAL_DROP = /-o wg0 .*-j DROP$/m;
const SERVER_DROP = /-i wg0 -o wg0 .*-j DROP$/m;

test('server text views: NAT with its SNAT, filter with its forward rules, tc with its classes; 404 for an unknown server', async () => {
  const p = await setup();
  try {
    const nat = await p.ok<string>('GET', '/wireguard/srv/firewall_nat_rules');
    assert.match(nat, /^# iptables -t nat/m);
    assert.match(nat, /-s 10\.0\.1\.0\/24 .*-j SNAT --to-source 192\.0\.2\.10/);
    assert.match(nat, /^\[\d+:\d+\] -A /m, 'rules carry their counters');
    const filter = await p.ok<string>('GET', '/wireguard/srv/firewall_filter_rules');
    assert.match(filter, /^# iptables -t filter/m);
    assert.match(filter, /VPNHOST-FWD-wg0/);
    const tc = await p.ok<string>('GET', '/wireguard/srv/traffic_control');
    assert.equal(typeof tc, 'string');
    assert.match(tc, /2Mbit/);
    for (const view of ['firewall_nat_rules', 'firewall_filter_rules', 'traffic_control']) {
      await refused(p, 'GET', `/wireguard/nope/${view}`, undefined, E.WIREGUARD_SERVER_NOT_FOUND, 404);
    }
  } finally {
    await p.close();
  }
});

test('account text views: its mark with the set entry and counters, its classes only; 404 for an unknown account', async () => {
  const p = await setup();
  try {
    const b = await p.ok('GET', '/account/b');
    const mangle = await p.ok<string>('GET', '/account/b/firewall_mangle_rules');
    assert.match(mangle, /VPNHOST-MARK-wg0/);
    assert.match(mangle, new RegExp(`10\\.0\\.1\\.3 .*skbmark 0x${Number(b.mangle).toString(16)}\\b`));
    assert.doesNotMatch(mangle, /10\.0\.1\.2 /, 'another peer\'s entry is not in the view');
    const tcB = await p.ok<string>('GET', '/account/b/traffic_control');
    assert.match(tcB, /2Mbit/);
    assert.match(tcB, /3Mbit/);
    assert.equal(await p.ok('GET', '/account/a/traffic_control'), '', 'an unlimited peer has no class');
    for (const view of ['firewall_mangle_rules', 'traffic_control']) {
      await refused(p, 'GET', `/account/nope/${view}`, undefined, E.ACCOUNT_NOT_FOUND, 404);
    }
  } finally {
    await p.close();
  }
});

test('internal_traffic: per server (PUT /wireguard/<name>) and global (PUT /firewall/conf) both stop peer-to-peer traffic', async () => {
  const p = await setup();
  try {
    const view = () => p.ok<string>('GET', '/wireguard/srv/firewall_filter_rules');
    assert.doesNotMatch(await view(), INTERNAL_DROP);
    await p.ok('PUT', '/wireguard/srv', { internal_traffic: '0' });
    assert.match(await view(), SERVER_DROP);
    await p.ok('PUT', '/wireguard/srv', { internal_traffic: '1' });
    assert.doesNotMatch(await view(), INTERNAL_DROP);
    await p.ok('PUT', '/firewall/conf', { internal_traffic: '0' });
    assert.match(await view(), INTERNAL_DROP);
    assert.doesNotMatch(await view(), SERVER_DROP);
    await p.ok('PUT', '/firewall/conf', { internal_traffic: '1' });
    assert.doesNotMatch(await view(), INTERNAL_DROP);
  } finally {
    await p.close();
  }
});

test('set_bandwidth gives every peer of the server its rates (0 lifts the limit) and leaves other servers alone', async () => {
  const p = await setup();
  try {
    await p.ok('POST', '/wireguard', { name: 'other' });
    await p.ok('POST', '/account', { wg_name: 'other', allowed_IPs: '10.0.2.2', name: 'c', b_download: '5', b_upload: '5' });
    await p.ok('PUT', '/wireguard/srv', { b_download: '8', b_upload: '4' });
    assert.equal(await p.ok('PUT', '/wireguard/srv/set_bandwidth'), '');
    for (const name of ['a', 'b']) {
      const acc = await p.ok('GET', `/account/${name}`);
      assert.deepEqual([acc.b_download, acc.b_upload], ['8', '4'], name);
      const tc = await p.ok<string>('GET', `/account/${name}/traffic_control`);
      assert.match(tc, /8Mbit/, name);
      assert.match(tc, /4Mbit/, name);
    }
    assert.equal((await p.ok('GET', '/account/c')).b_download, '5');
    await p.ok('PUT', '/wireguard/srv', { b_download: '0', b_upload: '0' });
    await p.ok('PUT', '/wireguard/srv/set_bandwidth');
    assert.equal(await p.ok('GET', '/account/a/traffic_control'), '');
    assert.equal((await p.ok('GET', '/account/b')).b_upload, '0');
    await refused(p, 'PUT', '/wireguard/nope/set_bandwidth', undefined, E.WIREGUARD_SERVER_NOT_FOUND, 404);
  } finally {
    await p.close();
  }
});

test('a data-plane failure during set_bandwidth, a forward, a rule or the conf leaves store and kernel as they were', async () => {
  const p = await setup();
  try {
    const dp = p.dataplane;
    await p.ok('PUT', '/wireguard/srv', { b_download: '8', b_upload: '4' });
    const cases: Array<[object, string, 'PUT' | 'POST' | 'DELETE', string, Record<string, string> | undefined]> = [
      [dp.shaper, 'apply', 'PUT', '/wireguard/srv/set_bandwidth', undefined],
      [dp.firewall, 'setForwards', 'POST', '/port_forward', { dst_port: '80', protocol: 'tcp', to_peer: 'a', to_port: '80' }],
      [dp.firewall, 'addFilterRule', 'POST', '/firewall/rules/filter/end', { name: 'r', action: 'DROP', chain: 'INPUT', protocol: 'ANY' }],
      [dp.firewall, 'ensureGlobal', 'PUT', '/firewall/conf', { policy_input: 'DROP' }],
    ];
    for (const [obj, method, verb, path, form] of cases) {
      const before = await policySnapshot(p);
      failOnce(obj, method, new Error('simulated tool failure'));
      const answer = await p.call(verb, path, form);
      assert.equal(answer.status, 500, path);
      assert.match(answer.body.error, /^Internal server error/, path);
      assert.equal(await policySnapshot(p), before, `${verb} ${path} left nothing behind`);
    }
    // ... and a forward or rule already there is put back when its deletion fails
    await p.ok('POST', '/port_forward', { dst_port: '80', protocol: 'tcp', to_peer: 'a', to_port: '80' });
    await p.ok('POST', '/firewall/rules/filter/end', { name: 'r', action: 'DROP', chain: 'INPUT', protocol: 'ANY' });
    for (const [obj, method, path] of [[dp.firewall, 'setForwards', '/port_forward/80/tcp'], [dp.firewall, 'deleteFilterRule', '/firewall/rules/filter/r']] as const) {
      const before = await policySnapshot(p);
      failOnce(obj, method, new Error('simulated tool failure'));
      assert.equal((await p.call('DELETE', path)).status, 500, path);
      assert.equal(await policySnapshot(p), before, `DELETE ${path} left nothing behind`);
    }
  } finally {
    await p.close();
  }
});

test('view and set_bandwidth endpoints answer 401 without the access hash', async () => {
  const p = await setup();
  try {
    for (const view of ['firewall_nat_rules', 'firewall_filter_rules', 'traffic_control']) await unauthorized(p, 'GET', `/wireguard/srv/${view}`);
    await unauthorized(p, 'PUT', '/wireguard/srv/set_bandwidth');
    for (const view of ['firewall_mangle_rules', 'traffic_control']) await unauthorized(p, 'GET', `/account/a/${view}`);
  } finally {
    await p.close();
  }
});
