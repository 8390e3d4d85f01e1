// GET/PUT /dns through inject() on the simulated twin: license gate, defaults, every text and range edge, live
// changes, servers followed, config_text DNS, crash in /system/status and restart by /system/reload.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import type { SimulatedDns } from '../../../panel/dataplane/dns/simulated/simulated-dns.ts';
import type { DnsStatus } from '../../../panel/schemas/dns.ts';
import { issueLicenseKey } from '../../../panel/services/license-key.ts';
import { envelope, makeHarness, type Harness } from '../panel-core/harness.ts';

const vendor = generateKeyPairSync('ed25519');
const publicKey = vendor.publicKey.export({ type: 'spki', format: 'pem' }) as string;

async function licensed(): Promise<Harness> {
  const h = await makeHarness({ licensePublicKey: publicKey });
  h.app.services.license.install(await issueLicenseKey(vendor.privateKey, { accounts: 100, expires: new Date(Date.now() + 86_400_000) }));
  return h;
}

async function getDns(h: Harness): Promise<DnsStatus> {
  const body = envelope(await h.call('GET', '/api/v1/dns'));
  assert.equal(body.error, '');
  return body.msg as DnsStatus;
}

async function putDns(h: Harness, form: Record<string, string>) {
  const res = await h.call('PUT', '/api/v1/dns', { form });
  return { statusCode: res.statusCode, body: envelope(res) };
}

async function systemStatusText(h: Harness): Promise<string> {
  return (envelope(await h.call('GET', '/api/v1/system/status')).msg as { status: string }).status;
}

function twin(h: Harness): SimulatedDns {
  return h.dataplane.dns as SimulatedDns;
}

