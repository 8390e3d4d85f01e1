// IKEv2 PKI through the API: CA import/generate/delete, server certificate (issuer, SANs, EKUs, validity), texts.
import assert from 'node:assert/strict';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import forge from 'node-forge';
import { envelope, makeHarness, type Harness } from '../panel-core/harness.ts';

const NOW = new Date('2026-11-23T12:00:00Z');
const CA = { ca_common_name: 'Test Root', ca_organization: 'Vpnhost Test', ca_country_name: 'DE', ca_locality: 'Berlin' };
const SERVER = {
  server_domain: 'vpn.example.test', server_ip: '198.51.100.10', server_common_name: 'vpn.example.test',
  server_organization: 'Vpnhost Test', server_ipv6: '2001:db8::10',
};

async function put(h: Harness, url: string, form: Record<string, string> = {}) {
  return envelope(await h.call('PUT', `/api/v1${url}`, { form }));
}

test('generate CA, server certificate: subject, issuer, SANs, EKUs, validity; keys sealed at rest', async () => {
  const h = await makeHarness({ clock: { now: () => NOW } });
  try {
    const ca = (await put(h, '/ikev2/generate_ca_rsa', CA)).msg as Record<string, string>;
    assert.match(ca.ca_cert, /^-----BEGIN CERTIFICATE-----/);
    assert.match(ca.ca_key, /^-----BEGIN RSA PRIVATE KEY-----/);
    assert.equal(ca.ca_common_name, 'Test Root');
    assert.equal(ca.ca_locality, 'Berlin');
    const caX = new X509Certificate(ca.ca_cert);
    assert.equal(caX.ca, true);
    assert.match(caX.subject, /CN=Test Root/);
    assert.equal(caX.checkPrivateKey((await import('node:crypto')).createPrivateKey(ca.ca_key)), true);

    const cfg = (await put(h, '/ikev2/generate_server_rsa', SERVER)).msg as Record<string, string>;
    const x = new X509Certificate(cfg.server_cert);
    assert.equal(x.ca, false);
    assert.match(x.issuer, /CN=Test Root/);
    assert.match(x.subject, /CN=vpn.example.test/);
    assert.equal(x.verify(caX.publicKey), true, 'signed by the CA');
    assert.equal(x.subjectAltName, 'DNS:vpn.example.test, IP Address:198.51.100.10, IP Address:2001:DB8:0:0:0:0:0:10');
    assert.deepEqual([...(x.keyUsage ?? [])].sort(), ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.8.2.2']);
    assert.ok(new Date(x.validFrom) <= NOW && new Date(x.validTo) > new Date(NOW.getTime() + 800 * 86_400_000));
    assert.equal(cfg.server_domain, 'vpn.example.test');
    assert.equal(cfg.server_ip, '198.51.100.10');

    // keys are sealed in the store, never in clear
    const row = h.db.prepare('SELECT ca_key_sealed, server_key_sealed FROM ikev2').get() as Record<string, string>;
    assert.match(row.ca_key_sealed, /^enc:/);
    assert.ok(!row.server_key_sealed.includes('PRIVATE KEY'));
    const got = envelope(await h.call('GET', '/api/v1/ikev2/config')).msg as Record<string, unknown>;
    assert.equal(got.server_key, cfg.server_key);
    assert.equal(got.enabled, false);
  } finally {
    await h.close();
  }
});

test('import CA: texts for missing, garbage and mismatched pairs; already present; delete keeps subject fields', async () => {
  const h = await makeHarness({ clock: { now: () => NOW } });
  try {
    assert.equal((await put(h, '/ikev2/import_ca_rsa', { ca_key: 'x' })).error, 'CaCert must be filled');
    assert.equal((await put(h, '/ikev2/import_ca_rsa', { ca_cert: 'x' })).error, 'CaKey must be filled');
    assert.equal((await put(h, '/ikev2/import_ca_rsa', { ca_cert: 'garbage', ca_key: 'garbage' })).error, 'Certificate not found');
    // a real CA made elsewhere (node-forge) and a key that does not belong to it
    const keys = forge.pki.rsa.generateKeyPair({ bits: 1024, e: 0x10001 });
    const cert = forge.pki.createCertificate();
    cert.publicKey = keys.publicKey;
    cert.serialNumber = '01';
    cert.validity.notBefore = new Date('2026-01-01T00:00:00Z');
    cert.validity.notAfter = new Date('2036-01-01T00:00:00Z');
    const dn = [{ shortName: 'CN', value: 'Imported Root' }, { shortName: 'O', value: 'Elsewhere' }, { shortName: 'C', value: 'FR' }];
    cert.setSubject(dn);
    cert.setIssuer(dn);
    cert.setExtensions([{ name: 'basicConstraints', cA: true }]);
    cert.sign(keys.privateKey, forge.md.sha256.create());
    const certPem = forge.pki.certificateToPem(cert);
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    assert.equal((await put(h, '/ikev2/import_ca_rsa', { ca_cert: certPem, ca_key: 'garbage' })).error, 'Certificate failed');
    assert.equal((await put(h, '/ikev2/import_ca_rsa', { ca_cert: certPem, ca_key: otherKey })).error, 'Certificate failed');
    const ok = await put(h, '/ikev2/import_ca_rsa', { ca_cert: certPem, ca_key: forge.pki.privateKeyToPem(keys.privateKey) });
    assert.equal(ok.error, '');
    const cfg = ok.msg as Record<string, string>;
    assert.equal(cfg.ca_common_name, 'Imported Root');
    assert.equal(cfg.ca_organization, 'Elsewhere');
    assert.equal(cfg.ca_country_name, 'FR');
    assert.equal((await put(h, '/ikev2/import_ca_rsa', { ca_cert: certPem, ca_key: 'k' })).error, 'The root certificate is already in the system');
    assert.equal((await put(h, '/ikev2/generate_ca_rsa', CA)).error, 'The root certificate is already in the system');

    const del = envelope(await h.call('DELETE', '/api/v1/ikev2/delete_ca_rsa')).msg as Record<string, string>;
    assert.equal(del.ca_cert, '');
    assert.equal(del.ca_key, '');
    assert.equal(del.ca_common_name, 'Imported Root', 'subject fields kept');
    assert.equal(envelope(await h.call('DELETE', '/api/v1/ikev2/delete_ca_rsa')).error, 'The ROOT certificate is not present in the system');
    assert.equal(envelope(await h.call('DELETE', '/api/v1/ikev2/delete_server_rsa')).error, 'The ROOT certificate is not present in the system');
  } finally {
    await h.close();
  }
});

test('generate texts in the spec order; server certificate needs the CA; enable needs both certificates', async () => {
  const h = await makeHarness({ clock: { now: () => NOW } });
  try {
    assert.equal((await put(h, '/ikev2/generate_ca_rsa', {})).error, 'Common Name must be filled');
    assert.equal((await put(h, '/ikev2/generate_ca_rsa', { ca_common_name: '  ' })).error, 'Common Name must be filled');
    assert.equal((await put(h, '/ikev2/generate_ca_rsa', { ca_common_name: 'x' })).error, 'Organization must be filled');
    assert.equal((await put(h, '/ikev2/generate_ca_rsa', { ca_common_name: 'x'.repeat(5000), ca_organization: 'o' })).error,
      'Wrong certificate field format (at most 128 printable characters)');
    assert.equal((await put(h, '/ikev2/generate_server_rsa', SERVER)).error, 'The root certificate is not present in the system');
    assert.equal((await put(h, '/ikev2', { enabled: '1' })).error, 'The ROOT certificate is not present in the system');
    await put(h, '/ikev2/generate_ca_rsa', CA);
    assert.equal((await put(h, '/ikev2', { enabled: '1' })).error, 'The SERVER certificate is not present in the system');
    assert.equal((await put(h, '/ikev2/generate_server_rsa', {})).error, 'Server Domain must be filled');
    assert.equal((await put(h, '/ikev2/generate_server_rsa', { server_domain: 'a.test' })).error, 'Server IP must be filled');
    assert.equal((await put(h, '/ikev2/generate_server_rsa', { server_domain: 'a.test', server_ip: '1.2.3.4' })).error, 'Common Name must be filled');
    assert.equal((await put(h, '/ikev2/generate_server_rsa', { server_domain: 'a.test', server_ip: '1.2.3.4', server_common_name: 'c' })).error,
      'Organization must be filled');
    assert.equal((await put(h, '/ikev2/generate_server_rsa', { ...SERVER, server_ip: '300.1.1.1' })).error, 'Wrong server_ip format (IPv4 address)');
    assert.equal((await put(h, '/ikev2/generate_server_rsa', { ...SERVER, server_domain: 'bad domain' })).error, 'Wrong server_domain format (DNS name)');
    assert.equal((await put(h, '/ikev2/generate_server_rsa', SERVER)).error, '');
    assert.equal((await put(h, '/ikev2', { enabled: 'yes' })).error, 'Wrong enabled format (1 or 0)');
    const on = await put(h, '/ikev2', { enabled: '1' });
    assert.equal((on.msg as { enabled: boolean }).enabled, true);
    const off = await put(h, '/ikev2', { enabled: '0' });
    assert.equal((off.msg as { enabled: boolean }).enabled, false);
    const del = envelope(await h.call('DELETE', '/api/v1/ikev2/delete_server_rsa')).msg as Record<string, string>;
    assert.equal(del.server_cert, '');
    assert.equal(del.server_key, '');
    assert.equal(del.server_domain, 'vpn.example.test', 'subject fields kept');
  } finally {
    await h.close();
  }
});
