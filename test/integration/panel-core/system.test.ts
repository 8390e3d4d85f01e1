// System endpoints through inject(): status with real counts, info, reload, config get/change/reset with every edge.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { E } from '../../../panel/http/errors.ts';
import { manualClock } from '../../../shared/clock.ts';
import { envelope, makeHarness } from './harness.ts';

describe('GET /system/status', () => {
  it('answers real counts, free-tier license fields, OK and the version', async () => {
    const at = new Date('2026-11-27T10:20:30.000Z');
    const h = await makeHarness({ clock: manualClock(at) });
    try {
      let body = envelope(await h.call('GET', '/api/v1/system/status'));
      const stamp = (body.msg as { license: string }).license;
      assert.match(stamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/, 'the free tier answers an ISO 8601 timestamp too');
      assert.equal(new Date(stamp).getTime(), at.getTime(), "the time of the answer: the panel clock's now");
      assert.deepEqual(body, {
        error: '',
        msg: { count_accounts: 0, count_accounts_available: 50, count_wireguard: 0, license: stamp, license_valid: false, status: 'OK', version: '9.9.9-test' },
        status: 'success',
      });
      const server = envelope(await h.call('POST', '/api/v1/wireguard', { form: { name: 'office' } }));
      assert.equal(server.status, 'success', server.error);
      const ips = envelope(await h.call('GET', '/api/v1/wireguard/office/available_ips')).msg as string[];
      for (const ip of ips.slice(0, 2)) {
        const acc = envelope(await h.call('POST', '/api/v1/account', { form: { wg_name: 'office', allowed_IPs: ip } }));
        assert.equal(acc.status, 'success', acc.error);
      }
      const res = await h.call('GET', '/api/v1/system/status');
      assert.equal(res.statusCode, 200);
      body = envelope(res);
      const msg = body.msg as Record<string, unknown>;
      assert.equal(msg.count_accounts, 2);
      assert.equal(msg.count_wireguard, 1);
      assert.equal(msg.count_accounts_available, 48);
    } finally {
      await h.close();
    }
  });

  it('shows Loading (<done>/<total>) while a reconcile runs and refuses a reload meanwhile', async () => {
    const h = await makeHarness();
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const isStarted = new Promise<void>((resolve) => (started = resolve));
      const running = h.app.services.reconciler.run(async (progress) => {
        progress(3, 10);
        started();
        await gate;
      });
      await isStarted;
      const status = envelope(await h.call('GET', '/api/v1/system/status'));
      assert.equal((status.msg as { status: string }).status, 'Loading (3/10)');
      const reload = await h.call('PUT', '/api/v1/system/reload');
      assert.equal(reload.statusCode, 409);
      assert.deepEqual(envelope(reload), { error: E.CONTROLPANEL_STATUS_NOT_OK, msg: '', status: 'error' });
      release();
      await running;
      assert.equal((envelope(await h.call('GET', '/api/v1/system/status')).msg as { status: string }).status, 'OK');
    } finally {
      await h.close();
    }
  });

  it('reports an unhealthy data plane and a failed reconcile; a good reload clears the failure', async () => {
    const h = await makeHarness();
    try {
      await assert.rejects(h.app.services.reconciler.run(async () => {
        throw new Error('wg set failed');
      }));
      let status = (envelope(await h.call('GET', '/api/v1/system/status')).msg as { status: string }).status;
      assert.equal(status, 'Error: reconcile failed: wg set failed');
      const ok = await h.call('PUT', '/api/v1/system/reload');
      assert.deepEqual(envelope(ok), { error: '', msg: 'success', status: 'success' });
      status = (envelope(await h.call('GET', '/api/v1/system/status')).msg as { status: string }).status;
      assert.equal(status, 'OK');

      h.driver.health = async () => ({ ok: false, detail: 'wg: command not found' });
      status = (envelope(await h.call('GET', '/api/v1/system/status')).msg as { status: string }).status;
      assert.equal(status, 'Error: data plane not healthy: wg: command not found');
      const reload = await h.call('PUT', '/api/v1/system/reload');
      assert.equal(reload.statusCode, 409);
      assert.equal(envelope(reload).error, E.CONTROLPANEL_STATUS_NOT_OK);
    } finally {
      await h.close();
    }
  });
});

