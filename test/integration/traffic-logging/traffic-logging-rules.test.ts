// Traffic logging's kernel rules through the app (simulated data plane): PUT writes the NFLOG chains for the selected
// states, disabling removes them, a full reconcile (PUT /system/reload) writes them again; a dead ulogd in the status.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { env, makeTlHarness } from './harness.ts';

const nflogPrefixes = (dump: string, family: '# iptables' | '# ip6tables') => {
  const part = dump.split(/^(?=# ip6?tables$|# ipset$)/m).find((p) => p.startsWith(`${family}\n`)) ?? '';
  return [...part.matchAll(/--nflog-prefix (\S+)/g)].map((m) => m[1]);
};

describe('traffic logging rules', () => {
  it('follow the config: selected states in both families, removed when disabled, re-created by reconcile', async () => {
    const h = await makeTlHarness();
    try {
      const firewall = h.dataplane.firewall;
      const enable = { enabled: '1', enabled_remote_syslog: '1', remote_syslog_server: '127.0.0.1', remote_syslog_server_port: '5514' };
      assert.equal(env(await h.call('PUT', '/api/v1/traffic_logging', { ...enable, related: '1', untracked: '1' })).status, 'success');
      const dump = await firewall.dump();
      assert.deepEqual(nflogPrefixes(dump, '# iptables'), ['new', 'related', 'untracked']);
      assert.deepEqual(nflogPrefixes(dump, '# ip6tables'), ['new', 'related', 'untracked']);
      assert.match(dump, /^\*mangle -A FORWARD -j VPNHOST-LOG$/m);
      assert.match(dump, /^\*mangle -A INPUT -j VPNHOST-LOG$/m);
      assert.doesNotMatch(dump, /-o wg\+/, 'no outgoing dispatch without incoming');

      await h.call('PUT', '/api/v1/traffic_logging', { new: '0', incoming: '1' });
      const next = await firewall.dump();
      assert.deepEqual(nflogPrefixes(next, '# iptables'), ['related', 'untracked']);
      assert.match(next, /-A VPNHOST-LOG -o wg\+ -j VPNHOST-LOG-STATE/);

      await h.call('PUT', '/api/v1/traffic_logging', { enabled: '0' });
      assert.doesNotMatch(await firewall.dump(), /VPNHOST-LOG/);

      await h.call('PUT', '/api/v1/traffic_logging', { enabled: '1' });
      await firewall.setTrafficLog(null); // someone removed them behind the panel's back
      assert.equal(env(await h.call('PUT', '/api/v1/system/reload')).status, 'success');
      let back: string[] = [];
      for (let i = 0; i < 100 && back.length === 0; i++) {
        back = nflogPrefixes(await firewall.dump(), '# iptables');
        if (back.length === 0) await new Promise((r) => setTimeout(r, 20));
      }
      assert.deepEqual(back, ['related', 'untracked']);
    } finally {
      await h.close();
    }
  });

  it('a dead ulogd shows in GET /system/status while logging runs', async () => {
    const h = await makeTlHarness();
    try {
      const status = async () => (env(await h.call('GET', '/api/v1/system/status')).msg as { status: string }).status;
      await h.call('PUT', '/api/v1/traffic_logging', { enabled: '1', enabled_remote_syslog: '1', remote_syslog_server: '127.0.0.1' });
      for (let i = 0; i < 100 && (await status()) !== 'OK'; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await status(), 'OK');
      h.source.down = 'ulogd: exit code 1';
      assert.equal(await status(), 'Error: traffic logging: ulogd: exit code 1');
      h.source.down = null;
      assert.equal(await status(), 'OK');
      h.source.down = 'ulogd: exit code 1';
      await h.call('PUT', '/api/v1/traffic_logging', { enabled: '0' });
      assert.equal(await status(), 'OK', 'logging off: nothing to report');
    } finally {
      await h.close();
    }
  });
});
