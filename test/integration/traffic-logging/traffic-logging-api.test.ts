// GET/PUT /traffic_logging through inject(): defaults, every format and spec check in order, sealed token, mask.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { E, OWN, flagFormatError } from '../../../shared/wire/error-texts.ts';
import { TSDB_TOKEN_MASK } from '../../../panel/schemas/traffic-logging.ts';
import { env, makeTlHarness } from './harness.ts';

const TSDB = { tsdb_url: 'http://127.0.0.1:8086', tsdb_token: 'tok-secret-123456', tsdb_bucket: 'flows', tsdb_organization: 'acme' };
const DEFAULTS = {
  enabled: false, enabled_tsdb: false, enabled_remote_syslog: false,
  established: false, incoming: false, interface_in: false, interface_out: false, invalid: false, len: false, mark: false,
  new: true, related: false, tos: false, untracked: false,
  tsdb_bucket: '', tsdb_organization: '', tsdb_token: '', tsdb_url: '', remote_syslog_server: '', remote_syslog_server_port: 514,
};

describe('GET /traffic_logging', () => {
  it('answers the defaults, and Not authorized without the cookie', async () => {
    const h = await makeTlHarness();
    try {
      assert.deepEqual(env(await h.call('GET', '/api/v1/traffic_logging')), { error: '', msg: DEFAULTS, status: 'success' });
      const res = await h.call('GET', '/api/v1/traffic_logging', undefined, false);
      assert.equal(res.statusCode, 401);
      assert.equal(env(res).error, E.NOT_AUTHORIZED);
      assert.equal((await h.call('PUT', '/api/v1/traffic_logging', { enabled: '0' }, false)).statusCode, 401);
    } finally {
      await h.close();
    }
  });
});

