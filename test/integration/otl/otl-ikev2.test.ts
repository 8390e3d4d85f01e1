// The one-time-link page's IKEv2 part: shown only where the account's server offers IKEv2 (CA, server certificate,
// enabled, server ikev2=1) and `enable` is set; the CA and the .sswan profile download within the grace period.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { hrefOf, keyOf, otlPanel, page } from './otl-fixture.ts';

test('IKEv2 downloads on the page: CA certificate and profile where offered, none elsewhere or when switched off', async () => {
  const p = await otlPanel();
  try {
    const open = async (account: string) => (await page(p, 'POST', `/otl/${keyOf(await p.ok<string>('GET', `/account/${account}/otl`))}`)).body;
    assert.equal(hrefOf(await open('alice'), 'otl-download-ca'), null, 'no IKEv2 before any certificate');

    await p.ok('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Root', ca_organization: 'Org' });
    await p.ok('PUT', '/ikev2/generate_server_rsa', {
      server_domain: 'vpn.example.test', server_ip: '198.51.100.10', server_common_name: 'vpn.example.test', server_organization: 'Org',
    });
    await p.ok('POST', '/wireguard', { name: 'ike', address: '10.77.0.1/24', ikev2: '1', external_ip: '192.0.2.20' });
    await p.ok('POST', '/account', { wg_name: 'ike', allowed_IPs: '10.77.0.5', name: 'carol', username: 'carol_u', password: 'pw-carol' });
    assert.equal(hrefOf(await open('carol'), 'otl-download-ca'), null, 'IKEv2 not enabled yet');
    await p.ok('PUT', '/ikev2', { enabled: '1' });
    assert.equal(hrefOf(await open('alice'), 'otl-download-ca'), null, 'alice\'s server has ikev2=0');

    await p.ok('PUT', '/otl/config_ikev2', { download_certificate_button_label: 'Get CA', button1_label: 'strongSwan app', button1_link: 'https://example.com/sswan' });
    const html = await open('carol');
    assert.match(html, /id="otl-ikev2-heading"/);
    assert.match(html, />Get CA</);
    assert.match(html, /href="https:\/\/example.com\/sswan"/);
    const ca = hrefOf(html, 'otl-download-ca');
    const profile = hrefOf(html, 'otl-download-profile');
    assert.ok(ca && profile, html);
    const caFile = await page(p, 'GET', `/otl/${ca}`);
    assert.equal(caFile.status, 200);
    assert.equal(caFile.headers['content-disposition'], 'attachment; filename="ca.crt"');
    assert.equal(caFile.body, (await p.ok<{ ca_cert: string }>('GET', '/ikev2/config')).ca_cert);
    assert.equal(new X509Certificate(caFile.body).subject.includes('CN=Root'), true);
    const profileFile = await page(p, 'GET', `/otl/${profile}`);
    assert.equal(profileFile.status, 200);
    assert.equal(profileFile.headers['content-disposition'], 'attachment; filename="carol.sswan"');
    assert.equal(profileFile.body, await p.ok<string>('GET', '/account/carol/ikev2_profile'));
    assert.equal(JSON.parse(profileFile.body).type, 'ikev2-eap');

    await p.ok('PUT', '/otl/config_ikev2', { enable: '0' });
    assert.equal((await page(p, 'GET', `/otl/${ca}`)).status, 404, 'switched off: the view\'s IKEv2 downloads die too');
    assert.doesNotMatch(await open('carol'), /otl-ikev2-heading/);
  } finally {
    await p.close();
  }
});