describe('PUT /system/reload', () => {
  it('re-creates data-plane state the store holds (full reconcile)', async () => {
    const h = await makeHarness();
    try {
      const created = envelope(await h.call('POST', '/api/v1/wireguard', { form: { name: 'edge' } }));
      assert.equal(created.status, 'success', created.error);
      const iface = (created.msg as { interface_name: string }).interface_name;
      await h.driver.removeInterface(iface);
      assert.equal(await h.driver.inspect(iface), null);
      const res = await h.call('PUT', '/api/v1/system/reload');
      assert.equal(res.statusCode, 200);
      assert.deepEqual(envelope(res), { error: '', msg: 'success', status: 'success' });
      assert.notEqual(await h.driver.inspect(iface), null);
    } finally {
      await h.close();
    }
  });
});

describe('GET /system/info', () => {
  it('answers every field as a non-empty string', async () => {
    const h = await makeHarness();
    try {
      const res = await h.call('GET', '/api/v1/system/info');
      assert.equal(res.statusCode, 200);
      const msg = envelope(res).msg as Record<string, unknown>;
      const fields = ['cpu_model', 'cpu_threads', 'cpu_used_load1', 'cpu_used_load5', 'cpu_used_load15', 'hostname', 'memory_free',
        'memory_total', 'memory_used', 'memory_used_percent', 'os_architecture', 'os_name', 'timezone'];
      assert.deepEqual(Object.keys(msg).sort(), fields.sort());
      for (const f of fields) assert.ok(typeof msg[f] === 'string' && (msg[f] as string).length > 0, f);
      assert.ok(Number(msg.memory_total) >= Number(msg.memory_used));
      assert.ok(Number(msg.cpu_threads) >= 1);
    } finally {
      await h.close();
    }
  });
});

