// Network-policy services over a fake DataplaneSync: checks before any write or data-plane call, the API port,
// one change at a time (a failed change is undone before the next reads the store), subsystem refusals as API texts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FirewallError, type FilterRule, type RulePosition, type FirewallConf, type PortForwardRule } from '../../../panel/dataplane/firewall/firewall.ts';
import { FIREWALL_TEXTS } from '../../../panel/dataplane/firewall/firewall-texts.ts';
import { ShapingError } from '../../../panel/dataplane/shaping/shaping.ts';
import { E, isApiError } from '../../../panel/http/errors.ts';
import { FirewallService, type PolicySync, type PolicyViews } from '../../../panel/services/firewall.ts';
import { PortForwardService } from '../../../panel/services/port-forwards.ts';
import { ServerBandwidthService } from '../../../panel/services/server-bandwidth.ts';
import { openDatabase } from '../../../panel/store/db.ts';
import { AccountsRepository } from '../../../panel/store/repositories/accounts.ts';
import { FilterRulesRepository } from '../../../panel/store/repositories/filter-rules.ts';
import { FirewallConfRepository } from '../../../panel/store/repositories/firewall-conf.ts';
import { PortForwardsRepository } from '../../../panel/store/repositories/port-forwards.ts';
import { ServersRepository } from '../../../panel/store/repositories/servers.ts';

/** Records every apply call; `failNext` makes the next one of that kind throw. */
class FakeSync implements PolicySync {
  calls: string[] = [];
  failNext: Error | null = null;
  onBandwidth: () => void = () => undefined;
  private lane: Promise<unknown> = Promise.resolve();
  readonly views = {} as PolicyViews;

  serial<T>(task: () => Promise<T> | T): Promise<T> {
    const run = this.lane.then(task, task);
    this.lane = run.catch(() => undefined);
    return run;
  }
  private async step(call: string): Promise<void> {
    await new Promise((r) => setTimeout(r, 1));
    this.calls.push(call);
    const err = this.failNext;
    this.failNext = null;
    if (err) throw err;
  }
  applyForwards(server: string, forwards: PortForwardRule[]) {
    return this.serial(() => this.step(`forwards ${server} ${forwards.map((f) => `${f.dst_port}/${f.protocol}>${f.to_ip}:${f.to_port}`).join(',')}`));
  }
  applyFirewallGlobal(conf: FirewallConf, rules: FilterRule[]) {
    return this.serial(() => this.step(`global ${conf.policy_input} ${rules.map((r) => r.name).join(',')}`));
  }
  addFilterRule(rule: FilterRule, position: RulePosition) {
    return this.serial(() => this.step(`add ${rule.name} ${position}`));
  }
  deleteFilterRule(name: string) {
    return this.serial(() => this.step(`delete ${name}`));
  }
  applyServerBandwidth(server: string) {
    this.onBandwidth();
    return this.serial(() => this.step(`bandwidth ${server}`));
  }
}

function setup() {
  const db = openDatabase(':memory:');
  const servers = new ServersRepository(db);
  const accounts = new AccountsRepository(db);
  const sid = servers.insert({
    name: 'srv', interface_name: 'wg0', listen_port: 51820, address: '10.0.1.1/24', net_first: 0x0a000100, net_last: 0x0a0001ff,
    external_ip: '192.0.2.1', external_interface: null, endpoint: '', dns_1: '1.1.1.1', dns_2: '8.8.8.8', internal_traffic: 1,
    keep_alive: 25, mtu: 0, allowed_ips: '0.0.0.0/0', b_download: 8, b_upload: 4, ikev2: 0, ipv6: 0, address_ipv6: '',
    dns_1_ipv6: '', dns_2_ipv6: '', private_key: 'sealed', public_key: 'spk',
  });
  for (const [n, status] of [[2, 'enable'], [3, 'disable']] as const) {
    accounts.create((seq) => ({
      name: `p${n}`, username: `u${n}`, password: 'sealed', status, server_id: sid, ip: 0x0a000100 + n, allowed_ips_ipv6: null,
      b_download: 1, b_upload: 1, mangle: seq, private_key: '', public_key: `apk${n}`,
    }));
  }
  const sync = new FakeSync();
  const forwards = new PortForwardsRepository(db);
  const rules = new FilterRulesRepository(db);
  const conf = new FirewallConfRepository(db);
  return {
    db, sync, forwards, rules, conf, accounts,
    portForwards: new PortForwardService({ servers, accounts, forwards, sync, apiPort: 8443 }),
    firewall: new FirewallService({ conf, rules, servers, sync, apiPort: 8443 }),
    bandwidth: new ServerBandwidthService({ servers, accounts, sync }),
  };
}

async function rejectsWith(promise: Promise<unknown>, text: string, status?: number): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isApiError(err), String(err));
    assert.equal(err.message, text);
    if (status !== undefined) assert.equal(err.httpStatus, status);
    return true;
  });
}

