// IKEv2 and accounts (simulated IPsec twin): who is loaded, incremental reloads, sessions, drop, profiles, info, status.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import type { SimulatedIpsec } from '../../../panel/dataplane/ipsec/simulated/simulated-ipsec.ts';
import { envelope, makeHarness, type Harness } from '../panel-core/harness.ts';

async function setup(h: Harness): Promise<SimulatedIpsec> {
  const ok = async (method: 'PUT' | 'POST', url: string, form: Record<string, string>) => {
    const e = envelope(await h.call(method, `/api/v1${url}`, { form }));
    assert.equal(e.error, '', `${url}: ${e.error}`);
    return e.msg as Record<string, string>;
  };
  await ok('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Root', ca_organization: 'Org' });
  await ok('PUT', '/ikev2/generate_server_rsa', {
    server_domain: 'vpn.example.test', server_ip: '198.51.100.10', server_common_name: 'vpn.example.test', server_organization: 'Org',
  });
  await ok('POST', '/wireguard', { name: 'ike', address: '10.77.0.1/24', ikev2: '1', dns_1: '10.77.0.1', dns_2: '9.9.9.9' });
  await ok('POST', '/wireguard', { name: 'plain', address: '10.78.0.1/24', ikev2: '0' });
  await ok('POST', '/account', { wg_name: 'ike', allowed_IPs: '10.77.0.5/32', name: 'alice', username: 'alice_u', password: 'pw-alice' });
  await ok('POST', '/account', { wg_name: 'ike', allowed_IPs: '10.77.0.6/32', name: 'bob', username: 'bob_u', password: 'pw-bob', status: 'disable' });
  await ok('POST', '/account', { wg_name: 'plain', allowed_IPs: '10.78.0.5/32', name: 'carol', username: 'carol_u', password: 'pw-carol' });
  await ok('PUT', '/ikev2', { enabled: '1' });
  return h.dataplane.ipsec as SimulatedIpsec;
}

test('only enabled accounts of ikev2=1 servers are loaded, with their own address; account changes never restart', async () => {
  const h = await makeHarness();
  try {
    const ipsec = await setup(h);
    assert.deepEqual([...ipsec.users.keys()], ['alice_u']);
    assert.deepEqual(ipsec.users.get('alice_u'), { username: 'alice_u', password: 'pw-alice', address: '10.77.0.5', dns: ['10.77.0.1', '9.9.9.9'] });
    assert.equal(ipsec.applied?.serverId, 'vpn.example.test');
    const starts = ipsec.starts;
    const loads = ipsec.loads;

    const sa = ipsec.connect('alice_u', 'pw-alice');
    assert.equal(sa.virtualIp, '10.77.0.5');
    assert.throws(() => ipsec.connect('alice_u', 'wrong'), /AUTHENTICATION_FAILED/);
    assert.throws(() => ipsec.connect('carol_u', 'pw-carol'), /AUTHENTICATION_FAILED/, 'server without ikev2');
    assert.throws(() => ipsec.connect('bob_u', 'pw-bob'), /AUTHENTICATION_FAILED/, 'disabled account');

    // enable bob: loaded; alice's SA untouched
    await h.call('PUT', '/api/v1/account/bob', { form: { status: 'enable' } });
    assert.ok(ipsec.users.has('bob_u'));
    assert.equal((await ipsec.listSas()).length, 1);
    ipsec.connect('bob_u', 'pw-bob');
    // disable alice: refused and her SA terminated; bob stays
    await h.call('PUT', '/api/v1/account/alice', { form: { status: 'disable' } });
    assert.ok(!ipsec.users.has('alice_u'));
    assert.deepEqual((await ipsec.listSas()).map((s) => s.username), ['bob_u']);
    // password change: the new one works, the old SA ends
    await h.call('PUT', '/api/v1/account/bob', { form: { password: 'pw-bob-2' } });
    assert.deepEqual(await ipsec.listSas(), []);
    assert.throws(() => ipsec.connect('bob_u', 'pw-bob'), /AUTHENTICATION_FAILED/);
    ipsec.connect('bob_u', 'pw-bob-2');
    // delete bob: unloaded, SA gone
    assert.equal(envelope(await h.call('DELETE', '/api/v1/account/bob')).error, '');
    assert.ok(!ipsec.users.has('bob_u'));
    assert.deepEqual(await ipsec.listSas(), []);
    assert.equal(ipsec.starts, starts, 'no restart');
    assert.equal(ipsec.loads, loads, 'no full load for account changes');

    // server flag off: a full load without its accounts
    await h.call('PUT', '/api/v1/account/alice', { form: { status: 'enable' } });
    assert.ok(ipsec.users.has('alice_u'));
    await h.call('PUT', '/api/v1/wireguard/ike', { form: { ikev2: '0' } });
    assert.equal(ipsec.users.size, 0);
    await h.call('PUT', '/api/v1/wireguard/ike', { form: { ikev2: '1' } });
    assert.ok(ipsec.users.has('alice_u'));
  } finally {
    await h.close();
  }
});

