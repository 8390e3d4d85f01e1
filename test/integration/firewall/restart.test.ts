// A panel started again on the same store (fresh data plane, as after kill -9 and a reboot) rebuilds forwards,
// filter rules, conf, marks and shaping identical to before from the store, and a second reconcile writes nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePanel } from '../wireguard/panel-fixture.ts';
import { policySnapshot } from './policy-fixture.ts';

test('a restart on the same store brings the whole network policy back identical, with no duplicates', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-policy-restart-'));
  try {
    const first = await makePanel({ dir });
    let before: string;
    try {
      await first.ok('POST', '/wireguard', { name: 'srv', external_ip: '192.0.2.10', b_download: '8', b_upload: '4' });
      await first.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'a' });
      await first.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'b', status: 'disable' });
      await first.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'a', to_port: '80' });
      await first.ok('POST', '/port_forward', { dst_port: '8081', protocol: 'udp', to_peer: 'b', to_port: '53' });
      await first.ok('POST', '/firewall/rules/filter/end', { name: 'ssh', action: 'DROP', chain: 'INPUT', protocol: 'TCP', d_port: '22' });
      await first.ok('POST', '/firewall/rules/filter/top', { name: 'web', action: 'ACCEPT', chain: 'INPUT', protocol: 'TCP', d_port: '443' });
      await first.ok('PUT', '/firewall/conf', { policy_forward: 'DROP', internal_traffic: '0' });
      await first.ok('PUT', '/wireguard/srv/set_bandwidth');
      before = await policySnapshot(first);
      assert.match(before, /8080/);
    } finally {
      await first.close();
    }

    const second = await makePanel({ dir });
    try {
      assert.notEqual(await policySnapshot(second), before, 'the fresh data plane starts empty');
      await second.app.services.system.reconcileOnBoot();
      assert.equal(await policySnapshot(second), before);
      const writes = second.dataplane.firewall.stats();
      await second.ok('PUT', '/system/reload');
      assert.equal(await policySnapshot(second), before);
      assert.deepEqual(second.dataplane.firewall.stats(), writes, 'a right state costs reads only');
      await second.ok('PUT', '/account/b', { status: 'enable' });
      assert.match(await second.ok<string>('GET', '/wireguard/srv/firewall_nat_rules'), /--dport 8081 .*--to-destination 10\.0\.1\.3:53/);
    } finally {
      await second.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