describe('PUT /traffic_logging', () => {
  it('refuses malformed values with their own texts and changes nothing', async () => {
    const h = await makeTlHarness();
    try {
      const cases: Array<[Record<string, string>, string]> = [
        [{ enabled: 'yes' }, flagFormatError('enabled')],
        [{ enabled_tsdb: '2' }, flagFormatError('enabled_tsdb')],
        [{ tos: '' }, flagFormatError('tos')],
        [{ untracked: 'x' }, flagFormatError('untracked')],
        [{ remote_syslog_server: '10.0.0' }, OWN.TL_WRONG_SYSLOG_SERVER],
        [{ remote_syslog_server: 'syslog.example' }, OWN.TL_WRONG_SYSLOG_SERVER],
        [{ remote_syslog_server: '::1' }, OWN.TL_WRONG_SYSLOG_SERVER],
        [{ remote_syslog_server_port: '0' }, OWN.TL_WRONG_SYSLOG_PORT],
        [{ remote_syslog_server_port: '65536' }, OWN.TL_WRONG_SYSLOG_PORT],
        [{ remote_syslog_server_port: '5x' }, OWN.TL_WRONG_SYSLOG_PORT],
        [{ tsdb_url: 'ftp://x' }, OWN.TL_WRONG_TSDB_URL],
        [{ tsdb_url: 'not a url' }, OWN.TL_WRONG_TSDB_URL],
        [{ tsdb_bucket: 'a\nb' }, OWN.TL_WRONG_TSDB_TEXT],
      ];
      for (const [form, text] of cases) {
        const res = await h.call('PUT', '/api/v1/traffic_logging', form);
        assert.equal(res.statusCode, 400, JSON.stringify(form));
        assert.deepEqual(env(res), { error: text, msg: '', status: 'error' }, JSON.stringify(form));
      }
      assert.deepEqual(env(await h.call('GET', '/api/v1/traffic_logging')).msg, DEFAULTS);
    } finally {
      await h.close();
    }
  });

  it('runs the spec checks in order on the merged config, each refusal leaving the stored config as it was', async () => {
    const h = await makeTlHarness();
    try {
      const put = async (form: Record<string, string>) => env(await h.call('PUT', '/api/v1/traffic_logging', form));
      // Syslog server first, even when the agent is missing too.
      h.source.installed = false;
      assert.equal((await put({ enabled: '1', enabled_remote_syslog: '1' })).error, E.TL_SYSLOG_SERVER_MUST_BE_FILLED);
      const missing = await h.call('PUT', '/api/v1/traffic_logging', { enabled: '1', enabled_remote_syslog: '1', remote_syslog_server: '127.0.0.1' });
      assert.equal(missing.statusCode, 409);
      assert.equal(env(missing).error, E.TL_TSDB_NOT_INSTALLED);
      assert.equal((await put({ enabled: '1', enabled_tsdb: '1', ...TSDB })).error, E.TL_TSDB_NOT_INSTALLED);
      h.source.installed = true;
      assert.equal((await put({ enabled: '1', enabled_tsdb: '1' })).error, E.TL_TSDB_URL_MUST_BE_FILLED);
      assert.equal((await put({ enabled: '1', enabled_tsdb: '1', tsdb_url: TSDB.tsdb_url })).error, E.TL_TSDB_TOKEN_MUST_BE_FILLED);
      assert.equal((await put({ enabled: '1', enabled_tsdb: '1', tsdb_url: TSDB.tsdb_url, tsdb_token: 't' })).error, E.TL_TSDB_BUCKET_MUST_BE_FILLED);
      assert.equal(
        (await put({ enabled: '1', enabled_tsdb: '1', tsdb_url: TSDB.tsdb_url, tsdb_token: 't', tsdb_bucket: 'b' })).error,
        E.TL_TSDB_ORGANIZATION_MUST_BE_FILLED,
      );
      assert.equal((await put({ enabled: '1', tsdb_bucket: ' ' })).error, E.TL_ONE_METHOD);
      const res = await h.call('PUT', '/api/v1/traffic_logging', { enabled: '1', enabled_tsdb: '0', enabled_remote_syslog: '0' });
      assert.equal(res.statusCode, 400);
      assert.equal(env(res).error, E.TL_ONE_METHOD);
      assert.deepEqual(env(await h.call('GET', '/api/v1/traffic_logging')).msg, DEFAULTS, 'every refusal left the defaults');
      assert.equal(h.app.services.trafficLogging.running, null);
    } finally {
      await h.close();
    }
  });

  it('stores a disabled config without checks, seals the token, masks it and keeps it when the mask comes back', async () => {
    const h = await makeTlHarness();
    try {
      h.source.installed = false;
      let body = env(await h.call('PUT', '/api/v1/traffic_logging', { enabled_tsdb: '1', tsdb_token: TSDB.tsdb_token, tos: '1', new: 'false' }));
      assert.equal(body.status, 'success', body.error);
      assert.deepEqual(body.msg, { ...DEFAULTS, enabled_tsdb: true, tsdb_token: TSDB_TOKEN_MASK, tos: true, new: false });
      const row = h.db.prepare('SELECT * FROM traffic_logging').get() as Record<string, unknown>;
      assert.ok(!JSON.stringify(row).includes(TSDB.tsdb_token), 'the token is not stored in clear');
      assert.match(String(row.tsdb_token_sealed), /^enc:v1:/);
      h.source.installed = true;
      body = env(await h.call('PUT', '/api/v1/traffic_logging', {
        enabled: '1', tsdb_url: TSDB.tsdb_url, tsdb_token: TSDB_TOKEN_MASK, tsdb_bucket: 'flows', tsdb_organization: 'acme',
        remote_syslog_server: '127.0.0.1', remote_syslog_server_port: '65535', enabled_remote_syslog: 'true',
      }));
      assert.equal(body.status, 'success', body.error);
      const expected = {
        ...DEFAULTS, enabled: true, enabled_tsdb: true, enabled_remote_syslog: true, tos: true, new: false, tsdb_token: TSDB_TOKEN_MASK,
        tsdb_url: TSDB.tsdb_url, tsdb_bucket: 'flows', tsdb_organization: 'acme', remote_syslog_server: '127.0.0.1', remote_syslog_server_port: 65535,
      };
      assert.deepEqual(body.msg, expected);
      assert.deepEqual(env(await h.call('GET', '/api/v1/traffic_logging')).msg, expected);
      assert.ok(h.app.services.trafficLogging.running, 'the pipeline runs');
      assert.equal(h.source.subscribers, 1);
      // JSON bodies and clearing the token: the TSDB check then refuses.
      const json = await h.putJson('/api/v1/traffic_logging', { tsdb_token: '', len: true });
      assert.equal(env(json).error, E.TL_TSDB_TOKEN_MUST_BE_FILLED);
      assert.equal(env(await h.putJson('/api/v1/traffic_logging', { len: 1 })).status, 'success', 'JSON booleans and 1/0');
      body = env(await h.call('PUT', '/api/v1/traffic_logging', { enabled: '0' }));
      assert.equal(body.status, 'success');
      assert.equal(h.app.services.trafficLogging.running, null, 'disabled: the pipeline stops');
      assert.equal(h.source.subscribers, 0);
    } finally {
      await h.close();
    }
  });
});