test('online, drop, info; a crash shows in /system/status and reload restarts with the credentials', async () => {
  const h = await makeHarness();
  try {
    const ipsec = await setup(h);
    ipsec.connect('alice_u', 'pw-alice', '203.0.113.9');
    const online = envelope(await h.call('GET', '/api/v1/ikev2/online')).msg as Array<Record<string, string>>;
    assert.equal(online.length, 1);
    assert.deepEqual(Object.keys(online[0]).sort(), ['allowed_IPs', 'b_download', 'b_upload', 'endpoint', 'name', 'status', 'uptime', 'username', 'wg_name']);
    assert.equal(online[0].name, 'alice');
    assert.equal(online[0].wg_name, 'ike');
    assert.equal(online[0].allowed_IPs, '10.77.0.5');
    assert.equal(online[0].endpoint, '203.0.113.9');
    assert.match(online[0].uptime, /^\d+s$/);
    assert.equal(envelope(await h.call('DELETE', '/api/v1/ikev2/online/nobody')).error, 'Account not found');
    const drop = envelope(await h.call('DELETE', '/api/v1/ikev2/online/alice'));
    assert.equal(drop.msg, 'success');
    assert.deepEqual(envelope(await h.call('GET', '/api/v1/ikev2/online')).msg, []);

    const info = envelope(await h.call('GET', '/api/v1/ikev2/info')).msg as Record<string, string>;
    assert.match(info.pid_charon, /^\d+$/);
    assert.equal(info.ipsec, '5.9.8');
    assert.equal((envelope(await h.call('GET', '/api/v1/system/status')).msg as { status: string }).status, 'OK');
    ipsec.crash();
    assert.equal((envelope(await h.call('GET', '/api/v1/system/status')).msg as { status: string }).status, 'Error: ikev2 daemon (charon) is not running');
    assert.equal(envelope(await h.call('PUT', '/api/v1/system/reload')).error, '');
    assert.equal((envelope(await h.call('GET', '/api/v1/system/status')).msg as { status: string }).status, 'OK');
    assert.ok(ipsec.users.has('alice_u'), 'credentials reloaded from the store');
    await h.call('PUT', '/api/v1/ikev2', { form: { enabled: '0' } });
    assert.equal((envelope(await h.call('GET', '/api/v1/ikev2/info')).msg as Record<string, string>).pid_charon, '');
  } finally {
    await h.close();
  }
});

