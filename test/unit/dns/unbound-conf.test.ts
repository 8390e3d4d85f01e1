// unbound.conf renderer (fixture), the change planner and the version parser.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { DnsConfigError, type DnsConfig } from '../../../panel/dataplane/dns/dns.ts';
import { checkDnsConfig, parseUnboundVersion, planUnboundChange, renderUnboundConf } from '../../../panel/dataplane/render/unbound-conf.ts';

const FIXTURE = new URL('../../fixtures/dns/unbound.conf', import.meta.url);
const paths = { dir: '/var/lib/vpnhost/unbound/', port: 53, controlPort: 8954 };
const config: DnsConfig = {
  listen: ['10.77.0.1', 'fd00:77::1'],
  acl: ['10.77.0.0/24', 'fd00:77::/64'],
  forwarders: ['1.1.1.1', '2606:4700:4700::1111'],
  maxCacheTtl: 600,
};

describe('renderUnboundConf', () => {
  it('renders the fixture byte for byte', () => {
    assert.equal(renderUnboundConf(config, paths), readFileSync(FIXTURE, 'utf8'));
  });

  it('refuses values that are not addresses, CIDRs or TTLs, and paths that could inject options', () => {
    const bad: Array<Partial<DnsConfig>> = [
      { listen: ['10.77.0.1\n    interface: 0.0.0.0'] }, { forwarders: ['1.1.1.1 # x'] }, { forwarders: [] },
      { acl: ['10.77.0.0'] }, { acl: ['10.77.0.0/33'] }, { maxCacheTtl: 1.5 }, { maxCacheTtl: 2 ** 31 },
    ];
    for (const over of bad) assert.throws(() => renderUnboundConf({ ...config, ...over }, paths), DnsConfigError, JSON.stringify(over));
    assert.throws(() => renderUnboundConf(config, { ...paths, dir: '/tmp/a"b' }), DnsConfigError);
    assert.doesNotThrow(() => checkDnsConfig({ ...config, listen: [] }));
  });
});

describe('planUnboundChange', () => {
  it('restarts for new listen addresses, reloads for a new ACL, else sets forwarders and TTLs live', () => {
    assert.deepEqual(planUnboundChange(config, { ...config, listen: ['10.77.0.1'] }), { kind: 'restart' });
    assert.deepEqual(planUnboundChange(config, { ...config, acl: ['10.77.0.0/24'], maxCacheTtl: 30 }), { kind: 'reload' });
    assert.deepEqual(planUnboundChange(config, { ...config, forwarders: ['9.9.9.9'] }), {
      kind: 'live', commands: [['forward', '9.9.9.9']],
    });
    assert.deepEqual(planUnboundChange(config, { ...config, maxCacheTtl: 3600 }), {
      kind: 'live', commands: [['set_option', 'cache-max-ttl: 3600'], ['set_option', 'cache-max-negative-ttl: 3600']],
    });
    assert.deepEqual(planUnboundChange(config, { ...config }), { kind: 'live', commands: [] });
  });
});

describe('parseUnboundVersion', () => {
  it('reads the first line of unbound -V', () => {
    assert.equal(parseUnboundVersion('Version 1.17.1\n\nConfigure line: --build=x86_64-linux-gnu\n'), '1.17.1');
    assert.equal(parseUnboundVersion('garbage'), '');
  });
});