describe('/system/config', () => {
  const defaults = { traffic_statistics_frequency: 5, traffic_statistics_history: 2, wireguard_handshake_uptime: 180 };

  it('GET answers defaults; PUT changes given fields (form and JSON); default resets to 5/2/180', async () => {
    const h = await makeHarness();
    try {
      assert.deepEqual(envelope(await h.call('GET', '/api/v1/system/config')).msg, defaults);
      let res = await h.call('PUT', '/api/v1/system/config', { form: { traffic_statistics_frequency: '60' } });
      assert.deepEqual(envelope(res).msg, { ...defaults, traffic_statistics_frequency: 60 });
      res = await h.call('PUT', '/api/v1/system/config', { json: { traffic_statistics_history: 30, wireguard_handshake_uptime: '300' } });
      assert.deepEqual(envelope(res).msg, { traffic_statistics_frequency: 60, traffic_statistics_history: 30, wireguard_handshake_uptime: 300 });
      assert.deepEqual(envelope(await h.call('GET', '/api/v1/system/config')).msg, { traffic_statistics_frequency: 60, traffic_statistics_history: 30, wireguard_handshake_uptime: 300 });
      res = await h.call('PUT', '/api/v1/system/config/default');
      assert.deepEqual(envelope(res), { error: '', msg: defaults, status: 'success' });
      assert.deepEqual(envelope(await h.call('GET', '/api/v1/system/config')).msg, defaults);
    } finally {
      await h.close();
    }
  });

  it('enforces every range with the exact texts, in the spec order, leaving the config unchanged', async () => {
    const h = await makeHarness();
    try {
      const cases: Array<[string, string, string | null]> = [
        ['traffic_statistics_frequency', '0', E.CONFIG_FREQUENCY],
        ['traffic_statistics_frequency', '1', null],
        ['traffic_statistics_frequency', '1440', null],
        ['traffic_statistics_frequency', '1441', E.CONFIG_FREQUENCY],
        ['traffic_statistics_frequency', '-1', E.CONFIG_FREQUENCY],
        ['traffic_statistics_frequency', 'abc', E.CONFIG_FREQUENCY],
        ['traffic_statistics_frequency', '2147483647', E.CONFIG_FREQUENCY],
        ['traffic_statistics_frequency', '', E.CONFIG_FREQUENCY],
        ['traffic_statistics_frequency', '5.5', E.CONFIG_FREQUENCY],
        ['traffic_statistics_history', '0', null],
        ['traffic_statistics_history', '2147483647', null],
        ['traffic_statistics_history', '2147483648', E.CONFIG_HISTORY],
        ['traffic_statistics_history', '-1', E.CONFIG_HISTORY],
        ['traffic_statistics_history', 'x', E.CONFIG_HISTORY],
        ['wireguard_handshake_uptime', '0', E.CONFIG_HANDSHAKE],
        ['wireguard_handshake_uptime', '1', null],
        ['wireguard_handshake_uptime', '300', null],
        ['wireguard_handshake_uptime', '301', E.CONFIG_HANDSHAKE],
        ['wireguard_handshake_uptime', '-1', E.CONFIG_HANDSHAKE],
        ['wireguard_handshake_uptime', 'ten', E.CONFIG_HANDSHAKE],
      ];
      for (const [field, value, error] of cases) {
        const before = envelope(await h.call('GET', '/api/v1/system/config')).msg as Record<string, number>;
        const res = await h.call('PUT', '/api/v1/system/config', { form: { [field]: value } });
        const body = envelope(res);
        if (error) {
          assert.equal(res.statusCode, 400, `${field}=${value}`);
          assert.deepEqual(body, { error, msg: '', status: 'error' }, `${field}=${value}`);
          assert.deepEqual(envelope(await h.call('GET', '/api/v1/system/config')).msg, before);
        } else {
          assert.equal(res.statusCode, 200, `${field}=${value}: ${body.error}`);
          assert.equal((body.msg as Record<string, number>)[field], Number(value));
        }
      }
      // Order of checks: frequency, then history, then handshake uptime; nothing is written when one fails.
      const all = { traffic_statistics_frequency: '0', traffic_statistics_history: '-1', wireguard_handshake_uptime: '0' };
      assert.equal(envelope(await h.call('PUT', '/api/v1/system/config', { form: all })).error, E.CONFIG_FREQUENCY);
      assert.equal(envelope(await h.call('PUT', '/api/v1/system/config', { form: { ...all, traffic_statistics_frequency: '10' } })).error, E.CONFIG_HISTORY);
      const before = envelope(await h.call('GET', '/api/v1/system/config')).msg;
      assert.equal(envelope(await h.call('PUT', '/api/v1/system/config', { form: { traffic_statistics_frequency: '10', traffic_statistics_history: '1', wireguard_handshake_uptime: '0' } })).error, E.CONFIG_HANDSHAKE);
      assert.deepEqual(envelope(await h.call('GET', '/api/v1/system/config')).msg, before);
      // JSON: non-integers and repeated form keys are refused with the field's text.
      assert.equal(envelope(await h.call('PUT', '/api/v1/system/config', { json: { wireguard_handshake_uptime: 12.5 } })).error, E.CONFIG_HANDSHAKE);
      assert.equal(envelope(await h.call('PUT', '/api/v1/system/config', { json: { traffic_statistics_history: true } })).error, E.CONFIG_HISTORY);
      const repeated = await h.app.inject({
        method: 'PUT', url: '/api/v1/system/config', payload: 'traffic_statistics_frequency=1&traffic_statistics_frequency=2',
        headers: { cookie: `access_hash=${h.hash}`, 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(envelope(repeated).error, E.CONFIG_FREQUENCY);
    } finally {
      await h.close();
    }
  });

  it('stores the config as a settings row in SQLite', async () => {
    const h = await makeHarness();
    try {
      await h.call('PUT', '/api/v1/system/config', { form: { traffic_statistics_history: '9' } });
      const row = h.db.prepare("SELECT value FROM settings WHERE key = 'system_config'").get() as { value: string };
      assert.equal(JSON.parse(row.value).traffic_statistics_history, 9);
    } finally {
      await h.close();
    }
  });
});
