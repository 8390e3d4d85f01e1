// Network-policy store: port forwards (keys, cascade from peer and server, enabled-only data-plane list), filter rule
// order, firewall conf defaults, set_bandwidth's one-transaction write and its compensation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase, type Db } from '../../../panel/store/db.ts';
import { AccountsRepository, type AccountValues } from '../../../panel/store/repositories/accounts.ts';
import { FilterRulesRepository } from '../../../panel/store/repositories/filter-rules.ts';
import { FirewallConfRepository } from '../../../panel/store/repositories/firewall-conf.ts';
import { PortForwardsRepository } from '../../../panel/store/repositories/port-forwards.ts';
import { ServersRepository, type ServerValues } from '../../../panel/store/repositories/servers.ts';
import type { FilterRule } from '../../../panel/dataplane/firewall/firewall.ts';

function server(n: number): ServerValues {
  const first = (10 << 24) + (n << 8);
  return {
    name: `S${n}`, interface_name: `wg${n}`, listen_port: 51820 + n, address: `10.0.${n}.1/24`, net_first: first >>> 0,
    net_last: (first + 255) >>> 0, external_ip: '192.0.2.1', external_interface: null, endpoint: '', dns_1: '1.1.1.1',
    dns_2: '8.8.8.8', internal_traffic: 1, keep_alive: 25, mtu: 0, allowed_ips: '0.0.0.0/0', b_download: 8, b_upload: 4,
    ikev2: 0, ipv6: 0, address_ipv6: '', dns_1_ipv6: '', dns_2_ipv6: '', private_key: 'sealed', public_key: `spk${n}`,
  };
}

function account(n: number, serverId: number, serverNo: number, status: 'enable' | 'disable' = 'enable'): Omit<AccountValues, 'mangle'> {
  return {
    name: `A${n}`, username: `U${n}`, password: 'sealed', status, server_id: serverId,
    ip: ((10 << 24) + (serverNo << 8) + 10 + n) >>> 0, allowed_ips_ipv6: null, b_download: 0, b_upload: 0,
    private_key: '', public_key: `apk${n}`,
  };
}

function setup(): { db: Db; servers: ServersRepository; accounts: AccountsRepository; forwards: PortForwardsRepository } {
  const db = openDatabase(':memory:');
  return { db, servers: new ServersRepository(db), accounts: new AccountsRepository(db), forwards: new PortForwardsRepository(db) };
}

const rule = (name: string): FilterRule => ({ name, action: 'DROP', chain: 'INPUT', protocol: 'TCP', s_ip: '', d_ip: '', s_port: '', d_port: '22' });

describe('port forwards store', () => {
  it('keys by server + dst_port + protocol, a pair unique over every server, tcp and udp apart', () => {
    const { db, servers, accounts, forwards } = setup();
    try {
      const s1 = servers.insert(server(1));
      const s2 = servers.insert(server(2));
      const a1 = accounts.create((seq) => ({ ...account(1, s1, 1), mangle: seq }));
      const a2 = accounts.create((seq) => ({ ...account(2, s2, 2), mangle: seq }));
      forwards.insert({ server_id: s1, dst_port: 8080, protocol: 'tcp', account_id: a1.id, to_port: 80 });
      forwards.insert({ server_id: s1, dst_port: 8080, protocol: 'udp', account_id: a1.id, to_port: 80 });
      assert.throws(() => forwards.insert({ server_id: s2, dst_port: 8080, protocol: 'tcp', account_id: a2.id, to_port: 80 }), /UNIQUE/);
      assert.throws(() => forwards.insert({ server_id: s1, dst_port: 0, protocol: 'tcp', account_id: a1.id, to_port: 80 }), /CHECK/);
      assert.throws(() => forwards.insert({ server_id: s1, dst_port: 1, protocol: 'tcp', account_id: a1.id, to_port: 65536 }), /CHECK/);
      assert.deepEqual(Object.keys(forwards.byPair(8080, 'udp') ?? {}).sort(), ['account_id', 'dst_port', 'ip', 'protocol', 'server_id', 'status', 'to_peer', 'to_port']);
      assert.equal(forwards.byPair(8080, 'udp')?.to_peer, 'A1');
      assert.equal(forwards.byPair(8081, 'udp'), undefined);
      assert.deepEqual(forwards.listOfServer(s1).map((f) => `${f.dst_port}_${f.protocol}`), ['8080_tcp', '8080_udp']);
    } finally {
      db.close();
    }
  });

  it('hands the data plane only forwards to enabled peers, with the peer address dotted', () => {
    const { db, servers, accounts, forwards } = setup();
    try {
      const s1 = servers.insert(server(1));
      const on = accounts.create((seq) => ({ ...account(1, s1, 1), mangle: seq }));
      const off = accounts.create((seq) => ({ ...account(2, s1, 1, 'disable'), mangle: seq }));
      forwards.insert({ server_id: s1, dst_port: 2000, protocol: 'tcp', account_id: on.id, to_port: 22 });
      forwards.insert({ server_id: s1, dst_port: 1000, protocol: 'udp', account_id: off.id, to_port: 53 });
      assert.deepEqual(forwards.listForwards(s1), [{ dst_port: 2000, protocol: 'tcp', to_ip: '10.0.1.11', to_port: 22 }]);
      assert.equal(forwards.listOfServer(s1).length, 2);
    } finally {
      db.close();
    }
  });

  it('deleting the peer deletes its forwards, and only its own (cascade in the store)', () => {
    const { db, servers, accounts, forwards } = setup();
    try {
      const s1 = servers.insert(server(1));
      const a1 = accounts.create((seq) => ({ ...account(1, s1, 1), mangle: seq }));
      const a2 = accounts.create((seq) => ({ ...account(2, s1, 1), mangle: seq }));
      forwards.insert({ server_id: s1, dst_port: 1, protocol: 'tcp', account_id: a1.id, to_port: 1 });
      forwards.insert({ server_id: s1, dst_port: 65535, protocol: 'udp', account_id: a2.id, to_port: 65535 });
      accounts.delete(a1.id);
      assert.deepEqual(forwards.listOfServer(s1).map((f) => f.to_peer), ['A2']);
      assert.equal(forwards.delete(s1, 65535, 'udp'), true);
      assert.equal(forwards.delete(s1, 65535, 'udp'), false);
    } finally {
      db.close();
    }
  });
});

