// GET /metrics: strict Prometheus text with peers, bytes, handshake ages, API and reconcile timings; bearer or access-hash auth.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePromText, type PromFamily } from '../../unit/metrics/prom-text.ts';
import type { SimulatedDns } from '../../../panel/dataplane/dns/simulated/simulated-dns.ts';
import { makePanel, type TestPanel } from '../wireguard/panel-fixture.ts';

const TOKEN = 'metrics-token-0123456789';

async function scrape(p: TestPanel, headers: Record<string, string>) {
  return p.app.inject({ method: 'GET', url: '/metrics', headers });
}

const value = (f: PromFamily | undefined, labels: Record<string, string>, name = f?.name) =>
  f?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

test('/metrics: peers per server and state, bytes, handshake ages, API and reconcile timings, no per-peer series by default', async () => {
  const now = new Date('2025-03-04T10:00:00Z');
  const p = await makePanel({ clock: { now: () => now }, deps: { metricsToken: TOKEN } });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv', address: '10.0.1.1/24' });
    const a = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'alice' });
    const b = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'bob' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.4', name: 'carol' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.5', name: 'dave', status: 'disable' });
    const t = Math.floor(now.getTime() / 1000);
    p.driver.simulateHandshake('wg0', a.public_key, { endpoint: '198.51.100.1:1', at: t - 10, rx: 1000, tx: 5000 });
    p.driver.simulateHandshake('wg0', b.public_key, { endpoint: '198.51.100.2:2', at: t - 2000, rx: 1, tx: 2 });
    await p.ok('PUT', '/system/reload');
    await p.app.services.reconciler.whenIdle();

    const res = await scrape(p, { authorization: `Bearer ${TOKEN}` });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const families = parsePromText(res.body);
    const peers = families.get('vpnhost_peers');
    assert.equal(peers?.type, 'gauge');
    assert.equal(value(peers, { server: 'srv', state: 'enable' }), 3);
    assert.equal(value(peers, { server: 'srv', state: 'disable' }), 1);
    assert.equal(value(peers, { server: 'srv', state: 'online' }), 1);
    const bytes = families.get('vpnhost_server_bytes');
    assert.equal(value(bytes, { server: 'srv', direction: 'rx' }), 1001);
    assert.equal(value(bytes, { server: 'srv', direction: 'tx' }), 5002);
    const ages = families.get('vpnhost_peers_handshake_age');
    assert.equal(value(ages, { server: 'srv', age: 'le_120' }), 1);
    assert.equal(value(ages, { server: 'srv', age: 'le_3600' }), 1);
    assert.equal(value(ages, { server: 'srv', age: 'never' }), 1);
    assert.equal(value(ages, { server: 'srv', age: 'older' }), 0);
    const api = families.get('vpnhost_api_request_duration_seconds');
    assert.equal(api?.type, 'histogram');
    assert.equal(value(api, { method: 'POST', route: '/api/v1/account', status: '200' }, 'vpnhost_api_request_duration_seconds_count'), 4);
    assert.ok(!api!.samples.some((s) => s.labels.route?.includes('alice')), 'route patterns, never raw URLs');
    const reconcile = families.get('vpnhost_reconcile_duration_seconds');
    assert.ok((value(reconcile, { result: 'ok' }, 'vpnhost_reconcile_duration_seconds_count') ?? 0) >= 1);
    for (const name of ['vpnhost_statistics_sample_duration_seconds', 'vpnhost_traffic_logging_backlog', 'vpnhost_traffic_logging_dropped_total']) {
      assert.ok(families.has(name), name);
    }
    assert.ok(!families.has('vpnhost_peer_bytes'));
    assert.ok(!res.body.includes(a.public_key) && !res.body.includes('alice'), 'no per-peer label by default');

    // The typed hooks other services fill.
    p.app.services.metrics.setLoggingBacklog('syslog', 7);
    p.app.services.metrics.addLoggingDropped('tsdb', 3);
    p.app.services.metrics.observeSample(0.02);
    const again = parsePromText((await scrape(p, { cookie: p.cookie })).body);
    assert.equal(value(again.get('vpnhost_traffic_logging_backlog'), { sink: 'syslog' }), 7);
    assert.equal(value(again.get('vpnhost_traffic_logging_dropped_total'), { sink: 'tsdb' }), 3);
    assert.equal(value(again.get('vpnhost_statistics_sample_duration_seconds'), {}, 'vpnhost_statistics_sample_duration_seconds_count'), 1);
  } finally {
    await p.close();
  }
});