test('profiles: .sswan JSON (stable uuid, CA as base64 DER, password only when opted in) and mobileconfig', async () => {
  const h = await makeHarness();
  try {
    await setup(h);
    const first = JSON.parse(envelope(await h.call('GET', '/api/v1/account/alice/ikev2_profile')).msg as string);
    const again = JSON.parse(envelope(await h.call('GET', '/api/v1/account/alice/ikev2_profile')).msg as string);
    assert.equal(first.uuid, again.uuid);
    assert.match(first.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(first.type, 'ikev2-eap');
    assert.equal(first.remote.addr, 'vpn.example.test');
    assert.equal(first.remote.id, 'vpn.example.test');
    assert.equal(first.local.eap_id, 'alice_u');
    assert.equal(first.local.password, undefined);
    const ca = new X509Certificate(Buffer.from(first.remote.cert, 'base64'));
    const cfg = envelope(await h.call('GET', '/api/v1/ikev2/config')).msg as { ca_cert: string };
    assert.equal(ca.fingerprint256, new X509Certificate(cfg.ca_cert).fingerprint256);
    const other = JSON.parse(envelope(await h.call('GET', '/api/v1/account/bob/ikev2_profile')).msg as string);
    assert.notEqual(other.uuid, first.uuid);

    assert.equal(envelope(await h.call('PUT', '/api/v1/ikev2/profile_password', { form: { enabled: '1' } })).msg, 'success');
    const withPw = JSON.parse(envelope(await h.call('GET', '/api/v1/account/alice/ikev2_profile')).msg as string);
    assert.equal(withPw.local.password, 'pw-alice');

    const mc = envelope(await h.call('GET', '/api/v1/account/alice/ikev2_mobileconfig')).msg as string;
    assert.match(mc, /<key>VPNType<\/key>\s*<string>IKEv2<\/string>/);
    assert.match(mc, /<key>LocalIdentifier<\/key>\s*<string>alice_u<\/string>/);
    assert.match(mc, /<key>PayloadType<\/key>\s*<string>com.apple.security.root<\/string>/);

    const ps = envelope(await h.call('GET', '/api/v1/account/alice/ikev2_windows')).msg as string;
    assert.match(ps, /^\$Name = 'vpn\.example\.test \(alice\)'\r$/m);
    assert.match(ps, /^Add-VpnConnection -Name \$Name -ServerAddress \$Server -TunnelType Ikev2 -AuthenticationMethod Eap -EncryptionLevel Required/m);
    assert.match(ps, /Set-VpnConnectionIPsecConfiguration -ConnectionName \$Name -EncryptionMethod AES256 -IntegrityCheckMethod SHA1 -DHGroup Group2 -CipherTransformConstants AES256 -AuthenticationTransformConstants SHA256128 -PfsGroup None -Force/);
    const caB64 = /FromBase64String\('([A-Za-z0-9+/=]+)'\)/.exec(ps)?.[1];
    assert.equal(new X509Certificate(Buffer.from(caB64!, 'base64')).fingerprint256, ca.fingerprint256, 'the CA in the script');
    assert.ok(!ps.includes('pw-alice'), 'no password in the Windows script');
    assert.match(ps, /user name alice_u/);
    assert.equal(envelope(await h.call('GET', '/api/v1/account/carol/ikev2_windows')).error, 'IKEv2 is not enabled on the wireguard server of this account');
    assert.equal(envelope(await h.call('GET', '/api/v1/account/carol/ikev2_profile')).error, 'IKEv2 is not enabled on the wireguard server of this account');
    assert.equal(envelope(await h.call('GET', '/api/v1/account/nobody/ikev2_profile')).error, 'Account not found');
    await h.call('DELETE', '/api/v1/ikev2/delete_ca_rsa');
    assert.equal(envelope(await h.call('GET', '/api/v1/account/alice/ikev2_profile')).error, 'IKEv2 is not enabled');
  } finally {
    await h.close();
  }
});

test('with the panel resolver on, the pools hand out the server address as DNS (switched live)', async () => {
  const { generateKeyPairSync } = await import('node:crypto');
  const { issueLicenseKey } = await import('../../../panel/services/license-key.ts');
  const vendor = generateKeyPairSync('ed25519');
  const h = await makeHarness({ licensePublicKey: vendor.publicKey.export({ type: 'spki', format: 'pem' }) as string });
  try {
    h.app.services.license.install(await issueLicenseKey(vendor.privateKey, { accounts: 100, expires: new Date(Date.now() + 86_400_000) }));
    const ipsec = await setup(h);
    assert.deepEqual(ipsec.users.get('alice_u')?.dns, ['10.77.0.1', '9.9.9.9']);
    assert.equal(envelope(await h.call('PUT', '/api/v1/dns', { form: { enabled: '1' } })).error, '');
    assert.deepEqual(ipsec.users.get('alice_u')?.dns, ['10.77.0.1'], 'the resolver on the server address');
    await h.call('PUT', '/api/v1/dns', { form: { enabled: '0' } });
    assert.deepEqual(ipsec.users.get('alice_u')?.dns, ['10.77.0.1', '9.9.9.9']);
  } finally {
    await h.close();
  }
});