describe('filter rules store', () => {
  it('keeps the order of rules added at the top and at the end, and restores a rule at its old place', () => {
    const db = openDatabase(':memory:');
    try {
      const rules = new FilterRulesRepository(db);
      rules.add(rule('b'), 'end');
      rules.add(rule('c'), 'end');
      rules.add(rule('a'), 'top');
      rules.add(rule('Z9'), 'top');
      assert.deepEqual(rules.listFilterRules().map((r) => r.name), ['Z9', 'a', 'b', 'c']);
      const row = rules.get('b')!;
      assert.equal(rules.delete('b'), true);
      rules.restore(row);
      assert.deepEqual(rules.listFilterRules().map((r) => r.name), ['Z9', 'a', 'b', 'c']);
      assert.deepEqual(rules.listFilterRules()[0], rule('Z9'));
      assert.throws(() => rules.add(rule('a'), 'end'), /UNIQUE|PRIMARY/);
      assert.throws(() => rules.add(rule('system_CONTROLPANEL'), 'end'), /CHECK/);
    } finally {
      db.close();
    }
  });
});

describe('firewall conf store', () => {
  it('starts with every policy ACCEPT and forwarding and internal traffic on, and keeps what is set', () => {
    const db = openDatabase(':memory:');
    try {
      const conf = new FirewallConfRepository(db);
      assert.deepEqual(conf.getFirewallConf(), { internal_traffic: true, ip_forward: true, policy_forward: 'ACCEPT', policy_input: 'ACCEPT', policy_output: 'ACCEPT' });
      const next = { internal_traffic: false, ip_forward: false, policy_forward: 'DROP', policy_input: 'DROP', policy_output: 'ACCEPT' } as const;
      conf.setFirewallConf(next);
      assert.deepEqual(new FirewallConfRepository(db).getFirewallConf(), next);
    } finally {
      db.close();
    }
  });
});

describe('set_bandwidth store write', () => {
  it('sets every account of the server in one write, leaves other servers alone, and restores the old values', () => {
    const { db, servers, accounts } = setup();
    try {
      const s1 = servers.insert(server(1));
      const s2 = servers.insert(server(2));
      const a1 = accounts.create((seq) => ({ ...account(1, s1, 1), b_download: 3, b_upload: 2, mangle: seq }));
      accounts.create((seq) => ({ ...account(2, s2, 2), b_download: 7, b_upload: 7, mangle: seq }));
      assert.equal(accounts.get('A1')?.b_download, 3); // cached by name
      const before = accounts.setServerBandwidth(s1, 100, 50);
      assert.deepEqual(before, [{ id: a1.id, b_download: 3, b_upload: 2 }]);
      assert.deepEqual([accounts.get('A1')?.b_download, accounts.get('A1')?.b_upload], [100, 50]);
      assert.equal(accounts.get('A2')?.b_download, 7);
      accounts.restoreBandwidths(before);
      assert.deepEqual([accounts.get('A1')?.b_download, accounts.get('A1')?.b_upload], [3, 2]);
    } finally {
      db.close();
    }
  });
});