describe('DNS API', () => {
  it('answers The license is not active to GET and PUT without a valid license, and changes nothing', async () => {
    const h = await makeHarness({ licensePublicKey: publicKey });
    try {
      for (const [method, form] of [['GET', undefined], ['PUT', { enabled: '1' }]] as const) {
        const res = await h.call(method, '/api/v1/dns', form ? { form } : {});
        assert.equal(res.statusCode, 409);
        assert.deepEqual(envelope(res), { error: 'The license is not active', msg: '', status: 'error' });
      }
      assert.equal((await twin(h).state()).running, false);
    } finally {
      await h.close();
    }
  });

  it('shows the defaults, follows servers in acl, starts on enabled=1 and hands the server address out as DNS', async () => {
    const h = await licensed();
    try {
      assert.deepEqual(await getDns(h), {
        acl: [], dnsd: '1.17.1', enabled: false, forwarders_1: '1.1.1.1', forwarders_2: '8.8.8.8', max_cache_ttl: '3600', pid: '',
      });
      const server = envelope(await h.call('POST', '/api/v1/wireguard', { form: { name: 'office', address: '10.61.0.1/24' } }));
      assert.equal(server.error, '');
      const account = envelope(await h.call('POST', '/api/v1/account', { form: { wg_name: 'office', name: 'alice', allowed_IPs: '10.61.0.2' } }));
      assert.equal(account.error, '');
      assert.deepEqual((await getDns(h)).acl, ['10.61.0.0/24']);
      const before = envelope(await h.call('GET', '/api/v1/account/alice/config_text')).msg as string;
      assert.match(before, /^DNS = 1\.1\.1\.1, ?8\.8\.8\.8$/m, 'DNS off: the server dns_1/dns_2');
      assert.deepEqual(h.app.services.dns.dnsAddressesFor('office'), []);

      const put = await putDns(h, { enabled: '1' });
      assert.equal(put.statusCode, 200);
      const on = put.body.msg as DnsStatus;
      assert.equal(on.enabled, true);
      assert.match(on.pid, /^\d+$/);
      assert.deepEqual(on, await getDns(h), 'PUT answers the DnsStatus after the change');
      assert.deepEqual(twin(h).applied(), { listen: ['10.61.0.1'], acl: ['10.61.0.0/24'], forwarders: ['1.1.1.1', '8.8.8.8'], maxCacheTtl: 3600 });
      const text = envelope(await h.call('GET', '/api/v1/account/alice/config_text')).msg as string;
      assert.match(text, /^DNS = 10\.61\.0\.1$/m);
      assert.deepEqual(h.app.services.dns.dnsAddressesFor('office'), ['10.61.0.1']);
      assert.deepEqual(h.app.services.dns.dnsAddressesFor('nope'), []);

      // A second server: listen and acl follow (restart: unbound binds at start); deleting it goes back.
      assert.equal(envelope(await h.call('POST', '/api/v1/wireguard', { form: { name: 'lab', address: '10.62.0.1/24' } })).error, '');
      assert.deepEqual(twin(h).applied()?.listen, ['10.61.0.1', '10.62.0.1']);
      assert.deepEqual((await getDns(h)).acl, ['10.61.0.0/24', '10.62.0.0/24']);
      assert.equal(envelope(await h.call('DELETE', '/api/v1/wireguard/lab')).error, '');
      assert.deepEqual(twin(h).applied()?.listen, ['10.61.0.1']);

      // Forwarders and TTL change live: same pid.
      const pid = (await getDns(h)).pid;
      const live = (await putDns(h, { forwarders_1: '9.9.9.9', forwarders_2: '', max_cache_ttl: '30' })).body.msg as DnsStatus;
      assert.equal(live.pid, pid);
      assert.deepEqual([live.forwarders_1, live.forwarders_2, live.max_cache_ttl], ['9.9.9.9', '', '30']);
      assert.deepEqual(twin(h).applied()?.forwarders, ['9.9.9.9']);
      assert.equal((await putDns(h, { max_cache_ttl: '3600', forwarders_2: '2001:4860:4860::8888' })).body.error, '');
      assert.deepEqual(twin(h).applied()?.forwarders, ['9.9.9.9', '2001:4860:4860::8888']);

      const off = (await putDns(h, { enabled: '0' })).body.msg as DnsStatus;
      assert.equal(off.enabled, false);
      assert.equal(off.pid, '');
      assert.match(envelope(await h.call('GET', '/api/v1/account/alice/config_text')).msg as string, /^DNS = 1\.1\.1\.1, ?8\.8\.8\.8$/m);
    } finally {
      await h.close();
    }
  });

  it('refuses bad input with the exact texts and leaves the settings and the running resolver untouched', async () => {
    const h = await licensed();
    try {
      assert.equal(envelope(await h.call('POST', '/api/v1/wireguard', { form: { name: 'office', address: '10.61.0.1/24' } })).error, '');
      assert.equal((await putDns(h, { enabled: 'true', max_cache_ttl: '600' })).body.error, '');
      const before = await getDns(h);
      const applied = twin(h).applied();
      const cases: Array<[Record<string, string>, string]> = [
        [{ forwarders_1: 'dns.example' }, 'Incorrect data in Forwarder1 parameters'],
        [{ forwarders_1: '' }, 'Incorrect data in Forwarder1 parameters'],
        [{ forwarders_1: '1.1.1.1.1' }, 'Incorrect data in Forwarder1 parameters'],
        [{ forwarders_1: '127.0.0.1' }, 'Incorrect data in Forwarder1 parameters'],
        [{ forwarders_1: '1.1.1.1\n    interface: 0.0.0.0' }, 'Incorrect data in Forwarder1 parameters'],
        [{ forwarders_2: '0.0.0.0' }, 'Incorrect data in Forwarder2 parameters'],
        [{ forwarders_2: 'x'.repeat(100_000) }, 'Incorrect data in Forwarder2 parameters'],
        [{ forwarders_2: 'ff02::1' }, 'Incorrect data in Forwarder2 parameters'],
        [{ max_cache_ttl: '29' }, 'Incorrect value Max Cache TTL (should be 30 to 3600)'],
        [{ max_cache_ttl: '3601' }, 'Incorrect value Max Cache TTL (should be 30 to 3600)'],
        [{ max_cache_ttl: '60s' }, 'Incorrect value Max Cache TTL (should be 30 to 3600)'],
        [{ max_cache_ttl: '' }, 'Incorrect value Max Cache TTL (should be 30 to 3600)'],
        [{ enabled: 'yes' }, 'Wrong enabled format (1 or 0)'],
        [{ enabled: '0', forwarders_1: 'bad' }, 'Incorrect data in Forwarder1 parameters'],
      ];
      for (const [form, text] of cases) {
        const res = await putDns(h, form);
        assert.equal(res.statusCode, 400, JSON.stringify(form));
        assert.deepEqual(res.body, { error: text, msg: '', status: 'error' });
        assert.deepEqual(await getDns(h), before);
        assert.deepEqual(twin(h).applied(), applied);
      }
      for (const ttl of ['30', '3600']) assert.equal((await putDns(h, { max_cache_ttl: ttl })).body.error, '', `edge ${ttl}`);
      assert.equal((await putDns(h, { forwarders_1: ' 2606:4700:4700::1111 ' })).body.error, '');
      assert.equal((await getDns(h)).forwarders_1, '2606:4700:4700::1111');
      assert.equal((await getDns(h)).pid, before.pid, 'valid live changes kept the process');
    } finally {
      await h.close();
    }
  });

  it('a resolver that cannot start answers DNS resolver error: and keeps the old settings', async () => {
    const h = await licensed();
    try {
      assert.equal(envelope(await h.call('POST', '/api/v1/wireguard', { form: { name: 'office', address: '10.61.0.1/24' } })).error, '');
      twin(h).failNextStart = 'unbound: error: can\'t bind socket: Address already in use for 10.61.0.1 port 53';
      const res = await putDns(h, { enabled: '1' });
      assert.equal(res.statusCode, 500);
      assert.equal(res.body.error, 'DNS resolver error: unbound: error: can\'t bind socket: Address already in use for 10.61.0.1 port 53');
      const after = await getDns(h);
      assert.equal(after.enabled, false);
      assert.equal(after.pid, '');
      assert.equal(await systemStatusText(h), 'OK', 'a disabled resolver is no problem');
    } finally {
      await h.close();
    }
  });

  it('reports a crashed resolver in GET /system/status; PUT /system/reload starts it again', async () => {
    const h = await licensed();
    try {
      assert.equal(envelope(await h.call('POST', '/api/v1/wireguard', { form: { name: 'office', address: '10.61.0.1/24' } })).error, '');
      const pid = ((await putDns(h, { enabled: '1' })).body.msg as DnsStatus).pid;
      assert.equal(await systemStatusText(h), 'OK');
      twin(h).crash();
      assert.equal(await systemStatusText(h), `Error: dns resolver not running: unbound (pid ${pid}) exited with signal SIGKILL`);
      assert.equal((await getDns(h)).pid, '');
      assert.equal(envelope(await h.call('PUT', '/api/v1/system/reload')).error, '');
      assert.equal(await systemStatusText(h), 'OK');
      const again = await getDns(h);
      assert.match(again.pid, /^\d+$/);
      assert.notEqual(again.pid, pid);
    } finally {
      await h.close();
    }
  });
});