test('/metrics per-peer series only with metricsPerPeer', async () => {
  const p = await makePanel({ deps: { metricsPerPeer: true } });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv', address: '10.0.1.1/24' });
    const a = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'alice' });
    p.driver.simulateHandshake('wg0', a.public_key, { endpoint: '198.51.100.1:1', rx: 11, tx: 22 });
    const families = parsePromText((await scrape(p, { cookie: p.cookie })).body);
    assert.equal(value(families.get('vpnhost_peer_bytes'), { peer: 'alice', server: 'srv', direction: 'tx' }), 22);
  } finally {
    await p.close();
  }
});

test('/metrics auth: the bearer token or an access hash; anything else is Not authorized', async () => {
  const withToken = await makePanel({ deps: { metricsToken: TOKEN } });
  const without = await makePanel();
  try {
    const refused = { error: 'Not authorized', msg: '', status: 'error' };
    for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${TOKEN}x` }, { authorization: `bearer ${TOKEN}` }, { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { authorization: `Basic ${TOKEN}` }, { cookie: `access_hash=${'0'.repeat(80)}` }]) {
      const res = await scrape(withToken, headers);
      assert.equal(res.statusCode, 401, JSON.stringify(headers));
      assert.deepEqual(res.json(), refused);
    }
    assert.equal((await scrape(withToken, { authorization: `Bearer ${TOKEN}` })).statusCode, 200);
    assert.equal((await scrape(withToken, { cookie: withToken.cookie })).statusCode, 200);
    // Without a configured token no bearer value opens it; the access hash does.
    assert.equal((await scrape(without, { authorization: `Bearer ${TOKEN}` })).statusCode, 401);
    assert.equal((await scrape(without, { authorization: 'Bearer ' })).statusCode, 401);
    assert.equal((await scrape(without, { cookie: without.cookie })).statusCode, 200);
  } finally {
    await withToken.close();
    await without.close();
  }
});

test('/metrics reads the traffic-logging sinks when scraped and times the statistics samples', async () => {
  const p = await makePanel();
  try {
    const stats = [{ sink: 'syslog', backlog: 4, dropped: 3, sent: 10, failures: 1 }];
    p.app.services.trafficLogging.stats = () => stats;
    const first = parsePromText((await scrape(p, { cookie: p.cookie })).body);
    assert.equal(value(first.get('vpnhost_traffic_logging_backlog'), { sink: 'syslog' }), 4);
    assert.equal(value(first.get('vpnhost_traffic_logging_dropped_total'), { sink: 'syslog' }), 3);
    stats[0] = { ...stats[0], backlog: 0, dropped: 5 };
    const second = parsePromText((await scrape(p, { cookie: p.cookie })).body);
    assert.equal(value(second.get('vpnhost_traffic_logging_backlog'), { sink: 'syslog' }), 0);
    assert.equal(value(second.get('vpnhost_traffic_logging_dropped_total'), { sink: 'syslog' }), 5, 'the counter takes the growth');

    const { scheduler } = p.app.services.statistics;
    scheduler.start();
    await scheduler.stop(); // a stop always takes a last sample through the scheduler's sample()
    const after = parsePromText((await scrape(p, { cookie: p.cookie })).body);
    assert.equal(value(after.get('vpnhost_statistics_sample_duration_seconds'), {}, 'vpnhost_statistics_sample_duration_seconds_count'), 1);
  } finally {
    await p.close();
  }
});

test('/metrics daemons: the wanted ones up or down, restarts by the watchdog counted', async () => {
  const p = await makePanel({ licenseAccounts: 10 });
  try {
    const daemons = async () => {
      const f = parsePromText((await scrape(p, { cookie: p.cookie })).body);
      return { up: f.get('vpnhost_daemon_up'), restarts: f.get('vpnhost_daemon_restarts') };
    };
    assert.deepEqual((await daemons()).up?.samples ?? [], [], 'nothing wanted: no series');
    await p.ok('POST', '/wireguard', { name: 'srv', address: '10.0.1.1/24' });
    await p.ok('PUT', '/dns', { enabled: '1' });
    let m = await daemons();
    assert.equal(value(m.up, { daemon: 'unbound' }), 1);
    assert.equal(value(m.restarts, { daemon: 'unbound' }), 0);
    assert.equal(value(m.up, { daemon: 'charon' }), undefined, 'IKEv2 off: charon not wanted');

    const dns = p.dataplane.dns as SimulatedDns;
    dns.crash();
    m = await daemons();
    assert.equal(value(m.up, { daemon: 'unbound' }), 0);
    await p.app.services.watchdog.check();
    m = await daemons();
    assert.equal(value(m.up, { daemon: 'unbound' }), 1);
    assert.equal(value(m.restarts, { daemon: 'unbound' }), 1);
  } finally {
    await p.close();
  }
});