describe('port-forward service', () => {
  it('refuses the API port over TCP before storing anything, even for a disabled peer; UDP on it passes', async () => {
    const t = setup();
    try {
      await rejectsWith(t.portForwards.create({ dst_port: '8443', protocol: 'tcp', to_peer: 'p3', to_port: '80' }), FIREWALL_TEXTS.DST_IS_API_PORT, 422);
      await rejectsWith(t.portForwards.create({ dst_port: 8443, protocol: 'tcp', to_peer: 'p2', to_port: 80 }), FIREWALL_TEXTS.DST_IS_API_PORT, 422);
      assert.deepEqual(t.sync.calls, []);
      await t.portForwards.create({ dst_port: '8443', protocol: 'udp', to_peer: 'p2', to_port: '80' });
      assert.deepEqual(t.sync.calls, ['forwards srv 8443/udp>10.0.1.2:80']);
    } finally {
      t.db.close();
    }
  });

  it('a forward to a disabled peer is stored but not applied; a firewall refusal removes the row and answers its text', async () => {
    const t = setup();
    try {
      await t.portForwards.create({ dst_port: '1000', protocol: 'tcp', to_peer: 'p3', to_port: '80' });
      assert.deepEqual(t.sync.calls, []);
      assert.equal(t.forwards.listOfServer(1).length, 1);
      t.sync.failNext = new FirewallError(E.PF_INCORRECT_PEER);
      await rejectsWith(t.portForwards.create({ dst_port: '1001', protocol: 'tcp', to_peer: 'p2', to_port: '80' }), E.PF_INCORRECT_PEER, 422);
      assert.deepEqual(t.forwards.listOfServer(1).map((f) => f.dst_port), [1000]);
    } finally {
      t.db.close();
    }
  });
});

describe('firewall service', () => {
  it('runs one change at a time: a failed rule is gone from the store before the next change reads it', async () => {
    const t = setup();
    try {
      t.sync.failNext = new Error('iptables-restore: boom');
      const first = t.firewall.addRule({ name: 'a', action: 'DROP', chain: 'INPUT', protocol: 'ANY' }, 'end');
      const second = t.firewall.addRule({ name: 'b', action: 'accept', chain: 'INPUT', protocol: 'tcp', d_port: '22' }, 'top');
      await assert.rejects(first, /boom/);
      await second;
      assert.deepEqual(t.sync.calls, ['add a end', 'add b top']);
      assert.deepEqual(t.rules.listFilterRules().map((r) => [r.name, r.action, r.protocol]), [['b', 'ACCEPT', 'TCP']]);
      assert.equal(t.firewall.listRules()[0].d_port, '8443,51820');
    } finally {
      t.db.close();
    }
  });

  it('a refused conf change makes no data-plane call; a failed one puts the old conf back and re-applies it', async () => {
    const t = setup();
    try {
      await rejectsWith(t.firewall.updateConf({ policy_input: 'DROP', policy_output: 'NOPE' }), E.FW_POLICY_OUTPUT, 400);
      assert.deepEqual(t.sync.calls, []);
      t.sync.failNext = new Error('sysctl: boom');
      await assert.rejects(t.firewall.updateConf({ policy_input: 'DROP' }), /boom/);
      assert.deepEqual(t.sync.calls, ['global DROP ', 'global ACCEPT ']);
      assert.equal(t.conf.getFirewallConf().policy_input, 'ACCEPT');
    } finally {
      t.db.close();
    }
  });
});

describe('set_bandwidth service', () => {
  it('writes every account before the shaper call, and writes the old values back when it fails', async () => {
    const t = setup();
    try {
      t.sync.onBandwidth = () => assert.deepEqual([t.accounts.get('p2')?.b_download, t.accounts.get('p3')?.b_upload], [8, 4]);
      await t.bandwidth.setBandwidth('srv');
      t.db.prepare("UPDATE wireguard_servers SET b_download = 100").run();
      t.sync.onBandwidth = () => undefined;
      t.sync.failNext = new Error('tc: boom');
      await assert.rejects(t.bandwidth.setBandwidth('srv'), /boom/);
      assert.deepEqual([t.accounts.get('p2')?.b_download, t.accounts.get('p2')?.b_upload], [8, 4]);
      assert.deepEqual(t.sync.calls, ['bandwidth srv', 'bandwidth srv', 'bandwidth srv']);
      await rejectsWith(t.bandwidth.setBandwidth('nope'), E.WIREGUARD_SERVER_NOT_FOUND, 404);
      // a shaper refusal answers its text with 422, and the accounts keep their values
      const refusal = 'shaping: peer k address 10.0.1.2 is host 2 of its subnet';
      t.sync.failNext = new ShapingError(refusal);
      await rejectsWith(t.bandwidth.setBandwidth('srv'), refusal, 422);
      assert.equal(t.accounts.get('p2')?.b_download, 8);
    } finally {
      t.db.close();
    }
  });
});