describe('DNS switch listeners', () => {
  it('are told when enabled flips, not for other changes, and their failure does not fail the PUT', async () => {
    const h = await licensed();
    try {
      assert.equal(envelope(await h.call('POST', '/api/v1/wireguard', { form: { name: 'office', address: '10.61.0.1/24' } })).error, '');
      const seen: string[][] = [];
      h.app.services.dns.onEnabledChange(async () => void seen.push(h.app.services.dns.dnsAddressesFor('office')));
      h.app.services.dns.onEnabledChange(async () => {
        throw new Error('listener broke');
      });
      assert.equal((await putDns(h, { enabled: '1' })).body.error, '');
      assert.equal((await putDns(h, { max_cache_ttl: '300' })).body.error, '');
      assert.equal((await putDns(h, { enabled: '0' })).body.error, '');
      assert.deepEqual(seen, [['10.61.0.1'], []]);
    } finally {
      await h.close();
    }
  });
});

describe('DNS with an IPv6 server', () => {
  it('listens on both addresses, answers both subnets in acl and hands both out as DNS', async () => {
    const h = await licensed();
    try {
      const created = envelope(await h.call('POST', '/api/v1/wireguard', {
        form: { name: 'dual', address: '10.63.0.1/24', ipv6: '1', address_ipv6: 'fd00:63::1/64' },
      }));
      assert.equal(created.error, '');
      assert.equal(envelope(await h.call('POST', '/api/v1/account', { form: { wg_name: 'dual', name: 'bob', allowed_IPs: '10.63.0.2' } })).error, '');
      const on = (await putDns(h, { enabled: '1' })).body.msg as DnsStatus;
      assert.deepEqual(on.acl, ['10.63.0.0/24', 'fd00:63::/64']);
      assert.deepEqual(twin(h).applied()?.listen, ['10.63.0.1', 'fd00:63::1']);
      assert.deepEqual(h.app.services.dns.dnsAddressesFor('dual'), ['10.63.0.1', 'fd00:63::1']);
      assert.match(envelope(await h.call('GET', '/api/v1/account/bob/config_text')).msg as string, /^DNS = 10\.63\.0\.1, ?fd00:63::1$/m);
    } finally {
      await h.close();
    }
  });
});
